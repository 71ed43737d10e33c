"""One test session's service, started on first use, and each test's project on it.

    session = Session(root, project_dir, worker="gw0")
    with session.test(timeout=60) as vertex:    # the first test starts the service
        ...                                     # clients point at it, in project test-gw0-1
    session.close()                             # the service stops, and its replicas

The service's state (jobs, logs, Cloud Storage) is under `root`; its replicas import from
`project_dir`, the team's folder, as their image would on Vertex. Each test gets the next
project ID of the session (`test-<worker>-<n>`), so nothing one test creates shows in another's
lists, whether tests run one after another or in pytest-xdist workers (each worker a session,
and a service, of its own).
"""

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from vtp.testing import DEFAULT_TIMEOUT
from vtp.testing.clients import client_environment, gcloud_config_dir, pointed_at
from vtp.testing.process import ServiceProcess
from vtp.testing.vertex import LocalVertex
from vtp.vertex import local_auth

LOCATION = "us-central1"
_CLIENT_VARIABLES = (
    *local_auth.client_settings("http://127.0.0.1:1", "localhost:2", "roots"),
    local_auth.TOKEN_ENV,
    "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE",
)
"""What points a process at some service: the test service does not inherit it."""


class Session:
    """A lazily started test service and the projects handed out on it."""

    def __init__(self, root: Path, project_dir: Path, worker: str = "main") -> None:
        self.root = root
        self.project_dir = project_dir
        self.worker = worker
        self._service: ServiceProcess | None = None
        self._lock = threading.Lock()
        self._count = 0

    def service(self) -> ServiceProcess:
        """The session's service, started now if this is its first use."""
        with self._lock:
            if self._service is None:
                env = {k: v for k, v in os.environ.items() if k not in _CLIENT_VARIABLES}
                hook = str(local_auth.STARTUP_HOOK_DIR)
                env["PYTHONPATH"] = os.pathsep.join(
                    p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != hook
                )
                env[local_auth.RUNTIME_DIR_ENV] = str(self.root / "runtime")
                self._service = ServiceProcess.start(self.root / "state", self.project_dir, env)
            return self._service

    def next_project(self) -> str:
        """A project ID no other test of this session has had."""
        with self._lock:
            self._count += 1
            return f"test-{self.worker}-{self._count}"

    @contextlib.contextmanager
    def test(self, timeout: float = DEFAULT_TIMEOUT) -> Iterator[LocalVertex]:
        """One test: a new project, every client pointed at the service in it, undone after."""
        info = self.service().info
        project = self.next_project()
        gcloud = gcloud_config_dir(self.root / "gcloud")
        environment = client_environment(info, project, LOCATION, gcloud)
        environment[local_auth.RUNTIME_DIR_ENV] = str(self.root / "runtime")
        with pointed_at(info, environment, project, LOCATION):
            vertex = LocalVertex(info, project, LOCATION, timeout)
            vertex.create_bucket(vertex.staging_bucket)
            yield vertex

    def close(self) -> None:
        """Stop the service, if it was started."""
        with self._lock:
            service, self._service = self._service, None
        if service is not None:
            service.stop()
