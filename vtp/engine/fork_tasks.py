"""Local pipeline tasks forked from a warm process (`fork_server.py`) instead of started cold.

kfp.local's SubprocessRunner runs each task as `sh -ec SCRIPT SOURCE ARGS...`: the script writes
the component's source to a temporary file and starts `python3 -m kfp.dsl.executor_main` on it.
`task_process` (which `task_output` runs each task through) starts it so that, while a
`TaskServer` is `serving`, a task of that exact form (or a `python3 [-u] -m MODULE ARGS...`
launcher, as GCPC's container components have) does the same steps in a child forked from the
server: the source is written here, the child runs the module with the task's argv,
environment and working directory, and its output streams back line by line as before. Anything
else runs as kfp.local would run it, in a fresh interpreter, and the task's log says so and why:

- it installs packages this environment lacks (`packages_to_install`; kfp's own reinstall of
  this kfp, and packages already met, change nothing and are skipped), or its script differs
  from kfp's in any other way (`task_commands.py`);
- the command names another Python than this one;
- no server is serving, or $VTP_TASK_FORK is `0`.
"""

import contextlib
import itertools
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TextIO

from vtp import private_files
from vtp.engine import fork_server, task_commands, tree_walk
from vtp.engine.fork_threads import SERVER_ENV
from vtp.engine.task_commands import Plan, plan
from vtp.vertex.local_auth import API_ENDPOINT_ENV, STARTUP_HOOK_DIR

FORK_ENV = "VTP_TASK_FORK"
"""`0` runs every task in a fresh interpreter."""
_STATUS = struct.Struct("!i")
_LENGTH = struct.Struct("!Q")
_active: "TaskServer | None" = None


class TaskServer:
    """The fork server process of one pipeline run, and the client side of its socket. The
    process starts with the first task that forks from it: a run whose tasks are all cache hits
    (a rerun) never pays for its imports, which on a small machine would take the CPU the run
    itself needs."""

    def __init__(self) -> None:
        self._folder: Path | None = None
        """The socket's folder, removed by `stop` (not a TemporaryDirectory: a server forked
        from this process, and every task forked from it, would inherit its finalizer, and the
        first task to exit would remove the socket)."""
        self.socket_path = ""
        self._process: subprocess.Popen | _ForkedServer | None = None
        self._lock = threading.Lock()
        self._stages = fork_server.stages()
        self._decision = -1  # the write end of the server's decision pipe, until written
        self.torch_first: bool | None = None
        self.sdk_stage = True

    def decide(self, torch_first: bool, sdk_stage: bool = True) -> None:
        """Say whether this run has tasks that want the torch stage (`wants_torch`): it then
        imports at normal priority, and those tasks wait for it (`fork_server.TORCH_STAGE`);
        and whether the server should import the full SDK at all (`wants_sdk`; without it, a
        task that imports it after all does so itself). The server's torch stage waits for
        this; a server started before its run was known (a standby's) learns it when the run
        comes."""
        with self._lock:
            self.torch_first, self.sdk_stage = torch_first, sdk_stage
            self._send_decision()

    def _send_decision(self) -> None:
        if self._decision >= 0 and self.torch_first is not None:
            torch = fork_server.TORCH_FIRST if self.torch_first else b"B"
            sdk = b"S" if self.sdk_stage else fork_server.NO_SDK_STAGE
            with contextlib.suppress(OSError):  # the server is gone: nothing waits for it
                os.write(self._decision, torch + sdk)
            os.close(self._decision)
            self._decision = -1

    def start(self, fork_this_process: bool = False) -> None:
        """Start importing now, unless started already. The socket listens before the server
        runs, so a task can connect at once; it is forked as soon as the first stage is
        imported.

        `fork_this_process`: the server is a fork of this process rather than a new
        interpreter, and so starts with what this one has imported (kfp: its first stage). Only
        for a process that has no thread and has not applied the start-up hook (a standby
        worker, first thing): the server must import nothing under the task settings."""
        with self._lock:
            if self._process is not None:
                return
            self._folder = Path(tempfile.mkdtemp(prefix="vtp-tasks-"))
            # The socket takes any task the user may run: its folder must be theirs alone, in a
            # temporary folder no other user can swap it out of ($TMPDIR checked too).
            private_files.check_private_dir(self._folder)
            self.socket_path = str(self._folder / "fork.sock")
            log_path = self._folder / "server.log"
            decision_read, self._decision = os.pipe()
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
                listener.bind(self.socket_path)
                listener.listen(64)
                fds = [listener.fileno(), decision_read]
                try:
                    if fork_this_process:
                        self._process = _ForkedServer(fds, self._decision, log_path)
                    else:
                        argv = [sys.executable, "-m", "vtp.engine.fork_server", *map(str, fds)]
                        with open(log_path, "wb") as log:
                            self._process = subprocess.Popen(
                                argv,
                                env=_server_env(os.environ),
                                stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL,
                                stderr=log,
                                pass_fds=fds,
                            )
                finally:
                    os.close(decision_read)
            self._send_decision()

    def stop(self) -> None:
        """End the server and its zygotes, if it started; tasks still running finish on
        their own."""
        with self._lock:
            if self._decision >= 0:
                os.close(self._decision)
                self._decision = -1
            if self._process is not None:
                self._process.terminate()
                self._process.wait()
            if self._folder is not None:
                tree_walk.remove_tree(self._folder, ignore_errors=True)
                self._folder = None

    def fork(self, task: Plan, env: Mapping[str, str]) -> "ForkedTask":
        """Fork a child for `task` with environment `env`.

        Raises ConnectionRefusedError when the server is gone (nothing of the task ran then)."""
        self.start()
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            connection.connect(self.socket_path)
            wanted = fork_server.wanted_stage(task.imports, self._stages, bool(self.torch_first))
            connection.sendall(bytes([wanted]))
            read_end, write_end = os.pipe()
            socket.send_fds(connection, [b"T"], [write_end])
            os.close(write_end)
            request = {"module": task.module, "argv": task.argv, "cwd": os.getcwd()}
            body = json.dumps({**request, "env": {**env, **task.env}}).encode()
            connection.sendall(_LENGTH.pack(len(body)) + body)
        except BaseException:
            connection.close()
            raise
        return ForkedTask(connection, open(read_end, errors="replace"))


class _ForkedServer:
    """The fork server as a child forked from this process (`TaskServer.start`)."""

    def __init__(self, fds: list[int], close: int, log_path: Path) -> None:
        self.pid = os.fork()
        if self.pid == 0:
            code = 1
            try:
                _become_server(close, log_path)
                code = fork_server.main([str(fd) for fd in fds])
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(code)

    def terminate(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)

    def wait(self) -> int:
        return os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])


def _become_server(close: int, log_path: Path) -> None:
    """In the forked child, what a server started as `python -m vtp.engine.fork_server` has:
    SIGTERM's default action, stdin and stdout on /dev/null (not the worker's pipe from the
    service), stderr on its log, the server's environment; and not the write end `close` of its
    decision pipe, whose end of file it must see should the worker die first."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.close(close)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 2)
    os.close(log)
    env = _server_env(os.environ)
    os.environ.clear()
    os.environ.update(env)


class ForkedTask:
    """A task running in a forked child: its output lines, then its exit status."""

    def __init__(self, connection: socket.socket, output: TextIO) -> None:
        self._connection, self.lines = connection, output

    def wait(self) -> int:
        """The child's exit status (128 + 9 when it was killed and sent none)."""
        data = b""
        while len(data) < _STATUS.size:
            chunk = self._connection.recv(_STATUS.size - len(data))
            if not chunk:
                print("[vtp] the task's process ended without an exit status (killed)")
                return 128 + signal.SIGKILL
            data += chunk
        return _STATUS.unpack(data)[0]

    def close(self) -> None:
        """Release the pipe and the connection."""
        self.lines.close()
        self._connection.close()


class FreshTask:
    """A task in a fresh interpreter, as kfp.local starts it."""

    def __init__(self, full_command: list[str], env: Mapping[str, str], notice: str) -> None:
        self._process = subprocess.Popen(
            full_command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
            env=dict(env),
        )
        assert self._process.stdout is not None  # stdout=PIPE
        self._stdout = self._process.stdout
        self.lines = itertools.chain([notice] if notice else [], self._stdout)

    def wait(self) -> int:
        """The process's exit status."""
        return self._process.wait()

    def close(self) -> None:
        """Release the pipe (after `wait`)."""
        self._stdout.close()


@contextlib.contextmanager
def task_process(
    full_command: list[str], env: Mapping[str, str]
) -> Iterator["ForkedTask | FreshTask"]:
    """Start a kfp.local task: forked from the active server when it can be, else fresh."""
    server = _active
    how = plan(full_command) if server is not None else None
    task: ForkedTask | FreshTask | None = None
    if server is not None and isinstance(how, Plan):
        try:
            task = server.fork(how, env)
        except ConnectionRefusedError:
            how = "the fork server is gone"
        except private_files.UnsafePath as exc:  # no socket where another user could swap it
            how = f"no fork server: {exc}"
    if task is None:
        notice = f"[vtp] this task runs in a fresh interpreter: {how}\n" if how else ""
        task = FreshTask(full_command, env, notice)
    try:
        yield task
    finally:
        task.close()


@contextlib.contextmanager
def serving() -> Iterator[TaskServer | None]:
    """A fork server for the tasks this process runs while inside (unless off), started by
    the first task that forks."""
    global _active
    if _active is not None:  # already serving
        yield _active
        return
    if os.environ.get(FORK_ENV, "1") == "0" or not hasattr(socket, "send_fds"):
        yield None
        return
    server = TaskServer()
    _active = server
    try:
        yield server
    finally:
        _active = None
        server.stop()


def _server_env(env: Mapping[str, str]) -> dict[str, str]:
    """The environment the server imports under: without the start-up hook, which each task
    applies with its own settings once forked, and with one BLAS thread (`fork_threads`)."""
    hook = str(STARTUP_HOOK_DIR)
    path = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != hook]
    server = {k: v for k, v in env.items() if k not in (API_ENDPOINT_ENV, "PYTHONPATH")}
    return {**server, **SERVER_ENV, **({"PYTHONPATH": os.pathsep.join(path)} if path else {})}


def wants_torch(spec: Mapping[str, object]) -> bool:
    """Whether a task of the PipelineSpec `spec` (as a dict) wants the fork server's torch
    stage: its component's code, or the module its container runs, names a module that stage
    preloads (`fork_server.wanted_stage`)."""
    stages = fork_server.stages()
    return any(
        fork_server.wanted_stage(imports, stages) >= fork_server.TORCH_STAGE  # or torch.export
        for imports in _executor_imports(spec)
    )


def wants_sdk(spec: Mapping[str, object]) -> bool:
    """Whether a task of the PipelineSpec `spec` (as a dict) may want the fork server's last
    stage, the full aiplatform SDK's (`fork_server.SDK_STAGE`): its component's code, or the
    module its container runs, names a module of it (`google.cloud.aiplatform`) or of Google's
    component launchers, which import it; or $VTP_TASK_PRELOAD adds modules to it. A run
    without such a task (the train pipeline: its tasks use aiplatform_v1's clients) spares the
    CPU and memory its import takes while the run's jobs train; a task that imports the SDK
    anyway imports it itself."""
    stages = fork_server.stages()
    if stages[-1] != fork_server.STAGES[-1]:  # modules the user asked to be preloaded
        return True
    sdk = (*fork_server.STAGES[fork_server.SDK_STAGE], *fork_server.SDK_IMPORTERS)
    return any(fork_server.names_any(imports, sdk) for imports in _executor_imports(spec))


def _executor_imports(spec: Mapping[str, object]) -> Iterator[set[str]]:
    """For each executor of the PipelineSpec `spec` (as a dict): the modules its component's
    code imports, and the module its container runs (`-m`)."""
    deployment = spec.get("deploymentSpec")
    executors = deployment.get("executors", {}) if isinstance(deployment, dict) else {}
    for executor in executors.values() if isinstance(executors, dict) else ():
        container = executor.get("container", {}) if isinstance(executor, dict) else {}
        words = [*container.get("command", []), *container.get("args", [])]
        imports: set[str] = set()
        for word in words:
            if isinstance(word, str) and "import" in word:
                imports |= task_commands.imported(word)
        if "-m" in words[:-1]:
            imports.add(str(words[words.index("-m") + 1]))
        yield imports
