"""`vtp run --open` opens the console without putting its sign-in code on a browser's command line
(which `ps` shows every local user): the browser gets a 0600 file of the user's that sends it
on to the console's address."""

import os
import stat
import subprocess
import sys
from pathlib import Path

PAGE = "http://127.0.0.1:8765/console/#code=s3cr3t&page=/runs/r-1"


def test_the_browser_is_given_a_private_file_not_the_token(tmp_path: Path) -> None:
    browser = tmp_path / "browser.sh"
    argv_file = tmp_path / "argv.txt"
    browser.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {argv_file}\n')
    browser.chmod(0o755)
    opened = subprocess.run(
        [sys.executable, "-c", "import sys; from pathlib import Path; "
         "from vtp.run.local_run import open_in_browser; "
         "print(open_in_browser(sys.argv[1], Path(sys.argv[2])))", PAGE, str(tmp_path)],
        env={**os.environ, "BROWSER": f"{browser} %s"}, capture_output=True, text=True,
        check=True,
    )  # fmt: skip
    launcher = Path(opened.stdout.strip())
    argv = argv_file.read_text()
    assert "s3cr3t" not in argv and argv.strip() == launcher.as_uri()
    assert stat.S_IMODE(launcher.stat().st_mode) == 0o600
    assert 'content="0;url=http://127.0.0.1:8765/console/#code=s3cr3t&amp;page=/runs/r-1"' in (
        launcher.read_text()
    )
