"""Compile the pipelines to `compiled/<name>.yaml` and every component to
`compiled/components/<name>.yaml`, deterministically.

The image is the one knob: components and default worker pools name `images.COMPONENT_IMAGE`,
and `--image` puts another wherever that one appears in the compiled spec
(`vtp.vertex.image_rewrite.retarget`, as submit and schedule do), so a team can build the image
into its own registry without editing code. Nothing else from the environment reaches the YAML.
"""

import ast
import difflib
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from vtp.images import COMPONENT_IMAGE
from vtp.pipelines import catalog
from vtp.vertex.image_rewrite import retarget

COMPONENTS_SUBDIR = "components"
_SDK_VERSION = re.compile(r"^sdkVersion: .*$", re.MULTILINE)
_EXECUTOR_IMAGE = re.compile(r"^ {8}image: (\S+)$", re.MULTILINE)
_HEADER_DEFAULT = re.compile(r"^(#    \w+: \w+ \[Default: )(.*)\]$", re.MULTILINE)


def compiled_dir() -> Path:
    """Where the compiled YAML lives: `compiled/` of a source checkout (an editable install),
    else the copy a regular install ships as package data (`vtp/pipelines/compiled/`)."""
    checkout = Path(__file__).resolve().parents[1] / "compiled"
    if (checkout.parent / "pyproject.toml").is_file() and checkout.is_dir():
        return checkout
    return Path(__file__).resolve().parent / "compiled"


@dataclass(frozen=True)
class Outcome:
    """What compiling one pipeline did (or, with --check, would do) to its file."""

    name: str
    path: Path
    """The YAML file: `compiled/NAME.yaml`, or `compiled/components/NAME.yaml` for a component."""
    changed: bool
    """The file differs (beyond the kfp version stamp) from a fresh compile."""
    diff: str = ""
    image: str = COMPONENT_IMAGE
    """The project image the file was compared with (or written for)."""


def compile_text(name: str, image: str = COMPONENT_IMAGE, component: bool = False) -> str:
    """The compiled YAML of pipeline (or `component`) `name`, with `image` as the project's."""
    from kfp import compiler

    found = catalog.COMPONENTS[name] if component else catalog.entry(name)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / f"{name}.yaml"
        compiler.Compiler().compile(found.load(), str(path))
        text = stable_header(path.read_text())
    return retarget(text, image)


def stable_header(text: str) -> str:
    """The YAML with dict defaults in its header comment written with sorted keys.

    kfp renders the `# Inputs:` comment from protobuf maps, whose iteration order changes from
    one process to the next; the spec itself is written with sorted keys and needs no help.
    """
    return _HEADER_DEFAULT.sub(_sorted_default, text)


def _sorted_default(match: re.Match[str]) -> str:
    try:
        value = ast.literal_eval(match.group(2))
    except (ValueError, SyntaxError):
        return match.group(0)
    return f"{match.group(1)}{_sorted(value)!r}]"


def _sorted(value: object) -> object:
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def comparable(text: str) -> str:
    """YAML text without the kfp version stamp, which changes with every kfp release."""
    return _SDK_VERSION.sub("sdkVersion: <any>", text)


def compiled_image(text: str) -> str | None:
    """The image a compiled file of ours names for its executors (the first), if any: every
    executor of a shipped pipeline runs the project image, whatever `--image` made it."""
    match = _EXECUTOR_IMAGE.search(text)
    return match.group(1) if match else None


def compile_all(
    out_dir: Path | None = None,
    image: str | None = None,
    names: list[str] | None = None,
    check: bool = False,
) -> list[Outcome]:
    """Write (or with `check`, only compare) every pipeline's YAML under `out_dir` (default
    `compiled_dir()`), and every component's under its `components/` when no names are given.

    `image` defaults to COMPONENT_IMAGE when writing; a check without one compares each file
    with a compile for the image that file names, so files made with `--image` stay current."""
    out_dir = out_dir or compiled_dir()
    jobs = [(name, out_dir / f"{name}.yaml", False) for name in names or catalog.PIPELINES]
    if not names:
        folder = out_dir / COMPONENTS_SUBDIR
        jobs += [(name, folder / f"{name}.yaml", True) for name in catalog.COMPONENTS]
    return [_compile_one(name, path, image, component, check) for name, path, component in jobs]


def _compile_one(name: str, path: Path, image: str | None, component: bool, check: bool) -> Outcome:
    old = path.read_text() if path.exists() else ""
    if image is None:
        image = (compiled_image(old) if check else None) or COMPONENT_IMAGE
    text = compile_text(name, image, component)
    changed = comparable(old) != comparable(text)
    diff = _diff(old, text, path) if changed else ""
    if changed and not check:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return Outcome(name, path, changed, diff, image)


def _diff(old: str, new: str, path: Path) -> str:
    lines = difflib.unified_diff(
        comparable(old).splitlines(), comparable(new).splitlines(), str(path), "compiled now"
    )
    return "\n".join(list(lines)[:60])
