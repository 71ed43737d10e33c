"""`python -m vtp.trainer.serve` as a real process on a free port, and a JSON client for it."""

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
COMMAND = ("python", "-m", "vtp.trainer.serve")


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serve_env(**aip: str) -> dict[str, str]:
    """This environment on the CPU, one torch thread, plus the given AIP_* and VTP_* variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIP_", "VTP_"))}
    return {**env, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": "", **aip}


def start(env: dict[str, str], command: tuple[str, ...] = COMMAND) -> subprocess.Popen[str]:
    """Start the server command (`python` is this interpreter) in the repository root."""
    argv = [sys.executable if command[0] == "python" else command[0], *command[1:]]
    return subprocess.Popen(
        argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


@dataclass
class Client:
    """JSON requests to a server on 127.0.0.1, over one kept-alive connection."""

    port: int
    connection: http.client.HTTPConnection = field(init=False)

    def __post_init__(self) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        content_type: str = "application/json",
    ) -> tuple[int, Any]:
        """(status, decoded JSON answer)."""
        headers = {"Content-Type": content_type} if body is not None else {}
        self.connection.request(method, path, body=body, headers=headers)
        answer = self.connection.getresponse()
        return answer.status, json.loads(answer.read())

    def post(self, path: str, payload: Any) -> tuple[int, Any]:
        """POST `payload` as JSON."""
        return self.request("POST", path, json.dumps(payload).encode())


def wait_healthy(
    process: subprocess.Popen[str], port: int, route: str, timeout: float = 60.0
) -> None:
    """Poll the health route until it answers 200; fail with the output if the process exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output = process.stdout.read() if process.stdout else ""
            raise AssertionError(f"server exited with {process.returncode}:\n{output}")
        try:
            if Client(port).request("GET", route)[0] == 200:
                return
        except (ConnectionError, http.client.HTTPException):
            pass  # not listening yet
        time.sleep(0.05)
    raise AssertionError(f"server not healthy on port {port} after {timeout}s")


def stop(process: subprocess.Popen[str]) -> str:
    """Terminate the server; return its output."""
    process.terminate()
    output, _ = process.communicate(timeout=30)
    return output
