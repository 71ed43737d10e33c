"""The `vtp` command line: one argparse tree, each command group in its own module.

A group module exposes `register(subparsers)`, which adds its parsers and sets `func` on each
leaf to a callable taking the parsed namespace and returning an exit status. Usage errors exit
with status 2 and a message on stderr, nothing on stdout (the contract in DESIGN.md).
"""

import argparse
import importlib
import sys
from collections.abc import Sequence

# Modules under pipelines.cli that register command groups, in help order.
GROUPS: tuple[str, ...] = ("custom_jobs",)


class UsageError(Exception):
    """Bad input found after argument parsing; the message names the flag or key at fault."""


def build_parser() -> argparse.ArgumentParser:
    """The full `vtp` parser with every registered command group."""
    parser = argparse.ArgumentParser(
        prog="vtp", description="Train PyTorch models on Vertex AI, or locally as on Vertex AI."
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in GROUPS:
        importlib.import_module(f"{__name__}.{name}").register(subparsers)
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
