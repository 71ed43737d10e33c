"""`models:upload` request checks, as pure functions: each malformed request names its field."""

import json
from pathlib import Path

import pytest
from google.cloud import aiplatform_v1

from vtp.local.base import errors
from vtp.local.models.upload import (
    artifact_problem,
    check_upload,
    parse_upload,
    upload_operation,
)

IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/pytorch-cpu.2-4:latest"


def request(**model: object) -> bytes:
    """An upload body (REST JSON) with a valid model, updated by `model`."""
    body = {"displayName": "digits", "containerSpec": {"imageUri": IMAGE}, **model}
    return json.dumps({"model": body}).encode()


def invalid(body: bytes) -> str:
    """The INVALID_ARGUMENT message for `body`."""
    with pytest.raises(errors.ApiError) as raised:
        check_upload(parse_upload(body))
    assert raised.value.code == errors.INVALID_ARGUMENT
    return raised.value.message


def test_a_valid_request_passes_and_output_only_fields_are_dropped() -> None:
    body = b'{"model": {"displayName": "d", "name": "x", "versionId": "7", "etag": "e"}}'
    parsed = parse_upload(body)
    check_upload(parsed)
    assert (parsed.model.name, parsed.model.version_id, parsed.model.etag) == ("", "", "")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b'{"model": {"displayName": "d", "servingImage": "x"}}', "servingImage"),
        (b'{"model": {"displayName": "d"}, "parent_modl": "x"}', "parent_modl"),
        (b'{"model": {"displayName": "d", "containerSpec": {"image": "x"}}}', "image"),
        (b'{"model": {"displayName": "d"', "Invalid JSON"),
    ],
)
def test_unknown_fields_and_bad_json_are_invalid_argument(body: bytes, field: str) -> None:
    with pytest.raises(errors.ApiError) as raised:
        parse_upload(body)
    assert raised.value.code == errors.INVALID_ARGUMENT and field in raised.value.message


@pytest.mark.parametrize(
    ("model", "field"),
    [
        ({"displayName": ""}, "model.displayName is required"),
        ({"displayName": "x" * 129}, "model.displayName is 129 characters"),
        ({"containerSpec": {"command": ["serve"]}}, "model.containerSpec.imageUri is required"),
        ({"artifactUri": "/tmp/model"}, "model.artifactUri '/tmp/model' is not a Cloud Storage"),
        ({"versionAliases": ["Prod"]}, "model.versionAliases: 'Prod' is not a valid alias"),
        ({"versionAliases": ["42"]}, "model.versionAliases: '42'"),
        ({"versionAliases": ["prod", "prod"]}, "model.versionAliases has duplicates"),
        ({"labels": {"Team": "ml"}}, "model.labels: 'Team'"),
        ({"labels": {"team": "ML"}}, "model.labels: 'team': 'ML'"),
    ],
)
def test_malformed_models_name_the_field(model: dict, field: str) -> None:
    assert field in invalid(request(**model))


def test_model_id_and_parent_model_rules() -> None:
    body = b'{"model": {"displayName": "d"}, "modelId": "%s"}'
    assert "modelId '9lives' is invalid" in invalid(body % b"9lives")
    check_upload(parse_upload(body % b"digits_v2-final"))
    both = b'{"model": {"displayName": "d"}, "modelId": "a", "parentModel": "%s"}'
    parent = b"projects/p/locations/l/models/1"
    assert "modelId cannot be set with parentModel" in invalid(both % parent)
    only_parent = b'{"model": {"displayName": "d"}, "parentModel": "%s"}'
    assert "Invalid Model name 'models/1'" in invalid(only_parent % b"models/1")
    check_upload(parse_upload(only_parent % (parent + b"@3")))


def test_artifact_problem_needs_a_directory_under_the_storage_root(tmp_path: Path) -> None:
    (tmp_path / "bucket" / "model").mkdir(parents=True)
    (tmp_path / "bucket" / "file").write_text("x")
    assert artifact_problem("", tmp_path) == ""
    assert artifact_problem("gs://bucket/model", tmp_path) == ""
    assert "gs://bucket/file is not a directory" in artifact_problem("gs://bucket/file", tmp_path)
    assert "no bucket" in artifact_problem("gs:///model", tmp_path)


def test_upload_operation_carries_the_response_or_the_error() -> None:
    version = aiplatform_v1.Model(name="projects/p/locations/l/models/9", version_id="2")
    done = upload_operation(version)
    assert done["name"].startswith("projects/p/locations/l/models/9/operations/")
    assert done["done"] is True and "error" not in done
    assert done["response"] == {
        "@type": "type.googleapis.com/google.cloud.aiplatform.v1.UploadModelResponse",
        "model": "projects/p/locations/l/models/9",
        "modelVersionId": "2",
    }
    failed = upload_operation(version, "model.artifactUri: missing")
    assert failed["error"] == {"code": 3, "message": "model.artifactUri: missing"}
    assert "response" not in failed
