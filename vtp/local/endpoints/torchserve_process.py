"""TorchServe run for one model server: its Java frontend on loopback ports, its keys ours alone.

    java -Dmodel_server_home=HOME -Djava.io.tmpdir=WORK -cp 'HOME/ts/frontend/*' \\
        org.pytorch.serve.ModelServer --python PYTHON -f WORK/config.properties \\
        -s WORK/store -ncs -m model=model.mar

is what `torchserve --start --foreground --ncs --model-store STORE --models model=model.mar`
runs (`ts/model_server.py`), less the launcher's pid file in the shared /tmp (which lets one
TorchServe run per machine) and its working directory on the class path. All of it lives in
WORK, a new folder of the server's own (mode 0700, which no other local user can enter):

- config.properties (`properties`): every API on 127.0.0.1 at a free port (inference,
  management, gRPC's two; the metrics API off), token authorization on with keys that last as
  long as the server, the JSON envelope (each of Vertex's instances one row for the handler, the
  handler's answers back as `predictions`), one worker, no GPU for a `-cpu` image, no pip for an
  archive's requirements, and no registering of models at runtime;
- store/model.mar, the server's checked copy of the archive;
- key_file.json (TorchServe writes it in its working directory), the workers' Unix sockets and
  the unpacked archive (under its temporary directory).

So no one but this server can call TorchServe: each API wants a key from key_file.json, and a
worker's socket (which wants none) is in the private folder. Variables that would change that
(`TS_*`, the JVM's option variables, CLASSPATH) are not passed on, nor pip's settings.

TorchServe's output (its workers' too) is relayed line by line to stdout, the server's log;
`wait_ready` reads it, so a handler that does not load fails the start at once with its error.
"""

import collections
import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO

from vtp.local.endpoints.torchserve_install import TorchServe

MODEL_NAME = "model"
"""The name the prebuilt image registers model.mar under: predictions at /predictions/model."""
KEY_FILE = "key_file.json"
KEY_MINUTES = 10 * 365 * 24 * 60
"""How long TorchServe's keys last (its default is 60 minutes, after which it refuses them)."""
DROPPED = (
    "TS_",
    "PIP_",
    "VTP_TORCHSERVE_",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
)
"""Prefixes of the variables TorchServe's process does not get: `TS_CONFIG_FILE` would replace
its config (and with it the loopback addresses and the keys), the JVM's would add options."""
DROPPED_NAMES = frozenset({"CLASSPATH", "PYTHONPATH", "VTP_SERVE_SECRET_FILE"})
LOAD_FAILED = "Load model failed:"
"""TorchServe's line when a worker died loading the model (it retries, with back-off)."""
ERROR_LINE = re.compile(r"MODEL_LOG - (\w+(?:Error|Exception)\b.*)$")
_POLL = 0.2


class StartFailed(Exception):
    """TorchServe did not come up serving the model; the message says why."""


def properties(ports: Mapping[str, int], gpu: bool) -> str:
    """TorchServe's config.properties for `ports` (inference, management, metrics, grpc_inference,
    grpc_management), as the module describes it; without `gpu`, on no GPU."""
    lines = {
        "inference_address": f"http://127.0.0.1:{ports['inference']}",
        "management_address": f"http://127.0.0.1:{ports['management']}",
        "metrics_address": f"http://127.0.0.1:{ports['metrics']}",
        "grpc_inference_address": "127.0.0.1",
        "grpc_inference_port": str(ports["grpc_inference"]),
        "grpc_management_address": "127.0.0.1",
        "grpc_management_port": str(ports["grpc_management"]),
        "enable_metrics_api": "false",
        "disable_token_authorization": "false",
        "token_expiration_min": str(KEY_MINUTES),
        "service_envelope": "json",
        "default_workers_per_model": "1",
        "install_py_dep_per_model": "false",
        "enable_model_api": "false",
        "enable_envvars_config": "false",
        "disable_system_metrics": "true",
    }
    if not gpu:
        lines["number_of_gpu"] = "0"
    return "".join(f"{name}={value}\n" for name, value in lines.items())


def java_argv(java: str, torchserve: TorchServe, work: Path) -> list[str]:
    """The frontend's command line (the module's first lines)."""
    home = torchserve.home
    return [
        java, f"-Dmodel_server_home={home}", f"-Djava.io.tmpdir={work}",
        "-cp", str(home / "ts" / "frontend" / "*"), "org.pytorch.serve.ModelServer",
        "--python", torchserve.python, "-f", str(work / "config.properties"),
        "-s", str(work / "store"), "-ncs", "-m", f"{MODEL_NAME}=model.mar",
    ]  # fmt: skip


def java_environment(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without what would change TorchServe's config or reach its workers unasked (the
    service's id stays: its watchdog finds what a dead service left by it)."""
    return {k: v for k, v in env.items() if not k.startswith(DROPPED) and k not in DROPPED_NAMES}


class TorchServeProcess:
    """TorchServe's frontend (and through it its workers) for the archive in `work`/store."""

    def __init__(self, process: subprocess.Popen[bytes], work: Path, ports: Mapping[str, int]):
        self.process, self.work, self.ports = process, work, dict(ports)
        self.keys: dict[str, str] = {}
        self.tail: collections.deque[str] = collections.deque(maxlen=15)
        self.error = ""
        """The first exception a worker printed, e.g. the handler's ModuleNotFoundError."""
        self.failed_loads = 0
        self.started = False
        self._relay = threading.Thread(target=self._copy_output, name="torchserve-log", daemon=True)
        self._relay.start()

    @classmethod
    def start(
        cls, java: str, torchserve: TorchServe, work: Path, env: Mapping[str, str], gpu: bool
    ) -> "TorchServeProcess":
        """Write the config into `work` (which holds store/model.mar) and start the frontend,
        on the GPUs it sees when `gpu`."""
        names = ("inference", "management", "metrics", "grpc_inference", "grpc_management")
        ports = dict(zip(names, free_ports(len(names)), strict=True))
        (work / "config.properties").write_text(properties(ports, gpu))
        process = subprocess.Popen(
            java_argv(java, torchserve, work), cwd=work, env=java_environment(env),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        return cls(process, work, ports)

    @property
    def inference_url(self) -> str:
        """Where the model's predictions are."""
        return f"http://127.0.0.1:{self.ports['inference']}/predictions/{MODEL_NAME}"

    def wait_ready(self, timeout: float) -> None:
        """Return once a worker has loaded the model; StartFailed when TorchServe exits, the
        model fails to load twice (its first try, then TorchServe's retry), or `timeout` passes."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise StartFailed(
                    f"TorchServe exited with status {self.process.returncode} before it served "
                    f"the model; its last lines:\n" + "\n".join(self.tail)
                )
            if self.failed_loads >= 2:
                raise StartFailed(
                    "TorchServe could not load model.mar: its worker failed with "
                    f"{self.error or 'no error printed'} (the traceback is in the server's log)"
                )
            if self._ready():
                return
            time.sleep(_POLL)
        raise StartFailed(f"TorchServe did not serve the model within {timeout:.0f} s")

    def _ready(self) -> bool:
        """Whether the management API lists a READY worker for the model (keys read first)."""
        if not self.keys:
            self.keys = self._read_keys()
            if not self.keys:
                return False
        url = f"http://127.0.0.1:{self.ports['management']}/models/{MODEL_NAME}"
        status, body = call(url, self.keys["management"])
        if status != 200:
            return False
        models = json.loads(body)
        workers = [w for m in models if isinstance(m, dict) for w in m.get("workers", [])]
        return any(w.get("status") == "READY" for w in workers)

    def _read_keys(self) -> dict[str, str]:
        """The management and inference keys of key_file.json; {} until it is written.
        StartFailed when TorchServe is up without one: its APIs would take anyone's calls."""
        try:
            found = json.loads((self.work / KEY_FILE).read_text())
            return {kind: found[kind]["key"] for kind in ("management", "inference")}
        except (OSError, ValueError, KeyError, TypeError):
            if self.started:
                raise StartFailed(
                    f"TorchServe started without writing {KEY_FILE}: its token authorization "
                    "is off, so its APIs would answer anyone on this machine; not serving"
                ) from None
            return {}

    def predict(self, body: bytes) -> tuple[int, bytes]:
        """POST `body` (JSON) to the model's predictions, with the inference key."""
        return call(self.inference_url, self.keys["inference"], body)

    def stop(self, grace: float = 1.0) -> None:
        """SIGTERM the frontend (which stops its workers), SIGKILL after `grace` seconds: it has
        nothing to save (no snapshots), and the service's own grace period is short."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._relay.join(timeout=grace)

    def _copy_output(self) -> None:
        """Relay TorchServe's lines to stdout, noting what `wait_ready` looks for."""
        assert self.process.stdout is not None
        for raw in _lines(self.process.stdout):
            line = raw.decode(errors="replace").rstrip("\n")
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
            self.tail.append(line)
            self.started = self.started or "Model server started." in line
            if LOAD_FAILED in line:
                self.failed_loads += 1
            match = ERROR_LINE.search(line)
            if match and not self.error:
                self.error = match[1].strip()


def call(url: str, key: str, body: bytes | None = None) -> tuple[int, bytes]:
    """GET (or POST `body` as JSON to) one of TorchServe's APIs with `key`: (status, body);
    503 when it does not answer."""
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    request = urllib.request.Request(url, data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except (urllib.error.URLError, OSError) as exc:
        return 503, json.dumps({"message": f"TorchServe did not answer: {exc}"}).encode()


def free_ports(count: int) -> list[int]:
    """`count` distinct TCP ports free on 127.0.0.1 right now."""
    probes = [socket.socket() for _ in range(count)]
    try:
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in probes]
    finally:
        for probe in probes:
            probe.close()


def _lines(stream: IO[bytes]) -> Iterator[bytes]:
    return iter(stream.readline, b"")


def message_of(body: bytes) -> str:
    """TorchServe's `message` in an error body, else the body's start."""
    try:
        found = json.loads(body)
        return str(found.get("message")) if isinstance(found, dict) else body[:500].decode()
    except (ValueError, UnicodeDecodeError):
        return body[:500].decode(errors="replace")
