"""How often a team's unchanged SDK program polls the local service while it waits.

The SDK's waits were made for the cloud: `CustomJob.run()` reads the job's state every 5 s, a
long-running operation polls from 1 s up to 20 s. Under `vtp local exec` the start-up hook makes
both poll from 0.2 s up to 1 s, and keeps them as they are anywhere else.
The program records what the SDK sleeps, as any program may wrap `time.sleep`; its replica
blocks on a FIFO until the SDK first sleeps, so the SDK waits at least once, and no test waits a
fixed time.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.fixtures import exec_program, team_folder

pytestmark = pytest.mark.slow

HOOK = Path(__file__).parents[3] / "vtp" / "vertex" / "startup"

SETTINGS = """
    import json, time
    from google.api_core import operation
    from google.cloud.aiplatform import jobs, pipeline_jobs, training_jobs
    from google.longrunning import operations_pb2

    def delays(polling):
        return [polling._initial, polling._maximum, polling._multiplier, polling._timeout]

    modules = (jobs, training_jobs, pipeline_jobs)
    pending = operations_pb2.Operation(name="operations/1")  # an operation not done yet
    settings = {
        "job_waits": [m._JOB_WAIT_TIME for m in modules],
        "log_waits": [m._LOG_WAIT_TIME for m in modules],
        "lro": delays(operation.Operation(pending, None, None, None)._polling),
    }
"""

PROGRAM = """
    import os
    from google.cloud import aiplatform, aiplatform_v1

    slept = []
    real_sleep = time.sleep
    released = False

    def sleep(seconds):
        # what the SDK sleeps while it waits; the first sleep lets the replica finish
        global released
        slept.append(seconds)
        if not released:
            released = True
            with open("release", "w") as fifo:
                fifo.write("go")
        real_sleep(seconds)

    time.sleep = sleep
    os.mkfifo("release")
    aiplatform.init(project="team-project", location="us-central1", staging_bucket="gs://team-b")
    job = aiplatform.CustomJob(
        display_name="waits",
        worker_pool_specs=[{
            "machine_spec": {"machine_type": "n1-standard-4"},
            "replica_count": 1,
            "container_spec": {
                "image_uri": "us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0",
                "command": ["python", "-c", f"print(open({os.path.abspath('release')!r}).read())"],
            },
        }],
    )
    job.run()
    settings["job"] = job.state.name
    settings["job_sleeps"] = slept

    # A team's own client, written for Vertex's host; the operation is not done at once.
    client = aiplatform_v1.PersistentResourceServiceClient(
        client_options={"api_endpoint": "us-central1-aiplatform.googleapis.com"}
    )
    lro = client.create_persistent_resource(
        parent="projects/team-project/locations/us-central1",
        persistent_resource={"resource_pools": [
            {"machine_spec": {"machine_type": "n1-standard-4"}, "replica_count": 1}
        ]},
        persistent_resource_id="team-pool",
    )
    settings["client_lro"] = delays(lro._polling)
    settings["resource"] = lro.result().state.name
    print(json.dumps(settings))
"""


def test_a_job_and_an_operation_are_polled_quickly_under_vtp_local_exec(local_service, tmp_path):
    folder = team_folder(tmp_path, "")
    (folder / "program.py").write_text(textwrap.dedent(SETTINGS) + textwrap.dedent(PROGRAM))

    seen = exec_program(local_service.url, folder)

    assert seen["job"] == "JOB_STATE_SUCCEEDED"
    # The SDK read the running job's state, slept 0.2 s (not 5 s), read it again until it saw
    # the end, sleeping a tenth of the time waited so far, at most 1 s.
    sleeps = seen["job_sleeps"]
    assert sleeps[0] == 0.2 and all(0.2 <= s <= 1.0 for s in sleeps), sleeps
    assert seen["job_waits"] == [1.0, 1.0, 1.0]  # what the SDK asks for; the hook's clock sleeps
    assert seen["log_waits"] == [5, 5, 5]  # its "current state" log lines keep their cadence
    # The operation polls from 0.2 s up to 1 s, with the library's multiplier and timeout.
    assert seen["client_lro"] == seen["lro"] == [0.2, 1.0, 1.5, 900.0]
    assert seen["resource"] == "RUNNING"


def test_without_the_local_settings_the_sdk_keeps_its_own_waits(tmp_path):
    """The hook on the path but no local service set: nothing is patched."""
    (tmp_path / "settings.py").write_text(
        textwrap.dedent(SETTINGS) + "print(json.dumps(settings))\n"
    )
    local = ("VTP_LOCAL_API_ENDPOINT", "VTP_LOCAL_TOKEN", "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE")
    env = {k: v for k, v in os.environ.items() if k not in local}
    result = subprocess.run(
        [sys.executable, "settings.py"],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(HOOK)},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    seen = json.loads(result.stdout)
    assert seen["job_waits"] == [5, 5, 5]
    assert seen["log_waits"] == [5, 5, 5]
    assert seen["lro"] == [1.0, 20.0, 1.5, 900.0]
