"""What a kfp.local task command does, read back as `python -m MODULE ARGS` for a forked child.

A lightweight component's command, as kfp compiles it, is up to three shell layers:

    sh -c PRELUDE sh -ec SCRIPT SOURCE ARGS...      (the prelude only with install_kfp_package,
                                                     the default, or packages_to_install)
    PRELUDE:  pip install the packages, then kfp==<version> --no-deps; then run "$0" "$@"
    SCRIPT:   write SOURCE to $program_path/ephemeral_component.py, then
              _KFP_RUNTIME=true python3 -m kfp.dsl.executor_main --component_module_path ... "$@"

and a GCPC container component's is `python3 -u -m google_cloud_pipeline_components...launcher`.
`plan` turns these into a `Plan` when a forked child can do the same: the prelude's installs
must all be met by this environment already (pip would then change nothing), and the Python it
names must be this one. Anything else gets the reason a fresh interpreter runs it instead.
kfp.local has already put this interpreter's path in place of `python3`.
"""

import ast
import os
import re
import shlex
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

_SCRIPT = re.compile(
    r'program_path=\$\(mktemp -d\) printf "%s" "\$0" > "\$program_path/ephemeral_component\.py" '
    r"_KFP_RUNTIME=true (?P<python>\S+) -m kfp\.dsl\.executor_main --component_module_path "
    r'"\$program_path/ephemeral_component\.py" "\$@"'
)
_PRELUDE = re.compile(
    r'if ! \[ -x "\$\(command -v pip\)" \]; then .*? fi '
    r'PIP_DISABLE_PIP_VERSION_CHECK=1 (?P<installs>.*) && "\$0" "\$@"'
)
_INSTALL = re.compile(
    r"(?P<python>\S+) -m pip install --quiet --no-warn-script-location (?P<args>.*)"
)
_VALUED_OPTIONS = {"--index-url", "--extra-index-url", "--trusted-host"}


class UnusableInstall(ValueError):
    """A requirement of the task's `packages_to_install` whose environment marker cannot be
    evaluated: the task fails saying which, rather than the engine (or pip) crashing on it."""


@dataclass(frozen=True)
class Plan:
    """How a forked child runs a task: `python -m module *argv`, with `env` added."""

    module: str
    argv: list[str]
    env: dict[str, str]
    imports: frozenset[str] = frozenset()
    """The modules the task's code names: its import statements (a lightweight component's
    source), or its module. The fork server reads which of its stages the task wants."""


def plan(full_command: list[str]) -> Plan | str:
    """The forked form of kfp.local's `full_command`, or why it needs a fresh interpreter;
    UnusableInstall as `check_installs` raises it."""
    if full_command[:2] == ["sh", "-c"] and len(full_command) > 3:
        unmet = _unmet_installs(full_command[2])
        if unmet:
            return unmet
        full_command = full_command[3:]
    if full_command[:2] == ["sh", "-ec"] and len(full_command) >= 4:
        return _executor(full_command[2], full_command[3], full_command[4:])
    return _module(full_command)


def check_installs(full_command: list[str]) -> None:
    """UnusableInstall for a requirement in the prelude of kfp.local's `full_command` whose
    environment marker this interpreter cannot evaluate (`python_version ~= "x"`). The task runs
    on this interpreter however it starts: pip, left to it, would only crash with a traceback."""
    if full_command[:2] == ["sh", "-c"] and len(full_command) > 3:
        _unmet_installs(full_command[2])


def _executor(script: str, source: str, args: list[str]) -> Plan | str:
    match = _SCRIPT.fullmatch(_one_line(script))
    if not match:
        return "its script is not kfp's executor script"
    if not _this_python(match["python"]):
        return f"it asks for another Python ({match['python']})"
    program = Path(tempfile.mkdtemp()) / "ephemeral_component.py"
    program.write_text(source)
    argv = ["--component_module_path", str(program), *args]
    return Plan("kfp.dsl.executor_main", argv, {"_KFP_RUNTIME": "true"}, imported(source))


def imported(source: str) -> frozenset[str]:
    """Every module an import statement of `source` names (`from a import b`: `a` and `a.b`,
    b may be a module); none when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return frozenset()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return frozenset(names)


def _module(full_command: list[str]) -> Plan | str:
    python, *rest = full_command or [""]
    flags = rest[: rest.index("-m")] if "-m" in rest else None
    if flags is None or len(rest) <= len(flags) + 1 or set(flags) - {"-u"}:
        return "its command is not `python [-u] -m MODULE ...`"
    if not _this_python(python):
        return f"it asks for another Python ({python})"
    module = rest[len(flags) + 1]
    return Plan(module, rest[len(flags) + 2 :], {"PYTHONUNBUFFERED": "1"}, frozenset({module}))


def _unmet_installs(prelude: str) -> str:
    """Why the prelude's pip installs would change this environment ("" when they would not)."""
    match = _PRELUDE.fullmatch(_one_line(prelude))
    if not match:
        return "its command runs more than kfp's package installs"
    for install in match["installs"].split(" && "):
        found = _INSTALL.fullmatch(install.strip())
        if not found or not _this_python(found["python"]):
            return f"it runs an install this Python cannot skip: {install.strip()}"
        for requirement in _requirements(shlex.split(found["args"])):
            if not _installed(requirement):
                return f"it installs {requirement}, which this environment lacks"
    return ""


def _requirements(args: list[str]) -> list[str]:
    """The requirement strings of pip arguments, without the index options' values."""
    found, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in _VALUED_OPTIONS:
            skip = True
        elif not arg.startswith("-"):
            found.append(arg)
    return found


def _installed(text: str) -> bool:
    """True when `text` (a PEP 508 requirement) is met by an installed distribution."""
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return False
    if not _marker_holds(text, requirement):
        return True  # pip would skip it too
    if requirement.url:
        return False
    try:
        version = metadata.version(requirement.name)
    except metadata.PackageNotFoundError:
        return False
    return requirement.specifier.contains(version, prereleases=True)


def _marker_holds(text: str, requirement: Requirement) -> bool:
    """Whether the environment marker of `requirement` (`text` as the component gave it), if
    any, holds on this interpreter. packaging raises for one it cannot evaluate (a version
    compared with something that is none): UnusableInstall naming the requirement and the
    marker, where the task's failure said only "the local engine failed"."""
    if requirement.marker is None:
        return True
    try:
        return requirement.marker.evaluate()
    except (ValueError, KeyError) as exc:  # UndefinedComparison, UndefinedEnvironmentName, ...
        raise UnusableInstall(
            f"its packages_to_install requirement {text!r} has the environment marker "
            f"{str(requirement.marker)!r}, which cannot be evaluated on this interpreter: {exc}"
        ) from None


def _this_python(executable: str) -> bool:
    return executable in ("python3", "python") or os.path.realpath(executable) == os.path.realpath(
        sys.executable
    )


def _one_line(script: str) -> str:
    return " ".join(script.split())
