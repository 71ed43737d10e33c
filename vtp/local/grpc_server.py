"""The local service's gRPC front end: what the aiplatform SDK uses by default.

One implementation, two front ends: a gRPC call is transcoded to the REST request the SDK's own
REST transport would send for it, dispatched through the same `Router` as HTTP requests, and the
JSON answer is turned back into the method's response message. So both front ends share every
check, state change and `google.rpc` error code:

    /google.cloud.aiplatform.v1.JobService/CreateCustomJob  (CreateCustomJobRequest bytes)
      -> the REST transport's rule for the method: POST /v1/{parent}/customJobs, body custom_job
      -> Router.dispatch -> 200 and a CustomJob as JSON, or {"error": {"status": "NOT_FOUND"}}
      -> CustomJob bytes, or the call aborted with StatusCode.NOT_FOUND and the same message

The transcoding rules come from the installed SDK (`google.cloud.aiplatform_{v1,v1beta1}`
services' REST transports, loaded on first use), so every Vertex method the SDK knows is
recognised; the ones this service lacks reach the router's UNIMPLEMENTED answer, which names
what is served. `google.longrunning.Operations`, `google.cloud.location.Locations` and
`google.iam.v1.IAMPolicy` (the mixins every Vertex service carries) map the same way, and so
does Resource Manager's `Projects` (the project lookup the service answers).

The server listens in plain HTTP/2 on an internal loopback port; clients reach it through the
TLS front (`tls_front.py`), as the SDK only builds TLS channels. Each call must carry the
service's bearer token as `authorization` metadata, as the SDK's credentials send it.
"""

import contextlib
import functools
import importlib
import json
import logging
import re
from collections.abc import Callable
from concurrent import futures
from dataclasses import dataclass
from typing import Any, Protocol, get_type_hints
from urllib.parse import urlencode

import grpc
import proto
from google.api import httpbody_pb2
from google.api_core import path_template, rest_helpers
from google.protobuf import json_format
from google.protobuf.message import DecodeError

from vtp.local.base import callers
from vtp.local.base.routing import Router
from vtp.vertex import local_auth

_log = logging.getLogger(__name__)

_VERTEX_METHOD = re.compile(
    r"/google\.cloud\.aiplatform\.(?P<version>v1|v1beta1)\.(?P<service>\w+)/(?P<method>\w+)"
)
_MIXINS = frozenset(
    {"google.longrunning.Operations", "google.cloud.location.Locations", "google.iam.v1.IAMPolicy"}
)
_OTHER_SERVICES = {
    "google.cloud.resourcemanager.v3.Projects": (
        "google.cloud.resourcemanager_v3.services.projects.transports.rest",
        "Projects",
    ),
}
"""Other Google APIs the service answers (module of the REST transport, its prefix): Resource
Manager's project lookup."""
MAX_MESSAGE_BYTES = 32 << 20
"""Largest request message (the REST front end's body limit)."""


class RestRule(Protocol):
    """The class a REST transport has for one method (`JobServiceRestTransport._CreateCustomJob`):
    its HTTP rule and transcoding, as static methods; a method with a body also has
    `_get_request_body_json(transcoded)`."""

    def _get_http_options(self) -> list[dict[str, str]]: ...
    def _get_transcoded_request(
        self, http_options: list[dict[str, str]], request: Any
    ) -> dict[str, Any]: ...
    def _get_query_params_json(self, transcoded_request: dict[str, Any]) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Method:
    """One gRPC method: its request and response types, and the REST transport class that holds
    its HTTP rule (`_get_http_options`) and transcoding.

    The message types are proto-plus classes (untyped: Any to mypy) or protobuf ones."""

    rest: RestRule
    request: type[Any]
    response: type[Any] | None

    def decode(self, data: bytes) -> Any:
        """The request message from its wire bytes."""
        if issubclass(self.request, proto.Message):
            return self.request.deserialize(data)
        return self.request.FromString(data)

    def transcode(self, request: Any) -> tuple[str, str, bytes]:
        """(HTTP method, path?query, JSON body): the REST request for `request`."""
        rest = self.rest
        if not hasattr(rest, "_get_transcoded_request"):
            return _transcode(rest._get_http_options(), request)
        transcoded = rest._get_transcoded_request(rest._get_http_options(), request)
        body = b""
        if hasattr(rest, "_get_request_body_json"):
            body = (rest._get_request_body_json(transcoded) or "").encode()
        query = rest_helpers.flatten_query_params(rest._get_query_params_json(transcoded))
        target = transcoded["uri"] + ("?" + urlencode(query) if query else "")
        return transcoded["method"].upper(), target, body

    def encode(self, text: str) -> bytes:
        """The response message's wire bytes from the REST answer's JSON."""
        if self.response is None:  # google.protobuf.Empty
            return b""
        if self.response is httpbody_pb2.HttpBody:  # rawPredict: the model server's own answer
            answer = httpbody_pb2.HttpBody(content_type="application/json", data=text.encode())
            return answer.SerializeToString()
        if issubclass(self.response, proto.Message):
            message = self.response.from_json(text, ignore_unknown_fields=True)
            return self.response.serialize(message)
        _define_packed_types(text)  # a long-running Operation's metadata and response
        message = json_format.Parse(text, self.response(), ignore_unknown_fields=True)
        return message.SerializeToString()


_PACKED_TYPE = re.compile(
    r'"@type"\s*:\s*"type\.googleapis\.com/google\.cloud\.aiplatform\.(v1|v1beta1)\.(\w+)"'
)


def _define_packed_types(text: str) -> None:
    """Import the aiplatform message types that `text` packs (`google.protobuf.Any`, by their
    `@type`), so the protobuf descriptor pool knows them as the JSON is parsed: the service
    builds operations as JSON and may never have imported the module of their metadata's type
    (`vtp.lazy_imports` defers aiplatform_v1's types until used)."""
    for version, name in set(_PACKED_TYPE.findall(text)):
        with contextlib.suppress(ImportError):
            getattr(importlib.import_module(f"google.cloud.aiplatform_{version}.types"), name, None)


def _transcode(http_options: list[dict[str, str]], request: Any) -> tuple[str, str, bytes]:
    """(HTTP method, path?query, JSON body) by the HTTP rule alone: for REST transports whose
    method classes carry only the rule (Resource Manager's)."""
    message = type(request).pb(request) if isinstance(request, proto.Message) else request
    transcoded = path_template.transcode(http_options, message)
    body = b""
    if "body" in transcoded:
        body = json_format.MessageToJson(transcoded["body"]).encode()
    params = json_format.MessageToDict(transcoded["query_params"])
    query = rest_helpers.flatten_query_params(params)
    target = transcoded["uri"] + ("?" + urlencode(query) if query else "")
    return transcoded["method"].upper(), target, body


@functools.lru_cache(maxsize=512)
def find_method(full_name: str) -> Method | None:
    """The Method for `/package.Service/Method`; None when the installed SDK has no REST rule."""
    service, _, name = full_name.lstrip("/").rpartition("/")
    if service in _MIXINS:
        version, transport = "v1", "JobService"
    elif match := _VERTEX_METHOD.fullmatch(full_name):
        version, transport = match["version"], match["service"]
    elif service not in _OTHER_SERVICES:
        return None
    if service in _OTHER_SERVICES:
        module_name, transport = _OTHER_SERVICES[service]
    else:
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", transport).lower()
        module_name = f"google.cloud.aiplatform_{version}.services.{snake}.transports.rest"
    try:
        module = importlib.import_module(module_name)
        rest = getattr(getattr(module, f"{transport}RestTransport"), f"_{name}")
        hints = get_type_hints(rest.__call__)
    except (ImportError, AttributeError, NameError):
        return None
    return Method(rest=rest, request=hints["request"], response=hints.get("return"))


class _Handler(grpc.GenericRpcHandler):
    """Answers every unary method: authenticated, transcoded, dispatched through the router."""

    def __init__(self, router: Router, token: str) -> None:
        self._router = router
        self._token = token.encode()

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
        method = handler_call_details.method
        behaviour: Callable[[bytes, grpc.ServicerContext], bytes]
        behaviour = functools.partial(self._call, method)
        return grpc.unary_unary_rpc_method_handler(behaviour)

    def _call(self, name: str, data: bytes, context: grpc.ServicerContext) -> bytes:
        caller = self._authenticate(context)
        method = find_method(name)
        if method is None:
            context.abort(
                grpc.StatusCode.UNIMPLEMENTED,
                f"{name} is not supported by the local Vertex service; it serves the Vertex AI "
                "API (google.cloud.aiplatform.v1 and v1beta1) and long-running operations.",
            )
        try:
            verb, target, body = method.transcode(method.decode(data))
        except (DecodeError, ValueError, TypeError, json_format.Error) as exc:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"Invalid request for {name}: {exc}")
        try:
            with callers.serving(caller):
                status, text = self._router.dispatch(verb, target, body)
        except Exception:  # a bug: answer like Google's front end would, keep serving
            _log.exception("internal error on %s", name)
            context.abort(grpc.StatusCode.INTERNAL, "Internal error encountered.")
        if status != 200:
            code, message = _status(text)
            context.abort(code, message)
        try:
            return method.encode(text)
        except (json_format.ParseError, ValueError) as exc:
            _log.exception("response of %s does not fit its message", name)
            context.abort(grpc.StatusCode.INTERNAL, f"Internal error encountered: {exc}")

    def _authenticate(self, context: grpc.ServicerContext) -> callers.Caller:
        """The call's caller (`callers.py`); the call aborted UNAUTHENTICATED without one."""
        metadata = dict(context.invocation_metadata() or ())
        scheme, _, presented = str(metadata.get("authorization", "")).partition(" ")
        found = None
        if scheme.lower() == "bearer":
            found = local_auth.caller(self._token.decode(), presented.strip())
        if found is None:
            context.abort(
                grpc.StatusCode.UNAUTHENTICATED,
                "Request is missing the local service's bearer token: pass "
                "google.oauth2.credentials.Credentials(token) with the token in "
                "<state-dir>/token, or run the program under `vtp local exec`.",
            )
        return callers.Caller(found) if found else callers.OWNER


def _status(text: str) -> tuple[grpc.StatusCode, str]:
    """The gRPC code and message of a REST error body (`{"error": {"status", "message"}}`)."""
    try:
        error = json.loads(text)["error"]
        return grpc.StatusCode[error["status"]], str(error["message"])
    except (ValueError, KeyError, TypeError):
        return grpc.StatusCode.INTERNAL, "Internal error encountered."


def grpc_server(
    router: Router, token: str, idle: float = 30.0, handshake: float = 30.0
) -> tuple[grpc.Server, int]:
    """A gRPC server (not started) on a free internal port of 127.0.0.1, and that port. A
    connection with no call for `idle` seconds is sent GOAWAY and closed; one that has not
    finished HTTP/2's opening (preface and settings) within `handshake` seconds is closed."""
    options = [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ("grpc.so_reuseport", 0),
        ("grpc.max_connection_idle_ms", int(idle * 1000)),
        ("grpc.server_handshake_timeout_ms", int(handshake * 1000)),
    ]
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=32, thread_name_prefix="grpc"),
        handlers=[_Handler(router, token)],
        options=options,
        maximum_concurrent_rpcs=256,
    )
    return server, server.add_insecure_port("127.0.0.1:0")
