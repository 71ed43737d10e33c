"""Entry point of an autopackaged archive: `python -m vtp_autopackage ARGS` on every replica.

`vtp.vertex.autopackage` copies this file, unchanged, into the archive as
`vtp_autopackage/__main__.py`, next to `entry.json` (what to run) and `code-root/` (the user's
files). It recreates what gcloud's autopackaged image does: the code directory is the first
entry of `sys.path` (gcloud makes it the working directory), then it runs `python -m MODULE`,
`python SCRIPT` (`SCRIPT`'s own directory first on `sys.path`, as Python does) or
`bash SCRIPT` for other scripts, with the replica's arguments. The code directory is also put
on PYTHONPATH, so processes the job starts itself (one per GPU, say) import the same code.
The standard library only, nothing newer than Python 3.7: this runs in any executor image.
"""

import json
import os
import runpy
import sys
from pathlib import Path

CODE_DIR = "code-root"
"""Sibling directory holding the packaged files (not an identifier, so never imported)."""


def entry() -> dict:  # unsubscripted: executor images may run Python 3.8
    """`{"python_module": ...}` or `{"script": ...}` as the archive's builder wrote it."""
    return json.loads(Path(__file__).with_name("entry.json").read_text())


def main() -> None:
    """Run the packaged module or script with this process's arguments."""
    code = Path(__file__).resolve().with_name(CODE_DIR)
    inherited = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(code), inherited]))
    target = entry()
    if "python_module" in target:
        sys.path[0] = str(code)
        runpy.run_module(target["python_module"], run_name="__main__", alter_sys=True)
        return
    script = code / target["script"]
    if script.suffix != ".py":
        os.execvp("bash", ["bash", str(script), *sys.argv[1:]])
    sys.argv[0] = str(script)
    sys.path[0] = str(script.parent)
    runpy.run_path(str(script), run_name="__main__")


if __name__ == "__main__":
    main()
