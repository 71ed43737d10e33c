"""A user's training-code directory for autopackaging tests, with the clutter real ones have."""

import os
from pathlib import Path

TASK = Path(__file__).with_name("blobs_task.py")

RUN_PY = """\
import sys

import helper

print("script", helper.NAME, *sys.argv[1:])
"""
ECHO_PY = """\
import sys

from blobs import NAME

print("module", NAME, *sys.argv[1:])
"""
RUN_SH = 'echo "bash script $*"\n'


def write_user_code(root: Path) -> Path:
    """`root/code`: package `blobs` (task + data file), scripts, and files never packaged."""
    code = root / "code"
    files = {
        "blobs/__init__.py": 'NAME = "blobs"\n',
        "blobs/echo.py": ECHO_PY,
        "blobs/task.py": TASK.read_text(),
        "blobs/data/centers.json": "[[-2, -2, 0, 0], [2, 2, 0, 0]]\n",
        "scripts/run.py": RUN_PY,
        "scripts/helper.py": 'NAME = "helper"\n',
        "scripts/run.sh": RUN_SH,
        "configs/small.yaml": "hidden_size: 8\n",
        "README.md": "# blobs\n",
        # Never packaged: caches, version control, a virtual environment.
        "blobs/__pycache__/task.cpython-311.pyc": "junk",
        "blobs/stale.pyc": "junk",
        ".git/HEAD": "ref: refs/heads/main\n",
        "env/pyvenv.cfg": "home = /usr/bin\n",
        "env/lib/site.py": "junk",
    }
    for relative, text in files.items():
        path = code / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    os.chmod(code / "scripts/run.sh", 0o755)
    return code
