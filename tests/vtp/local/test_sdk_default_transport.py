"""The aiplatform SDK on its default transport (gRPC over TLS), run as a user runs it: their own
program in a folder of their own, in a fresh interpreter, with the environment `vtp local env`
prints (TLS trust in the service's CA), calling `aiplatform.init(api_endpoint="localhost:PORT",
credentials=...)` itself — the start-up hook is left out, so nothing but the transport is tested.
"""

import json
import sys
import textwrap

import pytest
from google.cloud import aiplatform_v1

from tests.vtp.local.conftest import SCRIPT

OBJECTIVE = SCRIPT.with_name("tuning") / "objective_task.py"

PROGRAM = """
import json, os, sys, time
from google.api_core import exceptions
from google.cloud import aiplatform, storage
from google.cloud.aiplatform import hyperparameter_tuning as hpt
from google.cloud.aiplatform import jobs
from google.cloud.aiplatform_v1.services.job_service.transports.grpc import (
    JobServiceGrpcTransport,
)
from google.oauth2.credentials import Credentials

jobs._JOB_WAIT_TIME = 0.2  # the SDK polls every 5 s by default
token = open(os.environ["CLOUDSDK_AUTH_ACCESS_TOKEN_FILE"]).read().strip()
credentials = Credentials(token)
aiplatform.init(
    project="local",
    location="us-central1",
    api_endpoint=os.environ["VTP_LOCAL_API_ENDPOINT"],
    credentials=credentials,
    staging_bucket="gs://grpc-staging",
)
results = {}

def pool(*command):
    return [{
        "machine_spec": {"machine_type": "n1-standard-4"},
        "replica_count": 1,
        "container_spec": {"image_uri": "python:3.11-slim", "command": list(command)},
    }]

job = aiplatform.CustomJob(display_name="grpc-ok", worker_pool_specs=pool(PY, "-c", "print(1)"))
job.run()
results["custom_job"] = job.state.name
results["transport"] = type(job.api_client.select_version("v1")._transport).__name__

slow = aiplatform.CustomJob(
    display_name="grpc-cancel", worker_pool_specs=pool(PY, "-c", "import time; time.sleep(120)")
)
slow.submit()
slow.cancel()
deadline = time.time() + 60
while slow.state.name not in ("JOB_STATE_CANCELLED", "JOB_STATE_FAILED") and time.time() < deadline:
    time.sleep(0.2)
results["cancelled"] = slow.state.name

try:
    aiplatform.CustomJob.get("projects/local/locations/us-central1/customJobs/404")
except exceptions.NotFound as exc:
    results["not_found"] = [type(exc).__name__, exc.message]
try:
    aiplatform.CustomJob(display_name="bad", worker_pool_specs=[]).run()
except exceptions.InvalidArgument as exc:
    results["invalid"] = type(exc).__name__

trial = aiplatform.CustomJob(
    display_name="grpc-trial",
    worker_pool_specs=pool(PY, OBJECTIVE, "--record", RECORD),
)
tuning = aiplatform.HyperparameterTuningJob(
    display_name="grpc-hpt",
    custom_job=trial,
    metric_spec={"score": "maximize"},
    parameter_spec={"x": hpt.DoubleParameterSpec(min=0, max=1, scale="linear")},
    max_trial_count=2,
    parallel_trial_count=2,
)
tuning.run()
results["tuning"] = [tuning.state.name, len(tuning.trials)]

# The model's files, put there with google-cloud-storage through the service.
client = storage.Client(project="local", credentials=credentials)
client.create_bucket("grpc-models")
client.bucket("grpc-models").blob("m1/model.pt").upload_from_string(b"weights")
model = aiplatform.Model.upload(
    display_name="grpc-model",
    artifact_uri="gs://grpc-models/m1",
    serving_container_image_uri="us-docker.pkg.dev/vertex-ai/prediction/pytorch-cpu.2-4:latest",
)
results["model"] = [model.display_name, model.uri]
print(json.dumps(results))
"""


@pytest.mark.slow
def test_a_users_program_on_the_default_transport(local_service, tmp_path):
    folder = tmp_path / "user"
    record = tmp_path / "trials"
    folder.mkdir(), record.mkdir()
    header = f"PY = {sys.executable!r}\nOBJECTIVE = {str(OBJECTIVE)!r}\nRECORD = {str(record)!r}\n"
    (folder / "program.py").write_text(header + textwrap.dedent(PROGRAM))

    result = local_service.run_user_program(folder, "program.py", hook=False)
    results = json.loads(result.stdout.strip().splitlines()[-1])

    assert results["transport"] == "JobServiceGrpcTransport"
    assert results["custom_job"] == "JOB_STATE_SUCCEEDED"
    assert results["cancelled"] == "JOB_STATE_CANCELLED"
    assert results["not_found"][0] == "NotFound"
    assert "customJobs/404" in results["not_found"][1]
    assert results["invalid"] == "InvalidArgument"
    assert results["tuning"] == ["JOB_STATE_SUCCEEDED", 2]
    assert results["model"] == ["grpc-model", "gs://grpc-models/m1"]
    assert len(list(record.glob("*.json"))) == 2  # both trials ran and reported


def test_a_call_without_the_token_is_unauthenticated(local_service, tmp_path):
    program = """
        import os
        from google.api_core import exceptions
        from google.auth.credentials import AnonymousCredentials
        from google.cloud import aiplatform_v1
        client = aiplatform_v1.JobServiceClient(
            credentials=AnonymousCredentials(),
            client_options={"api_endpoint": os.environ["VTP_LOCAL_API_ENDPOINT"]},
        )
        try:
            client.list_custom_jobs(parent="projects/local/locations/us-central1")
        except exceptions.Unauthenticated as exc:
            print("UNAUTHENTICATED", exc.message)
    """
    (tmp_path / "anonymous.py").write_text(textwrap.dedent(program))
    result = local_service.run_user_program(tmp_path, "anonymous.py", hook=False)
    assert "UNAUTHENTICATED" in result.stdout and "bearer token" in result.stdout


def test_the_same_endpoint_answers_rest(local_service, tmp_path):
    """`aiplatform.init()` without a project switches the SDK to REST on the same endpoint: the
    TLS port answers HTTP/1.1 with the same routes."""
    program = """
        import os
        from google.cloud import aiplatform_v1
        from google.oauth2.credentials import Credentials
        token = open(os.environ["CLOUDSDK_AUTH_ACCESS_TOKEN_FILE"]).read().strip()
        client = aiplatform_v1.JobServiceClient(
            transport="rest",
            credentials=Credentials(token),
            client_options={"api_endpoint": os.environ["VTP_LOCAL_API_ENDPOINT"]},
        )
        jobs = client.list_custom_jobs(parent="projects/local/locations/us-central1")
        print("REST", type(client._transport).__name__, len(list(jobs)) >= 0)
    """
    (tmp_path / "rest.py").write_text(textwrap.dedent(program))
    result = local_service.run_user_program(tmp_path, "rest.py", hook=False)
    assert "REST JobServiceRestTransport True" in result.stdout


def _channel(local_service):
    """A raw TLS channel to the SDK's endpoint, trusting the service's CA explicitly."""
    import grpc

    roots = (local_service.state_dir / "tls" / "ca.pem").read_bytes()
    endpoint = local_service.shell_env()["VTP_LOCAL_API_ENDPOINT"]
    return grpc.secure_channel(endpoint, grpc.ssl_channel_credentials(root_certificates=roots))


@pytest.mark.parametrize(
    ("method", "payload", "code", "words"),
    [
        (
            "/google.cloud.aiplatform.v1.JobService/GetCustomJob",
            b"\xff\xff\xff",
            "INVALID_ARGUMENT",
            "Invalid request",
        ),
        (
            "/google.cloud.aiplatform.v1.JobService/NoSuchMethod",
            b"",
            "UNIMPLEMENTED",
            "not supported",
        ),
        ("/some.other.Service/Call", b"", "UNIMPLEMENTED", "not supported by the local Vertex"),
        (
            "/google.cloud.aiplatform.v1.FeaturestoreService/GetFeaturestore",
            aiplatform_v1.GetFeaturestoreRequest.serialize(
                {"name": "projects/local/locations/us-central1/featurestores/default"}
            ),
            "UNIMPLEMENTED",
            "customJobs, datasets",  # what it serves, by name
        ),
    ],
)
def test_malformed_or_unknown_grpc_calls_get_a_status_that_says_why(
    local_service, method, payload, code, words
):
    import grpc

    with _channel(local_service) as channel:
        call = channel.unary_unary(method)
        metadata = [("authorization", f"Bearer {local_service.token}")]
        with pytest.raises(grpc.RpcError) as failure:
            call(payload, metadata=metadata, timeout=30)
    assert failure.value.code().name == code
    assert words in failure.value.details()
