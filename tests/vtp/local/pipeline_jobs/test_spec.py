"""What a PipelineJob must hold to run locally, and the typed arguments its run gets."""

import pytest
from google.cloud.aiplatform_v1 import PipelineJob

from vtp.local.base import errors
from vtp.local.pipeline_jobs import spec

SPEC = {
    "pipelineInfo": {"name": "p"},
    "root": {
        "inputDefinitions": {
            "parameters": {
                "count": {"parameterType": "NUMBER_INTEGER"},
                "rate": {"parameterType": "NUMBER_DOUBLE", "defaultValue": 0.1},
                "name": {"parameterType": "STRING", "isOptional": True},
                "flags": {"parameterType": "LIST", "defaultValue": []},
                "config": {"parameterType": "STRUCT", "defaultValue": {}},
                "on": {"parameterType": "BOOLEAN", "defaultValue": False},
            }
        }
    },
}


def test_values_arrive_as_json_and_leave_typed_for_kfp():
    values = {"count": 3.0, "rate": 1, "flags": ["a"], "config": {"k": 1.0}, "on": True}
    arguments = spec.run_arguments(SPEC, values)
    assert arguments == {"count": 3, "rate": 1.0, "flags": ["a"], "config": {"k": 1.0}, "on": True}
    assert type(arguments["count"]) is int and type(arguments["rate"]) is float


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({}, "parameterValues['count'] is required"),
        ({"count": 1, "speed": 2}, "parameterValues['speed']: the pipeline has no such parameter"),
        ({"count": 1.5}, "expected a whole number"),
        ({"count": True}, "expected a NUMBER_INTEGER value, got bool"),
        ({"count": 1, "on": "yes"}, "expected a BOOLEAN value, got str"),
        ({"count": 1, "flags": {"a": 1}}, "expected a LIST value"),
        ({"count": float("inf")}, "expected a whole number"),
    ],
)
def test_bad_values_are_refused_naming_the_parameter(values, message):
    with pytest.raises(errors.ApiError, match=message.replace("[", r"\[").replace("]", r"\]")):
        spec.run_arguments(SPEC, values)


def job(**runtime: object) -> PipelineJob:
    return PipelineJob(pipeline_spec=SPEC, runtime_config=runtime)


def test_the_pipeline_root_is_the_output_directory_or_the_spec_default(tmp_path):
    assert spec.pipeline_root(job(gcs_output_directory="gs://b/r"), SPEC, tmp_path) == "gs://b/r"
    with_default = {**SPEC, "defaultPipelineRoot": "gs://b/default"}
    assert spec.pipeline_root(job(), with_default, tmp_path) == "gs://b/default"
    with pytest.raises(errors.ApiError, match="gcsOutputDirectory is required"):
        spec.pipeline_root(job(), SPEC, tmp_path)


def test_runtime_settings_the_service_cannot_honour_are_refused():
    with pytest.raises(errors.ApiError, match="parameters is the pre-KFP-2 form"):
        spec.check_runtime(job(parameters={"count": {"int_value": 1}}))
    with pytest.raises(errors.ApiError, match="inputArtifacts is not supported"):
        spec.check_runtime(job(input_artifacts={"data": {"artifact_id": "1"}}))
    assert spec.pipeline_spec(job()) == SPEC


def test_the_spec_is_checked_whole_naming_the_field():
    """Any field of the compiled spec of the wrong type (here deep in an executor) is refused
    naming it, before the service's other checks read the spec (`vtp.engine.spec_check`)."""
    executors = {"exec-a": {"container": {"image": "i", "command": "python -c 1"}}}
    compiled = {
        **SPEC,
        "root": {"dag": {"tasks": {"a": {"componentRef": {"name": "comp-a"}}}}},
        "components": {"comp-a": {"executorLabel": "exec-a"}},
        "deploymentSpec": {"executors": executors},
    }
    with pytest.raises(errors.ApiError) as refused:
        spec.pipeline_spec(PipelineJob(pipeline_spec=compiled))
    assert refused.value.message.startswith(
        "pipelineJob.pipelineSpec.deploymentSpec.executors.exec-a.container.command: "
        "expected a list"
    )


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (b'{"runtimeConfig": {"parameterValues": 1}}', "pipelineJob.runtimeConfig.parameterValues"),
        (b'{"runtimeConfig": "x"}', "pipelineJob.runtimeConfig: expected a mapping"),
        (b'{"displayName": []}', "pipelineJob.displayName: expected a string"),
        (b'{"pipelineSpec": [1]}', "pipelineJob.pipelineSpec: expected a mapping"),
    ],
)
def test_a_request_field_of_the_wrong_type_is_named(body, named):
    """Protobuf's own message names the type, or nothing (`'int' object is not iterable`)."""
    with pytest.raises(errors.ApiError) as refused:
        spec.parse_request(PipelineJob, body, "pipelineJob")
    assert named in refused.value.message


def test_numbers_json_cannot_hold_are_refused_naming_the_part():
    job = PipelineJob(pipeline_spec=SPEC)
    job._pb.runtime_config.parameter_values["count"].number_value = float("nan")
    with pytest.raises(errors.ApiError, match=r"pipelineJob\.runtimeConfig: every number"):
        spec.parameter_values(job)
