"""One pipeline run: `python -m vtp.engine.worker RUN_DIR`, in its own process group.

The service writes `RUN_DIR/request.json` (the compiled spec, the typed arguments, the pipeline
root, and optionally `enableCaching` and `cacheDir`) and starts this module with
`VTP_LOCAL_ENDPOINT` and `VTP_GCS_ROOT` set, so every component talks back to the same service
and storage. The engine (`dag.py`) runs the spec; its tasks fork from a fork server this process
starts (`fork_tasks.py`), and what they do goes to `RUN_DIR/tasks.jsonl` (`journal.py`).

Cancelling sends SIGTERM to the whole group: the running tasks get it too (the custom_job
component cancels its job), so this process tells the engine to start nothing more, lets the
tasks end and reports. The result goes to `RUN_DIR/result.json`: `{"succeeded": bool,
"error": str}`, the error naming each task that failed and why.

`python -m vtp.engine.worker --standby CACHE_DIR [--no-cache]` is a worker started before its
run (the service's standby, `vtp.local.pipeline_jobs.standby`): it does what does not depend on
the run (the imports below, and its fork server, a fork of this process once it has imported
kfp, unless CACHE_DIR holds entries and its run may read them, which `--no-cache` says it will
not: then the run may be all cache hits, and those imports wait as for any run), then reads its
run from stdin, one JSON line `{"runDir", "env"}`.
It takes `env` into its environment (which its tasks get from it at task time), applies the
start-up hook, puts what it printed so far and its output from then on in `RUN_DIR/run.log`,
and runs as `python -m vtp.engine.worker RUN_DIR` does. End of file on stdin (the service is
gone, or stopped) ends it at once.
"""

import importlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vtp import import_gc
from vtp.process_exit import exit_now

if TYPE_CHECKING:
    from vtp.engine.dag import Engine

REQUEST, RESULT, STARTED = "request.json", "result.json", "started"
STANDBY, NO_CACHE = "--standby", "--no-cache"
"""The flags of a worker started before its run (see above)."""
WORKSPACE = "workspace"
"""The run's workspace, `RUN_DIR/workspace`: the folder KFP gives a run's tasks to share
(`dsl.WORKSPACE_PATH_PLACEHOLDER`; mounted at /kfp-workspace in a task's container)."""
_ENGINE_MODULES = (
    "google.protobuf.json_format",
    "kfp.pipeline_spec.pipeline_spec_pb2",
    "vtp.engine.cache",
    "vtp.engine.dag",
    "vtp.engine.journal",
    "vtp.engine.vertex_tasks",
)
"""What `_run` imports besides kfp's runtime."""
_engine: "Engine | None" = None


def request(spec: dict[str, Any], arguments: dict[str, Any], pipeline_root: Path) -> dict:
    """The request file's content for a run of `spec` with `arguments` under `pipeline_root`."""
    return {"pipelineSpec": spec, "arguments": arguments, "pipelineRoot": str(pipeline_root)}


def run(run_dir: Path) -> dict[str, Any]:
    """Run the requested pipeline with the engine; return the result.

    The fork server starts with the first task that forks, so that a run whose tasks are all
    cache hits never pays for its imports; but a run that cannot hit the cache (caching off,
    or nothing cached yet: a first run) starts it at once, so that its imports overlap this
    process's own and the first task finds them done."""
    from vtp.engine import fork_tasks
    from vtp.engine.cache import CACHE_DIR_ENV

    asked = json.loads((run_dir / REQUEST).read_text())
    cache_dir = os.environ.get(CACHE_DIR_ENV) or asked.get("cacheDir") or run_dir.parent / ".cache"
    caching = asked.get("enableCaching", True)
    with fork_tasks.serving() as server:
        if server is not None:  # its torch stage imports at normal priority only if wanted,
            # and its last stage, the full SDK, only if wanted at all
            spec = asked["pipelineSpec"]
            server.decide(fork_tasks.wants_torch(spec), fork_tasks.wants_sdk(spec))
        if server is not None and not (caching and _has_entries(Path(cache_dir))):
            server.start()
        return _run(run_dir, asked, Path(cache_dir), caching)


def _has_entries(cache_dir: Path) -> bool:
    """Whether the cache folder holds any entry (`<key>.json`)."""
    try:
        with os.scandir(cache_dir) as entries:
            return any(entry.name.endswith(".json") for entry in entries)
    except OSError:  # no cache folder yet
        return False


def _import_engine() -> None:
    """Import what running a spec takes: kfp (`_import_kfp_runtime`), its spec's types, the
    engine; without the collector (`vtp.import_gc`)."""
    with import_gc.paused():
        _import_kfp_runtime()
        for name in _ENGINE_MODULES:
            importlib.import_module(name)


def _run(run_dir: Path, asked: dict[str, Any], cache_dir: Path, caching: bool) -> dict[str, Any]:
    _import_engine()
    from google.protobuf import json_format
    from kfp.pipeline_spec import pipeline_spec_pb2

    from vtp.engine import vertex_tasks
    from vtp.engine.cache import Cache
    from vtp.engine.dag import Engine
    from vtp.engine.journal import Journal

    global _engine
    vertex_tasks.check_runnable(asked["pipelineSpec"])
    spec = pipeline_spec_pb2.PipelineSpec()
    json_format.ParseDict(asked["pipelineSpec"], spec, ignore_unknown_fields=True)
    project = os.environ.get(vertex_tasks.PROJECT_ENV) or "local"
    location = os.environ.get(vertex_tasks.LOCATION_ENV) or "us-central1"
    job_name = f"projects/{project}/locations/{location}/pipelineJobs/{run_dir.name}"
    workspace = run_dir / WORKSPACE
    workspace.mkdir(exist_ok=True)
    _engine = Engine(
        spec,
        asked["pipelineRoot"],
        run_dir.name,
        job_name,
        Journal(run_dir),
        Cache(cache_dir) if caching else None,
        str(workspace.resolve()),
    )
    (run_dir / STARTED).touch()
    node = _engine.run(asked["arguments"])
    if node.state == "SUCCEEDED":
        return {"succeeded": True, "error": ""}
    error = "\n".join(_engine.failures) or node.error or node.state.lower()
    return {"succeeded": False, "error": error}


def _import_kfp_runtime() -> None:
    """Import kfp as its own task executor does (`_KFP_RUNTIME=true`): its package then leaves
    out the authoring names of `kfp.dsl` and the KFP-backend client, whose Kubernetes client
    alone takes longer to import than a rerun of cached tasks takes to run. The engine reads
    specs and runs tasks; it authors nothing (of `kfp.dsl` it uses the artifact classes).

    The setting is undone at once, so no task inherits it; then the authoring modules that kfp's
    compiler and kfp.local import are imported in the order kfp's own `kfp.dsl` imports them
    (importing them in another order is circular)."""
    previous = os.environ.get("_KFP_RUNTIME")
    os.environ["_KFP_RUNTIME"] = "true"
    try:
        import kfp.dsl  # the package and its runtime part, once per process
    finally:
        if previous is None:
            del os.environ["_KFP_RUNTIME"]
        else:
            os.environ["_KFP_RUNTIME"] = previous
    import kfp.dsl.component_decorator  # noqa: F401


def read_result(run_dir: Path) -> dict[str, Any] | None:
    """The result a finished worker wrote, or None when it wrote none (killed, crashed)."""
    path = run_dir / RESULT
    return json.loads(path.read_text()) if path.exists() else None


def death_cause(run_dir: Path, tail_bytes: int = 64 << 10) -> str:
    """The last line of the last traceback in the run's log (a worker that died on an
    exception before writing its result: `OSError: [Errno 28] No space left on device`), or
    "" when its log ends in none."""
    try:
        with open(run_dir / "run.log", "rb") as log:
            log.seek(max(0, log.seek(0, os.SEEK_END) - tail_bytes))
            lines = log.read().decode(errors="replace").splitlines()
    except OSError:
        return ""
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent")]
    if not starts:
        return ""
    after = [line for line in lines[starts[-1] + 1 :] if line and not line[0].isspace()]
    return after[0].strip()[:500] if after else ""


def standby(cache_dir: Path, caching: bool = True) -> int:
    """A worker waiting for its run: start the fork server (unless `caching` and `cache_dir`,
    or $VTP_PIPELINE_CACHE_DIR, holds entries), import, read the run from stdin, run it
    (`main`); 0 at once on end of file."""
    from vtp.engine import fork_tasks
    from vtp.engine.cache import CACHE_DIR_ENV
    from vtp.engine.fork_server import install_startup_hook

    signal.signal(signal.SIGTERM, _note_cancel)
    cache_dir = Path(os.environ.get(CACHE_DIR_ENV) or cache_dir)
    with fork_tasks.serving() as server:  # `run` serves its tasks from this one
        if server is not None and not (caching and _has_entries(cache_dir)):
            # First, and as a fork of this process once it has imported the server's first
            # stage (kfp), which both need: the server's other imports overlap this process's
            # own, and nothing is imported twice. No thread has started, no hook is applied.
            _import_first_stage()
            server.start(fork_this_process=True)
        _import_engine()
        line = sys.stdin.buffer.readline()
        if not line:  # the service closed the pipe, or is gone
            return 0
        assignment = json.loads(line)
        run_dir = Path(assignment["runDir"])
        os.environ.update(assignment["env"])
        install_startup_hook(os.environ.get("PYTHONPATH", "").split(os.pathsep))
        _take_run_log(run_dir / "run.log")
        return main([str(run_dir)])


def _import_first_stage() -> None:
    """Import the fork server's first stage (kfp's executor, hence kfp) as the server would:
    with kfp's client and aiplatform's clients deferred (`vtp.lazy_imports`)."""
    from vtp import lazy_imports
    from vtp.engine.fork_server import STAGES

    lazy_imports.install()
    with import_gc.paused():  # and frozen before the server is forked
        for name in STAGES[0]:
            importlib.import_module(name)


def _take_run_log(log_path: Path) -> None:
    """Append what this process printed so far (to the file its stdout is, when it can be read)
    to `log_path`, and make it its stdout and stderr from now on; stdin is /dev/null, as a fresh
    worker's, so no task inherits the pipe its run came by."""
    sys.stdout.flush()
    sys.stderr.flush()
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
    try:
        written = os.pread(1, os.fstat(1).st_size, 0)
    except OSError:  # not a readable file
        written = b""
    if written:
        os.write(log, written)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)


def main(argv: list[str]) -> int:
    """Entry point: run, write the result, exit 0 on success (`--standby`: wait for the run
    first)."""
    if argv[:1] == [STANDBY]:
        return standby(Path(argv[1]), caching=NO_CACHE not in argv[2:])
    run_dir = Path(argv[0])
    signal.signal(signal.SIGTERM, _note_cancel)
    try:
        result = run(run_dir)
    except Exception as exc:  # a spec kfp cannot load: still a result the service can show
        result = {"succeeded": False, "error": f"{type(exc).__name__}: {exc}"}
    (run_dir / f"{RESULT}.tmp").write_text(json.dumps(result))
    (run_dir / f"{RESULT}.tmp").replace(run_dir / RESULT)
    print(f"pipeline run {'succeeded' if result['succeeded'] else 'failed'}", flush=True)
    return 0 if result["succeeded"] else 1


def _note_cancel(signum: int, frame: object) -> None:
    print("cancel requested: the running tasks were sent SIGTERM", flush=True)
    if _engine is not None:
        _engine.cancel()


if __name__ == "__main__":
    # Not sys.exit: the run has ended when the result is written, and its end is seen when
    # this process exits; the teardown of kfp's and the SDK's modules would delay that.
    exit_now(main(sys.argv[1:]))
