"""`vtp.import_gc`: phases of imports without the cyclic garbage collector.

Each case runs in a fresh interpreter: the collector's state is the process's, and freezing this
one's objects would outlast the test.
"""

import json
import subprocess
import sys
import textwrap
from pathlib import Path


def python(code: str) -> dict:
    """The JSON object `code` prints last in a fresh interpreter (which must exit 0)."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_a_paused_phase_freezes_what_it_imported_and_the_collector_collects_again() -> None:
    out = python("""
        import gc, json, weakref
        from vtp import import_gc

        with import_gc.paused():
            during = gc.isenabled()
            import decimal, fractions  # allocations enough to have run the collector
        class Node: pass
        node = Node(); node.self = node  # a cycle made afterwards
        gone = weakref.ref(node); del node
        gc.collect()
        print(json.dumps({"during": during, "after": gc.isenabled(),
                          "frozen": gc.get_freeze_count(), "cycle_collected": gone() is None}))
    """)
    assert out == {"during": False, "after": True, "frozen": out["frozen"], "cycle_collected": True}
    assert out["frozen"] > 1000


def test_pause_and_resume_span_functions_and_resume_twice_is_nothing() -> None:
    out = python("""
        import gc, json
        from vtp import import_gc

        import_gc.pause()
        during = gc.isenabled()
        import_gc.resume()
        frozen = gc.get_freeze_count()
        import_gc.resume()  # a second resume (a caller's finally) changes nothing
        print(json.dumps({"during": during, "after": gc.isenabled(), "frozen": frozen,
                          "again": gc.get_freeze_count()}))
    """)
    assert out["during"] is False and out["after"] is True
    assert out["frozen"] > 0 and out["again"] == out["frozen"]


def test_a_collector_the_program_turned_off_stays_off_and_nothing_is_frozen() -> None:
    out = python("""
        import gc, json
        from vtp import import_gc

        gc.disable()
        with import_gc.paused():
            import decimal
        import_gc.pause()
        import_gc.resume()
        print(json.dumps({"enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}))
    """)
    assert out == {"enabled": False, "frozen": 0}


def test_vtp_run_turns_the_collector_back_on_when_it_stops_early(tmp_path: Path) -> None:
    """A refused run (its pipeline does not load) still leaves the collector on."""
    out = python(f"""
        import gc, json
        from vtp import cli

        code = cli.main(["run", "{tmp_path / "missing.py"}", "--state-dir", "{tmp_path / "s"}"])
        print(json.dumps({{"code": code, "enabled": gc.isenabled()}}))
    """)
    assert out == {"code": 2, "enabled": True}
