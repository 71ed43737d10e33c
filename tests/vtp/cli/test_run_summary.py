"""`vtp run`'s closing summary, read from a PipelineJob and its task details as the service
returns them: tasks in the order they started, each loop iteration on its own, a cache hit
marked, outputs, the console page, and a failure's cause last."""

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from google.cloud import aiplatform_v1
from google.protobuf import struct_pb2

from vtp.run.local_run import RunResult
from vtp.run.summary import summarize

Task = aiplatform_v1.PipelineTaskDetail
DAG = "system.DAGExecution"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
ROOT = Path("/state/gcs")


def task(task_id: int, parent: int, name: str, state: str, **fields: object) -> Task:
    """A task detail: `start` (seconds after T0), `dag`, `cached`, `outputs` (parameters),
    `artifacts` ({name: uri}), `error`, `item` (an iteration's)."""
    detail = Task(task_id=task_id, parent_task_id=parent, task_name=name, state=state)
    execution = aiplatform_v1.Execution()
    if fields.get("dag"):
        execution.schema_title = DAG
    if fields.get("cached"):
        execution.state = aiplatform_v1.Execution.State.CACHED
    metadata = struct_pb2.Struct()
    metadata.update({f"output:{k}": v for k, v in dict(fields.get("outputs") or {}).items()})
    if "item" in fields:  # an iteration of a loop
        metadata.update({"iteration": 0, "item": fields["item"]})
    execution.metadata = metadata
    detail.execution = execution
    if "start" in fields:
        detail.start_time = T0 + timedelta(seconds=float(fields["start"]))  # type: ignore[arg-type]
    for output, uri in dict(fields.get("artifacts") or {}).items():
        artifacts = [aiplatform_v1.Artifact(uri=uri)]
        detail.outputs[output] = Task.ArtifactList(artifacts=artifacts)
    if fields.get("error"):
        detail.error = {"code": 9, "message": fields["error"]}
    return detail


def result(
    state: str, tasks: list[Task], error: str = "", stays: bool = True, **extra: object
) -> RunResult:
    job = aiplatform_v1.PipelineJob(
        name="projects/local/locations/us-central1/pipelineJobs/loop-20260101000000",
        state=state,
        runtime_config={"gcs_output_directory": "gs://vtp-local/pipeline-root"},
        job_detail={"task_details": tasks},
        error={"code": 9, "message": error} if error else None,
    )
    return RunResult(
        pipeline="loop.py",
        job=job,
        seconds=12.3,
        storage_root=ROOT,
        console="http://127.0.0.1:1/console/#code=t&page=/runs/loop-20260101000000",
        console_stays=stays,
        state_dir=Path("/state"),
        **extra,  # type: ignore[arg-type]
    )


LOOP = [
    task(1, 0, "loop", "SUCCEEDED", dag=True, start=0),
    task(2, 1, "for-loop-2", "SUCCEEDED", dag=True, start=1),
    task(3, 2, "for-loop-2", "SUCCEEDED", dag=True, start=1, item="a"),
    task(4, 2, "for-loop-2", "SUCCEEDED", dag=True, start=1, item=2.0),
    task(5, 3, "train", "SUCCEEDED", start=3, outputs={"Output": 0.123456}),
    task(6, 4, "train", "SUCCEEDED", start=2, outputs={"Output": 2.0}),
    task(7, 1, "prepare", "SKIPPED", cached=True, start=0.5, artifacts={"data": "gs://b/d"}),
    task(8, 1, "report", "PENDING"),
]


def test_tasks_in_start_order_each_iteration_and_the_cache_hit_marked() -> None:
    text = summarize(result("PIPELINE_STATE_RUNNING", LOOP))
    assert text.splitlines()[:9] == [
        "Pipeline loop.py RUNNING in 12s",
        "  prepare: cached",
        "    data: gs://b/d (/state/gcs/b/d)",
        "  train [1] (item 2):",
        "    Output 2",
        "  train [2] (item a):",
        "    Output 0.1235",
        "  report: PENDING",
        "  local Cloud Storage: gs://BUCKET/PATH is /state/gcs/BUCKET/PATH",
    ]
    assert "  console: http://127.0.0.1:1/console/#code=t&page=/runs/loop-20260101000000" in text


def test_a_failure_ends_with_its_cause_and_a_gone_console_says_how_to_see_it() -> None:
    failed = [
        task(1, 0, "loop", "FAILED", dag=True, start=0),
        task(2, 1, "train", "FAILED", start=0, error="task train failed\nValueError: x"),
    ]
    cause = "task train failed: exit status 1\nValueError: x"
    text = summarize(result("PIPELINE_STATE_FAILED", failed, error=cause, stays=False))
    assert "  train: FAILED\n    error: task train failed\n" in text
    assert text.splitlines()[-3:] == [
        "  error: task train failed: exit status 1",
        "  the failed task's last lines:",
        "    ValueError: x",
    ]
    assert (
        "  console: run `vtp local serve --state-dir /state` and open the Console address it "
        "prints, then go to #/runs/loop-20260101000000\n" in text
    )
    assert "code=" not in text  # the run's sign-in code dies with it
    # Once the run's log has shown the task's last lines as it went, the error is said once.
    tails = {"other": ["nothing"], "train": ["epoch 3", "ValueError: x (with the value)"]}
    text = summarize(result("PIPELINE_STATE_FAILED", failed, error=cause, tails=tails))
    assert text.splitlines()[-1] == "  error: task train failed: exit status 1"
    assert "ValueError" not in text.split("  error: task train failed: exit")[1]
    # The task whose error is the run's is not given it twice.
    failed[1] = task(2, 1, "train", "FAILED", start=0, error=cause)
    text = summarize(result("PIPELINE_STATE_FAILED", failed, error=cause, tails=tails))
    assert text.count("error: task train failed: exit status 1") == 1


def test_the_jobs_a_task_started_are_named_with_their_display_names() -> None:
    job = "projects/local/locations/us-central1/customJobs/7"
    recorded = {"resources": [{"resourceType": "CustomJob", "resourceUri": f"http://h/v1/{job}"}]}
    started = [
        task(1, 0, "train", "SUCCEEDED", dag=True, start=0),
        task(2, 1, "custom-job", "SUCCEEDED", outputs={"gcp_resources": json.dumps(recorded)}),
    ]
    text = summarize(result("PIPELINE_STATE_SUCCEEDED", started, display_names={job: "vtp-blobs"}))
    assert f"  custom-job:\n    CustomJob: {job} (vtp-blobs)\n" in text
