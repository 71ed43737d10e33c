"""The suite's fuzz run, longer: thousands of malformed requests over every route of a fresh
`vtp local serve` (Vertex's REST API, Cloud Storage's JSON API with uploads and ranged
downloads, serving's `:predict` and `:rawPredict`, the console, and raw protocol errors), split
over several seeds. Run from the repository root: `python bench/fuzz_service.py [REQUESTS]`
(default 10000, all seeds together).

Prints ONE JSON line: requests sent, answers by status, 5xx answers other than 501 (which must
be 0; `known_open_5xx` of them are `KNOWN_OPEN` issues, reported to the code's owners), 501s
(methods the service does not implement, on purpose), dropped connections and
timeouts (each request must be answered within TIMEOUT_S), the slowest answer, whether the
service still answers /healthz, and the first failures (request and status) if any.
"""

import json
import os
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' fuzzer and fixtures

from tests.fixtures import LocalService
from tests.vtp.local.fuzz import KNOWN_OPEN, send_all

SEEDS = (1, 2, 3, 4, 5)
TIMEOUT_S = 10.0


def main(requests: int) -> dict[str, object]:
    """Fuzz one service with `requests` requests over every seed; the figures."""
    os.environ.setdefault("VTP_RUNTIME_DIR", tempfile.mkdtemp(prefix="vtp-runtime-"))
    statuses: Counter = Counter()
    failures: list[str] = []
    known: list[str] = []
    slowest = 0.0
    with tempfile.TemporaryDirectory() as state:
        service = LocalService(Path(state)).start()
        started = time.monotonic()
        try:
            for index, seed in enumerate(SEEDS):
                count = requests // len(SEEDS) + (index < requests % len(SEEDS))
                tally = send_all(service.url, service.token, seed, count, timeout=TIMEOUT_S)
                statuses.update(tally.by_status)
                failures += tally.failures
                known += tally.known
                slowest = max(slowest, tally.slowest)
            health = service.session().get(f"{service.url}/healthz", timeout=5)
            alive = health.status_code == 200 and health.json() == {"status": "ok"}
        finally:
            seconds = time.monotonic() - started
            service.stop()
        tracebacks = service.service_log().count("Traceback")
    return {
        "benchmark": "fuzz_service",
        "requests_sent": sum(statuses.values()),
        "seeds": len(SEEDS),
        "responses_by_status": {str(k): v for k, v in sorted(statuses.items())},
        "server_errors_5xx": sum(v for k, v in statuses.items() if k >= 500 and k != 501),
        "known_open_5xx": len(known),
        "known_open_issues": [i.name for i in KNOWN_OPEN if _hits(i.pattern, known)],
        "not_implemented_501": statuses.get(501, 0),
        "dropped_or_timed_out": statuses.get(0, 0),
        "timeout_s": TIMEOUT_S,
        "slowest_answer_s": round(slowest, 3),
        "service_alive_after": alive,
        "tracebacks_in_service_log": tracebacks,
        "seconds": round(seconds, 1),
        "first_failures": failures[:5],
    }


def _hits(pattern: str, lines: list[str]) -> bool:
    return any(re.search(pattern, line) for line in lines)


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)))
