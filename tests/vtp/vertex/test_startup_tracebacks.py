"""A program's tracebacks under the start-up hook show its frames and its libraries', not ours.

The hook (`vtp/vertex/startup/sitecustomize.py`) patches the SDK, google-api-core, requests and
Cloud Storage as they are imported. A patch that wrapped the function that raises would put a
frame of ours between the program's and the library's (issue #51); these programs fail inside
the libraries the hook patches, uncaught, and the traceback Python prints names no file under
`vtp/`. Each also shows that the patch it meets is in force, so a test cannot pass by the hook
doing nothing.
"""

import os
import re
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.fixtures import REPO, team_folder

HOOK = REPO / "vtp" / "vertex" / "startup"
OURS = str(REPO / "vtp") + os.sep


def frames(traceback_text: str) -> list[str]:
    """The files of the frames a printed traceback names."""
    return re.findall(r'^\s*File "([^"]+)", line \d+', traceback_text, re.MULTILINE)


def failing(program: str, folder: Path, env: dict[str, str], command: list[str]) -> str:
    """Run `program` (saved in `folder` as program.py) by `command`; it must fail with a
    traceback: its stderr."""
    (folder / "program.py").write_text(textwrap.dedent(program))
    result = subprocess.run(
        [*command, sys.executable, "program.py"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback (most recent call last):" in result.stderr, result.stderr
    return result.stderr


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def hooked(tmp_path: Path) -> dict[str, str]:
    """The hook's environment, as `vtp local exec` sets it, for a service on a closed port."""
    port = closed_port()
    return {
        **os.environ,
        "PYTHONPATH": str(HOOK),
        "VTP_LOCAL_API_ENDPOINT": f"localhost:{port}",
        "VTP_LOCAL_TOKEN": "token",
        "STORAGE_EMULATOR_HOST": f"http://127.0.0.1:{port}",
        "VTP_GCS_ROOT": str(tmp_path / "gcs"),
    }


def test_a_request_to_vertex_that_fails_shows_no_frame_of_ours(tmp_path, hooked):
    """requests' own ConnectionError, raised deep in the library for the rewritten address."""
    stderr = failing(
        """
        import requests
        requests.get("https://us-central1-aiplatform.googleapis.com/v1/projects/p", timeout=30)
        """,
        tmp_path,
        hooked,
        [],
    )
    assert "ConnectionError" in stderr
    assert hooked["VTP_LOCAL_API_ENDPOINT"].split(":")[1] in stderr  # sent to the service's port
    assert any("/requests/" in f for f in frames(stderr))
    assert not [f for f in frames(stderr) if f.startswith(OURS)], stderr


def test_client_options_that_the_library_refuses_show_no_frame_of_ours(tmp_path, hooked):
    """google-api-core's ValueError from `ClientOptions.__init__`, after a patched one works."""
    stderr = failing(
        """
        from google.api_core.client_options import ClientOptions, from_dict
        local = from_dict({"api_endpoint": "us-central1-aiplatform.googleapis.com"})
        assert local.api_endpoint.startswith("localhost:"), local
        ClientOptions(api_endpoint="aiplatform.googleapis.com", credentials_file="f", api_key="k")
        """,
        tmp_path,
        hooked,
        [],
    )
    assert "ValueError" in stderr and "mutually exclusive" in stderr
    assert not [f for f in frames(stderr) if f.startswith(OURS)], stderr


def test_a_library_that_fails_to_import_under_the_hook_shows_no_frame_of_ours(tmp_path, hooked):
    """A patched module (kfp's artifact types, stood in for) that raises while it is imported:
    the import hook's own frame is left out of what Python prints."""
    package = tmp_path / "kfp" / "dsl" / "types"
    package.mkdir(parents=True)
    for folder in (package, package.parent, package.parent.parent):
        (folder / "__init__.py").write_text("")
    (package / "artifact_types.py").write_text("raise ValueError('the library is broken')\n")
    env = {**hooked, "PYTHONPATH": f"{HOOK}{os.pathsep}{tmp_path}"}
    stderr = failing("import kfp.dsl.types.artifact_types\n", tmp_path, env, [])
    assert "ValueError: the library is broken" in stderr
    assert str(package / "artifact_types.py") in frames(stderr)
    assert not [f for f in frames(stderr) if f.startswith(OURS)], stderr


@pytest.mark.slow
def test_a_failed_job_under_vtp_local_exec_shows_no_frame_of_ours(local_service, tmp_path):
    """`CustomJob.run()` of a job that fails: the SDK's RuntimeError from its wait, which the
    hook makes poll quickly, through the real service and `vtp local exec`."""
    folder = team_folder(tmp_path, "")
    exec_command = [sys.executable, "-m", "vtp", "local", "exec", "--endpoint", local_service.url]
    stderr = failing(
        """
            from google.cloud import aiplatform
            aiplatform.init(project="team", location="us-central1", staging_bucket="gs://team-b")
            job = aiplatform.CustomJob(
                display_name="fails",
                worker_pool_specs=[{
                    "machine_spec": {"machine_type": "n1-standard-4"},
                    "replica_count": 1,
                    "container_spec": {
                        "image_uri": "us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0",
                        "command": ["python", "-c", "raise SystemExit(3)"],
                    },
                }],
            )
            job.run()
            """,
        folder,
        dict(os.environ),
        [*exec_command, "--"],
    )
    assert "RuntimeError: Job failed" in stderr
    files = frames(stderr)
    assert str(folder / "program.py") in files and any("/aiplatform/jobs.py" in f for f in files)
    assert not [f for f in files if f.startswith(OURS)], stderr
