"""How deep a JSON request body nests, found before anything parses it.

Python's JSON decoder recurses once per `[` or `{` and stops with `RecursionError` somewhere near
the interpreter's recursion limit, and protobuf's JSON parser stops at 100 levels with its own
error: a handler that catches one but not the other answered 500. The router asks `deeper_than`
first, so every JSON route refuses a body that nests deeper than `MAX_DEPTH` the same way, with
a 400 naming the body.

The check is linear in the body and runs in C (a regex removes strings, `translate` keeps the
brackets, `bytes.replace` removes innermost pairs); a Python loop walks the remaining runs of
brackets only once few are left:

- a body with at most `MAX_DEPTH` opening brackets anywhere cannot nest deeper: most bodies stop
  there;
- with strings removed and every bracket written `[` or `]`, and closing brackets added for
  those left open, the depth is the number of rounds of removing every adjacent `[]` (each round
  removes every deepest pair: one level) until nothing is left.
"""

import re

MAX_DEPTH = 100
"""The most levels of arrays and objects a JSON request body may nest: protobuf's JSON parser's
own limit, which Vertex's request messages are parsed under."""

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
"""A JSON string (unrolled: each stretch of plain characters is one step, never a choice)."""
_BRACKETS = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))
_RUN = re.compile(rb"\[+|\]+")
_FEW_PAIRS = 1_000_000
"""Adjacent pairs up to which the runs are walked in Python; above, a round in C (a pass over
the body) removes at least twice as many bytes, so a 32 MiB body takes a few rounds at most."""


def deeper_than(body: bytes, limit: int = MAX_DEPTH) -> bool:
    """True when the JSON text `body` nests arrays and objects more than `limit` levels deep
    (brackets inside strings do not count; a malformed body may count deeper than any parser
    would read it, which only refuses what is malformed anyway)."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    brackets = _STRING.sub(b"", body).translate(_BRACKETS, delete=_NOT_BRACKETS)
    if b"[" * (limit + 1) in brackets:
        return True
    brackets += b"]" * max(0, brackets.count(b"[") - brackets.count(b"]"))
    rounds = 0
    while brackets.count(b"[]") > _FEW_PAIRS:
        brackets, rounds = brackets.replace(b"[]", b""), rounds + 1
    return rounds + _deepest(brackets, limit - rounds) > limit


def _deepest(brackets: bytes, limit: int) -> int:
    """The deepest level `brackets` reaches, or the first level past `limit`."""
    depth = 0
    for run in _RUN.finditer(brackets):
        size = run.end() - run.start()
        depth += size if brackets[run.start()] == ord("[") else -size
        if depth > limit:
            return depth
    return depth
