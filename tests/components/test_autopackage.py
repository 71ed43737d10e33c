"""The `autopackage` component body (`.python_func`): stage code, feed `custom_job`'s job_spec."""

from pathlib import Path

import pytest

from tests.vtp.vertex.usercode import write_user_code
from vtp.components.autopackage import autopackage
from vtp.images import COMPONENT_IMAGE
from vtp.launchers import custom_job as custom_job_task
from vtp.vertex import autopackage as library
from vtp.vertex.protodict import SpecError
from vtp.vertex.validation import validate_custom_job_spec

EXECUTOR = "us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-4.py310:latest"


@pytest.fixture
def gcs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A local Cloud Storage root holding the user's code at gs://src/code."""
    monkeypatch.setenv("VTP_GCS_ROOT", str(tmp_path / "gcs"))
    write_user_code(tmp_path / "gcs" / "src")
    return tmp_path / "gcs"


def run(**inputs):
    defaults = {
        "source_uri": "gs://src/code",
        "staging_uri": "gs://stage/pkgs",
        "executor_image_uri": EXECUTOR,
    }
    return autopackage.python_func(**{**defaults, **inputs})


def test_the_spec_documents_every_input_and_output_and_runs_on_the_project_image() -> None:
    spec = autopackage.component_spec
    assert list(spec.inputs) == [
        "source_uri",
        "staging_uri",
        "executor_image_uri",
        "python_module",
        "script",
        "requirements",
        "extra_packages",
        "extra_dirs",
        "worker_pool_specs",
    ]
    assert {name: o.type for name, o in spec.outputs.items()} == {
        "package_uris": "List",
        "python_package_spec": "Dict",
        "job_spec": "Dict",
    }
    assert all(i.description for i in [*spec.inputs.values(), *spec.outputs.values()])
    assert spec.implementation.container.image == COMPONENT_IMAGE


def test_outputs_a_staged_package_and_a_job_spec_custom_job_accepts(gcs: Path) -> None:
    outputs = run(
        python_module="trainer",
        requirements=["scikit-learn>=1.5"],
        worker_pool_specs=[
            "machine-type=n1-standard-8,accelerator-type=NVIDIA_TESLA_T4",
            "machine-type=n1-standard-8,accelerator-type=NVIDIA_TESLA_T4,replica-count=3",
        ],
    )
    (uri,) = outputs.package_uris
    code = library.LocalCode(
        str(gcs / "src/code"), python_module="trainer", requirements=("scikit-learn>=1.5",)
    )
    # Exactly the archive `vtp custom-jobs create` builds from the same directory and keys.
    assert (gcs / uri.removeprefix("gs://")).read_bytes() == library.build(code)[0].data
    assert uri.startswith("gs://stage/pkgs/vtp-packages/") and uri.endswith("/code-0.0.0.tar.gz")
    assert outputs.python_package_spec == {
        "executorImageUri": EXECUTOR,
        "packageUris": [uri],
        "pythonModule": "vtp_autopackage",
    }
    pools = outputs.job_spec["workerPoolSpecs"]
    assert [p["replicaCount"] for p in pools] == [1, 3]
    assert all(p["pythonPackageSpec"] == outputs.python_package_spec for p in pools)
    validate_custom_job_spec(outputs.job_spec, "job_spec")

    job = custom_job_task.build_job("train", [], outputs.job_spec, ["--task=blobs.task"], {})
    assert [list(p.python_package_spec.args) for p in job.job_spec.worker_pool_specs] == [
        ["--task=blobs.task"],
        ["--task=blobs.task"],
    ]


def test_the_same_source_stages_the_same_uri(gcs: Path) -> None:
    first = run(script="scripts/run.py")
    path = gcs / first.package_uris[0].removeprefix("gs://")
    written = path.stat().st_mtime_ns
    assert run(script="scripts/run.py").package_uris == first.package_uris
    assert path.stat().st_mtime_ns == written  # content-addressed: not written twice


@pytest.mark.parametrize(
    ("inputs", "error", "text"),
    [
        ({"script": "../../outside.py"}, SpecError, "script: '../../outside.py' is outside"),
        ({"python_module": "m", "script": "scripts/run.py"}, SpecError, "exactly one of"),
        ({"python_module": "m", "worker_pool_specs": []}, ValueError, "give pool 0"),
        (
            {"python_module": "m", "worker_pool_specs": ["machine-type=n1-standard-4,script=x"]},
            ValueError,
            "worker_pool_specs: pool 0 sets script",
        ),
        ({"python_module": "m", "staging_uri": "/tmp/x"}, ValueError, "not a Cloud Storage URI"),
        ({"python_module": "m", "executor_image_uri": ""}, ValueError, "executor_image_uri"),
    ],
    ids=["script-outside", "module-and-script", "no-pools", "software-in-pool", "staging", "image"],
)
def test_bad_inputs_fail_before_anything_is_staged(
    gcs: Path, inputs: dict, error: type, text: str
) -> None:
    with pytest.raises(error, match=text.replace("(", r"\(")):
        run(**inputs)
    assert not (gcs / "stage").exists()
