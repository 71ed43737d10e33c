"""`python -m vtp.local.endpoints.torchserve_server`: a local stand-in for Google's prebuilt PyTorch
prediction images, started by the service for a model that names one: real TorchServe serving
the model's model.mar, behind Vertex's routes.

Over the same HTTP server as `vtp.trainer.serve` (its secret, Host, Origin and body checks,
AIP_HTTP_PORT, AIP_HEALTH_ROUTE, AIP_PREDICT_ROUTE, AIP_STORAGE_URI):

    GET  AIP_HEALTH_ROUTE   200 once TorchServe has a worker with the model loaded, 503 before
    POST AIP_PREDICT_ROUTE  {"instances": [...]} -> TorchServe's /predictions/model (its JSON
                            envelope: one handler row per instance) -> {"predictions": [...]}

Loading, in a thread while the port answers 503: TorchServe is found or installed
(`torchserve_install.py`), model.mar is copied from storage through a checked descriptor into a
new private folder (`vtp.trainer.serve_files`: a link leading out of the storage root is
refused, naming it), and TorchServe starts there on loopback ports with keys only this server
reads (`torchserve_process.py`). What the service set: VTP_TORCHSERVE_JAVA, VTP_TORCHSERVE_CACHE,
VTP_TORCHSERVE_GPU and VTP_SERVING_ALLOW_PICKLE, checked again here (an archive runs its
handler's code).

TorchServe's 4xx answers reach the caller as 400 with its message, anything else as 500. On
SIGTERM (an undeploy, the service's stop) the server stops TorchServe, then removes its folder;
the service's shim kills whatever is left of the tree once it exits. Exit statuses as
`vtp.trainer.serve`'s (130 for SIGTERM too).
"""

import json
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from types import FrameType
from typing import Any

from vtp import storage
from vtp.engine import tree_walk
from vtp.local.endpoints.prebuilt import ALLOW_PICKLE_ENV, pickle_allowed
from vtp.local.endpoints.torchserve import ARCHIVE, CACHE_ENV, GPU_ENV, JAVA_ENV
from vtp.local.endpoints.torchserve_install import find_or_install
from vtp.local.endpoints.torchserve_process import TorchServeProcess, message_of
from vtp.trainer.predict import BadRequest
from vtp.trainer.serve import ServeConfig, Server, run
from vtp.trainer.serve_files import copy_checked, storage_root_for

NAME = "torchserve_server"
START_TIMEOUT_SECONDS = 240.0
"""How long TorchServe may take to load the model (the deploy waits 300 s in all)."""


class TorchServePredictor:
    """Predictions from a running TorchServe: request bodies in, its `predictions` out."""

    def __init__(self, torchserve: TorchServeProcess) -> None:
        self.torchserve = torchserve

    def predict(self, body: Any) -> list[Any]:
        """TorchServe's predictions for `body`; BadRequest for a body without a list of
        instances, or one TorchServe refuses (4xx)."""
        if not isinstance(body, dict) or not isinstance(body.get("instances"), list):
            raise BadRequest("the body must be a JSON object with a list of 'instances'")
        status, answer = self.torchserve.predict(json.dumps(body).encode())
        if 400 <= status < 500:
            raise BadRequest(f"TorchServe answered {status}: {message_of(answer)}")
        if status != 200:
            raise RuntimeError(f"TorchServe answered {status}: {message_of(answer)}")
        found = json.loads(answer)
        if not isinstance(found, dict) or not isinstance(found.get("predictions"), list):
            raise RuntimeError(f"TorchServe answered without predictions: {answer[:500]!r}")
        return found["predictions"]


class TorchServeServer(Server):
    """`vtp.trainer.serve`'s server in front of TorchServe serving AIP_STORAGE_URI/model.mar."""

    def __init__(self, config: ServeConfig, secret: str, env: Mapping[str, str]) -> None:
        super().__init__(config, secret, frozenset())
        self.env = dict(env)
        self.work = Path(tempfile.mkdtemp(prefix="vtp-torchserve-"))  # mode 0700
        self.torchserve: TorchServeProcess | None = None
        self._lock = threading.Lock()
        self._closed = False

    def load(self) -> None:
        """Start TorchServe with the model (in a thread: the port answers 503 meanwhile), or
        shut down saying why."""
        try:
            running = self.start_torchserve()
        except Exception as exc:
            self.failure = f"cannot serve {self.config.storage_uri}/{ARCHIVE}: {exc}"
            self.shutdown()
            return
        self.predictor = TorchServePredictor(running)
        threading.Thread(target=self.watch, args=(running,), name="torchserve", daemon=True).start()
        config = self.config
        print(
            f"{NAME}: serving {config.storage_uri}/{ARCHIVE} with TorchServe on "
            f"{config.host}:{config.port} (GET {config.health_route}, POST {config.predict_route})",
            flush=True,
        )

    def start_torchserve(self) -> TorchServeProcess:
        """The archive's checked copy in the private folder, and TorchServe serving it."""
        if not pickle_allowed(self.env):
            raise ValueError(
                f"a TorchServe archive runs its handler's code; the service's operator allows "
                f"that with {ALLOW_PICKLE_ENV}=1"
            )
        java, cache = self.env.get(JAVA_ENV, ""), self.env.get(CACHE_ENV, "")
        if not java or not cache:
            raise ValueError(f"{JAVA_ENV} and {CACHE_ENV} must be set (the service sets them)")
        torchserve = find_or_install(Path(cache), self.env)
        print(f"{NAME}: TorchServe from {torchserve.source}", flush=True)
        uri = self.config.storage_uri
        directory = storage.local_path(uri)
        (self.work / "store").mkdir(mode=0o700)
        archive = self.work / "store" / ARCHIVE
        copy_checked(
            storage_root_for(uri, directory), directory / ARCHIVE, archive, f"{uri}/{ARCHIVE}"
        )
        with self._lock:
            if self._closed:
                raise ValueError("the server is stopping")
            gpu = self.env.get(GPU_ENV) == "1"
            self.torchserve = TorchServeProcess.start(java, torchserve, self.work, self.env, gpu)
        self.torchserve.wait_ready(START_TIMEOUT_SECONDS)
        return self.torchserve

    def watch(self, running: TorchServeProcess) -> None:
        """Shut down when TorchServe exits on its own, as a container whose server died stops:
        the service then sees the model server gone."""
        code = running.process.wait()
        with self._lock:
            if self._closed:
                return
        tail = "\n".join(running.tail)
        self.failure = f"TorchServe exited with status {code}; its last lines:\n{tail}"
        self.shutdown()

    def server_close(self) -> None:
        """Stop TorchServe (Java and its workers), then remove the private folder."""
        super().server_close()
        with self._lock:
            self._closed = True
            running = self.torchserve
        if running is not None:
            print(f"{NAME}: stopping TorchServe", flush=True)
            running.stop()
        tree_walk.remove_tree(self.work, ignore_errors=True)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # `run` returns 130; leaving its `with server` stops TorchServe


def main() -> int:
    """Serve until stopped; the exit status says why it stopped early."""
    signal.signal(signal.SIGTERM, _interrupt)
    return run(NAME, lambda config, secret: TorchServeServer(config, secret, os.environ))


if __name__ == "__main__":
    sys.exit(main())
