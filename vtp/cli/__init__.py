"""The `vtp` command line: one argparse tree, each command group in its own module.

Every module in this package that defines `register(subparsers)` is a command group: it adds its
parsers and sets `func` on each leaf to a callable that takes the parsed namespace and returns an
exit status. Groups are found by listing the package, so adding a group touches no other file.
Usage errors exit with status 2 and a message on stderr, nothing on stdout (a contract:
docs/architecture.md).
"""

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence


class UsageError(Exception):
    """Bad input found after argument parsing; the message names the flag or key at fault."""


def build_parser() -> argparse.ArgumentParser:
    """The full `vtp` parser with every registered command group."""
    parser = argparse.ArgumentParser(
        prog="vtp", description="Train PyTorch models on Vertex AI, or locally as on Vertex AI."
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "register"):
            module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `vtp` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"vtp: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
