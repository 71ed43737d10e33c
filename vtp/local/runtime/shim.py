"""The parent of every process the service starts: nothing it starts outlives it, or the service.

    python -I -S shim.py FD ARGV...

`process.spawn` starts each replica, package install, pipeline worker and model server under
this small process (standard library only, run by path so it imports nothing of ours). It marks
itself a child subreaper (Linux `PR_SET_CHILD_SUBREAPER`), so every descendant that loses its
parent is re-parented to it instead of to init, whatever it did to its session (`setsid`), its
process group or its environment (`env -i`). The whole tree stays below it, and it can find it
by parent pid alone. It kills the tree (SIGSTOP, then SIGKILL, until no child is left) when:

- its command exits: what the command left behind dies with it; the shim then exits as the
  command did (the same status, or the same signal), so its parent sees the command's end;
- FD reads end-of-file: FD is the read end of a pipe whose write end only the service holds, so
  that is the service gone, `kill -9` included (the kernel closes the write end);
- its parent (the service) sends it SIGUSR2 (`process.signal_group(pid, SIGKILL)`): signals
  from anyone else are ignored, a replica's `kill 0 -USR2` included.

It stays in its command's process group, so signals the service sends the group (SIGTERM on
cancel or preemption) reach the command as before; the shim itself ignores them.
"""

import contextlib
import ctypes
import os
import select
import signal
import sys

PR_SET_CHILD_SUBREAPER = 36
KILL_TREE = signal.SIGUSR2
WATCHED = {
    signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, KILL_TREE,
}  # fmt: skip
_POLL = 0.2
"""Seconds between checks of the service's pipe (signals wake the shim at once)."""


def main(argv: list[str]) -> int:
    """Run `argv[1:]` under this shim, watching the service's pipe `argv[0]`."""
    service_fd, command = int(argv[0]), argv[1:]
    become_subreaper()
    os.set_inheritable(service_fd, False)  # the command never holds it
    parent = os.getppid()
    signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)
    child = os.fork()
    if child == 0:
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        # Python starts ignoring these; the command gets them at their defaults, as Popen's
        # restore_signals gives them (else `yes | head` in a replica dies of "Broken pipe").
        for name in ("SIGPIPE", "SIGXFZ", "SIGXFSZ"):
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), signal.SIG_DFL)
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            os.write(2, f"[vtp local] cannot start {command[0]}: {exc}\n".encode())
        os._exit(127)
    return supervise(child, service_fd, parent)


def supervise(child: int, service_fd: int, killer: int) -> int:
    """Wait for `child` (forked with `WATCHED` blocked, as this process keeps them) and kill
    the tree as the module says; the exit status to end with (or end by the command's signal).

    `killer`: the only process whose KILL_TREE is obeyed (the service). A warm replica's shim,
    forked from the service's preloaded interpreter (`warm_server.py`), runs this same loop."""
    status = None
    while True:
        info = signal.sigtimedwait(WATCHED, _POLL)
        if info is not None and info.si_signo == KILL_TREE and info.si_pid == killer:
            _kill_tree()
            _exit_like(signal.SIGKILL)
        status = _reap(child, status)
        if status is not None:
            _kill_tree()
            if os.WIFSIGNALED(status):
                _exit_like(signal.Signals(os.WTERMSIG(status)))
            return os.waitstatus_to_exitcode(status)
        if _gone(service_fd):
            _kill_tree()
            return 137


def become_subreaper() -> None:
    """Mark this process a child subreaper: orphans below it are re-parented to it."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _reap(child: int, status: int | None) -> int | None:
    """Reap every child that ended; the command's wait status once it has."""
    while True:
        try:
            pid, code = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return status
        if pid == 0:
            return status
        if pid == child:
            status = code


def _gone(fd: int) -> bool:
    """True once the service's pipe is at end-of-file (nobody ever writes to it)."""
    readable, _, _ = select.select([fd], [], [], 0)
    return bool(readable) and os.read(fd, 1) == b""


def _children() -> list[int]:
    """This process's children and the other members of its process group, by /proc."""
    me, group = os.getpid(), os.getpgrp()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me or int(fields[2]) == group:
            found.append(int(entry))
    return found


def _kill_tree() -> None:
    """SIGKILL every descendant until none is left: each one killed hands its own children to
    this subreaper, and the next round kills them."""
    while True:
        kids = _children()
        stop_then_kill(kids)
        try:
            pid, _ = os.waitpid(-1, 0 if kids else os.WNOHANG)
        except ChildProcessError:
            return  # no child left, and nothing in the group but this process
        if not kids and pid == 0:
            return  # group members that are not our children (another's): killed above


def stop_then_kill(pids: list[int]) -> int:
    """SIGSTOP each of `pids`, then SIGKILL each; how many were killed.

    Killed one by one, a process still running could see another die first and act on it: a
    pipeline worker whose task or fork server went first would record that task FAILED, where
    a run stopped with its service reports what it ran CANCELLED. Stopped first, none of them
    runs again, so none sees the others' ends, whatever order the pids come in (they wrap)."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGSTOP)
    killed = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
            killed += 1
    return killed


def _exit_like(sig: signal.Signals) -> None:
    """End this process by `sig`, as the command ended."""
    sys.stdout.flush()
    if sig != signal.SIGKILL:
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    os.kill(os.getpid(), sig)
    os._exit(128 + sig)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
