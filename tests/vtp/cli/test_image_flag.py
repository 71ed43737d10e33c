"""`--image` for Vertex is an image Vertex can pull, for `submit`, `schedule create` and `compile`.

Run as a user runs them: `python -m vtp ...` in a folder of their own (a HOME without Google
credentials, no image built). An image Vertex could not pull (the placeholder, a bare name, a
local file) exits 2 with one line naming `--image`, before anything is compiled or sent; a
registry image goes through (`--dry-run` prints the request, `compile` writes the file). With
`--local` the local service runs the job, and local images stay allowed.
"""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from vtp.images import COMPONENT_IMAGE, VERTEX_IMAGE_EXAMPLE

TARGET = (
    "--project=my-project",
    "--region=us-central1",
    "--pipeline-root=gs://my-bucket/root",
    "--param=output_root=gs://my-bucket/out",
)
SCHEDULE = ("schedule", "create", "nightly", "--pipeline=train", "--cron=0 3 * * *")
DIGEST = "sha256:" + "0123456789abcdef" * 4
REFUSED = [COMPONENT_IMAGE, "IMAGE", "vtp:dev", "LOCAL_FILE"]
"""LOCAL_FILE stands for a file of the user's folder: an image saved with `docker save`."""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The user's folder, holding vtp.tar (a saved image), and a state home with no build."""
    home = tmp_path / "user"
    home.mkdir()
    (home / "vtp.tar").write_bytes(b"not an image Vertex can pull")
    return home


def vtp(folder: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "CLOUDSDK_"))}
    clean.pop("VTP_LOCAL_ENDPOINT", None)
    clean |= {
        "HOME": str(folder),
        "CLOUDSDK_CONFIG": str(folder / "gcloud"),
        "XDG_STATE_HOME": str(folder / "state"),
        **env,
    }
    return subprocess.run(
        [sys.executable, "-m", "vtp", *argv],
        env=clean, capture_output=True, text=True, timeout=300, cwd=folder,
    )  # fmt: skip


def image_arg(folder: Path, image: str) -> str:
    return f"--image={folder / 'vtp.tar'}" if image == "LOCAL_FILE" else f"--image={image}"


def assert_refused(result: subprocess.CompletedProcess[str], image: str) -> None:
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("vtp: error: --image: ")
    assert (image if image != "LOCAL_FILE" else "vtp.tar") in lines[0]
    assert VERTEX_IMAGE_EXAMPLE in lines[0]


@pytest.mark.parametrize("image", REFUSED)
@pytest.mark.parametrize(
    "command",
    [("submit", "train", *TARGET, "--dry-run"), (*SCHEDULE, *TARGET, "--dry-run")],
    ids=["submit", "schedule-create"],
)
def test_submit_and_schedule_refuse_an_image_vertex_cannot_pull(folder, command, image) -> None:
    assert_refused(vtp(folder, *command, image_arg(folder, image)), image)


@pytest.mark.parametrize(
    "command", [("submit", "train", *TARGET), (*SCHEDULE, *TARGET)], ids=["submit", "schedule"]
)
def test_the_refusal_comes_before_anything_is_sent(folder, command) -> None:
    """Without --dry-run (and no credentials here): still exit 2 on the image, not 1 later."""
    assert_refused(vtp(folder, *command, "--image=vtp:dev"), "vtp:dev")


@pytest.mark.parametrize("image", REFUSED)
def test_compile_refuses_an_image_vertex_cannot_pull(folder, image) -> None:
    out = folder / "compiled"
    result = vtp(folder, "compile", "export", image_arg(folder, image), f"--output-dir={out}")
    assert_refused(result, image)
    assert not out.exists()


def test_submit_sends_a_registry_image(folder) -> None:
    image = "us-central1-docker.pkg.dev/my-project/ml/vtp:1.2"
    result = vtp(folder, "submit", "train", *TARGET, f"--image={image}", "--dry-run")
    assert result.returncode == 0, result.stderr
    executors = json.loads(result.stdout)["pipelineSpec"]["deploymentSpec"]["executors"]
    assert {e["container"]["image"] for e in executors.values()} == {image}


def test_schedule_create_sends_a_registry_image_by_digest(folder) -> None:
    image = f"eu.gcr.io/my-project/vtp@{DIGEST}"
    result = vtp(folder, *SCHEDULE, *TARGET, f"--image={image}", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert image in result.stdout and COMPONENT_IMAGE not in result.stdout


def test_compile_writes_a_registry_image_with_a_port(folder) -> None:
    image = "registry.example.com:5000/team/vtp:1"
    out = folder / "compiled"
    result = vtp(folder, "compile", "export", f"--image={image}", f"--output-dir={out}")
    assert result.returncode == 0, result.stderr
    text = (out / "export.yaml").read_text()
    assert f"image: {image}" in text and COMPONENT_IMAGE not in text


@pytest.mark.parametrize(
    "command", [("submit", "--local", "train"), (*SCHEDULE, "--local")], ids=["submit", "schedule"]
)
@pytest.mark.parametrize("image", ["vtp:dev", "LOCAL_FILE"])
def test_local_runs_still_take_local_images(folder, command, image) -> None:
    """The local service runs local images: the image passes, and the command goes on to the
    service (here none listens, so it says how to start one: exit 1, not a usage error)."""
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    result = vtp(folder, *command, image_arg(folder, image), VTP_LOCAL_ENDPOINT=url)
    assert result.returncode == 1, result.stderr
    assert "--image" not in result.stderr and f"cannot reach {url}" in result.stderr
