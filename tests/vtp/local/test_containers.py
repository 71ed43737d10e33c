"""With a container engine, a custom job's replicas run in the job's own image (issue #28).

The image is made here, without a registry: the host's /bin/sh and the libraries it loads, a
marker file and an entrypoint script, imported with `podman import`. Skipped where Podman is
not installed. On machines whose kernel refuses crun or the default ulimits (this project's CI),
the engine runs with runc, cgroupfs and a containers.conf that clears `default_ulimits`, as
docs/containers.md says.
"""

import io
import os
import shutil
import subprocess
import tarfile
import uuid
from pathlib import Path

import pytest

from tests.fixtures import LocalService, State, wait_for_state
from tests.vtp.local.conftest import custom_job

PODMAN = shutil.which("podman")
pytestmark = pytest.mark.skipif(PODMAN is None, reason="podman is not installed")
PARENT = "projects/local/locations/us-central1"

ENTRYPOINT = """read marker < /marker
[ -e /work ] && host=yes || host=no
echo "$marker $host $CLOUD_ML_JOB_ID $*" > /gcs/b/out/$RANK
# The primary's exit ends the job and stops the others: it waits for the worker's line first.
if [ "$RANK" = 0 ]; then while [ ! -s /gcs/b/out/1 ]; do :; done; fi
"""
"""What the image runs: its marker, whether the host's /work shows, the job and its args."""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], dict[str, str]]:
    """The engine's command line and the environment it needs here."""
    conf = tmp_path_factory.mktemp("podman") / "containers.conf"
    conf.write_text("[containers]\ndefault_ulimits = []\n")
    command = [str(PODMAN)]
    if shutil.which("runc"):
        command += ["--runtime", "runc", "--cgroup-manager=cgroupfs"]
    return command, {"CONTAINERS_CONF": str(conf)}


@pytest.fixture(scope="module")
def image(engine: tuple[list[str], dict[str, str]]) -> tuple[str, str]:
    """(name, marker) of an image holding /bin/sh, /marker and /entrypoint.sh."""
    command, env = engine
    name, marker = f"localhost/vtp-test-{uuid.uuid4().hex[:8]}:1", uuid.uuid4().hex
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as archive:
        for path in ["/bin/sh", *_libraries("/bin/sh")]:
            archive.add(os.path.realpath(path), arcname=path.lstrip("/"))
        for path, text in {"marker": marker + "\n", "entrypoint.sh": ENTRYPOINT}.items():
            member = tarfile.TarInfo(path)
            member.size, member.mode = len(text.encode()), 0o755
            archive.addfile(member, io.BytesIO(text.encode()))
    change = 'ENTRYPOINT ["/bin/sh", "/entrypoint.sh"]'
    subprocess.run(
        [*command, "import", "--change", change, "-", name],
        input=data.getvalue(), env={**os.environ, **env}, check=True, capture_output=True,
    )  # fmt: skip
    yield name, marker
    subprocess.run([*command, "rmi", "--force", name], env={**os.environ, **env}, check=False)


def _libraries(program: str) -> list[str]:
    """The shared libraries `program` loads, as ldd names them."""
    out = subprocess.run(["ldd", program], capture_output=True, text=True, check=True).stdout
    return [word for word in out.split() if word.startswith("/")]


def test_a_jobs_replicas_run_in_its_image(tmp_path: Path, engine, image) -> None:
    command, env = engine
    name, marker = image
    service = LocalService(
        tmp_path / "state", env={**env, "VTP_CONTAINER_ENGINE": " ".join(command)}
    ).start()
    try:
        (service.gcs_root / "b" / "out").mkdir(parents=True)
        pool = {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1",
                "containerSpec": {"imageUri": name, "args": ["--epochs=1"]}}  # fmt: skip
        workers = {**pool, "containerSpec": {
            "imageUri": name, "command": ["/bin/sh", "/entrypoint.sh", "worker"]}}  # fmt: skip
        client = service.client()
        job = client.create_custom_job(parent=PARENT, custom_job=custom_job(pool, workers))
        ended = wait_for_state(client, job.name, timeout=120)
        assert ended.state == State.JOB_STATE_SUCCEEDED, ended.error.message
        job_id = job.name.rsplit("/", 1)[-1]
        out = service.gcs_root / "b" / "out"
        assert (out / "0").read_text().split() == [marker, "no", job_id, "--epochs=1"]
        assert (out / "1").read_text().split() == [marker, "no", job_id, "worker"]
        left = subprocess.run(
            [*command, "ps", "--all", "--format", "{{.Names}}"],
            env={**os.environ, **env}, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        assert f"vtp-{job_id}-" not in left
    finally:
        service.stop()


def test_an_image_not_here_fails_the_create_naming_it(tmp_path: Path, engine) -> None:
    command, env = engine
    service = LocalService(
        tmp_path / "state", env={**env, "VTP_CONTAINER_ENGINE": " ".join(command)}
    ).start()
    try:
        absent = f"localhost:1/vtp-absent-{uuid.uuid4().hex[:8]}:1"
        pool = {"machineSpec": {"machineType": "n1-standard-4"},
                "containerSpec": {"imageUri": absent}}  # fmt: skip
        with pytest.raises(Exception, match="could not be pulled") as raised:
            service.client().create_custom_job(parent=PARENT, custom_job=custom_job(pool))
        assert absent in str(raised.value) and "imageUri" in str(raised.value)
    finally:
        service.stop()
