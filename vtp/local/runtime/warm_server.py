"""The service's preloaded interpreter: `python -m vtp.local.runtime.warm_server FD`.

A replica that runs PyTorch spends seconds of CPU importing it (torch, then `torch._dynamo`
through AdamW's first step) before its first line, again for every job. This process imports
what replicas import (`PRELOAD`: torch and this project's trainer) once per service and forks
each warm replica from there, as the pipeline engine's fork server forks tasks. Every replica
still gets its own process tree, exactly as a cold start gives it (`process.py`, `shim.py`):

    service ──(control socket)──> this server ──fork──> shim ──fork──> replica
                                                        (own process group, subreaper)

The shim is a fork of this process that leads a process group of its own and runs `shim.py`'s
loop (`supervise`): it kills the replica's tree when the replica ends, when the service sends it
KILL_TREE, and when the service's pipe closes. The replica becomes what `python ARGS` would be
(`warm_replica.py`). The service finds both as it finds a cold one: the shim's pid leads the
group it signals; the service's id is in every process's environment (inherited from this
server's, which the watchdog reads), the replica's token in what the replica starts.

The wire protocol (client: `warm.py`), over a SOCK_SEQPACKET pair the service made before it
started this process (nobody else can connect):

    server -> b"R" + JSON {"modules": {top-level name: folder}}   ready: what it preloaded, where
              b"U" + reason                                      unfit: replicas start cold
    client -> JSON request, with SCM_RIGHTS [reply socket, output fd, service pipe fd]
    server -> on the reply socket: b"P" + pid (the shim's), later b"X" + its exit status as
              Popen reports it (negative: killed by that signal)

This process is single-threaded when it forks (a lock another thread held would stay locked in
the child): numpy's OpenBLAS imports without its pool (`fork_threads.SERVER_ENV`); a preload
that leaves another thread running makes the server report itself unfit. It ends when the
service closes its end; a replica still running then is killed by the shim above this process.
"""

import contextlib
import importlib
import json
import logging
import os
import select
import signal
import socket
import struct
import sys
import time
from collections.abc import Mapping

from vtp import import_gc
from vtp.engine import fork_server
from vtp.local.runtime import isolation, shim, warm_replica
from vtp.native_threads import native_threads

_log = logging.getLogger("vtp.warm_server")

PRELOAD: tuple[str, ...] = (
    "torch",
    "torch.nn",
    "torch.optim",
    "torch._dynamo",  # AdamW's first step imports it: a second, after torch's two
    "torch.distributed",
    "torch.utils.data",
    "vtp.trainer.launch",
    "vtp.trainer.train",
    "vtp.trainer.distributed",
    "vtp.trainer.checkpoint",
    "vtp.trainer.metrics",
    "vtp.trainer.tasks.digits",
    "threadpoolctl",
)
"""What every replica of this project's trainer imports, and a team's PyTorch script too."""
READY, UNFIT = b"R", b"U"
FORKED, EXITED, FAILED = b"P", b"X", b"E"
PID = struct.Struct("!q")
STATUS = struct.Struct("!i")
MAX_REQUEST = 1 << 20
"""The largest request (its environment, mostly) the server reads."""


def main(argv: list[str]) -> int:
    """Preload, report, then fork replicas for requests on the control socket fd `argv[0]`."""
    warm_replica.note_inherited_signals()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the replicas' groups
    control = socket.socket(fileno=int(argv[0]))
    base = warm_replica.BasePath.of_this_process(isolation.service_site_packages())
    problem = _preload()
    if problem:
        control.send(UNFIT + problem.encode())
        return 0
    control.send(READY + json.dumps({"modules": preloaded_folders()}).encode())
    _serve(control, base)
    return 0


def _preload() -> str:
    """Import `PRELOAD` (the collector off, what is imported frozen: replicas do not walk it);
    why this process cannot fork replicas, or ''."""
    started = time.monotonic()
    with import_gc.paused():
        for name in PRELOAD:
            try:
                importlib.import_module(name)
            except Exception as exc:  # not installed, or broken: the replica imports it itself
                _log.warning("warm replicas: not preloading %s: %s", name, exc)
    fork_server._spare_tasks_the_teardown()
    sys.stdout.flush()
    sys.stderr.flush()
    threads = native_threads()
    if threads > 1:
        return f"its imports left {threads} threads running"
    _log.info("warm replicas: preloaded in %.1fs", time.monotonic() - started)
    return ""


def preloaded_folders() -> dict[str, str]:
    """Each top-level module loaded here from a file, and the sys.path folder it came from (a
    replica whose path finds another copy of one first starts cold: `warm.py`)."""
    found = {}
    for name, module in list(sys.modules.items()):
        if "." in name or module is None:
            continue
        file = getattr(module, "__file__", None)
        if file:
            here = os.path.dirname(file)
            if os.path.basename(file).startswith("__init__."):
                here = os.path.dirname(here)
            found[name] = here
        elif paths := list(getattr(module, "__path__", None) or ()):  # a namespace package
            found[name] = os.path.dirname(paths[0])
    return found


def _serve(control: socket.socket, base: warm_replica.BasePath) -> None:
    """Fork a shim and replica per request; report each shim's exit; end with the service."""
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    replies: dict[int, socket.socket] = {}
    while True:
        readable = select.select([control.fileno(), wake_read], [], [])[0]
        if wake_read in readable:
            os.read(wake_read, 4096)
            _reap(replies)
        if control.fileno() not in readable:
            continue
        message, fds, _, _ = socket.recv_fds(control, MAX_REQUEST, 3)
        if not message and not fds:
            return  # the service closed its end
        if len(fds) != 3:
            for fd in fds:
                os.close(fd)
            continue
        reply = socket.socket(fileno=fds[0])
        try:
            pid = _fork_shim(
                json.loads(message),
                fds[1],
                fds[2],
                base,
                (control, *replies.values()),
                (wake_read, wake_write),
            )
        except Exception as exc:  # a malformed request, or no fork: the client starts it cold
            with contextlib.suppress(OSError):
                reply.sendall(FAILED + str(exc).encode())
            reply.close()
        else:
            replies[pid] = reply
            with contextlib.suppress(OSError):
                reply.sendall(FORKED + PID.pack(pid))
        finally:
            os.close(fds[1])
            os.close(fds[2])


def _reap(replies: dict[int, socket.socket]) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        reply = replies.pop(pid, None)
        if reply is not None:
            with contextlib.suppress(OSError):
                reply.sendall(EXITED + STATUS.pack(os.waitstatus_to_exitcode(status)))
            reply.close()


def _fork_shim(
    request: Mapping,
    output: int,
    service_fd: int,
    base: warm_replica.BasePath,
    sockets: tuple[socket.socket, ...],
    pipes: tuple[int, int],
) -> int:
    """Fork the replica's shim (which forks the replica); its pid, leading its own group."""
    killer = int(request["killer"])
    pid = os.fork()
    if pid:
        with contextlib.suppress(OSError):  # the child sets it too: whichever runs first
            os.setpgid(pid, pid)
        return pid
    status = 1
    try:
        signal.set_wakeup_fd(-1)
        for sock in sockets:
            sock.close()
        for fd in pipes:
            os.close(fd)
        os.setpgid(0, 0)
        shim.become_subreaper()
        signal.pthread_sigmask(signal.SIG_BLOCK, shim.WATCHED)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        child = os.fork()
        if child == 0:
            os.close(service_fd)
            code = 1
            try:
                code = warm_replica.run(request, output, base)
            finally:
                os._exit(code & 0xFF)
        os.close(output)
        status = shim.supervise(child, service_fd, killer)
    finally:
        os._exit(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
