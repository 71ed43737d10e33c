"""Compile the pipelines to `compiled/<name>.yaml`, deterministically.

The image is the one knob: components and default worker pools name `images.COMPONENT_IMAGE`,
and `--image` swaps that exact string in the compiled spec, so a team can build the image into
its own registry without editing code. Nothing else from the environment reaches the YAML.
"""

import ast
import difflib
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from components.images import COMPONENT_IMAGE
from pipelines import catalog

COMPILED_DIR = Path(__file__).resolve().parents[1] / "compiled"
_SDK_VERSION = re.compile(r"^sdkVersion: .*$", re.MULTILINE)
_HEADER_DEFAULT = re.compile(r"^(#    \w+: \w+ \[Default: )(.*)\]$", re.MULTILINE)


@dataclass(frozen=True)
class Outcome:
    """What compiling one pipeline did (or, with --check, would do) to its file."""

    name: str
    path: Path
    changed: bool
    diff: str = ""


def compile_text(name: str, image: str = COMPONENT_IMAGE) -> str:
    """The compiled YAML of pipeline `name`, with `image` as the project's image."""
    from kfp import compiler

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / f"{name}.yaml"
        compiler.Compiler().compile(catalog.entry(name).load(), str(path))
        text = stable_header(path.read_text())
    return text.replace(COMPONENT_IMAGE, image) if image != COMPONENT_IMAGE else text


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


def compile_all(
    out_dir: Path = COMPILED_DIR,
    image: str = COMPONENT_IMAGE,
    names: list[str] | None = None,
    check: bool = False,
) -> list[Outcome]:
    """Write (or with `check`, only compare) every pipeline's YAML under `out_dir`."""
    outcomes = []
    for name in names or list(catalog.PIPELINES):
        text = compile_text(name, image)
        path = out_dir / f"{name}.yaml"
        old = path.read_text() if path.exists() else ""
        changed = comparable(old) != comparable(text)
        diff = _diff(old, text, path) if changed else ""
        if changed and not check:
            out_dir.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        outcomes.append(Outcome(name, path, changed, diff))
    return outcomes


def _diff(old: str, new: str, path: Path) -> str:
    lines = difflib.unified_diff(
        comparable(old).splitlines(), comparable(new).splitlines(), str(path), "compiled now"
    )
    return "\n".join(list(lines)[:60])
