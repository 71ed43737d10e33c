"""Security issue #26, serving: a deployed model's server answers only the service, and a model's
files never choose the code serving imports. Against a real `vtp local serve` and a real deployed
digits model, from a shell whose environment holds a secret the server must not see."""

import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures import FAST_FLAGS, REPO, LocalService, exported_digits, serving_processes
from tests.vtp.local.conftest import DIGITS_INSTANCE, ServiceApi
from vtp.http_limits import MAX_BODY_BYTES
from vtp.local.endpoints import serving

pytestmark = pytest.mark.slow

SHELL_SECRET = "shell-secret-0f1e2d3c4b5a"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    """`vtp local serve` started from a shell that holds a credential of its own."""
    started = LocalService(
        tmp_path_factory.mktemp("service"), *FAST_FLAGS, env={"MY_API_KEY": SHELL_SECRET}
    ).start()
    yield started
    started.stop()


@pytest.fixture(scope="module")
def digits(service: LocalService, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An exported digits model (a short run) at gs://models/digits of the service."""
    directory = service.gcs_root / "models" / "digits"
    return exported_digits(tmp_path_factory.mktemp("run"), directory)


@pytest.fixture(scope="module")
def deployed(service: LocalService, digits: Path) -> tuple[str, int, int]:
    """(endpoint name, serving pid, serving port) of gs://models/digits, deployed."""
    api = ServiceApi(service)
    endpoint = api.endpoint()
    operation = api.finish(api.deploy(endpoint, api.upload("gs://models/digits")).json())
    assert "error" not in operation, operation
    (pid,) = serving_processes(endpoint.rsplit("/", 1)[1])
    port = int(environment(pid)["AIP_HTTP_PORT"])
    return endpoint, pid, port


def environment(pid: int) -> dict[str, str]:
    """What /proc says process `pid` was started with."""
    pairs = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(p.decode().partition("=")[::2] for p in pairs if p)


def call(
    port: int,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, str]:
    """One request on a fresh connection: (status, body text)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        answer = connection.getresponse()
        return answer.status, answer.read().decode()
    finally:
        connection.close()


PREDICT_BODY = json.dumps({"instances": [DIGITS_INSTANCE]}).encode()
JSON = {"Content-Type": "application/json"}


def test_the_guarded_predict_still_answers(service: LocalService, deployed) -> None:
    endpoint, _, _ = deployed
    answer = service.session().post(
        f"{service.url}/v1/{endpoint}:predict", json={"instances": [DIGITS_INSTANCE]}, timeout=60
    )
    assert answer.status_code == 200, answer.text
    (prediction,) = answer.json()["predictions"]
    assert len(prediction["probabilities"]) == 10


def test_a_direct_request_without_the_secret_is_refused(deployed) -> None:
    _, _, port = deployed
    assert call(port, "GET", "/health")[0] == 401
    assert call(port, "POST", "/predict", PREDICT_BODY, JSON)[0] == 401
    wrong = {**JSON, "Authorization": "Bearer not-the-secret"}
    assert call(port, "POST", "/predict", PREDICT_BODY, wrong)[0] == 401


def test_a_foreign_host_or_origin_is_refused(deployed) -> None:
    _, _, port = deployed
    rebound = {"Host": f"attacker.example:{port}", "Content-Type": "text/plain"}
    assert call(port, "POST", "/predict", PREDICT_BODY, rebound)[0] == 403  # the finding
    assert call(port, "GET", "/health", headers={"Host": f"attacker.example:{port}"})[0] == 403
    cross_site = {**JSON, "Origin": "http://attacker.example"}
    assert call(port, "POST", "/predict", PREDICT_BODY, cross_site)[0] == 403


def test_a_body_that_is_not_json_is_refused(deployed) -> None:
    _, _, port = deployed
    status, text = call(port, "POST", "/predict", PREDICT_BODY, {"Content-Type": "text/plain"})
    assert status == 415 and "application/json" in text
    assert call(port, "POST", "/predict", PREDICT_BODY)[0] == 415  # no type at all


def test_a_body_over_the_service_limit_is_refused_before_it_is_sent(deployed) -> None:
    _, _, port = deployed
    head = (
        f"POST /predict HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {MAX_BODY_BYTES + 1}\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=60) as connection:
        connection.sendall(head.encode())  # and not one byte of the body
        answer = connection.makefile("rb").readline()
    assert answer.split()[1] == b"413"


def test_a_stranger_learns_nothing_about_routes(deployed) -> None:
    _, _, port = deployed
    answers = {call(port, "GET", path) for path in ("/nothing-here", "/predict", "/health")}
    assert answers == {(401, '{"error": "unauthenticated"}')}  # the same for every path


def test_the_server_environment_holds_no_service_token_nor_shell_secret(
    service: LocalService, deployed
) -> None:
    _, pid, _ = deployed
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    assert service.token.encode() not in raw
    assert SHELL_SECRET.encode() not in raw
    env = environment(pid)
    assert "VTP_LOCAL_TOKEN" not in env and "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE" not in env
    assert env["VTP_SERVE_HOST"] == "127.0.0.1" and env["PYTHONSAFEPATH"] == "1"
    assert not Path(env[serving.SECRET_FILE_ENV]).exists()  # read and deleted at start
    assert str(service.gcs_root) not in env["PYTHONPATH"]


def test_a_server_the_service_way_answers_its_secret_only_and_names_no_route(
    digits: Path, tmp_path: Path
) -> None:
    """The authenticated side, through the service's own ModelServer (the test holds its
    secret, as the service does)."""
    plan = serving.ServingPlan(
        argv=(sys.executable, "-m", "vtp.trainer.serve"),
        env=(),
        health_route="/health",
        predict_route="/predict",
        storage_uri="gs://models/digits",
    )
    server = serving.ModelServer(plan, tmp_path / "server.log")
    base = serving.serving_environment(os.environ, digits.parents[1], REPO, "test-service")
    server.start(server.environment(base, serving.Placement("e", "d")), tmp_path / "work")
    try:
        assert server.wait_ready(120) == "", server.log_tail()
        status, answer = server.predict(PREDICT_BODY)
        assert status == 200 and len(json.loads(answer)["predictions"]) == 1
        secret = server.auth_headers()
        assert call(server.port, "GET", "/elsewhere", headers=secret) == (
            404,
            '{"error": "not found"}',
        )
        assert call(server.port, "POST", "/health", b"{}", {**secret, **JSON}) == (
            405,
            '{"error": "method not allowed"}',
        )
        text_plain = {**secret, "Content-Type": "text/plain"}
        assert call(server.port, "POST", "/predict", PREDICT_BODY, text_plain)[0] == 415
    finally:
        server.stop(5)


def evil_model(source: Path, name: str, task: str, marker: Path) -> Path:
    """A copy of `source` holding evil.py (which writes `marker`), its config.json naming
    `task`."""
    directory = source.parent / name
    shutil.copytree(source, directory)
    (directory / "evil.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\n"
        "labels = build_model = build_datasets = print\n"
    )
    config = json.loads((directory / "config.json").read_text())
    (directory / "config.json").write_text(json.dumps({**config, "task": task}))
    return directory


@pytest.mark.parametrize(
    ("task", "importable"),
    [
        ("os", ""),  # any installed module
        ("evil", "model"),  # a file of the model directory, the directory on the import path
        ("models.evil_os.evil", "root"),  # the same, the storage root on the import path
    ],
)
def test_a_model_config_naming_other_code_is_refused_at_deploy(
    service: LocalService, digits: Path, tmp_path: Path, task: str, importable: str
) -> None:
    marker = tmp_path / "marker"
    name = "evil_os" if importable == "root" else f"evil_{importable or 'installed'}"
    directory = evil_model(digits, name, task, marker)
    path = {"model": str(directory), "root": str(service.gcs_root)}.get(importable)
    api = ServiceApi(service)
    model = api.upload(f"gs://models/{name}", env={"PYTHONPATH": path} if path else {})
    endpoint = api.endpoint()
    answer = api.deploy(endpoint, model)
    if answer.status_code == 200:  # a broken check: let the server run, so the marker shows it
        api.finish(answer.json())
    error = answer.json()["error"]
    assert answer.status_code == 400 and error["status"] == "FAILED_PRECONDITION"
    assert f"names task {task!r}" in error["message"]
    assert "VTP_SERVING_MODULES" in error["message"]
    assert not marker.exists()
    assert serving_processes(endpoint.rsplit("/", 1)[1]) == []
    assert api.deployed_models(endpoint) == []


@pytest.mark.parametrize(
    ("allowed", "problem"),
    [
        ("", "names task 'evil', which serving does not import"),
        # The operator allows a module named evil, but the model's copy is not on the path.
        ("evil", "--task=evil: cannot import it: No module named 'evil'"),
    ],
)
def test_the_server_itself_imports_nothing_from_the_model_directory(
    digits: Path, tmp_path: Path, allowed: str, problem: str
) -> None:
    """Were the deploy check bypassed (a config.json changed after deploy), `vtp.trainer.serve`
    refuses too, though its working directory, PYTHONPATH and storage root all hold evil.py."""
    marker = tmp_path / "marker"
    name = f"evil_direct_{allowed or 'none'}"
    directory = evil_model(digits, name, "evil", marker)
    env = {
        "PATH": os.environ["PATH"],
        "AIP_HTTP_PORT": str(serving.free_port()),
        "AIP_STORAGE_URI": f"gs://models/{name}",
        "VTP_GCS_ROOT": str(directory.parents[1]),
        "PYTHONPATH": f"{directory}{os.pathsep}{directory.parents[1]}",
        "VTP_SERVING_MODULES": allowed,
    }
    result = subprocess.run(
        [sys.executable, "-m", "vtp.trainer.serve"],
        cwd=directory, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    assert problem in result.stderr
    assert not marker.exists()
