"""One pipeline run: `python -m vtp.engine.worker RUN_DIR`, in its own process group.

The service writes `RUN_DIR/request.json` (the compiled spec, the typed arguments and the local
pipeline root) and starts this module with `VTP_LOCAL_ENDPOINT` and `VTP_GCS_ROOT` set, so every
component talks back to the same service and storage. The run uses kfp.local's SubprocessRunner
in this environment; kfp.local keeps global configuration, hence a process per run.

Cancelling sends SIGTERM to the whole group: the running component gets it too (the custom_job
component cancels its job), so this process only notes it, lets kfp.local see the task end and
reports. The result goes to `RUN_DIR/result.json`: `{"succeeded": bool, "error": str}`.
"""

import json
import signal
import sys
from pathlib import Path
from typing import Any

REQUEST, RESULT, STARTED = "request.json", "result.json", "started"


def request(spec: dict[str, Any], arguments: dict[str, Any], pipeline_root: Path) -> dict:
    """The request file's content for a run of `spec` with `arguments` under `pipeline_root`."""
    return {"pipelineSpec": spec, "arguments": arguments, "pipelineRoot": str(pipeline_root)}


def run(run_dir: Path) -> dict[str, Any]:
    """Run the requested pipeline with kfp.local; return the result."""
    from kfp import components, local

    from vtp.engine import fork_tasks, kfp_fixes, task_output, vertex_tasks

    asked = json.loads((run_dir / REQUEST).read_text())
    kfp_fixes.apply()
    task_output.quiet()
    vertex_tasks.check_runnable(asked["pipelineSpec"])
    local.init(runner=local.SubprocessRunner(use_venv=False), pipeline_root=asked["pipelineRoot"])
    pipeline = components.load_component_from_text(json.dumps(asked["pipelineSpec"]))
    (run_dir / STARTED).touch()
    try:
        with fork_tasks.serving():
            pipeline(**asked["arguments"])
    except Exception as exc:  # kfp.local reports a failed task as RuntimeError
        # kfp.local names the task that failed; the cause is in what that task printed last.
        summary = task_output.plain(str(exc)) or type(exc).__name__
        return {"succeeded": False, "error": "\n".join([summary, *task_output.failure_tail()])}
    return {"succeeded": True, "error": ""}


def read_result(run_dir: Path) -> dict[str, Any] | None:
    """The result a finished worker wrote, or None when it wrote none (killed, crashed)."""
    path = run_dir / RESULT
    return json.loads(path.read_text()) if path.exists() else None


def main(argv: list[str]) -> int:
    """Entry point: run, write the result, exit 0 on success."""
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
    print("cancel requested: the running task was sent SIGTERM", flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
