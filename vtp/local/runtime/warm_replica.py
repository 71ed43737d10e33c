"""A replica, in a child forked from the service's preloaded interpreter (`warm_server.py`).

The child becomes the process a fresh `python ARGS` would have been under the replica's
environment, as far as the replica's code can tell: its output on the replica's pipe and stdin
from /dev/null, its own private mount namespace with the storage root at /gcs
(`gcs_mount.py`'s, made here with the same system calls util-linux's `unshare` and `mount
--bind` make), its working directory and umask, exactly its environment (`os.environ` replaced,
numpy's and torch's thread pools as that environment would size them, `fork_threads.as_fresh`),
`sys.executable` and `sys.prefix` of its own Python environment (`isolation.py`), `sys.path` as
that environment's interpreter builds it (the script's folder or the working directory, then
PYTHONPATH, the standard library, its own site-packages, its requirements' and the service's),
the start-up hook applied when PYTHONPATH names it, fresh random generators, Python's own signal
dispositions, and `__main__` run as `python -m MODULE`, `python SCRIPT` or `python -c CODE`
runs it (the same `runpy` function for `-m`, so a traceback shows the frames it would). The
exit is the interpreter's: `SystemExit`'s status, an uncaught exception printed by
`sys.excepthook` (status 1), KeyboardInterrupt ending the process by SIGINT; then non-daemon
threads are joined and exit handlers run.

What stays the server's (docs/containers.md, "Warm replicas"): the modules it preloaded, which
read its environment when they were imported (`warm.py` starts a replica cold where the
environment differs in what an import reads, or where its path would import another copy of
one), the string hash seed, and the process's command line in `ps` and /proc (rewriting it would
overwrite the memory that /proc/PID/environ shows).
"""

import atexit
import builtins
import contextlib
import ctypes
import io
import os
import runpy
import signal
import site
import sys
import tempfile
import threading
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from vtp.engine import fork_server, fork_threads

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
GCS_MOUNT = b"/gcs"


INHERITED = (signal.SIGTERM, signal.SIGUSR2, signal.SIGHUP, signal.SIGQUIT, signal.SIGINT)
"""Signals a cold replica gets as the service left them: ignored stays ignored across exec
(`nohup vtp local serve` ignores SIGHUP), a handler becomes the default."""
_ignored_at_start: frozenset[int] = frozenset()


def note_inherited_signals() -> None:
    """Record which of `INHERITED` this process was started ignoring (the server calls it first,
    before it sets its own): a replica keeps ignoring those, as a cold one would."""
    global _ignored_at_start
    _ignored_at_start = frozenset(s for s in INHERITED if signal.getsignal(s) == signal.SIG_IGN)


def run(request: Mapping, output: int, base: "BasePath") -> int:
    """Become the replica `request` describes (`warm.py`'s `WarmRequest.to_json`), writing to
    `output`, and run it; the status to exit with. `base`: the server's own sys.path."""
    _take_stdio(output)
    for signum, disposition in (
        (signal.SIGCHLD, signal.SIG_DFL),
        (signal.SIGTERM, signal.SIG_DFL),
        (signal.SIGUSR2, signal.SIG_DFL),
        (signal.SIGHUP, signal.SIG_DFL),
        (signal.SIGQUIT, signal.SIG_DFL),
        (signal.SIGINT, signal.default_int_handler),  # as Python starts, unless it was ignored
        (signal.SIGPIPE, signal.SIG_IGN),  # as Python starts: a write to a closed pipe raises
        (signal.SIGXFSZ, signal.SIG_IGN),
    ):
        ignored = signum in _ignored_at_start
        signal.signal(signum, signal.SIG_IGN if ignored else disposition)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    try:
        if request["gcs_root"]:
            private_gcs(request["gcs_root"])
        os.umask(request["umask"])
        os.chdir(request["cwd"])
    except OSError as exc:
        os.write(2, f"[vtp local] cannot start the replica: {exc}\n".encode())
        return 127
    _take_environment(request, base)
    show_in_proc(request["argv"], request["env"])
    return _run_main(request["mode"], request["target"], request["args"])


def private_gcs(storage_root: str) -> None:
    """A private mount namespace (with a user namespace mapping this user to root when not
    root, as `unshare --map-root-user`) whose /gcs is `storage_root` bind-mounted."""
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.geteuid(), os.getegid()
    flags = CLONE_NEWNS if uid == 0 else CLONE_NEWNS | CLONE_NEWUSER
    _check(libc.unshare(flags), "unshare")
    if uid != 0:
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"0 {uid} 1")
        Path("/proc/self/gid_map").write_text(f"0 {gid} 1")
    _check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
    os.makedirs(storage_root, exist_ok=True)
    _check(libc.mount(storage_root.encode(), GCS_MOUNT, None, MS_BIND, None), "mount --bind")


PR_SET_MM, PR_SET_MM_MAP = 35, 14
_KEEP_EXE = 0xFFFFFFFF
_shown: list[ctypes.Array] = []
"""The memory /proc/PID/cmdline and environ show, kept alive for the process's life."""


class _MemoryMap(ctypes.Structure):
    """The kernel's `struct prctl_mm_map`."""

    _fields_ = [
        *((name, ctypes.c_uint64) for name in (
            "start_code", "end_code", "start_data", "end_data", "start_brk", "brk",
            "start_stack", "arg_start", "arg_end", "env_start", "env_end",
        )),
        ("auxv", ctypes.c_void_p), ("auxv_size", ctypes.c_uint32), ("exe_fd", ctypes.c_uint32),
    ]  # fmt: skip


def show_in_proc(argv: Sequence[str], env: Mapping[str, str]) -> bool:
    """Make /proc/PID/cmdline and /proc/PID/environ (`ps`, and whatever finds a process by its
    environment) show the replica's command and environment instead of the server's, as an
    exec would have; whether it could. The kernel lets a process with CAP_SYS_RESOURCE or
    CAP_CHECKPOINT_RESTORE (root) point them at new memory (`prctl(PR_SET_MM_MAP)`, the other
    fields of the map as they are); elsewhere they stay the server's."""
    fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()

    def stat(number: int) -> int:  # proc(5) numbers the fields from 1; (2) is the name
        return int(fields[number - 3])

    libc = ctypes.CDLL(None, use_errno=True)
    libc.sbrk.restype = ctypes.c_void_p
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong,
                           ctypes.c_ulong]  # fmt: skip
    blocks = [
        b"".join(a.encode() + b"\0" for a in argv),
        b"".join(f"{k}={v}".encode() + b"\0" for k, v in env.items()),
    ]
    args, environ = (ctypes.create_string_buffer(b, len(b)) for b in blocks)
    at_args, at_env = ctypes.addressof(args), ctypes.addressof(environ)
    memory_map = _MemoryMap(
        stat(26), stat(27), stat(45), stat(46), stat(47), libc.sbrk(0), stat(28),
        at_args, at_args + len(blocks[0]), at_env, at_env + len(blocks[1]), None, 0, _KEEP_EXE,
    )  # fmt: skip
    done = libc.prctl(PR_SET_MM, PR_SET_MM_MAP, ctypes.byref(memory_map),
                      ctypes.sizeof(memory_map), 0) == 0  # fmt: skip
    if done:
        _shown.extend((args, environ))
    return done


def _check(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")


_kept_streams: list[io.TextIOBase] = []
"""The server's own text streams, replaced where the replica asks for unbuffered output: kept
alive, as collecting one would close the descriptor under the replica's."""


def _take_stdio(output: int) -> None:
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.close(output)


@dataclass(frozen=True)
class BasePath:
    """The server's sys.path as it started (less its PYTHONPATH), in the parts a replica's is built
    of: the standard library's folders, then the service's site-packages (with what their
    .pth files added), then the base interpreter's (a replica's environment has the system
    site enabled, `isolation.py`)."""

    stdlib: tuple[str, ...]
    service: tuple[str, ...]
    system: tuple[str, ...]

    @classmethod
    def of_this_process(cls, service_sites: Sequence[str]) -> "BasePath":
        """This interpreter's, which runs a module (-m), less its PYTHONPATH."""
        own = set(os.environ.get("PYTHONPATH", "").split(os.pathsep)) - {""}
        path = [p for p in sys.path[1:] if p not in own]
        first_site = next((i for i, p in enumerate(path) if p in service_sites), len(path))
        system = site.getsitepackages([sys.base_prefix])
        return cls(
            tuple(path[:first_site]),
            tuple(path[first_site:]),
            tuple(p for p in system if p not in path and os.path.isdir(p)),
        )


def _take_environment(request: Mapping, base: BasePath) -> None:
    env: dict[str, str] = request["env"]
    server_env = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    fork_threads.as_fresh(server_env, env)
    tempfile.tempdir = None  # TMPDIR may differ
    sys.executable = request["executable"]
    sys.prefix = sys.exec_prefix = request["prefix"]
    sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))
    if env.get("PYTHONUNBUFFERED"):
        _unbuffered_stdio()
    if env.get("PYTHONFAULTHANDLER"):
        import faulthandler

        faulthandler.enable()
    if env.get("TZ") != server_env.get("TZ"):
        import time

        time.tzset()
    entries = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    own = [request["site"], *request["sites"]]
    sys.path[:] = [*_first_entry(request), *entries, *base.stdlib, *own, *base.service]
    sys.path += base.system
    for folder in request["sites"]:  # a requirement's own .pth files, as its site would run
        site.addsitedir(folder, known_paths=set(sys.path))
    site.USER_BASE = env.get("PYTHONUSERBASE") or None
    site.USER_SITE = None
    user_site = site.getusersitepackages()
    if site.ENABLE_USER_SITE and os.path.isdir(user_site):
        site.addsitedir(user_site)
    fork_server.install_startup_hook(entries)
    if "numpy" in sys.modules:  # a fresh interpreter seeds numpy's global generator afresh
        sys.modules["numpy"].random.seed()
    if "torch" in sys.modules:  # and torch's CPU generator (CUDA's starts in the replica)
        sys.modules["torch"].default_generator.seed()


def _first_entry(request: Mapping) -> list[str]:
    """What Python puts first on sys.path: the script's folder (links resolved), the working
    directory for -m, '' for -c; nothing under PYTHONSAFEPATH."""
    if request["env"].get("PYTHONSAFEPATH"):
        return []
    if request["mode"] == "script":
        return [os.path.dirname(os.path.realpath(request["target"]))]
    return [os.getcwd()] if request["mode"] == "module" else [""]


def _unbuffered_stdio() -> None:
    """stdout and stderr written through to their descriptors, as `python -u` makes them."""
    for name in ("stdout", "stderr"):
        current = getattr(sys, name)
        _kept_streams.append(current)
        stream = io.TextIOWrapper(
            io.FileIO(current.fileno(), "w", closefd=False),
            encoding=current.encoding,
            errors=current.errors,
            write_through=True,
        )
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _run_main(mode: str, target: str, args: Sequence[str]) -> int:
    """Run the replica's `__main__` as the interpreter would; its exit status."""
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    code = 0
    try:
        if mode == "module":
            sys.argv = ["-m", *args]  # runpy puts the module's file first, as `python -m`
            sys.modules.pop(target, None)  # run as __main__, not as a module preloaded
            runpy._run_module_as_main(target, alter_argv=True)  # type: ignore[attr-defined]
        elif mode == "script":
            sys.argv = [target, *args]
            main.__dict__.update(__file__=target, __cached__=None)
            with io.open_code(target) as source:
                compiled = compile(source.read(), target, "exec")
            exec(compiled, main.__dict__)
        else:
            sys.argv = ["-c", *args]
            exec(compile(target, "<string>", "exec"), main.__dict__)
    except SystemExit as exc:
        code = fork_server._exit_status(exc.code)
    except BaseException as exc:  # what the interpreter does with an uncaught exception
        trimmed = _without_this_frame(exc)
        sys.excepthook(type(exc), exc.with_traceback(trimmed), trimmed)
        code = -signal.SIGINT if isinstance(exc, KeyboardInterrupt) else 1
    return _finish(code)


def _without_this_frame(exc: BaseException) -> types.TracebackType | None:
    """The exception's traceback from the replica's own first frame (`runpy`'s for -m, as
    `python -m` shows them), not from this module's."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return tb


def _finish(code: int) -> int:
    """The interpreter's end: join non-daemon threads, run exit handlers, flush; then let go of
    the output (`fork_server._release_output`). A negative `code` ends by that signal."""
    with contextlib.suppress(Exception):
        threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    fork_server._release_output()
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        return 128 - code
    return code
