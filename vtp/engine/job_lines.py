"""The lines of the CustomJob a task starts, in the run's output as its replicas print them.

A task that starts a CustomJob (this project's `custom_job` component, GCPC's
`CustomTrainingJobOp` and the launchers built on it) records it in its `gcp_resources` output
as soon as the job exists, as every Vertex launcher does so that a cancel reaches it. While the
task runs, `following` watches that file; once it names a CustomJob of the local service, it
reads the job's replica lines through the service's Cloud Logging API (`joblogs.LogReader`)
and prints each as the task's own, `[task] workerpool0-0 | line`, until the task has ended and
the last lines are in. So whoever's code started the job, its lines reach `vtp run` and the
run's log. Tasks are told (`FOLLOWED_ENV`) so that our own launcher does not copy them too.
"""

import contextlib
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path

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
    from vtp.vertex.joblogs import LogReader, format_entry
    from vtp.vertex.local_auth import local_session

    reader = None
    while True:
        last_round = ended.is_set()
        if reader is None:
            name = _job_name(resources_file)
            if name is not None:
                project, job_id = name.split("/")[1], name.rsplit("/", 1)[-1]
                reader = LogReader(local_session(endpoint), project, job_id, endpoint)
        if reader is not None:
            try:
                for entry in reader.read():
                    for line in format_entry(entry):  # SEVERITY, TIMESTAMP, REPLICA, MESSAGE
                        replica, message = line.split("\t", 3)[2:4]
                        print(f"{prefix}{replica} | {message}", flush=True)
            except Exception as exc:  # the service went away, or the job: no lines, no harm
                _log.debug("job lines unavailable: %s", exc)
        if last_round:
            return
        ended.wait(POLL_SECONDS)


def _job_name(resources_file: Path) -> str | None:
    """The CustomJob `resources_file` names, once the task has written it whole."""
    from google.protobuf import json_format

    from vtp.vertex import gcp_resources  # GCPC's proto: only once a task has a job to follow

    try:
        return gcp_resources.recorded_name(str(resources_file), "customJobs")
    except (OSError, ValueError, json_format.Error):  # not there yet, or half written
        return None
