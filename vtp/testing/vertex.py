"""`LocalVertex`: one test's view of the test service, and what a test asserts with.

    def test_retry(local_vertex):
        local_vertex.fail_next_job()
        train_with_retry()                                      # the team's code, unchanged
        assert local_vertex.job_states() == ["JOB_STATE_FAILED", "JOB_STATE_SUCCEEDED"]
        assert "epoch 1" in local_vertex.logs(local_vertex.jobs()[-1])

Everything is read through the service's own API (REST, with the token), in the test's project
and location only: another test's jobs, runs and experiments are in another project. Buckets are
global, as in Cloud Storage; each test's staging bucket is `gs://<project>-staging`.
"""

import json
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar, cast
from urllib.parse import quote

import requests
from google.cloud import aiplatform_v1

from vtp.testing import DEFAULT_TIMEOUT
from vtp.testing.process import ServiceInfo

_T = TypeVar("_T")
_FAULT_HELPERS = {
    ("FAIL", "JOB"): "fail_next_job()",
    ("OOM", "JOB"): "oom_next_job()",
    ("PREEMPT", "JOB"): "preempt_next_job()",
    ("STOCKOUT", "JOB"): "stockout_next_job()",
    ("FAIL", "TRIAL"): "fail_next_trial()",
}
"""The helper that arms each fault, as a test's end names an unused one."""


class LocalVertex:
    """The test service, as one test in its own project sees it."""

    def __init__(
        self, info: ServiceInfo, project: str, location: str, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        self.info = info
        self.project = project
        """This test's project ID: everything the test creates lives there."""
        self.location = location
        self.timeout = timeout
        """How long `wait_for_log` and the other waits wait, in seconds."""
        self._http = requests.Session()
        self._http.headers["Authorization"] = f"Bearer {info.token}"

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`: REST, gcloud's endpoint overrides, Cloud Storage's API."""
        return self.info.url

    @property
    def api_endpoint(self) -> str:
        """`localhost:PORT`: the aiplatform SDK's endpoint (gRPC and REST over TLS)."""
        return self.info.api_endpoint

    @property
    def parent(self) -> str:
        """`projects/<project>/locations/<location>`."""
        return f"projects/{self.project}/locations/{self.location}"

    @property
    def staging_bucket(self) -> str:
        """`gs://<project>-staging`, the SDK's default staging bucket in this test."""
        return f"gs://{self.project}-staging"

    @property
    def storage_root(self) -> Path:
        """Where `gs://BUCKET/NAME` is a file: `storage_root/BUCKET/NAME`."""
        return self.info.storage_root

    # -- what happened ------------------------------------------------------------------------

    def jobs(self) -> list[aiplatform_v1.CustomJob]:
        """This test's custom jobs, oldest first (a pipeline task's jobs included)."""
        found = self._list("customJobs", aiplatform_v1.CustomJob)
        return sorted(found, key=lambda job: cast(datetime, job.create_time))

    def job_states(self) -> list[str]:
        """Each of `jobs()`'s state, by name (`JOB_STATE_SUCCEEDED`)."""
        return [job.state.name for job in self.jobs()]

    def pipeline_runs(self) -> list[aiplatform_v1.PipelineJob]:
        """This test's pipeline runs, oldest first, each with its tasks in `job_detail`."""
        found = self._list("pipelineJobs", aiplatform_v1.PipelineJob)
        return sorted(found, key=lambda run: cast(datetime, run.create_time))

    def task_states(self, run: aiplatform_v1.PipelineJob | str | None = None) -> dict[str, str]:
        """Task name -> state name (`SUCCEEDED`, `FAILED`, `SKIPPED`, ...) of `run` (a
        PipelineJob or its name; default: the newest run), the pipeline's own root left out."""
        if run is None:
            runs = self.pipeline_runs()
            if not runs:
                raise AssertionError(f"no pipeline run in {self.parent}")
            run = runs[-1]
        name = run if isinstance(run, str) else run.name
        job = self._get(name, aiplatform_v1.PipelineJob)
        return {
            task.task_name: task.state.name
            for task in job.job_detail.task_details
            if task.parent_task_id  # the pipeline's own root task has none
        }

    def objects(self, bucket: str, prefix: str = "") -> list[str]:
        """The names of the objects in `bucket` (`my-bucket` or `gs://my-bucket`) under
        `prefix`, sorted; [] for a bucket nothing wrote."""
        bucket = bucket.removeprefix("gs://").strip("/")
        names: list[str] = []
        token = ""
        while True:
            params = {"prefix": prefix, **({"pageToken": token} if token else {})}
            answer = self._http.get(f"{self.url}/storage/v1/b/{quote(bucket)}/o", params=params)
            if answer.status_code == 404:
                return []
            answer.raise_for_status()
            page = answer.json()
            names += [item["name"] for item in page.get("items", [])]
            token = page.get("nextPageToken", "")
            if not token:
                return sorted(names)

    def create_bucket(self, bucket: str) -> None:
        """Create `bucket` (`my-bucket` or `gs://my-bucket`) if it does not exist yet."""
        name = bucket.removeprefix("gs://").strip("/")
        answer = self._http.post(
            f"{self.url}/storage/v1/b", params={"project": self.project}, json={"name": name}
        )
        if answer.status_code != 409:  # 409: it exists already
            self._check(answer)

    def read(self, uri: str) -> bytes:
        """The contents of the object `gs://BUCKET/NAME`."""
        bucket, _, name = uri.removeprefix("gs://").partition("/")
        answer = self._http.get(
            f"{self.url}/storage/v1/b/{quote(bucket)}/o/{quote(name, safe='')}",
            params={"alt": "media"},
        )
        answer.raise_for_status()
        return answer.content

    def logs(self, job: aiplatform_v1.CustomJob | Any | str) -> str:
        """Everything `job`'s replicas printed, with the service's notes (restarts, faults),
        replica by replica. `job` is a CustomJob (the SDK's or the API's) or its name."""
        answer = self._http.get(f"{self.url}/v1/{_name(job)}:logs")
        self._check(answer)
        return "".join(entry["text"] for entry in answer.json()["entries"])

    def wait_for_log(self, job: Any, text: str, timeout: float | None = None) -> str:
        """Wait until `job`'s logs contain `text` (its replica says it got somewhere); return
        the logs. AssertionError after `timeout` seconds (default: `self.timeout`)."""
        return self._wait(lambda: self.logs(job), lambda logs: text in logs, timeout, text)

    # -- faults -------------------------------------------------------------------------------

    def fail_next_job(self, exit_code: int = 1, nth: int = 1) -> None:
        """The next custom job created in this test (`nth=2`: the second, and so on) runs, and
        once its primary replica has logged a line, that replica exits with `exit_code`: the job
        ends FAILED with Vertex's `The replica workerpool0-0 exited with a non-zero status of 1.
        Termination reason: Error.`, Vertex's rules applying (6, 11, 134 and 139 retry the job
        first). A pipeline task's job counts as any other."""
        self._inject("FAIL", exit_code=exit_code, nth=nth)

    def oom_next_job(self, nth: int = 1) -> None:
        """The next (`nth`) custom job's primary replica, once it has logged a line, is killed
        by SIGKILL (status 137) as out of memory: the job ends FAILED with Vertex's
        `The replica workerpool0-0 ran out of memory and exited with a non-zero status of ...`"""
        self._inject("OOM", nth=nth)

    def fail_next_trial(self, exit_code: int = 1, nth: int = 1) -> None:
        """As `fail_next_job`, for the next (`nth`) tuning trial's job of this test: the trial
        ends INFEASIBLE and counts against its study's `maxFailedTrialCount`."""
        self._inject("FAIL", exit_code=exit_code, target="TRIAL", nth=nth)

    def preempt_next_job(self, nth: int = 1) -> None:
        """The next (`nth`) custom job created in this test has its primary replica preempted
        once as it starts (SIGTERM, then SIGKILL after the grace period), as a maintenance
        event or a SPOT reclaim would; Vertex's rules then restart it (to test resuming)."""
        self._inject("PREEMPT", nth=nth)

    def stockout_next_job(self, attempts: int | None = None, nth: int = 1) -> None:
        """The next (`nth`) custom job's machines are out of stock: it stays PENDING while its
        attempts to get them fail, each noted in its log (`Resources are insufficient in
        region: ...`). With `attempts`, that many fail and the next gets them: the job then
        runs. Without, or past Vertex's retries (3; a FLEX_START job waits up to its
        `scheduling.maxWaitDuration` instead), it ends FAILED with `error.code` 8
        (RESOURCE_EXHAUSTED) and Vertex's message."""
        self._inject("STOCKOUT", nth=nth, attempts=attempts)

    def preempt(self, job: Any, replica: str = "workerpool0-0") -> None:
        """Preempt `replica` of the running `job` now, as `vtp local preempt` does."""
        answer = self._http.post(f"{self.url}/v1/{_name(job)}:preempt", json={"replica": replica})
        self._check(answer)

    # -- plumbing -----------------------------------------------------------------------------

    def unused_faults(self) -> list[str]:
        """One line per fault this test asked for that never struck: it reached no job, or
        its job ended before its replica logged a line (the fixture fails the test with it)."""
        answer = self._http.get(f"{self.url}/v1/{self.parent}/customJobs:faults")
        self._check(answer)
        return [_unused(fault) for fault in answer.json()["faults"] if not fault["struck"]]

    def _inject(
        self, fault: str, exit_code: int = 1, target: str = "JOB", nth: int = 1,
        attempts: int | None = None,
    ) -> None:  # fmt: skip
        body: dict[str, Any] = {"fault": fault, "exitCode": exit_code, "target": target, "nth": nth}
        if attempts is not None:
            body["attempts"] = attempts
        answer = self._http.post(f"{self.url}/v1/{self.parent}/customJobs:injectFault", json=body)
        self._check(answer)

    def _list(self, kind: str, message: type[_T]) -> list[_T]:
        found: list[_T] = []
        token = ""
        while True:
            params = {"pageToken": token} if token else {}
            answer = self._http.get(f"{self.url}/v1/{self.parent}/{kind}", params=params)
            self._check(answer)
            page = answer.json()
            found += [_parse(message, item) for item in page.get(kind, [])]
            token = page.get("nextPageToken", "")
            if not token:
                return found

    def _get(self, name: str, message: type[_T]) -> _T:
        answer = self._http.get(f"{self.url}/v1/{name}")
        self._check(answer)
        return _parse(message, answer.json())

    def _wait(
        self, read: Callable[[], _T], done: Callable[[_T], bool], timeout: float | None, what: str
    ) -> _T:
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            value = read()
            if done(value):
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {timeout or self.timeout:g}s for {what!r}")
            time.sleep(0.1)

    @staticmethod
    def _check(answer: requests.Response) -> None:
        if answer.status_code >= 400:
            try:
                message = answer.json()["error"]["message"]
            except (ValueError, KeyError, TypeError):
                message = answer.text[:500]
            raise AssertionError(f"local Vertex service: HTTP {answer.status_code}: {message}")


def _unused(fault: dict) -> str:
    """The line that names an unused fault: the helper that armed it, and why it never struck."""
    what = _FAULT_HELPERS.get((fault["fault"], fault["target"]), fault["fault"])
    if fault.get("nth", 1) > 1:
        what = what.replace("()", f"(nth={fault['nth']})")
    if fault["fault"] == "FAIL":
        what += f" (exit status {fault['exitCode']})"
    where = "trial" if fault["target"] == "TRIAL" else "custom job"
    if fault["job"]:
        return (
            f"{what} was never used: its job {fault['job']} ended before it struck "
            "(its primary replica logged no line while running)"
        )
    if fault.get("nth", 1) > 1:
        return f"{what} was never used: fewer than {fault['nth']} {where}s were created after it"
    return f"{what} was never used: no {where} was created after it"


def _parse(message: type[_T], item: dict) -> _T:
    return message.from_json(json.dumps(item), ignore_unknown_fields=True)  # type: ignore[attr-defined]


def _name(job: Any) -> str:
    """The resource name of a job given as its name, an API message or an SDK object."""
    if isinstance(job, str):
        return job
    return getattr(job, "resource_name", None) or job.name
