"""A seeded fuzzer for the local service's HTTP API: every route, malformed in every way found.

`requests_for(seed, count)` yields (method, path, headers, body) tuples: valid bodies for each
route, then mutated (subtrees replaced by wrongly typed values, keys dropped or invented, runaway
nesting, bad UTF-8, truncation), odd IDs and query values (non-ASCII digits, huge numbers,
runaway filters). `send_all` sends them to a service and counts answers by status. The suite's
fuzz test runs a few hundred; `bench/fuzz_service.py` runs thousands.
"""

import copy
import http.client
import json
import random
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


@dataclass
class Tally:
    """What a fuzz run saw."""

    sent: int = 0
    by_status: Counter = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    """5xx answers, dropped connections and timeouts: each a line naming the request."""
    slowest: float = 0.0


def requests_for(seed: int, count: int, token: str) -> Iterator[tuple[str, str, dict, bytes]]:
    """`count` requests, the same ones for the same seed."""
    rng = random.Random(seed)
    for _ in range(count):
        method, path, body = _request(rng)
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        roll = rng.random()
        if roll < 0.03:
            headers.pop("Authorization")
        elif roll < 0.05:
            headers["Content-Type"] = "text/plain"
        yield method, path, headers, body


BUCKETS = ("fuzz-bucket", "..", "%2e%2e", "A", "x" * 300, "a..b", "-", "%00", "b%2Fc")
OBJECTS = ("a.txt", "a%2Fb.txt", "..", "a%2F..%2F..%2Fetc", "%00", "x" * 2000, "a%2F%2Fb", "d%2F")
STORAGE_QUERIES = (
    "", "?uploadType=media&name=a.txt", "?uploadType=multipart", "?uploadType=resumable",
    "?uploadType=resumable&name=..", "?upload_id=x", "?upload_id=" + "A" * 32, "?alt=media",
    "?maxResults=-1", "?maxResults=%D9%A1", "?pageToken=%%%", "?delimiter=/&prefix=a",
    "?ifGenerationMatch=x", "?uploadType=nope&name=a",
)  # fmt: skip


def _storage_request(rng: random.Random) -> tuple[str, str, bytes]:
    """A Cloud Storage JSON API request: odd bucket and object names, upload types, queries."""
    bucket, name = rng.choice(BUCKETS), rng.choice(OBJECTS)
    path = rng.choice(
        (
            "/storage/v1/b",
            f"/storage/v1/b/{bucket}",
            f"/storage/v1/b/{bucket}/o",
            f"/storage/v1/b/{bucket}/o/{name}",
            f"/storage/v1/b/{bucket}/o/{name}/compose",
            f"/storage/v1/b/{bucket}/o/{name}/rewriteTo/b/{bucket}/o/{rng.choice(OBJECTS)}",
            f"/upload/storage/v1/b/{bucket}/o",
            f"/download/storage/v1/b/{bucket}/o/{name}",
        )
    )
    method = rng.choice(("GET", "POST", "PUT", "PATCH", "DELETE"))
    body = _body(rng, {"name": "fuzz-bucket", "sourceObjects": [{"name": "a.txt"}]})
    return method, path + rng.choice(STORAGE_QUERIES), body if method != "GET" else b""


def _request(rng: random.Random) -> tuple[str, str, bytes]:
    if rng.random() < 0.15:
        return _storage_request(rng)
    kind = rng.choice(COLLECTIONS)
    base = f"/{rng.choices(['v1', 'v1beta1', 'v2', 'ui'], weights=[14, 4, 1, 1])[0]}/{PARENT}"
    roll = rng.random()
    if roll < 0.25:  # create
        key = "models:upload" if kind == "models" else kind
        path = f"{base}/models:upload" if kind == "models" else f"{base}/{kind}"
        return "POST", path + _query(rng, create=True), _body(rng, BODIES[key])
    if roll < 0.45:  # list
        return "GET", f"{base}/{kind}" + _query(rng), b""
    if roll < 0.75:  # one resource, or a verb on it
        path = f"{base}/{kind}/{_escape(rng.choice(IDS), safe='%@-.')}"
        verb = rng.choice(("", "", *VERBS[kind]))
        method = rng.choice(("GET", "DELETE")) if not verb else _verb_method(verb)
        body = _body(rng, BODIES.get(verb.strip(":"), {})) if method == "POST" else b""
        return method, path + verb + _query(rng), body
    if roll < 0.85:
        op = f"{base}/operations/{_escape(rng.choice(IDS), safe='%@-.')}"
        op += rng.choice(("", ":wait"))
        return rng.choice(("GET", "POST")), op, b""
    if roll < 0.95:
        return "POST", "/v2/entries:list", _body(rng, BODIES["entries"])
    return rng.choice(("GET", "POST", "PATCH", "PUT")), rng.choice(("/", "/x", "/v1/", "//")), b""


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
    """Send the seed's requests to the service at `url`, one connection each; tally them."""
    host, port = url.removeprefix("http://").split(":")
    tally = Tally()
    for method, path, headers, body in requests_for(seed, count, token):
        started = time.monotonic()
        connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
        try:
            connection.request(method, path, body=body or None, headers=headers)
            status = connection.getresponse().status
        except (OSError, http.client.HTTPException) as exc:
            tally.failures.append(f"{method} {path[:120]}: {type(exc).__name__} {exc}")
            status = 0
        finally:
            connection.close()
        tally.sent += 1
        tally.by_status[status] += 1
        tally.slowest = max(tally.slowest, time.monotonic() - started)
        if status >= 500 and status != 501:
            tally.failures.append(f"{method} {path[:120]} {body[:200]!r}: {status}")
    return tally
