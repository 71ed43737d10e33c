"""A cancelled pipeline job takes down what its tasks started: here, a model its task deployed
(a serving process on this machine) is undeployed and its process stopped, and the run's log
says so, as `vtp run` prints it on Ctrl-C."""

import sys

from google.cloud.aiplatform_v1 import EndpointServiceClient, PipelineState
from kfp import dsl

from tests.fixtures import LocalService, wait_until
from tests.pipelines.tiny_pipeline import compile_to, pipeline_client, tiny_job, wait_for_pipeline
from tests.vtp.local.pipeline_jobs.test_runs import PARENT, processes_mentioning
from vtp.local.pipeline_jobs.teardown import NOTE

SERVER = """
import http.server, os
class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok")
http.server.HTTPServer(("127.0.0.1", int(os.environ["AIP_HTTP_PORT"])), Health).serve_forever()
"""


@dsl.component(base_image="python:3.11-slim")
def deploy_then_wait(
    python: str, server: str, started_uri: str, gcp_resources: dsl.OutputPath(str)
):
    """Upload a model served by `server`, deploy it to a new endpoint recorded in
    gcp_resources (as GCPC's deploy does), touch `started_uri`, then wait to be cancelled."""
    import time

    from google.cloud import aiplatform_v1

    from vtp import storage
    from vtp.vertex import gcp_resources as resources
    from vtp.vertex.client import vertex_client
    from vtp.vertex.endpoint import local_endpoint

    parent = "projects/local/locations/us-central1"
    container = aiplatform_v1.ModelContainerSpec(
        image_uri="python:3.11", command=[python, "-c", server], health_route="/health"
    )
    models = vertex_client(aiplatform_v1.ModelServiceClient, "us-central1", local=True)
    model = aiplatform_v1.Model(display_name="health-only", container_spec=container)
    uploaded = models.upload_model(parent=parent, model=model).result(timeout=60)
    endpoints = vertex_client(aiplatform_v1.EndpointServiceClient, "us-central1", local=True)
    endpoint = aiplatform_v1.Endpoint(display_name="health-only")
    endpoint = endpoints.create_endpoint(parent=parent, endpoint=endpoint).result(timeout=60)
    resources.write(gcp_resources, "VertexEndpoint", f"{local_endpoint()}/v1/{endpoint.name}")
    deployed = aiplatform_v1.DeployedModel(model=uploaded.model)
    endpoints.deploy_model(
        endpoint=endpoint.name, deployed_model=deployed, traffic_split={"0": 100}
    ).result(timeout=120)
    started = storage.local_path(started_uri)
    started.parent.mkdir(parents=True, exist_ok=True)
    started.write_text(endpoint.name)
    time.sleep(300)


@dsl.pipeline(name="deploy-then-wait")
def deploying_pipeline(python: str, server: str, started_uri: str):
    deploy_then_wait(python=python, server=server, started_uri=started_uri)


def test_cancel_undeploys_what_the_run_deployed_and_says_so(local_service: LocalService, tmp_path):
    template = compile_to(tmp_path / "deploying.yaml", deploying_pipeline)
    job = tiny_job(
        template, python=sys.executable, server=SERVER, started_uri="gs://vtp-test/deployed"
    )
    runs = pipeline_client(local_service.url)
    created = runs.create_pipeline_job(parent=PARENT, pipeline_job=job)
    started = local_service.gcs_root / "vtp-test" / "deployed"
    wait_until(started.exists, 120, "the task to deploy its model")
    endpoint_name = started.read_text()
    serving = str(local_service.state_dir / "endpoints" / endpoint_name.rsplit("/", 1)[1])
    assert processes_mentioning(serving), "the model's server runs"

    runs.cancel_pipeline_job(name=created.name)
    done = wait_for_pipeline(runs, created.name, timeout=60)
    assert done.state == PipelineState.PIPELINE_STATE_CANCELLED
    endpoints = EndpointServiceClient(
        transport="rest",
        client_options={"api_endpoint": local_service.url},
        credentials=local_service.credentials(),
    )
    assert list(endpoints.get_endpoint(name=endpoint_name).deployed_models) == []
    assert processes_mentioning(serving) == []
    log = local_service.session().get(f"{local_service.url}/v1/{created.name}:logs", timeout=10)
    notes = [line for line in log.json()["text"].splitlines() if line.startswith(NOTE)]
    assert len(notes) == 1 and f"from {endpoint_name}" in notes[0], notes
