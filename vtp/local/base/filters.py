"""The `filter` of customJobs.list: the subset of AIP-160 that Vertex documents for jobs.

Comparisons `field op value` with `=`, `!=`, `<`, `<=`, `>`, `>=` and `:` (has; `labels.k:*`
tests presence), joined by `AND`, `OR` (which binds tighter, as AIP-160 says) and `NOT`, with
parentheses. Fields are paths into the job resource in snake_case or camelCase
(`display_name`, `state`, `create_time`, `labels.team`). `*` in a string value is a wildcard.
Times compare as RFC 3339 timestamps; booleans are `true` and `false`.

Two forms serve Vertex ML Metadata's lists: a value list after `:` (`parent_contexts:"a","b"`:
any of them), and calls the caller allows (`in_context("c")`, true when the resource's list field
of that name in camelCase, `inContext`, holds the argument); other calls are INVALID_ARGUMENT.
"""

import fnmatch
import json
import re
from collections.abc import Callable, Collection
from datetime import UTC, datetime
from typing import TypeVar

from vtp.local.base import errors

Predicate = Callable[[dict], bool]
Orderable = TypeVar("Orderable", datetime, str)

_TOKEN = re.compile(
    r'\s*(?:(?P<paren>[()])|(?P<comma>,)|(?P<op>!=|<=|>=|=|<|>|:)|"(?P<quoted>(?:[^"\\]|\\.)*)"'
    r'|(?P<word>[^\s()=!<>:",]+))'
)
_KEYWORDS = {"AND", "OR", "NOT"}
MAX_FILTER_LENGTH = 4096
MAX_FILTER_DEPTH = 32


def compile_filter(text: str, functions: Collection[str] = ()) -> Predicate:
    """A predicate over a job's JSON dict (camelCase keys); raise ApiError for a bad filter.
    `functions` are the calls allowed (`in_context`)."""
    if len(text) > MAX_FILTER_LENGTH:
        raise _bad(text[:40] + "...", f"longer than {MAX_FILTER_LENGTH} characters")
    tokens = _tokenize(text)
    # The parser recurses once per parenthesis and per NOT: bound both before it starts.
    opened = sum(1 for token in tokens if token[1] == "(")
    negated = sum(1 for token in tokens if token[1] == "NOT")
    if opened + negated > MAX_FILTER_DEPTH:
        raise _bad(text[:40] + "...", f"more than {MAX_FILTER_DEPTH} parentheses and NOTs")
    if not tokens:
        return lambda _job: True
    parser = _Parser(tokens, text, functions)
    predicate = parser.expression()
    if parser.position != len(tokens):
        raise _bad(text, f"unexpected {tokens[parser.position][1]!r}")
    return predicate


def _tokenize(text: str) -> list[tuple[str, str]]:
    tokens, position = [], 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if not match:
            raise _bad(text, f"cannot read {text[position:]!r}")
        kind = match.lastgroup or ""
        value = match.group(kind)
        if kind == "word" and value in _KEYWORDS:
            kind = value
        tokens.append((kind, value))
        position = match.end()
    return tokens


class _Parser:
    def __init__(
        self, tokens: list[tuple[str, str]], text: str, functions: Collection[str] = ()
    ) -> None:
        self.tokens, self.text, self.position = tokens, text, 0
        self.functions = functions

    def expression(self) -> Predicate:
        terms = [self.term()]
        while self._accept("AND"):
            terms.append(self.term())
        return lambda job: all(t(job) for t in terms)

    def term(self) -> Predicate:
        factors = [self.factor()]
        while self._accept("OR"):
            factors.append(self.factor())
        return lambda job: any(f(job) for f in factors)

    def factor(self) -> Predicate:
        if self._accept("NOT"):
            inner = self.factor()
            return lambda job: not inner(job)
        if self._accept("paren", "("):
            inner = self.expression()
            if not self._accept("paren", ")"):
                raise _bad(self.text, "missing ')'")
            return inner
        return self.comparison()

    def comparison(self) -> Predicate:
        field = self._expect("word", "a field name")
        if self._accept("paren", "("):
            return self.call(field)
        op = self._expect("op", "an operator (=, !=, <, <=, >, >=, :)")
        values = [self.value(f"a value after {field}{op}")]
        while op == ":" and self._accept("comma"):
            values.append(self.value(f"a value after {field}{op}"))
        tests = [_comparison(_path(field), op, value) for value in values]
        return tests[0] if len(tests) == 1 else lambda job: any(t(job) for t in tests)

    def call(self, function: str) -> Predicate:
        if function not in self.functions:
            allowed = ", ".join(sorted(self.functions)) or "none"
            raise _bad(self.text, f"unknown function {function!r} (allowed: {allowed})")
        argument = self.value(f"an argument of {function}()")
        if not self._accept("paren", ")"):
            raise _bad(self.text, f"{function}() takes one argument and a ')'")
        return _comparison(_path(function), ":", argument)

    def value(self, wanted: str) -> str:
        kind, value = self._next(wanted)
        if kind not in ("word", "quoted"):
            raise _bad(self.text, f"expected {wanted}")
        return value.replace('\\"', '"') if kind == "quoted" else value

    def _accept(self, kind: str, value: str | None = None) -> bool:
        if self.position < len(self.tokens):
            token_kind, token_value = self.tokens[self.position]
            if token_kind == kind and value in (None, token_value):
                self.position += 1
                return True
        return False

    def _next(self, wanted: str) -> tuple[str, str]:
        if self.position >= len(self.tokens):
            raise _bad(self.text, f"expected {wanted} at the end")
        self.position += 1
        return self.tokens[self.position - 1]

    def _expect(self, kind: str, wanted: str) -> str:
        token_kind, value = self._next(wanted)
        if token_kind != kind:
            raise _bad(self.text, f"expected {wanted}, got {value!r}")
        return value


def _path(field: str) -> list[str]:
    # snake_case -> camelCase per segment; keys after `labels.` stay as written.
    parts = field.split(".")
    cut = parts.index("labels") + 1 if "labels" in parts else len(parts)
    camel = [re.sub(r"_([a-z])", lambda m: m.group(1).upper(), p) for p in parts[:cut]]
    return camel + parts[cut:]


def _lookup(job: dict, path: list[str]) -> object:
    value: object = job
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def _comparison(path: list[str], op: str, expected: str) -> Predicate:
    def predicate(job: dict) -> bool:
        actual = _lookup(job, path)
        if op == ":":
            return actual is not None if expected == "*" else _has(actual, expected)
        if actual is None:
            return op == "!=" and expected != ""
        text = json.dumps(actual) if isinstance(actual, bool) else str(actual)
        return _compare(text, op, expected)

    return predicate


def _has(actual: object, expected: str) -> bool:
    if isinstance(actual, list | dict):
        return expected in actual
    return actual is not None and fnmatch.fnmatchcase(str(actual), expected)


def _compare(actual: str, op: str, expected: str) -> bool:
    if op in ("=", "!="):
        equal = fnmatch.fnmatchcase(actual, expected) if "*" in expected else actual == expected
        return equal == (op == "=")
    left, right = _orderable(actual), _orderable(expected)
    if isinstance(left, datetime) and isinstance(right, datetime):
        return _order(left, op, right)
    return _order(str(left), op, str(right))


def _order(left: Orderable, op: str, right: Orderable) -> bool:
    return {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op]


def _orderable(value: str) -> datetime | str:
    """A timestamp as a datetime with its offset, one written without (`"2022-06-11"`, as the
    SDK's samples filter by) read as UTC, as Vertex reads it; anything else as text."""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _bad(text: str, problem: str) -> errors.ApiError:
    return errors.invalid_argument(f"Invalid filter {text!r}: {problem}.")
