"""The `vtp` command line: one argparse tree, each command group in its own module.

Every module in this package that defines `register(subparsers)` is a command group: it adds its
parsers and sets `func` on each leaf to a callable that takes the parsed namespace and returns an
exit status. Groups are found by listing the package, so adding a group touches no other file.
Usage errors exit with status 2 and a message on stderr, nothing on stdout (a contract:
docs/architecture.md).
"""

import argparse
import importlib
import os
import pkgutil
import sys
import traceback
from collections.abc import Callable, Iterable, Sequence
from typing import NoReturn


class UsageError(Exception):
    """Bad input found after argument parsing; the message names the flag or key at fault."""


Command = tuple[str, Callable[[argparse.Namespace], int | None], str]
"""One command of a group: its name, the function it runs, its help line."""


def command_group(
    subparsers: argparse._SubParsersAction, name: str, help_text: str
) -> argparse._SubParsersAction:
    """Add the group `vtp NAME COMMAND ...`; return the action its commands are added to."""
    group = subparsers.add_parser(name, help=help_text)
    return group.add_subparsers(dest=f"{name}_command", required=True, metavar="COMMAND")


def add_commands(
    commands: argparse._SubParsersAction,
    table: Iterable[Command],
    add_flags: Callable[[argparse.ArgumentParser], None],
    operand: tuple[str, str] | None = None,
) -> dict[str, argparse.ArgumentParser]:
    """Add one command per row of `table`, each with the flags `add_flags` adds and, when
    given, the positional `operand` (METAVAR, help); return their parsers by name."""
    parsers = {}
    for name, func, help_text in table:
        parser = commands.add_parser(name, help=help_text, allow_abbrev=False)
        if operand is not None:
            parser.add_argument(operand[0].lower(), metavar=operand[0], help=operand[1])
        add_flags(parser)
        parser.set_defaults(func=func)
        parsers[name] = parser
    return parsers


def add_repeatable(
    parser: argparse.ArgumentParser, flag: str, metavar: str, help_text: str, dest: str = ""
) -> None:
    """Add `flag`, given once per value (`--flag A --flag B` is ["A", "B"]; absent is []);
    its namespace attribute is `dest`, or argparse's own from the flag's name."""
    parser.add_argument(
        flag, action="append", default=[], metavar=metavar, help=help_text, dest=dest or None
    )


def add_param_flag(parser: argparse.ArgumentParser) -> None:
    """`--param NAME=VALUE`, the pipeline parameters of `vtp run`, `submit` and `schedule`."""
    add_repeatable(
        parser, "--param", "NAME=VALUE",
        "pipeline parameter, parsed by its declared type (LIST/STRUCT as JSON); repeatable",
    )  # fmt: skip


DEBUG_ENV = "VTP_DEBUG"
"""Set to 1 to see the traceback behind any error (as `vtp --debug` does)."""


def build_parser() -> argparse.ArgumentParser:
    """The full `vtp` parser with every registered command group."""
    parser = argparse.ArgumentParser(
        prog="vtp", description="Train PyTorch models on Vertex AI, or locally as on Vertex AI."
    )
    parser.add_argument(
        "--debug", action="store_true", help=f"show tracebacks behind errors (or {DEBUG_ENV}=1)"
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "register"):
            module.register(subparsers)
    _mark_leaves(parser)
    return parser


def _mark_leaves(parser: argparse.ArgumentParser) -> None:
    """Each command's parser records itself, so its own usage reports what it does not know."""
    subcommands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subcommands:
        parser.set_defaults(command_parser=parser)
    for action in subcommands:
        for child in action.choices.values():
            _mark_leaves(child)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `vtp` console script: 0 done, 1 failed, 2 bad usage."""
    from vtp.cli import failures

    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        args.command_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    debug = args.debug or os.environ.get(DEBUG_ENV, "") not in ("", "0")
    if debug:  # the processes a command starts (pipeline tasks) show their tracebacks too
        os.environ[DEBUG_ENV] = "1"
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"vtp: error: {exc}", file=sys.stderr)
        return 2
    except failures.Failed as exc:
        _report(str(exc), exc, debug)
    except KeyboardInterrupt:
        print("vtp: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`vtp ... | head`): nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except Exception as exc:
        message = failures.describe(exc)
        if message is None:  # a bug: still one line, and the way to the traceback
            message = f"internal error: {type(exc).__name__}: {exc}"
            if not debug:
                message += f" (run with --debug or {DEBUG_ENV}=1 for the traceback)"
        _report(message, exc, debug)
    return 1


def console() -> NoReturn:
    """Entry point of the `vtp` console script and `python -m vtp`: `main()`, then the process
    ends as `sys.exit` would but without the interpreter's teardown (`vtp.process_exit`), which
    once the aiplatform SDK and kfp are loaded costs a second or more after the command's work
    is done (a `vtp run` has printed its summary and stopped its service by then). The aiplatform
    client package imports what the command uses of it, as it would on Python 3.15
    (`vtp.lazy_imports`)."""
    from vtp import lazy_imports
    from vtp.process_exit import exit_now

    lazy_imports.install()
    exit_now(main())


def _report(message: str, exc: BaseException, debug: bool) -> None:
    if debug:
        traceback.print_exception(exc)
    print(f"vtp: error: {message}", file=sys.stderr)


if __name__ == "__main__":
    console()
