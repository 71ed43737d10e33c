"""Latency and overhead of the local Vertex service (default settings: 0.5 s poll interval).

A `vtp local serve` subprocess runs jobs of two replicas (pool 0 and pool 1), each replica a
Python process that sleeps 1 s and records when it exits. Figures, medians over RUNS jobs:

- create_to_running_s: the job's `startTime - createTime` (queue, process start, all up).
- primary_exit_to_succeeded_s: the job's `endTime` minus the moment the primary replica exited.
- overhead_s and overhead_ratio: a client's create-to-SUCCEEDED time (aiplatform REST client,
  polling every 10 ms) against starting the same two processes by hand and waiting for both.

The supervisor wakes when a replica exits, so the poll interval does not bound these figures.
Prints ONE JSON line.
"""

import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from google.api_core.client_options import ClientOptions
from google.cloud import aiplatform_v1

from vtp.vertex.local_auth import local_credentials

RUNS = 5
POLL_INTERVAL_S = 0.5  # `vtp local serve`'s default
SLEEP_S = 1.0
REPLICA = "import sys, time; time.sleep({sleep}); open(sys.argv[1], 'w').write(repr(time.time()))"
State = aiplatform_v1.JobState
TERMINAL = (State.JOB_STATE_SUCCEEDED, State.JOB_STATE_FAILED, State.JOB_STATE_CANCELLED)


def replica_command(out: Path, name: str) -> list[str]:
    """The replica's command line: sleep, then write the exit time to `out/name`."""
    return [sys.executable, "-c", REPLICA.format(sleep=SLEEP_S), str(out / name)]


def by_hand(out: Path) -> float:
    """Seconds to start both replica processes by hand and wait for both."""
    start = time.monotonic()
    processes = [subprocess.Popen(replica_command(out, f"hand-{i}")) for i in range(2)]
    for process in processes:
        process.wait()
    return time.monotonic() - start


def job(out: Path, run: int) -> aiplatform_v1.CustomJob:
    """A two-replica job whose replicas record their exit times under `out`."""
    pools = [
        {
            "machine_spec": {"machine_type": "n1-standard-4"},
            "replica_count": 1,
            "container_spec": {
                "image_uri": "python:3.11-slim",
                "command": replica_command(out, f"job-{run}-pool{pool}"),
            },
        }
        for pool in range(2)
    ]
    return aiplatform_v1.CustomJob(
        display_name=f"bench-{run}", job_spec={"worker_pool_specs": pools}
    )


def through_service(client, parent: str, out: Path, run: int) -> dict[str, float]:
    """Run one job; its latencies and the client's create-to-end time."""
    start = time.monotonic()
    created = client.create_custom_job(parent=parent, custom_job=job(out, run))
    while (done := client.get_custom_job(name=created.name)).state not in TERMINAL:
        time.sleep(0.01)
    wall = time.monotonic() - start
    assert done.state == State.JOB_STATE_SUCCEEDED, done.error
    primary_exit = float((out / f"job-{run}-pool0").read_text())
    return {
        "create_to_running_s": (done.start_time - done.create_time).total_seconds(),
        "primary_exit_to_succeeded_s": done.end_time.timestamp() - primary_exit,
        "wall_s": wall,
    }


def measure(poll_interval: float, out: Path) -> dict[str, float]:
    """Medians of RUNS jobs on a service polling every `poll_interval` seconds."""
    state = out / f"state-{poll_interval}"
    command = [sys.executable, "-m", "vtp", "local", "serve", "--port", "0"]
    command += ["--state-dir", str(state), "--poll-interval", str(poll_interval), "--gpus", "none"]
    service = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        url = re.search(r"http://[\d.:]+", service.stdout.readline()).group()
        client = aiplatform_v1.JobServiceClient(
            transport="rest",
            client_options=ClientOptions(api_endpoint=url),
            credentials=local_credentials(url),
        )
        parent = "projects/bench/locations/us-central1"
        runs = [through_service(client, parent, out, run) for run in range(RUNS)]
        hand = statistics.median(by_hand(out) for _ in range(RUNS))
    finally:
        service.terminate()
        service.wait()
    figures = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    wall = figures.pop("wall_s")
    figures.update(
        by_hand_s=hand, through_service_s=wall, overhead_s=wall - hand, overhead_ratio=wall / hand
    )
    return {key: round(value, 4) for key, value in figures.items()}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        figures = measure(POLL_INTERVAL_S, Path(tmp))
    setup = {"replicas": 2, "replica_sleep_s": SLEEP_S, "runs": RUNS}
    print(json.dumps({**setup, "poll_interval_s": POLL_INTERVAL_S, **figures}))


if __name__ == "__main__":
    main()
