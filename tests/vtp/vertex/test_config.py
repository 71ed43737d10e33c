"""--config files: bare CustomJobSpec fields (gcloud's form) or a whole CustomJob."""

from pathlib import Path

import pytest

from vtp.vertex.config import load_config
from vtp.vertex.protodict import SpecError

BARE = """\
workerPoolSpecs:
- machineSpec: {machineType: n1-standard-4}
  containerSpec: {imageUri: img}
scheduling: {timeout: 3600s}
"""
FULL = """\
displayName: trainer
labels: {team: ml}
encryptionSpec: {kmsKeyName: projects/p/locations/l/keyRings/r/cryptoKeys/k}
jobSpec:
  workerPoolSpecs:
  - machineSpec: {machineType: n1-standard-4}
    containerSpec: {imageUri: img}
"""


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "job.yaml"
    path.write_text(text)
    return str(path)


def test_bare_form_is_the_spec(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, BARE))
    assert not config.full_form and config.job_fields == {}
    assert config.spec["scheduling"] == {"timeout": "3600s"}
    assert config.spec_path("scheduling.timeout") == "scheduling.timeout"


def test_full_form_splits_job_fields_from_the_spec(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, FULL))
    assert config.full_form
    assert set(config.job_fields) == {"displayName", "labels", "encryptionSpec"}
    assert config.spec["workerPoolSpecs"][0]["containerSpec"] == {"imageUri": "img"}
    assert config.spec_path("workerPoolSpecs[0]") == "jobSpec.workerPoolSpecs[0]"


def test_full_form_field_errors_keep_the_jobspec_prefix(tmp_path: Path) -> None:
    path = write(tmp_path, FULL.replace("imageUri: img", "imageUrl: img"))
    with pytest.raises(SpecError) as caught:
        load_config(path)
    assert (
        caught.value.path == f"--config {path}: jobSpec.workerPoolSpecs[0].containerSpec.imageUrl"
    )
    assert "did you mean 'imageUri'" in str(caught.value)
