"""Google's prebuilt PyTorch prediction images, served locally by real TorchServe (issue #51).

A tiny torch model is archived with the real `torch-model-archiver` as model.mar, put in the
service's storage, and `Model.upload(serving_container_image_uri=<pytorch prediction image>)`,
`deploy`, `predict` and `undeploy_all` run through the aiplatform SDK: the answers are the
model's own, every port TorchServe listens on is loopback and refuses calls without its key, and
the undeploy leaves no Java process, worker or private folder behind. A user's program outside
the repository does what Vertex's PyTorch sample does (archive, upload, deploy, predict, batch
predict), under `vtp local exec`. The refusals come
at deploy in one line: no operator opt-in (an archive runs its handler's code), no Java, no
model.mar; a handler that does not import fails the deploy with its own error.

TorchServe itself is installed by the service into a layer of a cache made for this module, so
the install is part of what is tested; Java is the machine's (openjdk-17-jre-headless).
"""

import ipaddress
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import requests

from tests.fixtures import LocalService, exec_program

pytestmark = pytest.mark.slow

IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/pytorch-cpu.2-4:latest"
GPU_IMAGE = "europe-docker.pkg.dev/vertex-ai/prediction/pytorch-gpu.2-4:latest"
INSTANCES = [[1.0, 2.0, 3.0], [0.5, -1.0, 0.0], [0.0, 0.0, 0.0]]
HANDLER = '''
import torch
from ts.torch_handler.base_handler import BaseHandler


class Regressor(BaseHandler):
    """One number per instance: the linear model's output."""

    def preprocess(self, data):
        return torch.as_tensor(data, dtype=torch.float32)

    def postprocess(self, data):
        return data.squeeze(-1).tolist()
'''
ARCHIVER = Path(sys.executable).parent / "torch-model-archiver"
"""The archiver the test environment installed (`pip install torch-model-archiver`)."""


def make_archive(folder: Path, handler: str = HANDLER) -> tuple[Path, list[float]]:
    """model.mar of a scripted Linear(3, 1) and `handler`, made by torch-model-archiver in
    `folder`, and the model's own outputs for INSTANCES."""
    import torch

    torch.manual_seed(0)
    linear = torch.nn.Linear(3, 1)
    torch.jit.script(linear).save(folder / "model.pt")
    (folder / "handler.py").write_text(handler)
    subprocess.run(
        [ARCHIVER, "-f", "--model-name", "model", "--version", "1.0", "--serialized-file",
         "model.pt", "--handler", "handler.py", "--export-path", "."],
        cwd=folder, check=True, capture_output=True,
    )  # fmt: skip
    with torch.no_grad():
        expected = linear(torch.tensor(INSTANCES)).squeeze(-1).tolist()
    return folder / "model.mar", expected


def stored_archive(service: LocalService, archive: Path, name: str) -> Path:
    """`archive` copied into `service`'s storage as gs://models/NAME/model.mar; its folder."""
    folder = service.gcs_root / "models" / name
    folder.mkdir(parents=True)
    shutil.copy(archive, folder / "model.mar")
    return folder


@pytest.fixture(scope="module")
def torch_service(tmp_path_factory: pytest.TempPathFactory):
    """A service whose operator allows archives (they run code), with a TorchServe cache of its
    own: its first deploy installs TorchServe."""
    cache = tmp_path_factory.mktemp("cache")
    env = {"VTP_SERVING_ALLOW_PICKLE": "1", "XDG_CACHE_HOME": str(cache)}
    service = LocalService(tmp_path_factory.mktemp("torchserve"), env=env).start()
    yield service
    service.stop()


def descendants(pid: int) -> dict[int, str]:
    """pid -> command line of every live process below `pid`."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(stat.parent.name))
    found, todo = {}, list(children.get(pid, []))
    while todo:
        child = todo.pop()
        try:
            found[child] = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        todo += children.get(child, [])
    return found


def listening(pid: int) -> set[tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]]:
    """(address, port) of every TCP socket process `pid` listens on."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    found = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                host, port = fields[1].split(":")
                raw = bytes.fromhex(host)
                packed = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
                found.add((ipaddress.ip_address(packed), int(port, 16)))
    return found


def is_loopback(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


def torchserve_pids(service: LocalService) -> dict[int, str]:
    """TorchServe's Java frontends and Python workers below the service."""
    below = descendants(service.process.pid)
    return {
        pid: line
        for pid, line in below.items()
        if "org.pytorch.serve.ModelServer" in line or "model_service_worker.py" in line
    }


def test_a_model_mar_deploys_predicts_and_undeploys_with_torchserve(torch_service, tmp_path):
    from google.cloud import aiplatform

    archive, expected = make_archive(tmp_path)
    folder = stored_archive(torch_service, archive, "regressor")
    # A config planted in storage, which TorchServe would take over its own from TS_CONFIG_FILE.
    (folder / "open.properties").write_text("disable_token_authorization=true\n")
    torch_service.init_sdk()
    model = aiplatform.Model.upload(
        display_name="regressor", artifact_uri="gs://models/regressor",
        serving_container_image_uri=GPU_IMAGE,
        serving_container_environment_variables={"TS_CONFIG_FILE": str(folder / "open.properties")},
    )  # fmt: skip
    endpoint = model.deploy(machine_type="n1-standard-2")
    try:
        running = torchserve_pids(torch_service)
        java = [pid for pid, line in running.items() if "org.pytorch.serve.ModelServer" in line]
        assert len(java) == 1 and len(running) >= 2, running  # the frontend and its worker
        work = Path(re.search(r"-Djava\.io\.tmpdir=(\S+)", running[java[0]])[1])
        assert work.is_dir() and (work.stat().st_mode & 0o777) == 0o700
        ports = listening(java[0])
        assert ports and all(is_loopback(address) for address, _ in ports), ports

        deployed = endpoint.list_models()[0].id
        log = torch_service.state_dir / "endpoints" / endpoint.name / f"{deployed}.log"
        text = log.read_text()
        for api, method, path in (
            ("Inference", "POST", "/predictions/model"), ("Management", "GET", "/models")
        ):  # fmt: skip
            port = int(re.search(rf"{api} API bind to: http://127\.0\.0\.1:(\d+)", text)[1])
            assert port in {p for _, p in ports}
            for headers in ({}, {"Authorization": "Bearer not-the-key"}):
                url = f"http://127.0.0.1:{port}{path}"
                refused = requests.request(
                    method, url, json={"instances": INSTANCES}, headers=headers, timeout=30
                )
                assert refused.status_code == 400, refused.text
                assert "Token Authorization failed" in refused.text

        prediction = endpoint.predict(instances=INSTANCES)
        assert prediction.deployed_model_id == deployed
        assert list(prediction.predictions) == pytest.approx(expected, abs=1e-6)
    finally:
        endpoint.undeploy_all()
    assert not [pid for pid in running if Path(f"/proc/{pid}").exists()], running
    assert not torchserve_pids(torch_service)
    assert not work.exists()
    endpoint.delete()
    model.delete()


PROGRAM = """
    import json, os, subprocess, sys
    from google.cloud import aiplatform, storage

    aiplatform.init(project="team", location="us-central1", staging_bucket="gs://team-staging")
    # The sample's `torch-model-archiver --model-name model`: the prebuilt image wants model.mar.
    archiver = os.path.join(os.path.dirname(sys.executable), "torch-model-archiver")
    subprocess.run([archiver, "-f", "--model-name", "model", "--version", "1.0",
                    "--serialized-file", "model.pt", "--handler", "handler.py",
                    "--export-path", "."], check=True)
    client = storage.Client(project="team")
    bucket = client.bucket("team-models")
    if not bucket.exists():
        bucket.create()
    bucket.blob("regressor/model.mar").upload_from_filename("model.mar")
    model = aiplatform.Model.upload(
        display_name="regressor", artifact_uri="gs://team-models/regressor",
        serving_container_image_uri=IMAGE,
    )
    endpoint = model.deploy(machine_type="n1-standard-4")
    served = endpoint.predict(instances=INSTANCES).predictions
    endpoint.undeploy_all()
    endpoint.delete()
    bucket.blob("in.jsonl").upload_from_string("".join(json.dumps(x) + "\\n" for x in INSTANCES))
    job = model.batch_predict(
        job_display_name="batch", gcs_source="gs://team-models/in.jsonl",
        gcs_destination_prefix="gs://team-models/out", machine_type="n1-standard-4",
    )
    batch = [json.loads(line)["prediction"] for blob in job.iter_outputs()
             for line in blob.download_as_text().splitlines()]
    model.delete()
    print(json.dumps({"served": list(served), "batch": batch}))
"""


def test_a_users_program_serves_its_archive_as_vertexs_pytorch_sample(torch_service, tmp_path):
    _, expected = make_archive(tmp_path)
    (tmp_path / "model.mar").unlink()  # the program archives it itself
    program = f"IMAGE = {IMAGE!r}\nINSTANCES = {INSTANCES!r}\n" + textwrap.dedent(PROGRAM)
    (tmp_path / "program.py").write_text(program)
    out = exec_program(torch_service.url, tmp_path)
    assert out["served"] == pytest.approx(expected, abs=1e-6)
    assert out["batch"] == pytest.approx(expected, abs=1e-6)
    assert not torchserve_pids(torch_service)


def test_a_handler_that_does_not_load_fails_the_deploy_with_its_error(torch_service, tmp_path):
    from google.cloud import aiplatform

    broken = "import not_a_module_of_anyones\n" + HANDLER
    archive, _ = make_archive(tmp_path, broken)
    stored_archive(torch_service, archive, "broken")
    torch_service.init_sdk()
    model = aiplatform.Model.upload(
        display_name="broken", artifact_uri="gs://models/broken", serving_container_image_uri=IMAGE
    )
    with pytest.raises(Exception, match="No module named 'not_a_module_of_anyones'") as failed:
        model.deploy(machine_type="n1-standard-2")
    assert "TorchServe could not load model.mar" in str(failed.value)
    assert not torchserve_pids(torch_service)


def deploy_refusal(service: LocalService, uri: str, image: str = IMAGE) -> str:
    """The message of the 400 that deploying a model of `image` at `uri` gets."""
    session, base = service.session(), f"{service.url}/v1/{service.parent}"
    spec = {"displayName": "m", "artifactUri": uri, "containerSpec": {"imageUri": image}}
    uploaded = session.post(f"{base}/models:upload", json={"model": spec}, timeout=30).json()
    endpoint = session.post(f"{base}/endpoints", json={"displayName": "e"}, timeout=30).json()
    deployed = session.post(
        f"{service.url}/v1/{endpoint['response']['name']}:deployModel",
        json={"deployedModel": {"model": uploaded["response"]["model"]}},
        timeout=30,
    )
    assert deployed.status_code == 400, deployed.text
    message = deployed.json()["error"]["message"]
    assert "\n" not in message, message
    return message


def test_archives_need_the_operators_opt_in_and_a_model_mar(local_service, tmp_path):
    archive, _ = make_archive(tmp_path)
    stored_archive(local_service, archive, "archived")
    message = deploy_refusal(local_service, "gs://models/archived")
    assert "model.mar is a TorchServe model archive" in message
    assert "VTP_SERVING_ALLOW_PICKLE=1" in message
    (local_service.gcs_root / "models" / "nothing").mkdir()
    message = deploy_refusal(local_service, "gs://models/nothing", GPU_IMAGE)
    assert "loads model.mar from artifactUri gs://models/nothing, which does not hold it" in message
    assert "torch-model-archiver --model-name model" in message


def test_without_java_the_deploy_is_refused_naming_the_package(tmp_path):
    archive, _ = make_archive(tmp_path)
    no_java = {"VTP_SERVING_ALLOW_PICKLE": "1", "JAVA_HOME": "", "PATH": str(ARCHIVER.parent)}
    assert shutil.which("java", path=no_java["PATH"]) is None
    with LocalService(tmp_path / "state", env=no_java) as service:
        stored_archive(service, archive, "archived")
        message = deploy_refusal(service, "gs://models/archived")
    assert "there is no `java` on the service's PATH" in message
    assert "apt-get install openjdk-17-jre-headless" in message


def test_every_prebuilt_pytorch_image_name_plans_torchserve(tmp_path):
    from vtp.local.endpoints.prebuilt import plan_prebuilt

    (tmp_path / "b" / "m").mkdir(parents=True)
    (tmp_path / "b" / "m" / "model.mar").write_bytes(b"an archive")
    java = shutil.which("java") or ""
    environ = {"PATH": os.environ["PATH"], "HOME": "/home/u", "PIP_INDEX_URL": "https://x/simple"}
    for image, gpu in (
        (IMAGE, "0"), (GPU_IMAGE, "1"),
        ("asia-docker.pkg.dev/vertex-ai-restricted/prediction/pytorch-cpu.1-13:latest", "0"),
        ("gcr.io/cloud-aiplatform/prediction/pytorch-gpu.2-1", "1"),
    ):  # fmt: skip
        argv, env = plan_prebuilt("M", image, "gs://b/m", tmp_path, True, environ)
        assert argv == ("python", "-m", "vtp.local.endpoints.torchserve_server"), image
        assert dict(env) == {
            "PIP_INDEX_URL": "https://x/simple",
            "VTP_SERVING_ALLOW_PICKLE": "1",
            "VTP_TORCHSERVE_CACHE": "/home/u/.cache/vtp/torchserve",
            "VTP_TORCHSERVE_GPU": gpu,
            "VTP_TORCHSERVE_JAVA": os.path.abspath(java),
        }


def test_torchserve_gets_no_variable_that_would_change_its_config():
    from vtp.local.endpoints.torchserve_process import java_environment

    env = {
        "PATH": "/usr/bin", "HOME": "/home/u", "VTP_LOCAL_SERVICE_ID": "s1",
        "TS_CONFIG_FILE": "/gcs/b/open.properties", "JAVA_TOOL_OPTIONS": "-javaagent:/gcs/a.jar",
        "PIP_INDEX_URL": "https://user:secret@index/simple", "PYTHONPATH": "/gcs/b",
        "VTP_TORCHSERVE_CACHE": "/c", "VTP_SERVE_SECRET_FILE": "/s", "CLASSPATH": "/gcs/b",
    }  # fmt: skip
    assert java_environment(env) == {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "VTP_LOCAL_SERVICE_ID": "s1",
    }


def test_a_torchserve_in_the_services_own_environment_is_used_as_it_is(torch_service):
    from vtp.local.endpoints.torchserve_install import layer_torchserve

    cache = Path(torch_service.extra_env["XDG_CACHE_HOME"]) / "vtp" / "torchserve"
    layer = layer_torchserve(cache, os.environ)  # the deploys' layer, cached (or built now)
    # Its interpreter stands for a service that has torchserve installed itself.
    code = (
        "from vtp.local.endpoints.torchserve_install import service_torchserve\n"
        "found = service_torchserve()\n"
        "print(found.python, found.home, found.source, sep='\\n')\n"
    )
    out = subprocess.run([layer.python, "-c", code], capture_output=True, text=True, check=True)
    python, home, source = out.stdout.splitlines()
    assert (python, home) == (layer.python, str(layer.home))
    assert source == "the service's environment (torchserve 0.12.0)"


def test_where_pip_cannot_install_torchserve_the_deploy_fails_saying_how(tmp_path):
    from google.cloud import aiplatform

    archive, _ = make_archive(tmp_path)
    offline = {
        "VTP_SERVING_ALLOW_PICKLE": "1", "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(tmp_path),
        # no config files, no index, links to a folder without wheels: pip is offline
    }  # fmt: skip
    with LocalService(tmp_path / "state", env=offline) as service:
        stored_archive(service, archive, "archived")
        service.init_sdk()
        model = aiplatform.Model.upload(
            display_name="m", artifact_uri="gs://models/archived", serving_container_image_uri=IMAGE
        )
        with pytest.raises(
            Exception, match=r"pip could not install torchserve==0\.12\.0"
        ) as failed:
            model.deploy(machine_type="n1-standard-2")
        assert "pip install 'torchserve==0.12.0') and deploy again" in str(failed.value)
        assert not torchserve_pids(service)
    assert not list((tmp_path / "cache" / "vtp" / "torchserve").glob("*/bin"))  # nothing half-built
