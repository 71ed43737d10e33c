"""A local HTTP listener that records Vertex REST requests and answers the way Vertex does.

It stands in for the remote API in tests of request *bodies*: point gcloud
(`api_endpoint_overrides/aiplatform`) or the aiplatform client at `recorder.url` and read back
exactly what each sent. It keeps the jobs it was sent, so describe/list/cancel get plausible
answers, and it serves Cloud Logging's `entries:list` from pages a test queues.
"""

import json
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.fixtures import send_json

_JOBS = re.compile(r"^/v1/(projects/[^/]+/locations/[^/]+)/customJobs$")
_JOB = re.compile(r"^/v1/(projects/[^/]+/locations/[^/]+/customJobs/[^/:]+)(:cancel)?$")


@dataclass
class Request:
    """One recorded request."""

    method: str
    path: str
    query: dict[str, list[str]]
    body: Any


@dataclass
class VertexRecorder:
    """Records requests; serves customJobs create/get/list/cancel and logging entries:list."""

    requests: list[Request] = field(default_factory=list)
    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)
    states: dict[str, deque[str]] = field(default_factory=dict)
    """Per job name, the states the next GETs report (the last one sticks)."""
    log_pages: deque[dict[str, Any]] = field(default_factory=deque)
    """Responses for successive entries:list calls; `{}` once they run out."""
    serve_logs: bool = True

    def __post_init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()

    def last(self, method: str, path_suffix: str = "") -> Request:
        """The most recent request with this method whose path ends with `path_suffix`."""
        matches = [r for r in self.requests if r.method == method and r.path.endswith(path_suffix)]
        assert matches, f"no {method} *{path_suffix} among {[r.path for r in self.requests]}"
        return matches[-1]

    def answer(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        """The status and JSON this fake Vertex gives for one request."""
        if method == "POST" and path == "/v2/entries:list" and self.serve_logs:
            return 200, self.log_pages.popleft() if self.log_pages else {}
        if (match := _JOBS.match(path)) and method == "POST":
            return 200, self._create(match.group(1), body)
        if (match := _JOBS.match(path)) and method == "GET":
            prefix = match.group(1) + "/"
            return 200, {"customJobs": [j for n, j in self.jobs.items() if n.startswith(prefix)]}
        if (match := _JOB.match(path)) and match.group(1) in self.jobs:
            return 200, self._job_call(match.group(1), cancel=bool(match.group(2)))
        return 404, {"error": {"code": 404, "message": f"{path} not found", "status": "NOT_FOUND"}}

    def _create(self, parent: str, body: dict[str, Any]) -> dict[str, Any]:
        name = f"{parent}/customJobs/{1000 + len(self.jobs)}"
        job = dict(body, name=name, state="JOB_STATE_PENDING", createTime="2026-01-01T00:00:00Z")
        self.jobs[name] = job
        return job

    def _job_call(self, name: str, cancel: bool) -> dict[str, Any]:
        job = self.jobs[name]
        if cancel:
            job["state"] = "JOB_STATE_CANCELLED"
            return {}
        queue = self.states.get(name)
        if queue:
            job["state"] = queue.popleft() if len(queue) > 1 else queue[0]
        return job


def _handler(recorder: VertexRecorder) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            recorder.requests.append(Request(self.command, url.path, parse_qs(url.query), body))
            send_json(self, *recorder.answer(self.command, url.path, body))

        do_GET = do_POST = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

    return Handler
