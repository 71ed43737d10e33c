"""The nesting bound every JSON route applies: exact at the limit, strings aside, linear."""

import json

import pytest

from vtp.local.base.nesting import MAX_DEPTH, deeper_than


def nested(depth: int, inner: str = "1") -> bytes:
    """`depth` levels, alternating objects and arrays, around `inner`."""
    text = inner
    for level in range(depth):
        text = f'{{"k": {text}}}' if level % 2 else f"[{text}, 2]"
    return text.encode()


@pytest.mark.parametrize("depth", [1, 2, MAX_DEPTH - 1, MAX_DEPTH])
def test_bodies_up_to_the_limit_pass(depth):
    body = nested(depth)
    assert json.loads(body) is not None
    assert not deeper_than(body)


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, MAX_DEPTH + 2, 3_000])
def test_bodies_past_the_limit_are_found(depth):
    assert deeper_than(nested(depth))
    assert deeper_than(b"[" * depth * 300)  # never closed: the parser would recurse all the same


def test_brackets_inside_strings_do_not_count():
    body = json.dumps({"text": "[" * 5_000 + '\\"{' * 300, "deep": json.loads(nested(10))})
    assert not deeper_than(body.encode())
    assert deeper_than(json.dumps({"text": "]" * 5_000, "x": [[0]]}).encode(), limit=1)


@pytest.mark.parametrize(
    "body",
    [
        b"[]" * 2_000_000,  # many pairs side by side: removed in rounds, not walked one by one
        (b"[" * MAX_DEPTH + b"]" * MAX_DEPTH) * 10_000,  # at the limit, many times over
        b"[" * MAX_DEPTH + b"[]" * 2_000_000 + b"]" * MAX_DEPTH,  # one level past, once
    ],
    ids=["side-by-side", "at-the-limit", "one-past"],
)
def test_wide_bodies_are_exact(body):
    assert deeper_than(body) == body.startswith(b"[" * MAX_DEPTH + b"[]")
