"""`models:upload` requests: parsed with the aiplatform_v1 types and checked as Vertex checks them.

Pure functions: `parse_upload` (unknown fields are INVALID_ARGUMENT, as on Vertex),
`check_upload` (the rules a request must meet to be accepted; each error names its field by its
REST path), `artifact_problem` (what the operation finds wrong with the artifact directory) and
`upload_operation` (the finished long-running Operation, with its response or error).
"""

import json
import re
from pathlib import Path

from google.cloud import aiplatform_v1

from vtp import storage
from vtp.local.base import errors
from vtp.local.base.resources import clear_output_only, done_operation, new_id, rest_json
from vtp.local.base.routing import parse_message

MAX_DISPLAY_NAME = 128
MODEL_ID = re.compile(r"[a-z_][a-z0-9_-]{0,62}")
"""A user-chosen model ID: up to 63 of [a-z0-9_-], not starting with a digit or hyphen."""
ALIAS = re.compile(r"[a-z][a-zA-Z0-9-]{0,126}[a-z0-9]")
"""A version alias; the pattern tells aliases apart from numeric version IDs."""
LABEL_KEY = re.compile(r"[a-z][a-z0-9_-]{0,62}")
LABEL_VALUE = re.compile(r"[a-z0-9_-]{0,63}")
MODEL_NAME = re.compile(r"(projects/[^/]+/locations/[^/]+)/models/([^/@:]+)")
OUTPUT_ONLY = (
    *("name", "version_id", "version_create_time", "version_update_time", "create_time"),
    *("update_time", "deployed_models", "etag", "supported_export_formats"),
    *("supported_deployment_resources_types", "supported_input_storage_formats"),
    *("supported_output_storage_formats", "training_pipeline", "model_source_info"),
    *("original_model_info", "metadata_artifact", "satisfies_pzs", "satisfies_pzi"),
)
"""Model fields a request may carry but Vertex sets itself (it ignores the request's values)."""


def parse_upload(body: bytes) -> aiplatform_v1.UploadModelRequest:
    """The request body as an UploadModelRequest; raise INVALID_ARGUMENT for unknown fields."""
    request = parse_message(aiplatform_v1.UploadModelRequest, body)
    clear_output_only(request.model, OUTPUT_ONLY)
    return request


def check_upload(request: aiplatform_v1.UploadModelRequest) -> None:
    """Raise INVALID_ARGUMENT, naming the field, unless Vertex would accept `request`."""
    model = request.model
    if not model.display_name:
        raise errors.invalid_argument("model.displayName is required.")
    if len(model.display_name) > MAX_DISPLAY_NAME:
        raise errors.invalid_argument(
            f"model.displayName is {len(model.display_name)} characters long; "
            f"at most {MAX_DISPLAY_NAME} are allowed."
        )
    _check_ids(request)
    check_aliases(list(model.version_aliases))
    check_labels(dict(model.labels))
    if "container_spec" in model and not model.container_spec.image_uri:
        raise errors.invalid_argument("model.containerSpec.imageUri is required.")
    if model.artifact_uri and not storage.is_gcs_uri(model.artifact_uri):
        raise errors.invalid_argument(
            f"model.artifactUri {model.artifact_uri!r} is not a Cloud Storage URI "
            "(gs://bucket/path)."
        )


def artifact_problem(uri: str, storage_root: Path) -> str:
    """Why Vertex could not import the artifact directory `uri` ("" when it can, or no uri)."""
    if not uri:
        return ""
    try:
        path = storage.path_under(storage_root, uri)
    except ValueError as exc:
        return f"model.artifactUri: {exc}."
    if not path.is_dir():
        return (
            f"model.artifactUri: {uri} is not a directory under the local Cloud Storage root "
            f"{storage_root}."
        )
    return ""


def parse_model_name(name: str) -> tuple[str, str]:
    """`projects/P/locations/L/models/ID` -> (parent, ID); raise INVALID_ARGUMENT otherwise."""
    match = MODEL_NAME.fullmatch(name)
    if not match:
        raise errors.invalid_argument(
            f"Invalid Model name {name!r}: expected "
            "projects/{project}/locations/{location}/models/{model}."
        )
    return match[1], match[2]


def upload_operation(version: aiplatform_v1.Model, problem: str = "") -> dict:
    """The done Operation of an upload: the new model and version, or INVALID_ARGUMENT."""
    operation = done_operation(
        f"{version.name}/operations/{new_id()}", "UploadModelOperationMetadata"
    )
    if problem:
        del operation["response"]
        operation["error"] = {"code": errors.INVALID_ARGUMENT, "message": problem}
        return operation
    operation["response"] = {
        "@type": "type.googleapis.com/google.cloud.aiplatform.v1.UploadModelResponse",
        "model": version.name,
        "modelVersionId": version.version_id,
    }
    return operation


def model_json(model: aiplatform_v1.Model, enum_ints: bool = False) -> str:
    """A Model as the REST API returns it: camelCase, defaults left out."""
    return rest_json(model, enum_ints)


def model_dict(model: aiplatform_v1.Model) -> dict:
    """A Model's JSON as a dict, plus `model` (its ID): what list filters match against."""
    return {**json.loads(model_json(model)), "model": model.name.rpartition("/")[2]}


def _check_ids(request: aiplatform_v1.UploadModelRequest) -> None:
    if request.model_id and not MODEL_ID.fullmatch(request.model_id):
        raise errors.invalid_argument(
            f"modelId {request.model_id!r} is invalid: use up to 63 characters of [a-z0-9_-], "
            "starting with a letter or underscore."
        )
    if request.parent_model:
        parse_model_name(request.parent_model.partition("@")[0])
        if request.model_id:
            raise errors.invalid_argument(
                "modelId cannot be set with parentModel: a new version keeps its model's ID."
            )


def check_aliases(aliases: list[str]) -> None:
    """INVALID_ARGUMENT unless each alias is well formed and none repeats."""
    for alias in aliases:
        if not ALIAS.fullmatch(alias):
            raise errors.invalid_argument(
                f"model.versionAliases: {alias!r} is not a valid alias "
                "([a-z][a-zA-Z0-9-]{0,126}[a-z0-9]; numbers are version IDs)."
            )
    if len(set(aliases)) != len(aliases):
        raise errors.invalid_argument(f"model.versionAliases has duplicates: {aliases}.")


def check_labels(labels: dict[str, str]) -> None:
    """INVALID_ARGUMENT unless every label key and value is well formed."""
    for key, value in labels.items():
        if not LABEL_KEY.fullmatch(key) or not LABEL_VALUE.fullmatch(value):
            raise errors.invalid_argument(
                f"model.labels: {key!r}: {value!r} is invalid: keys start with a lowercase "
                "letter; keys and values have at most 63 of [a-z0-9_-]."
            )
