"""Test a team's Vertex code against a local Vertex service: a pytest plugin, and the same
outside pytest.

In pytest (the `local_vertex` fixture and marker, `plugin.py`), installing the project is
enough. Elsewhere, as a context manager or a decorator:

    from vtp.testing import local_vertex

    with local_vertex() as vertex:               # a service of its own, stopped on the way out
        aiplatform.CustomJob(...).run()
        assert vertex.job_states() == ["JOB_STATE_SUCCEEDED"]

    @local_vertex()
    def smoke_test(): ...

Either way the aiplatform SDK (gRPC and REST), google-cloud-storage, `gcloud`/`gsutil` and any
process started meanwhile reach the service with no change to the code under test; `LocalVertex`
(`vertex.py`) reads back what happened and injects faults. docs/testing.md is the guide.
"""

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vtp.testing.vertex import LocalVertex

__all__ = ["DEFAULT_TIMEOUT", "LocalVertex", "local_vertex"]

DEFAULT_TIMEOUT = 60.0
"""Seconds a helper waits for something to happen (`timeout=` or the marker's raise it)."""


def __getattr__(name: str) -> Any:
    """`LocalVertex` on first use: the pytest plugin imports this package in every session,
    and the API clients behind it take seconds to import."""
    if name == "LocalVertex":
        from vtp.testing.vertex import LocalVertex

        return LocalVertex
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@contextlib.contextmanager
def local_vertex(
    project_dir: Path | None = None, timeout: float = DEFAULT_TIMEOUT
) -> Iterator["LocalVertex"]:
    """A local Vertex service for the block (or the decorated function), with its state in a
    temporary directory; replicas import from `project_dir` (default: the current directory)."""
    from vtp.testing.session import Session

    with tempfile.TemporaryDirectory(prefix="vtp-testing-") as root:
        session = Session(Path(root), (project_dir or Path.cwd()).resolve())
        try:
            with session.test(timeout) as vertex:
                yield vertex
        finally:
            session.close()
