"""A python-package job's requirements install as on Vertex's prebuilt images (issue #37).

A team's unchanged SDK script, run with `vtp local exec` from a folder of its own, asks
`CustomJob.from_local_script(requirements=[...])` for a package the service's environment
lacks (`termcolor`, pure Python, from the package index this machine is configured for). The
job imports it; the next job with the same requirements reuses what the first installed (pip
does not run again); the service's environment never gets it; and a requirement that cannot be
met (another torch than the service's) fails the job with pip's own words.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.fixtures import LocalService
from tests.vtp.local.conftest import write_wheel

pytestmark = pytest.mark.slow

MISSING = "termcolor"
"""A small pure-Python package on the index that the service's environment does not hold."""

TASK = """
    import importlib, sys
    module = importlib.import_module(sys.argv[1])
    print("IMPORTED", module.__file__)
"""

SUBMIT = """
    import json, sys
    from google.cloud import aiplatform, storage

    aiplatform.init(project="team-project", location="us-central1", staging_bucket="gs://team-req")
    client = storage.Client(project="team-project")
    if not client.bucket("team-req").exists():
        client.create_bucket("team-req")
    outcome = {}
    for name in sys.argv[2:]:
        job = aiplatform.CustomJob.from_local_script(
            display_name=name,
            script_path="task.py",
            container_uri="us-docker.pkg.dev/vertex-ai/training/pytorch-cpu.2-4.py310:latest",
            requirements=[sys.argv[1]],
            args=[sys.argv[1].split("=")[0]],
        )
        try:
            job.run()
        except RuntimeError as exc:
            outcome[name] = {"id": job.name, "error": str(exc)}
            continue
        outcome[name] = {"id": job.name, "state": job.state.name}
    print("OUTCOME", json.dumps(outcome))
"""


def submit(local_service, folder: Path, requirement: str, *names: str) -> dict:
    """Run the team's script under `vtp local exec`: each job's id and state or error."""
    (folder / "task.py").write_text(textwrap.dedent(TASK))
    (folder / "submit.py").write_text(textwrap.dedent(SUBMIT))
    command = [sys.executable, "-m", "vtp", "local", "exec", "--endpoint", local_service.url]
    result = subprocess.run(
        [*command, "--", sys.executable, "submit.py", requirement, *names],
        cwd=folder, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    line = next(li for li in result.stdout.splitlines() if li.startswith("OUTCOME "))
    return json.loads(line.removeprefix("OUTCOME "))


def replica_log(local_service, job_id: str) -> str:
    """What the job's primary replica logged (the service's lines, pip's, the program's)."""
    path = local_service.state_dir / "jobs" / job_id / "logs" / "workerpool0-0.log"
    return path.read_text()


def service_has(package: str) -> bool:
    """Whether the service's own interpreter can import `package`."""
    probe = f"import importlib.util; print(importlib.util.find_spec({package!r}) is not None)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return out.stdout.strip() == "True"


def test_a_requirement_the_service_lacks_is_installed_once_and_reused(local_service, tmp_path):
    assert not service_has(MISSING), f"pick a package the service lacks instead of {MISSING}"
    outcome = submit(local_service, tmp_path, MISSING, "first", "second")
    assert outcome["first"]["state"] == outcome["second"]["state"] == "JOB_STATE_SUCCEEDED"
    first = replica_log(local_service, outcome["first"]["id"])
    second = replica_log(local_service, outcome["second"]["id"])
    assert f"Successfully installed {MISSING}-" in first
    # The second job's package differs (the SDK builds it again) but its requirements do not:
    # pip installs the package alone, from its file, and never looks at the index.
    assert f"requirements {MISSING}: reused, already installed in" in second
    assert (
        "Looking in indexes" not in second
        and f"Installing collected packages: {MISSING}" not in second
    )
    imported = [li for li in second.splitlines() if li.startswith("IMPORTED ")]
    installed = Path(imported[0].split(" ", 1)[1])
    assert installed.is_relative_to(local_service.state_dir / "packages" / "requirements")
    assert not service_has(MISSING)


def test_a_requirement_that_needs_another_torch_fails_with_pips_words(local_service, tmp_path):
    outcome = submit(local_service, tmp_path, "torch==1.13.1", "other-torch")
    error = outcome["other-torch"]["error"]
    assert "could not install workerPoolSpecs[0].pythonPackageSpec.packageUris" in error
    assert "ResolutionImpossible" in error or "conflicting dependencies" in error
    log = replica_log(local_service, outcome["other-torch"]["id"])
    assert "The user requested torch==1.13.1" in log


def test_requirements_come_from_the_index_the_service_is_configured_for(tmp_path):
    """PIP_INDEX_URL in the service's environment (a team's own index, here a folder) is where
    a job's requirements are looked for."""
    wheel = write_wheel(tmp_path, "vtpprobe", "1.0", {"vtpprobe/__init__.py": b"TEAM = True\n"})
    project = tmp_path / "index" / "vtpprobe"
    project.mkdir(parents=True)
    wheel.rename(project / wheel.name)
    (project / "index.html").write_text(f'<a href="{wheel.name}">{wheel.name}</a>\n')
    index = f"file://{tmp_path / 'index'}"
    folder = tmp_path / "team"
    folder.mkdir()
    with LocalService(tmp_path / "state", env={"PIP_INDEX_URL": index}) as service:
        outcome = submit(service, folder, "vtpprobe==1.0", "team-index")
    assert outcome["team-index"]["state"] == "JOB_STATE_SUCCEEDED", outcome
    log = replica_log(service, outcome["team-index"]["id"])
    assert f"Looking in indexes: {index}" in log and "Successfully installed vtpprobe-1.0" in log


def test_a_jobs_pip_keeps_its_temporary_files_in_a_folder_of_its_own(tmp_path) -> None:
    """Issue #49: a pip backtracking over an unsatisfiable requirement left 57 GB of
    `pip-unpack-*` in the shared /tmp. Its temporary folder is beside the job's install folder,
    and gone however pip ends (here: an exit status 1 after writing a file there)."""
    from vtp.local.runtime.pip_cache import InstallError, Pip

    log = tmp_path / "pip.log"
    target = tmp_path / "cache" / "archives" / "abc"
    script = (
        "import os, sys, tempfile; here = tempfile.gettempdir(); print('tmp:', here); "
        "open(os.path.join(here, 'pip-unpack-1'), 'w').write('x' * 1000); sys.exit(1)"
    )
    pip = Pip({"PATH": os.environ["PATH"]}, lambda: False, log)
    with pytest.raises(InstallError):
        pip.run([sys.executable, "-c", script], target)
    (used,) = [
        line.split("tmp: ", 1)[1] for line in log.read_text().splitlines() if "tmp: " in line
    ]
    assert Path(used).parent == target.parent and Path(used).name.startswith(".abc.pip-tmp-")
    assert not Path(used).exists()
