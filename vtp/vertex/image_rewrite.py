"""Our image in a compiled pipeline: which images are ours, and `--image` putting another there.

A pipeline holds images besides ours (a team's lightweight component on python:3.11-slim, a
container component of its own), so nothing swaps "the first image met": an image is replaced
only when it is ours, and then wherever that exact string appears: every executor, the worker
pools of the job specs carried in parameters and defaults (gcloud's `container-image-uri=` and
`executor-image-uri=`, or REST JSON `imageUri`/`executorImageUri`), and the component code
that names it as a serving image. `vtp compile`, `vtp submit` and `vtp schedule create` all go
through `retarget`, so the three cannot disagree on what `--image` touches.

Ours is: the placeholder `COMPONENT_IMAGE`, a name with a `vtp` or `vertex-torch-pipelines`
path component (what `vtp image build` tags), an image starting with a `$VTP_PROJECT_IMAGE`
prefix (the local service's rule), or the image `vtp image build` built last.
"""

import json
import os
import re
from collections.abc import Iterator, Mapping

import yaml

from vtp.images import COMPONENT_IMAGE, is_project_image

PROJECT_IMAGE_ENV = "VTP_PROJECT_IMAGE"
"""Comma-separated image prefixes that also count as ours (as for the local service)."""

_IMAGE_KEYS = ("image", "imageUri", "executorImageUri")
"""Keys whose value is an image: an executor's container, a pool's container or package."""
_IN_STRING = re.compile(
    r"(?:container-image-uri=|executor-image-uri=|\"(?:imageUri|executorImageUri)\"\s*:\s*\")"
    r"([^,\s\"'\\]+)"
)
"""An image inside a string: gcloud's --worker-pool-spec syntax, or JSON held as text."""
_WHOLE_IMAGE = re.compile(
    r"[a-z0-9][a-z0-9.-]*\.[a-z]+(?::\d+)?/[a-z0-9._/-]+(?::\w[\w.-]{0,127})?(?:@sha256:[0-9a-f]{64})?"
)
"""A value that is an image and nothing else (a registry host with a dot, a path)."""
_IMAGE_CHAR = r"[\w.\-/:@]"
_BAD_IMAGE = re.compile(r"[\s,\"'\\]")


def project_prefixes(environ: Mapping[str, str] = os.environ) -> tuple[str, ...]:
    """The prefixes `$VTP_PROJECT_IMAGE` names."""
    return tuple(p.strip() for p in environ.get(PROJECT_IMAGE_ENV, "").split(",") if p.strip())


def is_ours(image: str, prefixes: tuple[str, ...] = (), also: tuple[str, ...] = ()) -> bool:
    """True when `image` is this project's (see the module docstring); `also` are images that
    are ours whatever their names (the last built, the one a shipped pipeline was compiled for)."""
    return (
        image == COMPONENT_IMAGE
        or image in also
        or is_project_image(image)
        or any(image.startswith(prefix) for prefix in prefixes)
    )


def images_in(text: str) -> list[str]:
    """Every image a compiled pipeline (YAML or JSON) names, in order of first appearance."""
    found: dict[str, None] = {}
    for document in yaml.safe_load_all(text):
        for image in _walk(document):
            found.setdefault(image, None)
    return list(found)


def our_images(text: str, prefixes: tuple[str, ...] = (), also: tuple[str, ...] = ()) -> list[str]:
    """The images of `text` that are ours, in order of first appearance."""
    return [image for image in images_in(text) if is_ours(image, prefixes, also)]


def retarget(
    text: str, image: str, prefixes: tuple[str, ...] = (), also: tuple[str, ...] = ()
) -> str:
    """`text` with each of our images replaced by `image` wherever it appears as a whole image
    name; every other image (and every other string) is left as it was."""
    for old in our_images(text, prefixes, also):
        if old != image:
            pattern = rf"(?<!{_IMAGE_CHAR}){re.escape(old)}(?!{_IMAGE_CHAR})"
            text = re.sub(pattern, lambda _: image, text)
    return text


def names_placeholder(text: str) -> bool:
    """True when the pipeline would run the placeholder image somewhere."""
    return COMPONENT_IMAGE in images_in(text)


def check_image(image: str) -> str:
    """`image` when it can stand in a worker pool spec; ValueError saying why not (a comma
    would split gcloud's syntax, a quote or space the spec's strings)."""
    if not image or _BAD_IMAGE.search(image):
        raise ValueError(f"{image!r} is not an image name (REGISTRY/PATH:TAG, no spaces or commas)")
    return image


def _walk(value: object) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in _IMAGE_KEYS and isinstance(item, str) and item:
                yield item
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)
    elif isinstance(value, str):
        yield from _in_string(value)


def _in_string(value: str) -> Iterator[str]:
    if _WHOLE_IMAGE.fullmatch(value):
        yield value
    yield from _IN_STRING.findall(value)
    if value.startswith(("[", "{")):
        yield from _walk(_json(value))


def _json(value: str) -> object:
    """The JSON a string holds, or None: a string that only looks like JSON is just text."""
    try:
        return json.loads(value)
    except ValueError:
        return None
