"""The lines of the CustomJob a task starts, in the run's output as its replicas print them.

A task that starts a CustomJob (this project's `custom_job` component, GCPC's
`CustomTrainingJobOp` and the launchers built on it) records it in its `gcp_resources` output
as soon as the job exists, as every Vertex launcher does so that a cancel reaches it. While the
task runs, `following` watches that file; once it names a CustomJob of the local service, it
reads the job's replica lines through the service's Cloud Logging API (`joblogs.LogReader`)
and prints each as the task's own, `[task] workerpool0-0 | line`, until the task has ended and
the last lines are in. So whoever's code started the job, its lines reach `vtp run` and the
run's log. Tasks are told (`FOLLOWED_ENV`) so that our own launcher does not copy them too.

A task that runs a HyperparameterTuningJob (our `hyperparameter_tuning`, GCPC's
`HyperparameterTuningJobRunOp`) records that job instead; its trials are then read from the
job itself (`TrialLines`: the REST resource, every POLL_SECONDS) and each is printed as it
starts, with its parameters, and as it ends, with its state and final metrics:

    [hyperparameter-tuning] trial 1 started: learning_rate=0.0002, hidden_size=128 (job 6893...)
    [hyperparameter-tuning] trial 1 SUCCEEDED: learning_rate=0.0002, hidden_size=128 -> accuracy 0.9
"""

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from vtp.vertex.endpoint import FOLLOWED_ENV as FOLLOWED_ENV
from vtp.vertex.endpoint import LOCAL_ENDPOINT_ENV

POLL_SECONDS = 0.5
"""How often the follower looks for the job, and then for its new lines."""
_log = logging.getLogger(__name__)


@contextlib.contextmanager
def following(resources_file: str, prefix: str) -> Iterator[None]:
    """While the body runs, print the lines of the CustomJob `resources_file` names, each
    after `prefix`; then the ones not printed yet. Nothing outside the local service."""
    endpoint = os.environ.get(LOCAL_ENDPOINT_ENV, "")
    if not resources_file or not endpoint:
        yield
        return
    ended = threading.Event()
    follower = threading.Thread(
        target=_follow, args=(Path(resources_file), prefix, endpoint, ended),
        name="job-lines", daemon=True,
    )  # fmt: skip
    follower.start()
    try:
        yield
    finally:
        ended.set()
        follower.join()


def _follow(resources_file: Path, prefix: str, endpoint: str, ended: threading.Event) -> None:
    """Wait for the job to be named, then print its new lines every POLL_SECONDS, and once
    more after the task ended."""
    read: Callable[[], list[str]] | None = None
    while True:
        last_round = ended.is_set()
        if read is None:
            read = _reader(resources_file, endpoint)
        if read is not None:
            try:
                for line in read():
                    print(f"{prefix}{line}", flush=True)
            except Exception as exc:  # the service went away, or the job: no lines, no harm
                _log.debug("job lines unavailable: %s", exc)
        if last_round:
            return
        ended.wait(POLL_SECONDS)


def _reader(resources_file: Path, endpoint: str) -> Callable[[], list[str]] | None:
    """What reads the new lines of the job `resources_file` names, once it names one."""
    from vtp.vertex.local_auth import local_session

    name = _job_name(resources_file, "customJobs")
    if name is not None:
        return _replica_lines(local_session(endpoint), name, endpoint)
    name = _job_name(resources_file, "hyperparameterTuningJobs")
    if name is not None:
        return TrialLines(local_session(endpoint), f"{endpoint}/v1/{name}").read
    return None


def _replica_lines(session: Any, name: str, endpoint: str) -> Callable[[], list[str]]:
    """The CustomJob `name`'s new replica lines, `workerpool0-0 | message`, at each call."""
    from vtp.vertex.joblogs import LogReader, format_entry

    project, job_id = name.split("/")[1], name.rsplit("/", 1)[-1]
    reader = LogReader(session, project, job_id, endpoint)

    def read() -> list[str]:
        lines = []
        for entry in reader.read():
            for line in format_entry(entry):  # SEVERITY, TIMESTAMP, REPLICA, MESSAGE
                replica, message = line.split("\t", 3)[2:4]
                lines.append(f"{replica} | {message}")
        return lines

    return read


TRIAL_ENDED = frozenset({"SUCCEEDED", "INFEASIBLE"})
"""Trial states (REST names) after which a trial changes no more (failed trials are INFEASIBLE)."""


class TrialLines:
    """A tuning job's trials as lines: each once when first seen, once when it has ended."""

    def __init__(self, session: Any, url: str) -> None:
        """`url`: the job's REST resource on the local service."""
        self._session, self._url = session, url
        self._started: set[str] = set()
        self._ended: set[str] = set()

    def read(self) -> list[str]:
        """The lines of what happened to the job's trials since the last call."""
        response = self._session.get(self._url, timeout=30)
        response.raise_for_status()
        return self.lines(response.json().get("trials", []))

    def lines(self, trials: list[dict[str, Any]]) -> list[str]:
        """The lines of `trials` (REST JSON) not printed yet: a start, then an end."""
        lines = []
        for trial in trials:
            trial_id = str(trial.get("id", ""))
            if trial_id not in self._started:
                self._started.add(trial_id)
                lines.append(trial_started(trial))
            if trial_id not in self._ended and trial.get("state") in TRIAL_ENDED:
                self._ended.add(trial_id)
                lines.append(trial_ended(trial))
        return lines


def trial_started(trial: dict[str, Any]) -> str:
    """`trial 1 started: x=0.5, layers=2 (job 123)`."""
    job = str(trial.get("customJob", "")).rsplit("/", 1)[-1]
    line = f"trial {trial.get('id')} started: {_parameters(trial)}"
    return f"{line} (job {job})" if job else line


def trial_ended(trial: dict[str, Any]) -> str:
    """`trial 1 SUCCEEDED: x=0.5, layers=2 -> accuracy 0.9`, as the tuning launcher logs it;
    an INFEASIBLE trial's reason after it."""
    from vtp.vertex.humanize import readable

    metrics = trial.get("finalMeasurement", {}).get("metrics", [])
    # proto3 JSON leaves out a metric value of exactly 0.0
    result = ", ".join(
        f"{m.get('metricId')} {readable(float(m.get('value', 0.0)))}" for m in metrics
    )
    head = f"trial {trial.get('id')} {trial.get('state')}: {_parameters(trial)}"
    reason = trial.get("infeasibleReason")
    return f"{head} -> {result or 'no metric'}" + (f" ({reason})" if reason else "")


def _parameters(trial: dict[str, Any]) -> str:
    from vtp.vertex.humanize import readable

    values = trial.get("parameters", [])
    return ", ".join(f"{p.get('parameterId')}={readable(p.get('value'))}" for p in values)


def _job_name(resources_file: Path, collection: str) -> str | None:
    """The `collection` resource `resources_file` names, once the task has written it whole."""
    from google.protobuf import json_format

    from vtp.vertex import gcp_resources  # GCPC's proto: only once a task has a job to follow

    try:
        return gcp_resources.recorded_name(str(resources_file), collection)
    except (OSError, ValueError, json_format.Error):  # not there yet, or half written
        return None
