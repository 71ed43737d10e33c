"""How long each test file takes, so that `-n 2 --dist loadfile` starts the longest first, and
`-m quick` picks the files that take under a second (the edit loop's subset).

pytest-xdist hands a worker a whole file at a time, in the order the tests were collected;
`tests/conftest.py` sorts the collection by the seconds in `durations.json` (files not in it go
last, the ones with the most tests first). A file that runs long while the other worker has
nothing left to do is what makes a run slower than half its total; longest-first avoids it.

Refresh the numbers after a full run that wrote a JUnit report:

    python -m pytest -q -n 2 --dist loadfile --junitxml=/tmp/run.xml
    python -m tests.durations /tmp/run.xml

Stale numbers only change the order the files run in, and which files `-m quick` picks; never
which tests the full command runs.
"""

import json
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

DURATIONS = Path(__file__).with_name("durations.json")
QUICK_S = 1.0
"""A file whose tests took at most this many seconds (setup and teardown included) is `quick`..."""
QUICK_PER_TEST_S = 0.01
"""... and so is one whose tests took at most this much each (the layer test's thousands)."""


def load() -> dict[str, float]:
    """Seconds per test file (`tests/...py`), as last written by `main`."""
    return json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}


def per_file(junit_xml: Path) -> dict[str, float]:
    """Seconds per test file (setup, call and teardown of each of its tests) in a JUnit report."""
    seconds: Counter[str] = Counter()
    for case in ET.parse(junit_xml).iter("testcase"):
        module = [part for part in case.get("classname", "").split(".") if not part[:1].isupper()]
        seconds["/".join(module) + ".py"] += float(case.get("time", 0))
    return dict(seconds)


def main(junit_xml: str) -> None:
    """Write `durations.json` from the report at `junit_xml`, longest file first."""
    seconds = per_file(Path(junit_xml))
    kept = {f: round(s, 1) for f, s in sorted(seconds.items(), key=lambda i: -i[1])}
    DURATIONS.write_text(json.dumps(kept, indent=1) + "\n")


def is_quick(path: str, seconds: dict[str, float], tests: int) -> bool:
    """Whether the test file `path` (`tests/...py`), holding `tests` tests, was quick last time:
    at most QUICK_S in all or QUICK_PER_TEST_S a test. A file not measured yet is not."""
    took = seconds.get(path)
    return took is not None and (took <= QUICK_S or took <= QUICK_PER_TEST_S * tests)


if __name__ == "__main__":
    main(*sys.argv[1:])
