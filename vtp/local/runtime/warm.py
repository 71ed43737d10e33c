"""Warm replicas: a replica that would import torch forks from the service's preloaded server.

`WarmStarter` (one per service) starts `warm_server.py` the first time a replica wants what it
preloads, and from then on starts every host replica that it can as a fork of it; `start`
returns a `WarmProcess`, which the replica set handles as it handles the `Popen` of a cold
start (pid, poll, wait, returncode). A replica starts cold, as a fresh `python` under its shim,
whenever its fork could tell: `plan` says why in that case, and the replica's log says so when
the reason is the replica's own (its environment, its packages).

- Its command is not the service's Python running `-m MODULE`, a script or `-c CODE` with no
  interpreter options (a container, a shell, `python -u`, `torchrun`: cold, silently).
- Its environment differs from the server's in what an import or the interpreter's start reads
  (`IMPORT_TIME`): `PYTHONHASHSEED`, `PYTHONWARNINGS`, `LD_PRELOAD`, `TORCH_*`, `OMP_*` but
  the thread count... The variables a fresh interpreter applies at start and a fork can apply
  after (PYTHONPATH, PYTHONUSERBASE, PYTHONUNBUFFERED, PYTHONDONTWRITEBYTECODE,
  PYTHONFAULTHANDLER, TZ, and the thread counts `fork_threads` sizes) do not count.
- A folder on its path before the service's packages (its PYTHONPATH, the user's folder, its
  package's or requirements' site) holds another copy of a top-level module the server
  preloaded (its requirements pin another numpy; a `torch/` of its own), or a `sitecustomize`
  / `usercustomize` of its own.

While the server imports, a replica that wants it (`wants_preload`: the trainer, or code whose
imports name torch) waits for it; any other replica starts cold meanwhile, never waiting.
"""

import ast
import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from vtp.local.runtime import isolation, process
from vtp.local.runtime.warm_server import EXITED, FAILED, FORKED, MAX_REQUEST, PID, READY, STATUS
from vtp.vertex.local_auth import STARTUP_HOOK_DIR

_log = logging.getLogger(__name__)

WARM_ENV = "VTP_LOCAL_WARM_REPLICAS"
"""Where the service starts, overrides its setting: `off` (every replica cold), `auto` (the
default: as the module says) or `all` (every replica that can fork waits for the server, which
starts with the first one: what the tests of replicas' behaviour use to run them warm)."""
READY_SECONDS = 300.0
"""How long a replica that wants the preload waits for the server's imports (under a loaded
machine they take tens of seconds) before it starts cold."""
FORK_SECONDS = 30.0
"""How long the server may take to answer a request with the shim's pid."""
EMULATED = frozenset({
    "PYTHONPATH", "PYTHONUSERBASE", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE",
    "PYTHONFAULTHANDLER", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
    "GOTO_NUM_THREADS",
})  # fmt: skip
"""Variables a fresh interpreter reads at start that a forked replica applies itself."""
IMPORT_TIME_PREFIXES = ("PYTHON", "LD_", "TORCH", "PYTORCH", "OMP_", "KMP_", "MKL_", "OPENBLAS",
                        "GOTO_", "MALLOC_", "GLIBC_", "LANG", "LC_")  # fmt: skip
"""Variables that the interpreter's start or the preloaded imports read (the dynamic loader,
Python, torch's and OpenMP's settings, the locale)."""
TORCH_MODULES = ("torch", "vtp.trainer")
"""Imports that make a replica want the preload (and wait for it while it imports)."""
CUSTOMIZE = ("sitecustomize", "usercustomize")


@dataclass(frozen=True)
class WarmRequest:
    """One replica to fork: what `warm_replica.run` reads."""

    mode: str
    """`module`, `script` or `code`."""
    argv: tuple[str, ...]
    """The interpreter's options and arguments (`-m MODULE ARGS`, ...), for `ps` to show."""
    target: str
    args: tuple[str, ...]
    env: Mapping[str, str]
    cwd: Path
    layer: isolation.Layer
    sites: tuple[str, ...]
    """Its requirements' site-packages (not the service's), after its own."""
    gcs_root: str
    """The storage root to mount at /gcs ('' when replicas get no /gcs here)."""

    def to_json(self) -> dict:
        """The request as the server reads it."""
        return {
            "mode": self.mode, "target": self.target, "args": list(self.args),
            "argv": [str(self.layer.python), *self.argv],
            "env": dict(self.env), "cwd": str(self.cwd), "umask": _umask(),
            "executable": str(self.layer.python), "prefix": str(self.layer.root),
            "site": str(self.layer.site_packages), "sites": list(self.sites),
            "gcs_root": self.gcs_root, "killer": os.getpid(),
        }  # fmt: skip


class WarmProcess:
    """A forked replica's shim, as the replica set sees a `Popen`: its pid, its exit status
    (read from the server by a thread of its own), wait and poll."""

    def __init__(self, pid: int, reply: socket.socket) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._ended = threading.Event()
        self._reply = reply
        threading.Thread(target=self._read_status, name=f"warm-{pid}", daemon=True).start()

    def _read_status(self) -> None:
        try:
            data = _read(self._reply, 1 + STATUS.size)
        except OSError:
            data = b""
        finally:
            self._reply.close()
        with process.warm_shims_lock:
            process.warm_shims.discard(self.pid)
        # No status: the server died, and the shim with it (the server's own shim kills them).
        ok = len(data) == 1 + STATUS.size and data[:1] == EXITED
        self.returncode = STATUS.unpack(data[1:])[0] if ok else -9
        self._ended.set()

    def poll(self) -> int | None:
        """The exit status once the shim has ended, else None."""
        return self.returncode if self._ended.is_set() else None

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the end; subprocess.TimeoutExpired after `timeout` seconds."""
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(f"replica {self.pid}", timeout or 0)
        assert self.returncode is not None  # set before the event
        return self.returncode


class WarmStarter:
    """The service's warm-replica server, started on first need, and what may fork from it."""

    def __init__(self, work_dir: Path, environment: Mapping[str, str], enabled: bool = True):
        """`environment`: the server's (a replica's starting environment and the service's id:
        what the replicas' environments share, so fewer of them differ in what counts)."""
        self._work_dir = work_dir
        self._env = {k: v for k, v in environment.items() if k != "PYTHONPATH"}
        self._env.update({"OPENBLAS_NUM_THREADS": "1"})  # `fork_threads.SERVER_ENV`
        # The server imports the service's own code: where the service's PYTHONPATH has it.
        own = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
               if p and p != str(STARTUP_HOOK_DIR)]  # fmt: skip
        if own:
            self._env["PYTHONPATH"] = os.pathsep.join(own)
        self.mode = os.environ.get(WARM_ENV, "").strip() or ("auto" if enabled else "off")
        self.enabled = self.mode != "off"
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._ready = threading.Event()
        self._control: socket.socket | None = None
        self._server: subprocess.Popen | None = None
        self._modules: dict[str, str] = {}
        self.problem = ""
        """Why replicas start cold ('' while none is known): the server is unfit or gone."""

    # -- the server ---------------------------------------------------------------------------

    def launch(self) -> None:
        """Start the server if it is not started (its imports run in the background)."""
        with self._lock:
            if self._server is not None or not self.enabled or self.problem:
                return
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            log = self._work_dir / "warm-server.log"
            self._work_dir.mkdir(parents=True, exist_ok=True)
            argv = [sys.executable, "-m", "vtp.local.runtime.warm_server", str(theirs.fileno())]
            try:
                with open(log, "ab") as output:
                    self._server = process.start(
                        argv, self._env, self._work_dir, output, pass_fds=(theirs.fileno(),)
                    )
            except OSError as exc:
                self.problem = f"the warm-replica server cannot start: {exc}"
                ours.close()
                return
            finally:
                theirs.close()
            self._control = ours
        threading.Thread(target=self._await_ready, name="warm-ready", daemon=True).start()

    def _await_ready(self) -> None:
        control = self._control
        assert control is not None
        try:
            message = control.recv(MAX_REQUEST)
        except OSError as exc:
            message = b"U" + str(exc).encode()
        if message[:1] == READY:
            self._modules = json.loads(message[1:])["modules"]
        else:
            self.problem = message[1:].decode(errors="replace") or "the server ended"
            _log.warning("warm replicas: off: %s", self.problem)
        self._ready.set()

    def close(self) -> None:
        """Stop the server (after the replicas: a replica still running dies with it)."""
        with self._lock:
            self.enabled = False
            if self._control is not None:
                self._control.close()
            if self._server is not None:
                process.signal_group(self._server.pid, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._server.wait(10)
        self._ready.set()

    # -- a replica ----------------------------------------------------------------------------

    def plan(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        layer: isolation.Layer,
        sites: Sequence[str],
        cwd: Path,
        gcs_root: str,
    ) -> tuple[WarmRequest | None, str]:
        """The request to fork this replica, or None and why it starts cold ('' when that is
        not worth the replica's log: the server is not there, the command is not Python's)."""
        if not self.enabled or argv[:1] != [str(layer.python)]:
            return None, ""
        shape = _python_shape(argv[1:])
        if shape is None:
            return None, ""
        mode, target, args = shape
        if gcs_root:  # a cold start runs under the shell that mounts /gcs, which sets PWD
            env = {**env, "PWD": str(cwd)}
        service = set(isolation.service_site_packages())
        own_sites = tuple(s for s in sites if s not in service)
        request = WarmRequest(
            mode, tuple(argv[1:]), target, tuple(args), env, cwd, layer, own_sites, gcs_root
        )
        entries = _path_entries(request)
        if not self._ready.is_set():
            if self.mode != "all" and not wants_preload(mode, target, entries):
                return None, ""
            self.launch()
            self._ready.wait(READY_SECONDS)
        if self.problem or not self._ready.is_set():
            return None, ""
        differs = _differing(self._env, env)
        if differs:
            return None, f"its environment sets {', '.join(differs)} (read as Python starts)"
        shadowed = _shadowed(entries, self._modules)
        if shadowed:
            return None, f"its path has its own {', '.join(shadowed)}"
        return request, ""

    def start(self, request: WarmRequest, output: int) -> WarmProcess | None:
        """Fork the replica, writing to `output` (the caller keeps its copy); None when the
        server could not (the caller starts it cold)."""
        control = self._control
        if control is None:
            return None
        ours, theirs = socket.socketpair()
        try:
            with self._send_lock:
                socket.send_fds(
                    control,
                    [json.dumps(request.to_json()).encode()],
                    [theirs.fileno(), output, process.service_fd()],
                )
            theirs.close()
            ours.settimeout(FORK_SECONDS)
            answer = _read(ours, 1 + PID.size)
            ours.settimeout(None)
        except OSError as exc:
            ours.close()
            theirs.close()
            _log.warning("warm replicas: cannot fork: %s", exc)
            return None
        if answer[:1] != FORKED or len(answer) != 1 + PID.size:
            detail = answer[1:].decode(errors="replace") if answer[:1] == FAILED else "no answer"
            _log.warning("warm replicas: the server could not fork: %s", detail)
            ours.close()
            return None
        pid = PID.unpack(answer[1:])[0]
        with process.warm_shims_lock:
            process.warm_shims.add(pid)
        return WarmProcess(pid, ours)


def _python_shape(options: Sequence[str]) -> tuple[str, str, list[str]] | None:
    """(mode, target, args) of `python OPTIONS...` that runs a module, script or code with no
    interpreter option; None otherwise."""
    if not options:
        return None
    first = options[0]
    if first in ("-m", "-c") and len(options) > 1:
        return ("module" if first == "-m" else "code"), options[1], list(options[2:])
    if first.startswith("-") or not first.endswith(".py"):
        return None
    return "script", first, list(options[1:])


def _path_entries(request: WarmRequest) -> list[str]:
    """The folders the replica's imports search before the service's packages."""
    if request.mode == "script":
        first = [os.path.dirname(os.path.realpath(request.cwd / request.target))]
    else:
        first = [str(request.cwd)] if request.mode == "module" else []
    entries = [p for p in request.env.get("PYTHONPATH", "").split(os.pathsep) if p]
    return [*first, *entries, str(request.layer.site_packages), *request.sites]


def wants_preload(mode: str, target: str, path: Sequence[str]) -> bool:
    """Whether the replica imports torch (or the trainer), by its code's own import lines: the
    module found on `path`, the script, or the code."""
    if mode == "module":
        if any(target == m or target.startswith(m + ".") for m in TORCH_MODULES):
            return True
        source = _module_source(target, path)
    elif mode == "script":
        source = _read_text(Path(target))
    else:
        source = target
    return bool(source) and _names_torch(source)


def _module_source(module: str, path: Sequence[str]) -> str:
    parts = module.split(".")
    for entry in path:
        base = Path(entry, *parts)
        for candidate in (base.with_suffix(".py"), base / "__main__.py"):
            if candidate.is_file():
                return _read_text(candidate)
    return ""


def _read_text(path: Path) -> str:
    try:
        with open(path, "rb") as source:
            return source.read(1 << 20).decode(errors="replace")
    except OSError:
        return ""


def _names_torch(source: str) -> bool:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names: Iterable[str] = (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = (node.module,)
        else:
            continue
        if any(n == m or n.startswith(m + ".") for n in names for m in TORCH_MODULES):
            return True
    return False


def _differing(server: Mapping[str, str], replica: Mapping[str, str]) -> list[str]:
    """Variables read as Python starts or as the preload imports whose value differs."""
    names = {k for k in (*server, *replica) if k.startswith(IMPORT_TIME_PREFIXES)}
    return sorted(n for n in names - EMULATED if server.get(n) != replica.get(n))


def _shadowed(entries: Sequence[str], preloaded: Mapping[str, str]) -> list[str]:
    """Top-level modules the server preloaded (or a customize hook) that one of `entries`
    holds another copy of."""
    found = []
    for entry in entries:
        if entry == str(STARTUP_HOOK_DIR):
            continue  # the start-up hook: the fork applies it (`warm_replica.py`)
        try:
            names = os.listdir(entry)
        except OSError:
            continue
        for name in names:
            top = name.split(".", 1)[0]
            if top in CUSTOMIZE:
                found.append(top)
            elif top in preloaded and os.path.realpath(preloaded[top]) != os.path.realpath(entry):
                package = name == top and os.path.isfile(os.path.join(entry, name, "__init__.py"))
                if package or name.endswith((".py", ".so", ".pyc")):
                    found.append(top)
    return sorted(set(found))


def _read(sock: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = sock.recv(left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _umask() -> int:
    """This process's umask, read without changing it (other threads create files)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return 0o022
