"""With a container engine, a model's own serving image answers `endpoint.predict` through the
service (issue #28): the image, built here on the Debian base, serves Vertex's routes on
AIP_HTTP_PORT and reads its model from AIP_STORAGE_URI at /gcs; the SDK uploads, deploys,
predicts and undeploys as a user's program does. With each engine this machine has (Podman,
Docker: `tests/container_images.py`)."""

import inspect
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests import container_images
from tests.container_images import Engine, engine_fixture  # noqa: F401 (container_engine)
from tests.fixtures import LocalService, send_json
from vtp import containers

SERVER = (
    """
import json, os
from http.server import BaseHTTPRequestHandler, HTTPServer


"""
    + inspect.getsource(send_json)
    + """

MARKER = open("/marker").read().strip()
MODEL = "/gcs/" + os.environ["AIP_STORAGE_URI"].removeprefix("gs://") + "/weights.json"
SCALE = json.load(open(MODEL))["scale"]


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        send_json(self, 200 if self.path == os.environ["AIP_HEALTH_ROUTE"] else 404, {})

    def do_POST(self):
        if self.path != os.environ["AIP_PREDICT_ROUTE"]:
            return send_json(self, 404, {})
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        seen = {k: os.environ[k] for k in ("AIP_HTTP_PORT", "AIP_MODE", "AIP_DEPLOYED_MODEL_ID")}
        predictions = [
            {"value": x * SCALE, "marker": MARKER, "env": seen,
             "host_work": os.path.exists("/work"), "secret": "Authorization" in self.headers}
            for x in body["instances"]
        ]
        send_json(self, 200, {"predictions": predictions})


HTTPServer(("0.0.0.0", int(os.environ["AIP_HTTP_PORT"])), Handler).serve_forever()
"""
)
"""The model's server: Vertex's routes on AIP_HTTP_PORT, answered by the tests' `send_json`."""

PROGRAM = """
    import json, sys
    from google.cloud import aiplatform

    aiplatform.init(project="local", location="us-central1")
    model = aiplatform.Model.upload(
        display_name="scaler", artifact_uri="gs://models/scaler", serving_container_image_uri=IMAGE,
        serving_container_predict_route="/predict", serving_container_health_route="/health",
        serving_container_ports=[7080],
    )
    endpoint = model.deploy(machine_type="n1-standard-2")
    prediction = endpoint.predict(instances=[1.0, 2.5])
    results = {"predictions": [dict(p) for p in prediction.predictions],
               "deployed": prediction.deployed_model_id}
    endpoint.undeploy_all()
    endpoint.delete()
    print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def image(container_engine: Engine) -> tuple[str, str]:
    """(name, marker): the Debian base with the server as its entrypoint and a /marker."""
    entrypoint = 'ENTRYPOINT ["python3", "/server.py"]\n'
    files = {"server.py": SERVER}
    made = container_images.marked_image("serving", files, entrypoint, engine=container_engine)
    with made as name_and_marker:
        yield name_and_marker


def test_a_custom_serving_container_answers_predict(
    tmp_path: Path, container_engine: Engine, image
) -> None:
    name, marker = image
    with LocalService(tmp_path / "state", env=container_engine.service_env()) as service:
        weights = service.gcs_root / "models" / "scaler"
        weights.mkdir(parents=True)
        (weights / "weights.json").write_text(json.dumps({"scale": 3.0}))
        folder = tmp_path / "team"
        folder.mkdir()
        (folder / "program.py").write_text(f"IMAGE = {name!r}\n" + textwrap.dedent(PROGRAM))
        result = subprocess.run(
            [sys.executable, "-m", "vtp", "local", "exec", "--endpoint", service.url, "--",
             sys.executable, "program.py"],
            cwd=folder, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        logs = "".join(p.read_text() for p in (service.state_dir / "endpoints").rglob("*.log"))
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:] + logs
        results = json.loads(result.stdout.strip().splitlines()[-1])
        predictions = results["predictions"]
        assert [p["value"] for p in predictions] == [3.0, 7.5]
        first = predictions[0]
        assert first["marker"] == marker and first["host_work"] is False
        assert first["env"] == {
            "AIP_HTTP_PORT": "7080", "AIP_MODE": "PREDICTION",
            "AIP_DEPLOYED_MODEL_ID": results["deployed"],
        }  # fmt: skip
        assert first["secret"] is False  # the service's secret never reaches a user's image
        left = container_engine.container_names()
        assert f"vtp-serve-{results['deployed']}" not in left  # undeploy removed it


def test_a_docker_daemon_without_a_bridge_is_refused_in_one_line(tmp_path: Path) -> None:
    """`dockerd --bridge=none` publishes no port: the deploy says so rather than waiting for a
    health check that cannot answer (a `docker` here whose `network inspect bridge` fails)."""
    docker = tmp_path / "docker"
    docker.write_text("#!/bin/sh\necho 'Error: No such network: bridge' >&2\nexit 1\n")
    docker.chmod(0o755)
    problem = containers.publish_problem([str(docker)], {"PATH": os.defpath})
    assert "no bridge network (dockerd --bridge=none)" in problem and "Podman" in problem
    assert containers.publish_problem(["podman"], {}) == ""
