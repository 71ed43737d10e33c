"""How long each test file takes, so that `-n 2 --dist loadfile` starts the longest first.

pytest-xdist hands a worker a whole file at a time, in the order the tests were collected;
`tests/conftest.py` sorts the collection by the seconds in `durations.json` (files not in it go
last, the ones with the most tests first). A file that runs long while the other worker has
nothing left to do is what makes a run slower than half its total; longest-first avoids it.

Refresh the numbers after a full run that wrote a JUnit report:

    python -m pytest -q -n 2 --dist loadfile --junitxml=/tmp/run.xml
    python -m tests.durations /tmp/run.xml

Stale numbers only change the order the files run in, never which tests run.
"""

import json
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

DURATIONS = Path(__file__).with_name("durations.json")
LISTED_FROM_S = 5.0
"""Files quicker than this are left out: their order hardly matters."""


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
    kept = {
        f: round(s) for f, s in sorted(seconds.items(), key=lambda i: -i[1]) if s >= LISTED_FROM_S
    }
    DURATIONS.write_text(json.dumps(kept, indent=1) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
