"""`python -m vtp` runs the `vtp` CLI, and ends without the interpreter's teardown
(`vtp.cli.console`)."""

from vtp.cli import console

console()
