"""A fork server for local pipeline tasks: `python -m vtp.engine.fork_server FD`.

A local task used to be a fresh interpreter that spent one to three seconds importing kfp, the
aiplatform types and torch before running a component body of a few milliseconds. This server
imports them once and forks one child per task; each child is still its own process with its own
environment, working directory, argv, stdout and exit status, and runs `python -m MODULE ARGS`
exactly as the fresh interpreter would (`runpy`), so kfp's executor contract is unchanged.

Imports come in stages, and each stage lives in its own process: the server inherits a socket
that already listens (FD), so a client can connect at once; it imports the first stage (what a
task that submits a Vertex job needs) and forks a zygote for the next stage (what registering
and deploying a model need, torch, then what torch.export needs, then the full SDK), and so on.
Until a later zygote reports ready, tasks fork from the deepest one that is, so the first task
never waits for an import. A process with more than one thread is never forked from: a lock
another thread held would stay locked in the child forever (the hang of OpenMP or MKL after
fork). numpy's OpenBLAS would start threads as torch imports it, so the server runs with one
BLAS thread and each task gets its own pools back (`fork_threads.py`); a stage whose imports
started a thread anyway reports itself unfit and ends, and tasks fork from the stage above it.
Requests travel down the chain as file descriptors (SCM_RIGHTS); nothing is copied.

A task may want a stage that is still importing: one whose modules its code names (the
job-submitting task names the launcher that stage 1 imports, evaluation and export theirs,
which the torch stage imports; `wanted_stage`). A foreground stage imports at normal priority
and its import has started already, so such a task waits for it (the stage above holds the
request until its zygote reports) instead of importing the same modules again beside it. A
background stage may wait behind running jobs: no task waits for one, but the export task of a
run that wants torch waits for the torch.export stage a while (`EXPORT_WAIT_SECONDS`).

The wire protocol, per connection (client in `fork_tasks.py`):

    client -> 1 byte                               the stage the task wants (`wanted_stage`)
    client -> 1 byte with SCM_RIGHTS [stdout fd]   where the task writes (stdout and stderr)
    client -> 8-byte length, JSON {"module", "argv", "env", "cwd"}
    server -> 4-byte exit status, once the task ends (none if it was killed by a signal)

Every process of the server ignores SIGCHLD so children are reaped by the kernel, and SIGINT
(Ctrl-C reaches the tasks; the client stops the server); each task child restores Python's own
signal dispositions first. SIGTERM ends a stage and the stages below it; a stage also ends when
the one above it closes its end, and the server when its client has gone, so nothing outlives
the run but a task that is still running.

Process titles stay as they are: rewriting them (setproctitle) would overwrite the memory that
/proc/PID/environ shows, where the service finds the processes a run left behind by their token.
A forked task therefore shows in `ps` as the server; its working directory is the run's.
"""

import atexit
import contextlib
import importlib
import importlib.util
import io
import json
import logging
import os
import runpy
import select
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Sequence

from vtp import import_gc
from vtp.engine import fork_threads
from vtp.native_threads import native_threads
from vtp.vertex.local_auth import STARTUP_HOOK_DIR

_log = logging.getLogger("vtp.fork_server")

STAGES: tuple[tuple[str, ...], ...] = (
    # What every lightweight task needs: kfp's executor.
    ("kfp.dsl.executor", "kfp.dsl.kfp_config", "kfp.dsl.utils"),
    # What a job-submitting task needs: the aiplatform_v1 types and job client (the package
    # imports its other clients when a task names them: `main`), and this project's launchers
    # of jobs. A run's first job waits for this stage, so it holds nothing else.
    (
        "google.cloud.aiplatform_v1",
        "google.cloud.aiplatform_v1.types",
        "google.cloud.aiplatform_v1.services.job_service",
        "vtp.launchers.custom_job",
        "vtp.launchers.tuning",
    ),
    # What registering and deploying a model need: their clients, this project's launchers of
    # them, and GCPC's artifact types (`google.VertexModel`, ...).
    (
        "google.cloud.aiplatform_v1.services.model_service",
        "google.cloud.aiplatform_v1.services.endpoint_service",
        "vtp.launchers.upload_model",
        "vtp.launchers.deploy_model",
        "google_cloud_pipeline_components.types.artifact_types",
    ),
    # torch and this project's torch tasks (evaluation, export, the built-in task): what a task
    # after a training job needs first. numpy's OpenBLAS, which torch imports, starts no thread
    # under the server's environment (`fork_threads`); should a build start one anyway, this
    # stage reports itself unfit (see `_serve`), and tasks import torch themselves.
    (
        "torch",
        "vtp.launchers.evaluation",
        "vtp.trainer.evaluate",
        "vtp.trainer.tasks.digits",
        "threadpoolctl",
    ),
    # What torch.export imports on first use (the export task's trace, its passes and sympy),
    # so no task imports them after its fork: twice the time torch takes, and only export
    # needs it. The stage then exports a tiny model once (`_warm_torch_export`). It imports in
    # the background; the export task of a run that wants torch waits for it, a while
    # (`EXPORT_WAIT_SECONDS`).
    (
        "vtp.trainer.export",
        "torch.export._trace",
        "torch._inductor.ir",
        "torch._export.passes.replace_autocast_with_hop_pass",
        "torch._export.passes.replace_set_grad_with_hop_pass",
        "torch._subclasses.schema_check_mode",
        "torch.fx.experimental.validator",
        "torch.utils.serialization",
        "sympy.combinatorics",
        "sympy.tensor.tensor",
        # What torch._dynamo's exit handler imports in every task that exits (`dump_compile_times`:
        # 12 of its 15 ms); with it preloaded the handler still runs, as in a fresh interpreter.
        "tabulate",
    ),
    # The full SDK, which GCPC's launchers and a team's own components import: the slowest
    # import, and none of this project's components needs it, so it comes last.
    ("google.cloud.aiplatform",),
)
SDK_STAGE = len(STAGES) - 1
"""The full SDK's stage, the last: imported only when the client says its run may want it
(`main`; `fork_tasks.wants_sdk`)."""
SDK_IMPORTERS = ("google_cloud_pipeline_components.container",)
"""Modules that import the full SDK: a task that runs one (GCPC's launchers) wants its stage."""
FOREGROUND_STAGES = 3
"""These stages import at normal priority; the ones after them at low priority (jobs may be
running by then, and take precedence), except the torch stage when the run wants it."""
TORCH_STAGE = 3
"""The torch stage imports at normal priority when the client says its run has tasks that want
it (`wanted_stage`), through the decision pipe (`main`), else in the background. Evaluation
after a training job forks from it: at the lowest priority two replicas training on two cores
starved it, and evaluation imported torch cold after the job (1.5-3 s); at normal priority it
takes 1.6 s of CPU while the job starts, and evaluation takes 0.25 s. A run without such tasks
(most small pipelines) would only lose that CPU to it: it stays in the background there."""
EXPORT_WAIT_SECONDS = 3.0
"""How long a task of a run that wants torch waits for the torch.export stage (the stage after
the torch stage), which imports in the background, before it forks from the torch stage and
imports what it needs itself. At the lowest priority the stage gets only what the run's jobs
leave of the CPU, and a short training job could end before it had imported: the export task
then imported torch.export itself, 1.3 s more (1 `vtp run train` in 6). Once the jobs have
ended, what the stage has left to import takes at most what the task would take for all of it;
should other jobs still run and starve it, the task waits no longer than this."""
TORCH_FIRST, NO_SDK_STAGE = b"F", b"N"
"""The client's decision (`main`): its first byte, `TORCH_FIRST` or another; its second,
`NO_SDK_STAGE` or another."""
PRELOAD_ENV = "VTP_TASK_PRELOAD"
"""Comma-separated modules a pipeline's own tasks import, added to the last stage."""
HOOK_FILE = STARTUP_HOOK_DIR / "sitecustomize.py"
_READY, _UNFIT = b"R", b"U"
_FIRST_BYTE_SECONDS = 10.0
"""How long the server waits for a client's first byte (the stage it wants): it is sent at once."""
_STATUS = struct.Struct("!i")
_LENGTH = struct.Struct("!Q")


def stages() -> list[tuple[str, ...]]:
    """The import stages, with the modules named in $VTP_TASK_PRELOAD added to the last."""
    extra = tuple(m.strip() for m in os.environ.get(PRELOAD_ENV, "").split(",") if m.strip())
    return [*STAGES[:-1], STAGES[-1] + extra]


_decision_fd = -1
"""The read end of the client's decision pipe (`main`), if it gave one."""


def main(argv: Sequence[str]) -> int:
    """Serve task requests on the listening socket inherited as fd `argv[0]` until the client
    ends this process or exits itself. `argv[1]`, if given, is the read end of a pipe on which
    the client writes two bytes once it knows its run. The first: `F` when the run has tasks
    that want the torch stage (it then imports at normal priority), anything else or its end:
    background. The torch stage waits for that byte before it imports; the stages above it
    serve meanwhile. The second: `N` when no task of the run wants the full SDK's stage (the
    stage before it then starts none), anything else or its end: the stage is imported."""
    global _decision_fd
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the tasks; the client stops us
    listener = socket.socket(fileno=int(argv[0]))
    _decision_fd = int(argv[1]) if len(argv) > 1 else -1
    _serve(listener, stages(), upstream=None, depth=0)
    return 0


def _next_decision() -> bytes:
    """The next byte of the client's decision (`main`), blocking until it writes it; empty when
    there is no decision pipe or the client went away."""
    if _decision_fd < 0:
        return b""
    try:
        return os.read(_decision_fd, 1)
    except OSError:
        return b""


def _serve(
    source: socket.socket,
    remaining: list[tuple[str, ...]],
    upstream: socket.socket | None,
    depth: int,
) -> None:
    """Import this stage, start the next, then hand each request on or fork a task for it."""
    if depth == TORCH_STAGE:  # the decision's first byte
        background = _next_decision() != TORCH_FIRST
    else:
        background = depth >= FOREGROUND_STAGES
    _preload(remaining[0], background=background)
    if upstream is not None:
        if native_threads() > 1:  # forking now could copy a lock another thread holds
            _log.debug("fork server: stage %d started threads; tasks fork from above", depth)
            upstream.sendall(_UNFIT)
            return
        upstream.sendall(_READY)
    if depth + 1 == SDK_STAGE and _next_decision() == NO_SDK_STAGE:  # its second byte
        remaining = remaining[:1]  # this run has no use for the full SDK: no stage for it
    zygote = _start_zygote(source, remaining[1:], depth + 1) if remaining[1:] else None
    zygote_ready = False
    # A task may wait for the next stage while it imports at normal priority: a client asks for
    # the torch stage only when it said it wants it. The torch.export stage imports in the
    # background: its tasks wait for it only a while (`EXPORT_WAIT_SECONDS`).
    waits_for_zygote = depth + 1 <= TORCH_STAGE or (depth == TORCH_STAGE and not background)
    patience = EXPORT_WAIT_SECONDS if depth == TORCH_STAGE else None
    pending: list[tuple[socket.socket, int, float]] = []  # requests waiting, and till when
    client = os.getppid()
    while True:
        soonest = min((until for _, _, until in pending), default=time.monotonic() + 1.0)
        timeout = max(0.0, min(1.0, soonest - time.monotonic()))
        watched = [source, *([zygote] if zygote else [])]
        readable, _, _ = select.select(watched, [], [], timeout)
        if upstream is None and os.getppid() != client:  # the client died without stopping us
            return
        if zygote in readable:
            zygote_ready = zygote.recv(1) == _READY
            if not zygote_ready:  # the zygote died: fork from here from now on
                zygote.close()
                zygote = None
            for connection, wanted, _ in pending:
                _hand_on(connection, wanted, zygote, (source, zygote, *_held(pending)))
            pending.clear()
        now = time.monotonic()
        for late in [p for p in pending if p[2] <= now]:  # waited long enough: fork here
            pending.remove(late)
            _hand_on(late[0], late[1], None, (source, zygote, *_held(pending)))
        if source in readable:
            request = _next_request(source, upstream)
            if request is None:  # the stage above ended
                return
            connection, wanted = request
            if zygote is not None and not zygote_ready and waits_for_zygote and wanted > depth:
                pending.append((connection, wanted, now + (patience or float("inf"))))
            else:
                ready = zygote if zygote_ready else None
                _hand_on(connection, wanted, ready, (source, zygote, *_held(pending)))


def _held(pending: Sequence[tuple[socket.socket, int, float]]) -> list[socket.socket]:
    """The connections of the requests waiting here, which a forked task must close."""
    return [connection for connection, _, _ in pending]


def _hand_on(
    connection: socket.socket,
    wanted: int,
    zygote: socket.socket | None,
    inherited: Sequence[socket.socket | None],
) -> None:
    """Hand the request on to the (ready) `zygote`, or fork its task here when there is none;
    the child closes what it `inherited` of this stage's sockets."""
    if zygote is not None:
        socket.send_fds(zygote, [bytes([wanted])], [connection.fileno()])
        connection.close()
    else:
        _fork_task(connection, [s for s in inherited if s is not connection])


def wanted_stage(
    imports: Iterable[str], stages: Sequence[tuple[str, ...]], torch_first: bool = True
) -> int:
    """The deepest stage a task may wait for that preloads a module of `imports` or a package of
    one (a task's code names `vtp.launchers.custom_job`: stage 1; `vtp.launchers.evaluation`:
    the torch stage, and `vtp.trainer.export` the torch.export stage after it, when `torch_first`,
    i.e. the torch stage imports at normal priority); 0 when none does."""
    wanted = 0
    waitable = TORCH_STAGE + 2 if torch_first else FOREGROUND_STAGES
    for depth, modules in enumerate(stages[:waitable]):
        if names_any(imports, modules):
            wanted = depth
    return wanted


def names_any(imports: Iterable[str], modules: Iterable[str]) -> bool:
    """Whether `imports` names one of `modules`, or a module inside one of them."""
    return any(name == m or name.startswith(m + ".") for name in imports for m in modules)


def _preload(modules: Sequence[str], background: bool) -> None:
    """Import `modules`; in the background, from a thread of the lowest priority, so running
    jobs lose no CPU to it, while this process's main thread (which forks the tasks) keeps its
    normal priority. The thread has ended before anything is forked. The collector is off
    meanwhile, and what is preloaded is frozen (`vtp.import_gc`): tasks forked from here do not
    walk it."""
    with import_gc.paused():
        if background:
            thread = threading.Thread(target=_import_all, args=(modules, True), name="preload")
            thread.start()
            thread.join()
            _until_thread_ended(thread.native_id)
        else:
            _import_all(modules, False)
    _spare_tasks_the_teardown()
    sys.stdout.flush()
    sys.stderr.flush()


def _spare_tasks_the_teardown() -> None:
    """Keep a forked task's exit from undoing, one by one, what the server preloaded and the
    task's `os._exit` throws away anyway.

    torch registers its operators through `torch.library.Library` objects as it is imported
    (187 of them once torch.export is); each has a `weakref.finalize` that, at exit, removes its
    registrations from torch's dispatcher (`_del_library`): 40 ms of every task's exit. Those of
    the preloaded libraries run no more at exit (`atexit = False`), and nothing else changes:
    they change nothing outside the process (its dispatcher tables, in its own memory), and in a
    forked task nothing runs after the exit handlers but `os._exit` (`_fork_task`); by then
    every exit handler and finalizer the task registered has run, in the same order as in a
    fresh interpreter (they are younger, and run first). Libraries the task creates, and the
    preloaded ones should the task delete them, are still torn down as they would be. Stage
    processes never run exit handlers (they end with `os._exit`); the first stage imports no
    torch."""
    library = sys.modules.get("torch.library")
    teardown = getattr(library, "_del_library", None)
    if teardown is None:
        return
    registry = getattr(weakref.finalize, "_registry", {})  # CPython's, since 3.4
    for finalizer in list(registry):
        found = finalizer.peek()
        if found is not None and found[1] is teardown:
            finalizer.atexit = False


def _until_thread_ended(native_id: int | None, within: float = 2.0) -> None:
    """Wait until the native thread `native_id` has ended, for at most `within` seconds.

    `Thread.join` returns once the thread's Python part is done; the native thread ends a
    moment later (CPython's threads are detached: nothing can join them), and until then
    `native_threads` counts it, so a stage checked at once could report itself unfit. No event
    tells when it has gone: /proc is checked every millisecond. Past `within`, the stage checks
    itself as before."""
    deadline = time.monotonic() + within
    while os.path.exists(f"/proc/self/task/{native_id}") and time.monotonic() < deadline:
        time.sleep(0.001)


def _import_all(modules: Sequence[str], nice: bool) -> None:
    if nice:
        with contextlib.suppress(OSError, AttributeError):  # Linux sets priorities per thread
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:  # not installed, or broken: the task imports it itself
            _log.debug("fork server: not preloading %s: %s", name, exc)
    for name in modules:
        warm_up = _WARM_UPS.get(name)
        if warm_up is not None and name in sys.modules:
            try:
                warm_up()
            except Exception as exc:  # the task pays the first call itself
                _log.debug("fork server: not warming %s up: %s", name, exc)


def _warm_torch_export() -> None:
    """Export, save, load and run a tiny model once, with a dynamic batch as `vtp.trainer.export`
    does: torch.export initialises itself lazily on its first call in a process (exporting the
    digits model in a task forked from this stage: 220-280 ms cold, 180-215 ms). Nothing a task
    could tell from a fresh interpreter is left behind: torch's random generator is restored
    (building the model draws from it), and the counters that torch's exit handler reports
    (the FakeTensor cache's, logged at INFO) start from zero; what stays is the lazy set-up and
    the FakeTensor cache, which only make the task's first export faster."""
    import torch  # imported by now: this runs after `torch.export._trace` is
    from torch._subclasses.fake_tensor import FakeTensorMode

    with torch.random.fork_rng(devices=[]):
        model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
        example = torch.zeros(2, 4)
        batch = {0: torch.export.Dim("batch")}
        with torch.no_grad():
            program = torch.export.export(model.eval(), (example,), dynamic_shapes=(batch,))
            buffer = io.BytesIO()
            torch.export.save(program, buffer)
            buffer.seek(0)
            torch.export.load(buffer).module()(example[:1])
    FakeTensorMode.cache_hits = FakeTensorMode.cache_misses = 0
    FakeTensorMode.cache_bypasses.clear()


def _read_digits() -> None:
    """Parse the built-in digits task's data set once here (the task keeps it, read-only, for
    its process): every evaluation and export task of it would parse the file again."""
    importlib.import_module("vtp.trainer.tasks.digits").load_digits()


_WARM_UPS: dict[str, Callable[[], None]] = {
    "vtp.trainer.tasks.digits": _read_digits,
    "torch.export._trace": _warm_torch_export,
}
"""What to call once a stage has imported the module (and the rest of the stage's), in the
thread and at the priority of its imports."""


def _start_zygote(
    source: socket.socket, remaining: list[tuple[str, ...]], depth: int
) -> socket.socket:
    """Fork the next stage's process; return this end of the pair requests go down.

    SIGTERM to a stage ends the stages below it too (they may be busy importing, so they would
    only notice the closed pair later)."""
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        ours.close()
        source.close()
        signal.signal(signal.SIGTERM, _exit_on_term(None))
        try:
            _serve(theirs, remaining, upstream=theirs, depth=depth)
        finally:
            os._exit(0)
    signal.signal(signal.SIGTERM, _exit_on_term(pid))
    theirs.close()
    return ours


def _exit_on_term(zygote: int | None) -> Callable[[int, object], None]:
    def handler(signum: int, _frame: object) -> None:
        if zygote is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(zygote, signal.SIGTERM)
        os._exit(0)

    return handler


def _next_request(
    source: socket.socket, upstream: socket.socket | None
) -> tuple[socket.socket, int] | None:
    """Accept a client and read the stage it wants, or take a request handed down from the
    stage above (None when it ended)."""
    if upstream is None:
        connection, _ = source.accept()
        connection.settimeout(_FIRST_BYTE_SECONDS)  # the client sends it as it connects
        try:
            wanted = connection.recv(1)
        except OSError:
            wanted = b""
        connection.settimeout(None)
        return connection, wanted[0] if wanted else 0
    message, fds, _, _ = socket.recv_fds(source, 1, 1)
    return (socket.socket(fileno=fds[0]), message[0] if message else 0) if fds else None


def _fork_task(connection: socket.socket, inherited: Sequence[socket.socket | None]) -> None:
    if os.fork() != 0:
        connection.close()
        return
    code = 1
    try:
        for sock in inherited:
            if sock is not None:
                sock.close()
        code = _run_task(connection)
    finally:
        try:
            connection.sendall(_STATUS.pack(code))
        finally:
            os._exit(code)


def _run_task(connection: socket.socket) -> int:
    """In the task child: become the requested `python -m MODULE ARGV` and run it."""
    _, fds, _, _ = socket.recv_fds(connection, 1, 1)
    request = json.loads(_read_exactly(connection, _LENGTH.unpack(_read_exactly(connection, 8))[0]))
    for signum, disposition in (
        (signal.SIGCHLD, signal.SIG_DFL),
        (signal.SIGTERM, signal.SIG_DFL),
        (signal.SIGINT, signal.default_int_handler),
    ):
        signal.signal(signum, disposition)
    os.dup2(fds[0], 1)
    os.dup2(fds[0], 2)
    os.close(fds[0])
    for stream in (sys.stdout, sys.stderr):
        assert isinstance(stream, io.TextIOWrapper)  # the interpreter's own, now on the pipe
        stream.reconfigure(line_buffering=True)
    os.chdir(request["cwd"])
    _take_environment(request["env"])
    sys.argv = [request["module"], *request["argv"]]
    sys.modules.pop(request["module"], None)  # run as __main__, not as the module preloaded
    code = 0
    try:
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = _exit_status(exc.code)
    except BaseException:  # what an uncaught exception does to `python -m`: print it, exit 1
        sys.excepthook(*sys.exc_info())
        code = 1
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    _release_output()
    return code


def _release_output() -> None:
    """Point fds 1 and 2 at /dev/null once the task's output is flushed, before its status is
    sent: the client reads the output to its end before it reads the status, and the end would
    otherwise come only as `os._exit` closes the fds, after the kernel has torn down the
    process's memory (20 ms and more for a task forked from the torch stages). A process the
    task started with these fds still holds the pipe, and the output ends when it ends, as for
    a fresh interpreter."""
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
    finally:
        os.close(null)


def _take_environment(env: dict[str, str]) -> None:
    """The task's environment, its PYTHONPATH on sys.path and, if it asks, the start-up hook;
    the thread pools of numpy and torch as the task's environment would set them.

    Modules preloaded before the fork read the server's environment when they were imported;
    everything the task imports or calls afterwards reads the task's.
    """
    server_env = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    fork_threads.as_fresh(server_env, env)
    tempfile.tempdir = None  # TMPDIR may differ
    entries = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    for entry in reversed(entries):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    install_startup_hook(entries)
    if "numpy" in sys.modules:  # a fresh interpreter seeds numpy's global generator afresh
        sys.modules["numpy"].random.seed()
    if "torch" in sys.modules:  # and torch's CPU generator (CUDA's starts in the task)
        sys.modules["torch"].default_generator.seed()


def install_startup_hook(python_path: Sequence[str]) -> None:
    """Apply the start-up hook (`vtp.vertex.startup`) when its folder is on `python_path`, as
    Python would have at start-up: a process that started without its settings (a forked task,
    a standby worker) patches what is imported already and what is imported later."""
    if str(HOOK_FILE.parent) not in python_path:
        return
    spec = importlib.util.spec_from_file_location("_vtp_startup_hook", HOOK_FILE)
    assert spec is not None and spec.loader is not None  # a .py file's spec has both
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    hook.install()


def _exit_status(code: object) -> int:
    """What `sys.exit(code)` makes the process's exit status."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _read_exactly(connection: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = connection.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionError("the client went away mid-request")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


if __name__ == "__main__":
    from vtp import lazy_imports

    lazy_imports.install()  # what Python 3.15 defers of aiplatform_v1, tasks import when used
    sys.exit(main(sys.argv[1:]))
