"""The suite's fuzz run, longer: thousands of malformed requests over every route of a fresh
`vtp local serve`, several seeds. Figures: requests sent, answers by status, 5xx count (which
must be 0), dropped connections or timeouts, the slowest answer, and whether the service still
answers /healthz. Run from the repository root: `python bench/fuzz_service.py [REQUESTS]`.
Prints ONE JSON line.
"""

import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' fuzzer and fixtures

from tests.fixtures import LocalService
from tests.vtp.local.fuzz import send_all

SEEDS = (1, 2, 3, 4, 5)


def main(per_seed: int) -> dict[str, object]:
    """Fuzz one service with every seed; the figures."""
    os.environ.setdefault("VTP_RUNTIME_DIR", tempfile.mkdtemp(prefix="vtp-runtime-"))
    statuses: Counter = Counter()
    failures: list[str] = []
    slowest = 0.0
    with tempfile.TemporaryDirectory() as state:
        service = LocalService(Path(state)).start()
        started = time.monotonic()
        try:
            for seed in SEEDS:
                tally = send_all(service.url, service.token, seed, per_seed)
                statuses.update(tally.by_status)
                failures += tally.failures
                slowest = max(slowest, tally.slowest)
            alive = service.session().get(f"{service.url}/healthz", timeout=5).ok
        finally:
            seconds = time.monotonic() - started
            service.stop()
    return {
        "benchmark": "fuzz_service",
        "requests_sent": sum(statuses.values()),
        "seeds": len(SEEDS),
        "responses_by_status": {str(k): v for k, v in sorted(statuses.items())},
        "server_errors_5xx": sum(v for k, v in statuses.items() if k >= 500 and k != 501),
        "dropped_or_timed_out": statuses.get(0, 0),
        "slowest_answer_s": round(slowest, 3),
        "service_alive_after": alive,
        "seconds": round(seconds, 1),
        "first_failures": failures[:5],
    }


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)))
