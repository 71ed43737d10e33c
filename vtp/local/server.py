"""The REST front end: Vertex's `customJobs` routes on 127.0.0.1, plus three local extensions.

Vertex routes (under `/v1/` and `/v1beta1/`), parsed with the aiplatform_v1 types:

    POST   projects/{p}/locations/{l}/customJobs                 create (CustomJob body)
    GET    projects/{p}/locations/{l}/customJobs                 list (filter, pageSize, pageToken)
    GET    projects/{p}/locations/{l}/customJobs/{id}            get
    DELETE projects/{p}/locations/{l}/customJobs/{id}            delete -> Operation
    POST   projects/{p}/locations/{l}/customJobs/{id}:cancel     cancel -> {}
    GET    projects/{p}/locations/{l}/operations/{id}            get an Operation
    POST   projects/{p}/locations/{l}/operations/{id}:wait       wait for an Operation

Local extensions (not part of Vertex):

    POST   .../customJobs/{id}:preempt  {"replica": "workerpool1-0", "gracePeriod": "5s"} -> {}
    GET    .../customJobs/{id}:logs?replica=R&offset=N&maxBytes=M
           -> {"name", "jobState", "entries": [{"replica", "offset", "nextOffset", "text"}]}
    POST   /v2/entries:list   Cloud Logging's entries.list over replica logs (`logs.py`): what
           `stream-logs` reads (resource.type="ml_job", resource.labels.job_id/task_name)
    GET    /healthz -> {"status": "ok"}

`-` stands for any project or location in a job's name (job IDs are unique). Errors use Google's
JSON shape. Responses write enums as names, or as integers when the request asks for
`$alt=json;enum-encoding=int` (the aiplatform REST transport does).

Other resource types live in their own packages (EXTENSIONS below): each defines
`register(service, router)` and adds its routes with `Router.add`.
"""

import importlib
import importlib.util
import json
import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from google.cloud import aiplatform_v1
from google.protobuf import duration_pb2, json_format

from vtp.local.base import errors
from vtp.local.base.resources import job_json
from vtp.local.custom_jobs.service import LocalVertex

_log = logging.getLogger(__name__)
_PARENT = r"/(?P<version>v1|v1beta1)/(?P<parent>projects/[^/]+/locations/[^/]+)"
_JOB = _PARENT + r"/customJobs/(?P<job>[^/:]+)"


@dataclass
class Request:
    """One HTTP request as a route handler sees it."""

    method: str
    path: str
    params: dict[str, str]
    query: dict[str, list[str]]
    body: bytes = b""
    enum_ints: bool = field(init=False)

    def __post_init__(self) -> None:
        self.enum_ints = "enum-encoding=int" in ";".join(self.query.get("$alt", []))

    def arg(self, key: str, default: str = "") -> str:
        """The first value of query parameter `key`."""
        return self.query.get(key, [default])[0]

    def json(self) -> dict:
        """The body as a JSON object; raise INVALID_ARGUMENT when it is not one."""
        try:
            value = json.loads(self.body or b"{}")
        except ValueError as exc:
            raise errors.invalid_argument(f"Invalid JSON payload received. {exc}") from exc
        if not isinstance(value, dict):
            raise errors.invalid_argument("Invalid JSON payload received: expected an object.")
        return value


Handler = Callable[[Request], str]


class Router:
    """Routes (method, path regex) to handlers that return a JSON string."""

    def __init__(self) -> None:
        self._routes: list[tuple[str, re.Pattern, Handler]] = []

    def add(self, method: str, pattern: str, handler: Handler) -> None:
        """Route `method` requests whose path fully matches `pattern` to `handler`."""
        self._routes.append((method, re.compile(pattern), handler))

    def dispatch(self, method: str, target: str, body: bytes) -> tuple[int, str]:
        """The HTTP status and JSON body for one request."""
        url = urlsplit(target)
        query = parse_qs(url.query, keep_blank_values=True)
        for route_method, pattern, handler in self._routes:
            match = pattern.fullmatch(url.path)
            if match and route_method == method:
                request = Request(method, url.path, match.groupdict(), query, body)
                try:
                    return 200, handler(request)
                except errors.ApiError as exc:
                    return exc.http_status, exc.to_json()
        error = errors.not_found(f"The requested URL {url.path} ({method}) was not found.")
        return error.http_status, error.to_json()


EXTENSIONS: tuple[str, ...] = (
    "vtp.local.tuning",
    "vtp.local.models",
    "vtp.local.pipeline_jobs",
    "vtp.local.schedules",
)
"""Modules that add resource types (`register(service, router)`): tuning, models, pipelines."""


def build_router(service: LocalVertex) -> Router:
    """Every route of the service, plus those the EXTENSIONS register."""
    router = Router()
    routes = _Routes(service)
    router.add("POST", _PARENT + "/customJobs", routes.create)
    router.add("GET", _PARENT + "/customJobs", routes.list)
    router.add("GET", _JOB, routes.get)
    router.add("DELETE", _JOB, routes.delete)
    router.add("POST", _JOB + ":cancel", routes.cancel)
    router.add("POST", _JOB + ":preempt", routes.preempt)
    router.add("GET", _JOB + ":logs", routes.logs)
    # The GAPIC operations client asks under /ui/ first (as Vertex's console does).
    operations = _PARENT.replace("v1|v1beta1", "v1|v1beta1|ui") + r"/operations/(?P<op>[^/:]+)"
    router.add("GET", operations, routes.operation)
    router.add("POST", operations + ":wait", routes.operation)
    router.add("POST", "/v2/entries:list", routes.entries)
    router.add("GET", "/healthz", lambda _request: '{"status": "ok"}')
    for name in EXTENSIONS:
        importlib.import_module(name).register(service, router)
    return router


class _Routes:
    def __init__(self, service: LocalVertex) -> None:
        self.service = service

    def create(self, request: Request) -> str:
        try:
            job = aiplatform_v1.CustomJob.from_json(request.body or b"{}")
        except json_format.ParseError as exc:
            raise errors.invalid_argument(f"Invalid JSON payload received. {exc}") from exc
        name = self.service.create_custom_job(request.params["parent"], job)
        return job_json(self.service.get_custom_job(name), request.enum_ints)

    def list(self, request: Request) -> str:
        size = request.arg("pageSize", "0")
        if not size.isdigit():
            raise errors.invalid_argument(f"Invalid pageSize {size!r}: expected an integer.")
        jobs, token = self.service.list_custom_jobs(
            request.params["parent"], request.arg("filter"), int(size), request.arg("pageToken")
        )
        page = [json.loads(job_json(job, request.enum_ints)) for job in jobs]
        body: dict = {"customJobs": page} if page else {}
        if token:
            body["nextPageToken"] = token
        return json.dumps(body)

    def get(self, request: Request) -> str:
        return job_json(self.service.get_custom_job(_name(request)), request.enum_ints)

    def delete(self, request: Request) -> str:
        return json.dumps(self.service.delete_custom_job(_name(request)))

    def cancel(self, request: Request) -> str:
        self.service.cancel_custom_job(_name(request))
        return "{}"

    def preempt(self, request: Request) -> str:
        body = request.json()
        replica = body.get("replica")
        if not isinstance(replica, str) or not replica:
            raise errors.invalid_argument('preempt: "replica" is required, e.g. "workerpool1-0".')
        self.service.preempt_replica(_name(request), replica, _seconds(body.get("gracePeriod")))
        return "{}"

    def logs(self, request: Request) -> str:
        numbers = {k: request.arg(k, "0") for k in ("offset", "maxBytes")}
        for key, value in numbers.items():
            if not value.isdigit():
                raise errors.invalid_argument(f"Invalid {key} {value!r}: expected an integer.")
        max_bytes = int(numbers["maxBytes"]) or 1 << 20
        logs = self.service.read_logs(
            _name(request), request.arg("replica"), int(numbers["offset"]), max_bytes
        )
        return json.dumps(logs)

    def entries(self, request: Request) -> str:
        body = request.json()
        size = body.get("pageSize", 0)
        if not isinstance(size, int) or size < 0:
            raise errors.invalid_argument(f"Invalid pageSize {size!r}: expected an integer.")
        found, token = self.service.list_log_entries(
            list(body.get("resourceNames") or []),
            str(body.get("filter") or ""),
            str(body.get("orderBy") or ""),
            size,
            str(body.get("pageToken") or ""),
        )
        page: dict = {"entries": found} if found else {}
        if token:
            page["nextPageToken"] = token
        return json.dumps(page)

    def operation(self, request: Request) -> str:
        name = f"{request.params['parent']}/operations/{request.params['op']}"
        return json.dumps(self.service.get_operation(name))


def _name(request: Request) -> str:
    return f"{request.params['parent']}/customJobs/{request.params['job']}"


def _seconds(value: object) -> float | None:
    if value is None:
        return None
    duration = duration_pb2.Duration()
    try:
        duration.FromJsonString(str(value))
    except ValueError as exc:
        raise errors.invalid_argument(
            f'preempt: "gracePeriod" must be a duration such as "5s", got {value!r}.'
        ) from exc
    return duration.ToTimedelta().total_seconds()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "Server"

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        try:
            status, text = self.server.router.dispatch(self.command, self.path, body)
        except Exception:  # a bug: answer like Google's front end would, keep serving
            _log.exception("internal error on %s %s", self.command, self.path)
            error = errors.ApiError(errors.INTERNAL, "Internal error encountered.")
            status, text = error.http_status, error.to_json()
        payload = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_DELETE = do_PATCH = _handle

    def log_message(self, format: str, *args: object) -> None:
        _log.debug("%s %s", self.address_string(), format % args)


class Server(ThreadingHTTPServer):
    """The HTTP server of one LocalVertex, bound to 127.0.0.1 only."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, service: LocalVertex) -> None:
        self.service = service
        self.router = build_router(service)
        super().__init__(("127.0.0.1", service.config.port), _Handler)
        service.url = self.url  # pipeline runs the service starts call it back here

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`: what VTP_LOCAL_ENDPOINT and api_endpoint take."""
        return f"http://127.0.0.1:{self.server_address[1]}"


class Running:
    """A service serving in a background thread: `with running(config) as r: r.url`."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.service = server.service
        self.url = server.url
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.1}, name="http", daemon=True
        )

    def __enter__(self) -> "Running":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop serving, stop every replica (their jobs are queued again), close the state."""
        self.server.shutdown()
        self.server.server_close()
        self.service.close()


def running(service: LocalVertex) -> Running:
    """Start `service` and serve it in a background thread (use as a context manager)."""
    server = Server(service)  # bind first: a busy port fails before anything starts
    try:
        service.start()
    except BaseException:
        server.server_close()
        service.close()
        raise
    return Running(server)
