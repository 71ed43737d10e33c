"""A notebook's code cells as the script a user would run top to bottom (bench/public_samples.py).

What changes, and only this: IPython syntax becomes the Python IPython itself runs for it. A
`!command` line (and `x = !command`) calls `_shell`, which expands `{expression}` and `$name`
from the script's globals as IPython does and runs the line in bash, going on when it fails (as
a notebook does); `%env` reads or sets a variable, `%cd` changes folder (also through
`get_ipython()`, which a few notebooks call); `%%writefile [-a] PATH`
writes the cell's text; `%%bash` runs it; `%%time` and `%%capture` run it as Python. Lines a user
skips on their own machine are commented out with the reason: package installs (the bench
installs the packages beforehand), gcloud's sign-in and configuration (which would change the
user's own gcloud), line magics of the notebook UI. Each cell is marked `# %% [cell N]`.
The record's substitutions (the names a user puts in: project, bucket; downloads replaced by
small local data) are applied afterwards, each of them required to match.
"""

import json
import re
from collections.abc import Iterable

SKIPPED = (
    (re.compile(r"^\s*(pip3?|python3? -m pip)\s+install\b"), "package install"),
    (re.compile(r"^\s*(sudo\s+)?apt(-get)?\b"), "system package install"),
    (
        re.compile(r"^\s*gcloud\s+(auth\s+(login|application-default|activate)|config\s+set)\b"),
        "gcloud sign-in or configuration",
    ),
    (re.compile(r"^\s*gcloud\s+services\s+enable\b"), "Google Cloud project set-up"),
    (re.compile(r"^\s*gcloud\s+projects\s+add-iam-policy-binding\b"), "IAM set-up"),
)
"""A shell line a user skips locally: its pattern and why."""
LINE_MAGICS_SKIPPED = ("pip", "load_ext", "tensorboard", "matplotlib", "reload_ext", "autoreload")
LINE_MAGICS = {"env": "_env", "cd": "_cd"}
"""Line magics that run: the prelude's function for each."""
BODY_MAGICS = ("time", "capture")
"""Cell magics whose cell runs as Python."""

PRELUDE = '''\
# --- added by the conversion (notebook_to_script.py): what IPython does for `!` and `%%` ---
import re as _re
import subprocess as _subprocess
import sys as _sys


def _shell(command, capture=False):
    """IPython's `!command`: `{expr}` and `$name` expanded from the caller's names, run in bash;
    the lines of its output for `x = !command`."""
    frame = _sys._getframe(1)
    command = _expand(command, {**frame.f_globals, **frame.f_locals})
    print(f"[notebook shell] {command}", flush=True)
    done = _subprocess.run(["bash", "-c", command], text=True, capture_output=capture)
    if capture:
        print(done.stdout, end="", flush=True)
        return done.stdout.splitlines()
    return None


def _expand(text, names):
    """IPython's expansion of `{expr}` and `$name` in a shell or magic line."""

    def braces(match):
        try:
            return str(eval(match.group(1), names))
        except Exception:
            return match.group(0)

    text = _re.sub(r"(?<!\\{)\\{([^{}]+)\\}(?!\\})", braces, text)
    return _re.sub(r"\\$(\\w+)", lambda m: str(names.get(m.group(1), m.group(0))), text)


def _env(argument):
    """IPython's `%env NAME` (its value) and `%env NAME=VALUE` (set, expanded)."""
    import os

    frame = _sys._getframe(1)
    name, _, value = argument.partition("=")
    if not _:
        return os.environ.get(name.strip(), "")
    os.environ[name.strip()] = _expand(value, {**frame.f_globals, **frame.f_locals})
    return None


def _cd(folder):
    """IPython's `%cd FOLDER`."""
    import os

    os.chdir(os.path.expanduser(folder))


class _IPython:
    """What `get_ipython()` answers in a script: the magics above."""

    def run_line_magic(self, name, argument):
        return {"env": _env, "cd": _cd}[name](argument)

    def system(self, command):
        return _shell(command)


def get_ipython():
    return _IPython()


def _writefile(path, text, append=False):
    """IPython's `%%writefile [-a] PATH`."""
    with open(path, "a" if append else "w") as f:
        f.write(text)
    print(("Appending to " if append else "Writing ") + path, flush=True)
# --- end of the conversion's additions ---
'''


def convert(notebook_json: str) -> str:
    """The script of a notebook (its JSON text): the prelude, then every code cell."""
    cells = json.loads(notebook_json)["cells"]
    parts = [PRELUDE]
    for number, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        parts.append(f"# %% [cell {number}]\n{convert_cell(source)}")
    return "\n\n".join(parts).rstrip() + "\n"


def convert_cell(source: str) -> str:
    """One code cell's source as Python."""
    first, _, body = source.partition("\n")
    magic = re.match(r"^%%(\w+)\s*(.*)$", first.strip())
    if magic and magic.group(1) == "writefile":
        flags, _, path = magic.group(2).rpartition(" ")
        return f"_writefile({path.strip()!r}, {body + chr(10)!r}, append={'-a' in flags})"
    if magic and magic.group(1) == "bash":
        return f"_shell({body!r})"
    if magic and magic.group(1) in BODY_MAGICS:
        return f"# %%{magic.group(1)} (runs the cell)\n" + convert_cell(body)
    if magic:
        return comment(source, f"cell magic %%{magic.group(1)} of the notebook UI")
    return "\n".join(convert_lines(join_continued(source.splitlines())))


def join_continued(lines: list[str]) -> list[str]:
    """Shell lines continued with a trailing backslash joined into one."""
    joined: list[str] = []
    for line in lines:
        if joined and is_shell(joined[-1]) and joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1].rstrip() + " " + line.strip()
        else:
            joined.append(line)
    return joined


def is_shell(line: str) -> bool:
    """Whether `line` is IPython shell or magic syntax (`!x`, `x = !y`, `%x`)."""
    return re.match(r"^\s*(!|%(?!%)|\w+\s*=\s*[!%])", line) is not None


def convert_lines(lines: Iterable[str]) -> Iterable[str]:
    """Each line as Python: shell and magic lines rewritten, the rest unchanged."""
    for line in lines:
        indent = line[: len(line) - len(line.lstrip())]
        stripped = line.strip()
        assigned = re.match(r"^(\w+)\s*=\s*!(.*)$", stripped)
        if stripped.startswith("!") or assigned:
            command = assigned.group(2) if assigned else stripped[1:]
            why = next((why for pattern, why in SKIPPED if pattern.search(command)), "")
            if why:
                yield f"{indent}pass  # skipped ({why}): {stripped}"
            elif assigned:
                yield f"{indent}{assigned.group(1)} = _shell({command.strip()!r}, capture=True)"
            else:
                yield f"{indent}_shell({command.strip()!r})"
        elif magic := re.match(r"^(?:(\w+)\s*=\s*)?%(\w+)\s*(.*)$", stripped):
            target, name, argument = magic.groups()
            if name in LINE_MAGICS:
                call = f"{LINE_MAGICS[name]}({argument.strip()!r})"
                yield f"{indent}{target} = {call}" if target else f"{indent}{call}"
            elif name in LINE_MAGICS_SKIPPED and not target:
                yield f"{indent}pass  # skipped (line magic of the notebook UI): {stripped}"
            else:
                raise ValueError(f"line magic with no conversion: {stripped}")
        else:
            yield line


def comment(source: str, why: str) -> str:
    """A cell kept as comments, with why it does not run."""
    return f"# skipped ({why}):\n" + "\n".join(f"# {line}" for line in source.splitlines())


def substitute(script: str, substitutions: list[list[str]], name: str) -> str:
    """`script` with each [old, new] replaced; ValueError naming one that matches nothing."""
    for old, new in substitutions:
        if old not in script:
            raise ValueError(f"{name}: substitution matches nothing: {old!r}")
        script = script.replace(old, new)
    return script
