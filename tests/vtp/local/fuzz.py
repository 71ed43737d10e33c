"""A seeded fuzzer for the local service's HTTP front: every route, malformed in every way found.

`requests_for(seed, count, token)` yields `Sent` requests, the same ones for the same seed:

- Vertex's REST API (custom jobs, tuning, pipeline jobs, schedules, models, endpoints): valid
  bodies for each route, then mutated (subtrees replaced by wrongly typed values, keys dropped
  or invented, runaway nesting, bad UTF-8, truncation), odd IDs and query values (non-ASCII
  digits, huge numbers, runaway filters);
- Cloud Storage's JSON API: buckets and objects (get, insert, list, delete, copy, compose) with
  odd names, prefixes, delimiters and page tokens; media, multipart and resumable uploads with
  odd `uploadType`s, broken multipart bodies, bad and unknown `upload_id`s, odd `Content-Range`;
  media downloads with odd `Range` headers;
- serving: `:predict` and `:rawPredict` with malformed bodies, on an endpoint with nothing
  deployed (made by the prologue), on missing ones and on odd IDs;
- the console: its pages and static files under odd paths, methods, query strings, cookies;
- the protocol itself, as raw bytes: bad request lines and versions, HTTP/0.9, oversized lines
  and header blocks, duplicate or conflicting framing headers, raw non-ASCII and NUL in paths,
  methods /healthz does not take, Expect: 100-continue.

The first requests (`_prologue`) make what the rest can find: a bucket, an object in it, a
resumable session (whose `upload_id` later requests use), an endpoint. `send_all` sends them to a
service, one connection each, and tallies the answers by status; a 5xx other than 501 (a method
the service does not implement, deliberately), a dropped connection or a timeout is a failure
naming the request. The suite's fuzz test runs a few hundred; `bench/fuzz_service.py` thousands.
"""

import copy
import http.client
import json
import random
import re
import socket
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import quote

PARENT = "projects/local/locations/us-central1"
POOL = {
    "machineSpec": {"machineType": "n1-standard-4"},
    "replicaCount": "1",
    "containerSpec": {"imageUri": "fuzz/x", "command": ["true"], "args": [], "env": []},
}
SPEC = {
    "pipelineInfo": {"name": "fuzz"},
    "root": {
        "dag": {"tasks": {"t": {"componentRef": {"name": "comp-missing"}}}},
        "inputDefinitions": {"parameters": {"x": {"parameterType": "NUMBER_INTEGER"}}},
    },
    "components": {},
    "deploymentSpec": {"executors": {}},
    "schemaVersion": "2.1.0",
    "defaultPipelineRoot": "gs://fuzz/root",
}
BODIES: dict[str, object] = {
    "customJobs": {"displayName": "fuzz", "jobSpec": {"workerPoolSpecs": [POOL]}},
    "hyperparameterTuningJobs": {
        "displayName": "fuzz",
        "studySpec": {
            "metrics": [{"metricId": "m", "goal": "MAXIMIZE"}],
            "parameters": [{"parameterId": "x", "doubleValueSpec": {"minValue": 0, "maxValue": 1}}],
        },
        "maxTrialCount": 1,
        "parallelTrialCount": 1,
        "trialJobSpec": {"workerPoolSpecs": [POOL]},
    },
    "pipelineJobs": {"pipelineSpec": SPEC, "runtimeConfig": {"parameterValues": {"x": 1}}},
    "schedules": {
        "displayName": "fuzz",
        "cron": "0 3 * * *",
        "maxConcurrentRunCount": "1",
        "createPipelineJobRequest": {"parent": PARENT, "pipelineJob": {"pipelineSpec": SPEC}},
    },
    "models:upload": {
        "model": {
            "displayName": "fuzz",
            "artifactUri": "gs://fuzz/model",
            "containerSpec": {"imageUri": "fuzz/serve"},
        }
    },
    "preempt": {"replica": "workerpool0-0", "gracePeriod": "1s"},
    "resume": {"catchUp": False},
    "entries": {"resourceNames": ["projects/local"], "filter": "", "pageSize": 10},
}
COLLECTIONS = ("customJobs", "hyperparameterTuningJobs", "pipelineJobs", "schedules", "models")
VERBS = {
    "customJobs": (":cancel", ":preempt", ":logs"),
    "hyperparameterTuningJobs": (":cancel",),
    "pipelineJobs": (":cancel", ":logs"),
    "schedules": (":pause", ":resume"),
    "models": (":listVersions",),
}
IDS = ("123", "-", "0", "x" * 300, "%00", "..", "%2e%2e", "\u00e9", "1@2", "a b", "9" * 40)
NUMBERS = ("0", "10", "-1", "\u00b2", "\u0661\u0662", "1e3", "99999999999999999999", "", "x")
FILTERS = (
    'display_name="fuzz"',
    "(" * 3000 + "a=1" + ")" * 3000,
    "NOT " * 3000 + "a=1",
    'state="JOB_STATE_RUNNING" AND labels.x:*',
    '"unterminated',
    "a" * 10000,
    "a=1 OR (b=2 AND NOT c=3)",
)
NASTY_VALUES: tuple[object, ...] = (
    None, True, 0, -1, 1.5, 1e308, "", "x", "\u0000", "gs://b/../../etc", [], {}, [1, [2]],
    {"a": {"b": None}}, "9" * 50,
)  # fmt: skip


SESSION = "{session}"
"""Stands for the upload_id of the prologue's resumable session in a path (`send_all` fills it)."""

HOST = b"{host}"
"""Stands for `127.0.0.1:PORT` in a raw request (`send_all` fills it)."""

ENDPOINT = "4242"
"""The endpoint the prologue creates: it exists, with no model deployed."""

BUCKET, OBJECT = "fuzz-bucket", "a.txt"
"""The bucket and object the prologue creates."""


@dataclass(frozen=True)
class Sent:
    """One request: `raw` (the whole request's bytes) or method, path, headers and body."""

    method: str
    path: str
    headers: dict[str, str | bytes] = field(default_factory=dict)
    body: bytes = b""
    raw: bytes | None = None

    def label(self) -> str:
        """What a failure line names: the request, cut short."""
        if self.raw is not None:
            return f"RAW {self.raw[:160]!r}"
        return f"{self.method} {self.path[:160]} {self.headers_named()} {self.body[:160]!r}"

    def headers_named(self) -> str:
        odd = {k: v for k, v in self.headers.items() if k not in ("Authorization",)}
        return json.dumps({k: v if isinstance(v, str) else repr(v) for k, v in odd.items()})


@dataclass(frozen=True)
class KnownOpen:
    """A 5xx the fuzzer found in code owned elsewhere, reported and awaiting its fix there.
    `send_all` tallies answers that match it apart (`Tally.known`) so the suite's run stays a
    check on everything else; `test_fuzz.py` replays each entry's `sent` and fails the day the
    fix lands (it answers under 500), so the entry is removed then."""

    name: str
    pattern: str
    """Searched for in a failing request's `Sent.label()`."""
    sent: Sent
    """The request that shows it (after the prologue; the token is added)."""


KNOWN_OPEN: tuple[KnownOpen, ...] = ()


@dataclass
class Tally:
    """What a fuzz run saw."""

    sent: int = 0
    by_status: Counter = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    """5xx answers (501 aside), dropped connections and timeouts: each a line naming the request."""
    known: list[str] = field(default_factory=list)
    """5xx answers that match a KNOWN_OPEN issue, each a line naming the request."""
    slowest: float = 0.0

    @property
    def server_errors(self) -> int:
        """5xx answers other than 501."""
        return sum(n for status, n in self.by_status.items() if status >= 500 and status != 501)


def requests_for(seed: int, count: int, token: str) -> Iterator[Sent]:
    """`count` requests, the same ones for the same seed: the prologue, then fuzz."""
    rng = random.Random(seed)
    prologue = _prologue()
    for index in range(count):
        if index < len(prologue):
            sent = prologue[index]
            yield Sent(sent.method, sent.path, {**_base(token), **sent.headers}, sent.body)
            continue
        roll = rng.random()
        if roll < 0.08:
            yield _raw_request(rng, token)
            continue
        if roll < 0.38:
            method, path, body, extra = _request(rng)
        elif roll < 0.68:
            method, path, body, extra = _storage_request(rng)
        elif roll < 0.83:
            method, path, body, extra = _serving_request(rng)
        else:
            method, path, body, extra = _console_request(rng, token)
        headers = {**_base(token), **extra}
        roll = rng.random()
        if roll < 0.03:
            headers.pop("Authorization", None)
        elif roll < 0.05:
            headers["Content-Type"] = "text/plain"
        yield Sent(method, path, {k: v for k, v in headers.items() if v is not None}, body)


def _base(token: str) -> dict[str, str | bytes | None]:
    return {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}


def _prologue() -> list[Sent]:
    """What later requests find: a bucket with an object, a resumable session, an endpoint."""
    upload = f"/upload/storage/v1/b/{BUCKET}/o"
    return [
        Sent("POST", "/storage/v1/b?project=local", body=json.dumps({"name": BUCKET}).encode()),
        Sent(
            "POST",
            f"{upload}?uploadType=media&name={OBJECT}",
            {"Content-Type": "text/plain"},
            b"0123456789" * 10,
        ),
        Sent("POST", f"{upload}?uploadType=resumable", body=json.dumps({"name": "r.bin"}).encode()),
        Sent("POST", f"/v1/{PARENT}/endpoints?endpointId={ENDPOINT}", body=b'{"displayName": "f"}'),
    ]


# -- Vertex's REST API ---------------------------------------------------------------------


def _request(rng: random.Random) -> tuple[str, str, bytes, dict]:
    kind = rng.choice(COLLECTIONS)
    base = f"/{rng.choices(['v1', 'v1beta1', 'v2', 'ui'], weights=[14, 4, 1, 1])[0]}/{PARENT}"
    roll = rng.random()
    if roll < 0.25:  # create
        key = "models:upload" if kind == "models" else kind
        path = f"{base}/models:upload" if kind == "models" else f"{base}/{kind}"
        return "POST", path + _query(rng, create=True), _body(rng, BODIES[key]), {}
    if roll < 0.45:  # list
        return "GET", f"{base}/{kind}" + _query(rng), b"", {}
    if roll < 0.75:  # one resource, or a verb on it
        path = f"{base}/{kind}/{_escape(rng.choice(IDS), safe='%@-.')}"
        verb = rng.choice(("", "", *VERBS[kind]))
        method = rng.choice(("GET", "DELETE")) if not verb else _verb_method(verb)
        body = _body(rng, BODIES.get(verb.strip(":"), {})) if method == "POST" else b""
        return method, path + verb + _query(rng), body, {}
    if roll < 0.85:
        op = f"{base}/operations/{_escape(rng.choice(IDS), safe='%@-.')}"
        op += rng.choice(("", ":wait"))
        return rng.choice(("GET", "POST")), op, b"", {}
    if roll < 0.95:
        return "POST", "/v2/entries:list", _body(rng, BODIES["entries"]), {}
    method = rng.choice(("GET", "POST", "PATCH", "PUT", "DELETE"))
    return method, rng.choice(("/", "/x", "/v1/", "//", "/healthz", "/healthz?x=1")), b"", {}


# -- Cloud Storage -------------------------------------------------------------------------

BUCKETS = (
    BUCKET, BUCKET, BUCKET, "missing-bucket", "..", "%2e%2e", "A", "x" * 300, "a..b", "-",
    "%00", "b%2Fc", "%C3%A9", "a%20b", ".",
)  # fmt: skip
OBJECTS = (
    OBJECT, OBJECT, OBJECT, "missing.txt", "a%2Fb.txt", "..", "a%2F..%2F..%2Fetc", "%00",
    "x" * 2000, "a%2F%2Fb", "d%2F", ".", "a%5Cb", "a%0Ab", "%2F", "a%2F.%2Fb", "%E2%80%AE.txt",
    "%C3%A9.txt", "%FF", "a%",
)  # fmt: skip
NAMES = (
    "n.txt", "..", "a/../../b", "/leading", "trailing/", "a//b", "\x00", "a\\b", "x" * 2000, "",
    "\u00e9\u202e", "a\nb", ".", "dir/n.txt",
)  # fmt: skip
UPLOAD_TYPES = ("media", "multipart", "resumable", "", "nope", "RESUMABLE", "media\x00", "media ")
PREFIXES = ("", "a", "../", "..", "/", "%", "\x00", "a/../../", "x" * 3000, "\u00e9", "*")
UPLOAD_IDS = (
    SESSION, SESSION, "x", "A" * 32, "A" * 64, "A" * 65, "..%2F..%2Fetc", "%00" * 20,
    "session-" + "A" * 20, "", "\u00e9" * 20,
)  # fmt: skip
RANGES: tuple[str | bytes, ...] = (
    "bytes=0-0", "bytes=0-", "bytes=-1", "bytes=-0", "bytes=5-1", "bytes=0-99999999999999999999",
    "bytes=99999999999-", "bytes=abc", "bytes=0-1,2-3", "items=0-1", "bytes=", "bytes=--1",
    b"bytes=\xb2-", "bytes=1-2-3", " bytes = 0 - 1 ", "bytes=000000000000000000000001-2",
    "bytes=100-", "bytes=99-99", "bytes=-999999999999999999999",
)  # fmt: skip
CONTENT_RANGES: tuple[str | bytes, ...] = (
    "bytes 0-9/10", "bytes */*", "bytes */10", "bytes 5-1/10", "bytes 0-9/*",
    "bytes 0-99999999999999999999/1", "bytes x-y/z", "", "bytes 0-0/0", "bytes -1-5/10",
    b"bytes \xb2-2/3", "bytes 10-19/5", "bytes */0", "bytes 0-9/99999999999999999999",
)  # fmt: skip
MEDIA_TYPES = (
    None, "application/octet-stream", "text/plain", "application/json", "multipart/related",
    "multipart/related; boundary=b", "multipart/related; boundary='b'",
    "multipart/related; boundary=", "image/png; charset=\x7f",
)  # fmt: skip
LIST_KEYS = (
    "prefix", "delimiter", "maxResults", "pageToken", "startOffset", "endOffset", "versions",
    "project", "projection", "fields", "generation", "ifGenerationMatch", "ifGenerationNotMatch",
    "alt", "userProject",
)  # fmt: skip
STORAGE_VALUES = (
    "", "0", "-1", "1", "1000000", "99999999999999999999", "\u0661", "%%%", "x", "full",
    "media", "json", "true", "/", "../", "\x00", "A" * 3000,
)  # fmt: skip


def _storage_request(rng: random.Random) -> tuple[str, str, bytes, dict]:
    """A Cloud Storage JSON API request: odd names, upload types, sessions, ranges, queries."""
    bucket, name = rng.choice(BUCKETS), rng.choice(OBJECTS)
    kind = rng.randrange(12)
    upload = rng.choice(("/upload", "/resumable/upload"))
    if kind == 0:  # buckets: list, insert
        if rng.random() < 0.5:
            return "GET", "/storage/v1/b" + _storage_query(rng, "project=local"), b"", {}
        body = _body(rng, {"name": rng.choice(BUCKETS).replace("%", "")})
        return "POST", "/storage/v1/b?project=local", body, {}
    if kind == 1:  # one bucket, its IAM policy
        method = rng.choice(("GET", "PATCH", "DELETE", "PUT", "POST"))
        tail = rng.choice(("", "", "/iam", "/iam/testPermissions"))
        body = _body(rng, {"bindings": [], "labels": {"a": "b"}}) if method != "GET" else b""
        return method, f"/storage/v1/b/{bucket}{tail}" + _storage_query(rng), body, {}
    if kind == 2:  # objects.list
        return "GET", f"/storage/v1/b/{bucket}/o" + _storage_query(rng, list_=True), b"", {}
    if kind == 3:  # one object
        method = rng.choice(("GET", "GET", "PATCH", "PUT", "DELETE", "POST"))
        headers = {"Range": rng.choice(RANGES)} if rng.random() < 0.3 else {}
        body = _body(rng, {"metadata": {"a": "b"}}) if method != "GET" else b""
        return method, f"/storage/v1/b/{bucket}/o/{name}" + _storage_query(rng), body, headers
    if kind == 4:  # copy, rewrite, compose
        verb = rng.choice(("copyTo", "rewriteTo", "compose"))
        tail = "compose" if verb == "compose" else f"{verb}/b/{rng.choice(BUCKETS)}/o/{name}"
        source = rng.choice(OBJECTS).replace("%2F", "/")
        valid = {"sourceObjects": [{"name": source}], "destination": {"contentType": "x"}}
        path = f"/storage/v1/b/{bucket}/o/{rng.choice(OBJECTS)}/{tail}" + _storage_query(rng)
        return "POST", path, _body(rng, valid), {}
    if kind in (5, 6):  # media and multipart uploads
        upload_type = rng.choice(UPLOAD_TYPES)
        path = f"{upload}/storage/v1/b/{bucket}/o?uploadType={_escape(upload_type)}"
        if rng.random() < 0.8:
            path += f"&name={_escape(rng.choice(NAMES))}"
        if upload_type == "multipart" or rng.random() < 0.2:
            content_type, body = _multipart(rng)
            return "POST", path, body, {"Content-Type": content_type}
        body = rng.choice((b"", b"data", bytes(range(256)), b"\xff" * 70_000))
        return rng.choice(("POST", "POST", "PUT")), path, body, _media_type(rng)
    if kind == 7:  # a resumable session: started with odd metadata and headers
        path = f"{upload}/storage/v1/b/{bucket}/o?uploadType=resumable"
        if rng.random() < 0.5:
            path += f"&name={_escape(rng.choice(NAMES))}"
        headers: dict[str, str | bytes] = {}
        if rng.random() < 0.5:
            headers["X-Upload-Content-Type"] = rng.choice(("text/plain", "", "\x7f", "a/b/c"))
        if rng.random() < 0.5:
            headers["X-Upload-Content-Length"] = rng.choice(("10", "-1", "x", "9" * 30, ""))
        return "POST", path, _body(rng, {"name": rng.choice(NAMES), "metadata": {}}), headers
    if kind in (8, 9):  # a resumable session's chunks, status checks and cancels
        upload_id = _escape(rng.choice(UPLOAD_IDS), safe="%{}")
        path = f"{upload}/storage/v1/b/{bucket}/o?uploadType=resumable&upload_id={upload_id}"
        method = rng.choice(("PUT", "PUT", "PUT", "DELETE", "POST", "GET"))
        headers = {"Content-Range": rng.choice(CONTENT_RANGES)} if rng.random() < 0.8 else {}
        body = rng.choice((b"", b"0123456789", b"x" * 1000)) if method == "PUT" else b""
        return method, path, body, {**headers, **_media_type(rng)}
    # media downloads with odd Range headers
    path = f"/download/storage/v1/b/{bucket}/o/{name}" + rng.choice(("", "?alt=media", "?x=%"))
    headers = {"Range": rng.choice(RANGES)} if rng.random() < 0.8 else {}
    if rng.random() < 0.1:
        headers["If-None-Match"] = rng.choice(('"x"', "*", ""))
    return rng.choice(("GET", "GET", "GET", "HEAD", "POST")), path, b"", headers


def _storage_query(rng: random.Random, first: str = "", list_: bool = False) -> str:
    pairs = [first] if first else []
    if rng.random() < (0.9 if list_ else 0.4):
        for key in rng.sample(LIST_KEYS, rng.randint(1, 3)):
            value = rng.choice(PREFIXES if key in ("prefix", "delimiter") else STORAGE_VALUES)
            pairs.append(f"{key}={_escape(value)}")
    if rng.random() < 0.05:
        pairs.append(rng.choice(("%", "=", "&&", "a=%zz", "prefix", "prefix=a&prefix=b")))
    return "?" + "&".join(pairs) if pairs else ""


def _media_type(rng: random.Random) -> dict[str, str | bytes | None]:
    return {"Content-Type": rng.choice(MEDIA_TYPES)}


def _multipart(rng: random.Random) -> tuple[str, bytes]:
    """A multipart/related upload body, valid or broken in one of several ways."""
    boundary = rng.choice(("b0undary", "", "x" * 200, "a b", "'q'"))
    metadata = _body(rng, {"name": rng.choice(NAMES), "contentType": "text/plain"})
    parts = [
        b"Content-Type: application/json; charset=UTF-8\r\n\r\n" + metadata,
        b"Content-Type: " + rng.choice((b"text/plain", b"", b"multipart/mixed")) + b"\r\n\r\ndata",
    ]
    roll = rng.random()
    if roll < 0.2:
        parts = parts[:1]
    elif roll < 0.3:
        parts = parts * 3
    delimiter = b"--" + boundary.encode()
    body = b"".join(delimiter + b"\r\n" + part + b"\r\n" for part in parts)
    if rng.random() < 0.8:
        body += delimiter + b"--\r\n"
    if rng.random() < 0.1:
        body = body[: rng.randint(0, len(body))]
    content_type = rng.choice(
        (
            f"multipart/related; boundary={boundary}",
            f"multipart/related; boundary='{boundary}'",
            "multipart/related",
            "multipart/form-data; boundary=b0undary",
            "text/plain",
        )
    )
    return content_type, body


# -- serving -------------------------------------------------------------------------------

PREDICT: dict[str, object] = {"instances": [[0.5, 1.0, 2.0]], "parameters": {"k": 1}}
RAW_BODIES = (
    b"", b"{}", b"[]", b"null", b"\xff\xfe", b'{"instances": ', b"[" * 5000,
    b'{"httpBody": {"data": "!!not base64!!"}}', b'{"httpBody": {"data": 5}}',
    b'{"httpBody": "x"}', b'{"httpBody": {"data": "eyJpbnN0YW5jZXMiOiBbXX0="}}',
    b'{"instances": [[1e999]]}', b"x" * 100_000,
)  # fmt: skip
ENDPOINT_IDS = (ENDPOINT, ENDPOINT, ENDPOINT, "999", *IDS)
DEPLOY = {
    "deployedModel": {
        "model": f"{PARENT}/models/999",
        "dedicatedResources": {"machineSpec": {"machineType": "n1-standard-4"}},
    },
    "trafficSplit": {"0": 100},
}


def _serving_request(rng: random.Random) -> tuple[str, str, bytes, dict]:
    """`:predict` and `:rawPredict` with malformed bodies, and the endpoints routes around them;
    nothing gets deployed (no model exists for `:deployModel` to find)."""
    version = rng.choices(["v1", "v1beta1", "ui"], weights=[8, 2, 1])[0]
    endpoint = _escape(rng.choice(ENDPOINT_IDS), safe="%@-.")
    path = f"/{version}/{PARENT}/endpoints/{endpoint}"
    roll = rng.random()
    if roll < 0.4:
        return "POST", path + ":predict", _body(rng, PREDICT), {}
    if roll < 0.7:
        body = rng.choice(RAW_BODIES) if rng.random() < 0.6 else _body(rng, PREDICT)
        return "POST", path + ":rawPredict", body, _media_type(rng) if rng.random() < 0.2 else {}
    if roll < 0.8:
        verb, valid = rng.choice(((":deployModel", DEPLOY), (":undeployModel", {"x": 1})))
        return "POST", path + verb, _body(rng, valid), {}
    if roll < 0.9:
        method = rng.choice(("GET", "DELETE", "PATCH", "PUT"))
        body = _body(rng, {"displayName": "f"}) if method in ("PATCH", "PUT") else b""
        return method, path + _query(rng), body, {}
    return "GET", f"/{version}/{PARENT}/endpoints" + _query(rng), b"", {}


# -- the console ---------------------------------------------------------------------------

CONSOLE_PATHS = (
    "/console", "/console/", "/console/", "/console/index.html", "/console/app.js",
    "/console/style.css", "/console/settings.json", "/console/vendor/dagre.min.js",
    "/console/vendor/", "/console/vendor", "/console/vendor/LICENSE.dagre",
    "/console/../../etc/passwd", "/console/%2e%2e/%2e%2e/etc/passwd",
    "/console/..%2f..%2fetc%2fpasswd", "/console//", "/console/%00", "/console/" + "a" * 3000,
    "/console/static/", "/console/index.html/", "/console/.", "/console/%C3%A9",
    "/console/app.js;x", "/consolex", "/console%2Findex.html", "/console/./index.html",
    "/console/vendor/../../../server.py", "/console/\\..\\..\\x", "/console/%ZZ",
    "/console/signin", "/console/signin", "/console/signin/", "/console/signin.js/../signin",
)  # fmt: skip
SIGNIN_CODES = ("", "x", "a.b.c", "0.0.0", "f" * 200, "f" * 201, "ffffffff..", "\u0000", None, 7)
CONSOLE_QUERIES = (
    "", "", "?token={token}", "?token=wrong", "?token=", "?token={token}&token=x", "?x=%ZZ",
    "?" + "a=1&" * 500, "?token[]=1", "?%00=%00", "?token={token}#frag", "?=", "?&&&",
)  # fmt: skip
CONSOLE_METHODS = ("GET", "GET", "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH")


def _console_request(rng: random.Random, token: str) -> tuple[str, str, bytes, dict]:
    """A console page or static file under an odd path, method, query, cookie or Origin."""
    path = rng.choice(CONSOLE_PATHS) + rng.choice(CONSOLE_QUERIES).replace("{token}", token)
    method = rng.choice(CONSOLE_METHODS)
    headers: dict[str, str | bytes | None] = {}
    roll = rng.random()
    if roll < 0.3:  # the browser's way: a cookie, no token
        headers["Authorization"] = None
        headers["Cookie"] = rng.choice(
            ("vtp_console=wrong", "vtp_console=", "a=b; vtp_console", "\x7f=\x7f", '"', "=;=;")
        )
    elif roll < 0.4:
        headers["Authorization"] = None
    if rng.random() < 0.2:
        headers["Origin"] = rng.choice(("http://evil.example", "null", "", "http://127.0.0.1:1"))
    fields = {"code": rng.choice(SIGNIN_CODES)} if "signin" in path else {"x": 1}
    body = _body(rng, fields) if method in ("POST", "PUT", "PATCH") else b""
    return method, path, body, headers


# -- the protocol, as raw bytes ------------------------------------------------------------


def _raw_request(rng: random.Random, token: str) -> Sent:
    """A request whose line or headers a client library would not send."""
    auth = f"Authorization: Bearer {token}\r\n".encode()
    host = b"Host: " + HOST + b"\r\n"
    job = f"/v1/{PARENT}/customJobs".encode()
    declared = rng.choice((b"0", b"10", b"1000000000", b"33554433"))
    cases = (
        b"GET /healthz HTTP/1.1\r\n\r\n",  # no Host
        b"GET /healthz HTTP/9.9\r\n" + host + b"\r\n",
        b"GET /healthz HTTP/1.1.1\r\n" + host + b"\r\n",
        b"GET /healthz HTTX/1.1\r\n" + host + b"\r\n",
        b"GET /healthz\r\n\r\n",  # HTTP/0.9
        b"POST /healthz\r\n\r\n",
        b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n" + host + b"\r\n",
        b"GET /healthz HTTP/1.1\r\n" + host + b"X: " + b"a" * 70_000 + b"\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\n"
        + host
        + b"".join(b"X%d: y\r\n" % i for i in range(150))
        + b"\r\n",
        b"GET /console/\xff\xfe HTTP/1.1\r\n" + host + auth + b"\r\n",
        b"GET /v1/\x00 HTTP/1.1\r\n" + host + auth + b"\r\n",
        b"GET /healthz HTTP/1.1\r\n"
        + host
        + b"Content-Length: 5\r\nContent-Length: 7\r\n\r\nabcde",
        b"POST "
        + job
        + b" HTTP/1.1\r\n"
        + host
        + auth
        + b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        b"POST " + job + b" HTTP/1.1\r\n" + host + auth + b"Transfer-Encoding: gzip\r\n"
        b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
        b"POST " + job + b" HTTP/1.1\r\n" + host + auth + b"Content-Length: 2\r\n"
        b"Content-Length: 3\r\nContent-Type: application/json\r\n\r\n{}x",
        b"POST " + job + b" HTTP/1.1\r\n" + host + auth + b"Content-Type: application/json\r\n"
        b"Content-Length: \xb2\r\n\r\n",
        b"POST /healthz HTTP/1.1\r\n" + host + b"Content-Length: " + declared + b"\r\n\r\n",
        b"PUT /healthz HTTP/1.1\r\n" + host + b"Content-Length: " + declared + b"\r\n\r\n",
        b"DELETE /healthz HTTP/1.1\r\n" + host + b"\r\n",
        b"OPTIONS /healthz HTTP/1.1\r\n" + host + b"\r\n",
        b"HEAD /healthz HTTP/1.1\r\n" + host + b"\r\n",
        b"OPTIONS " + job + b" HTTP/1.1\r\n" + host + b"Origin: http://evil.example\r\n"
        b"Access-Control-Request-Method: POST\r\n\r\n",
        b"TRACE / HTTP/1.1\r\n" + host + b"\r\n",
        b"BREW /healthz HTTP/1.1\r\n" + host + b"\r\n",
        b"get /healthz HTTP/1.1\r\n" + host + b"\r\n",
        b"GET http://evil.example/healthz HTTP/1.1\r\n" + host + b"\r\n",
        b"GET * HTTP/1.1\r\n" + host + b"\r\n",
        b"CONNECT 127.0.0.1:22 HTTP/1.1\r\n" + host + b"\r\n",
        b"POST " + job + b" HTTP/1.1\r\n" + host + auth + b"Expect: 100-continue\r\n"
        b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
        b"POST " + job + b" HTTP/1.1\r\n" + host + b"Expect: 100-continue\r\n"
        b"Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: \xff\xfe\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\n" + host + b" folded: header\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\n" + host + b"NoColon\r\n\r\n",
        b"\r\n\r\nGET /healthz HTTP/1.1\r\n" + host + b"\r\n",
        b"GET  /healthz  HTTP/1.1\r\n" + host + b"\r\n",
        b"GET /healthz HTTP/1.1\n" + host.replace(b"\r\n", b"\n") + b"\n",
    )
    return Sent("RAW", "", raw=rng.choice(cases))


# -- bodies, queries, IDs ------------------------------------------------------------------


def _verb_method(verb: str) -> str:
    return "GET" if verb in (":logs", ":listVersions") else "POST"


def _query(rng: random.Random, create: bool = False) -> str:
    if rng.random() < 0.4:
        return ""
    pairs = []
    for key in rng.sample(["pageSize", "pageToken", "filter", "offset", "maxBytes", "$alt"], 2):
        value = rng.choice(FILTERS) if key == "filter" else rng.choice(NUMBERS)
        if key == "$alt":
            value = "json;enum-encoding=int"
        pairs.append(f"{key}={_escape(value)}")
    if create and rng.random() < 0.5:
        pairs.append(f"pipelineJobId={_escape(rng.choice(IDS))}")
    return "?" + "&".join(pairs)


def _escape(value: str, safe: str = "") -> str:
    return quote(value, safe=safe)


def _body(rng: random.Random, valid: object) -> bytes:
    roll = rng.random()
    if roll < 0.15:
        return json.dumps(valid).encode()
    if roll < 0.2:
        return b"[" * rng.choice((100, 5000, 100_000))
    if roll < 0.25:
        return b'{"displayName": "\xff\xfe"}'
    if roll < 0.3:
        return json.dumps(valid).encode()[: rng.randint(0, 40)]
    if roll < 0.33:
        return json.dumps(_nasty(rng)).encode()
    mutated = json.loads(json.dumps(valid))
    for _ in range(rng.randint(1, 4)):
        mutated = _mutate(rng, mutated)
    return json.dumps(mutated).encode()


def _mutate(rng: random.Random, value: object) -> object:
    """`value` with one random part replaced, dropped, or given an unknown sibling."""
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(list(value))
        roll = rng.random()
        if roll < 0.2:
            value.pop(key)
        elif roll < 0.3:
            value["unknownField"] = _nasty(rng)
        elif roll < 0.6:
            value[key] = _nasty(rng)
        else:
            value[key] = _mutate(rng, value[key])
        return value
    if isinstance(value, list) and value and rng.random() < 0.8:
        index = rng.randrange(len(value))
        value[index] = _mutate(rng, value[index]) if rng.random() < 0.5 else _nasty(rng)
        return value
    return _nasty(rng)


def _nasty(rng: random.Random) -> object:
    return copy.deepcopy(rng.choice(NASTY_VALUES))  # mutations must not reach the constants


def send_all(url: str, token: str, seed: int, count: int, timeout: float = 10.0) -> Tally:
    """Send the seed's requests to the service at `url`, one connection each; tally them. A
    request not answered (or its connection not closed) within `timeout` is a failure."""
    host, port = url.removeprefix("http://").split(":")
    address = (host, int(port))
    tally = Tally()
    session = "A" * 32  # an upload_id no session has, until the prologue's is known
    for sent in requests_for(seed, count, token):
        started = time.monotonic()
        try:
            if sent.raw is not None:
                raw = sent.raw.replace(HOST, f"{host}:{port}".encode())
                status = _send_raw(address, raw, timeout)
            else:
                status, location = _send(address, sent, session, timeout)
                found = re.search(r"[?&]upload_id=([^&]+)", location)
                session = found.group(1) if found and sent.path.endswith("resumable") else session
        except (OSError, http.client.HTTPException, ValueError) as exc:
            tally.failures.append(f"{sent.label()}: {type(exc).__name__} {exc}")
            status = 0
        tally.sent += 1
        tally.by_status[status] += 1
        tally.slowest = max(tally.slowest, time.monotonic() - started)
        if status >= 500 and status != 501:
            label = sent.label()
            known = any(re.search(issue.pattern, label) for issue in KNOWN_OPEN)
            (tally.known if known else tally.failures).append(f"{label}: {status}")
    return tally


def _send(address: tuple[str, int], sent: Sent, session: str, timeout: float) -> tuple[int, str]:
    """The status and Location of the answer to one request through http.client."""
    connection = http.client.HTTPConnection(*address, timeout=timeout)
    try:
        path = sent.path.replace(SESSION, session)
        connection.request(sent.method, path, body=sent.body or None, headers=sent.headers)
        response = connection.getresponse()
        response.read()
        return response.status, response.getheader("Location") or ""
    finally:
        connection.close()


def _send_raw(address: tuple[str, int], raw: bytes, timeout: float) -> int:
    """The final status of the answer to `raw` bytes: sent, then the writing side closed, so
    the service's next wait on this connection ends at once and it closes."""
    with socket.create_connection(address, timeout=timeout) as sock:
        try:
            sock.sendall(raw)
            sock.shutdown(socket.SHUT_WR)
        except OSError:  # answered and closed before it took everything: read the answer
            pass
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except ConnectionResetError:
            if not answer:
                raise
    statuses = re.findall(rb"^HTTP/1\.[01] (\d{3}) ", answer, re.MULTILINE)
    final = [int(status) for status in statuses if not status.startswith(b"1")]
    if not final:
        raise ConnectionError(f"no answer: {answer[:200]!r}")
    return final[0]
