"""KFP's own cache-key tests, ported: `kubeflow/pipelines` 2.17.0,
backend/src/v2/cacheutils/cache_test.go (`TestGenerateCacheKey`, `TestGenerateFingerPrint`,
`TestGenerateFingerPrint_ConsidersPVCNames`) and backend/src/v2/driver/cache_test.go
(`Test_getFingerPrint`: the command line is the container's command then its args, the image
its image). The fingerprints are KFP's literal expected values, so the key is KFP's byte for
byte. Then what the engine adds (`task_cache`): the environment, the pipeline's scope, and
the line naming what changed."""

import pytest
from google.protobuf import json_format
from kfp.pipeline_spec import pipeline_spec_pb2

from vtp.engine import task_cache
from vtp.engine.cache import cache_key, fingerprint, go_json

DATASET_SCHEMA = (
    "title: kfp.Dataset\ntype: object\nproperties:\n  payload_format:\n    type: string\n"
    "  container_format:\n    type: string\n"
)
MODEL_SCHEMA = (
    "title: kfp.Model\ntype: object\nproperties:\n  framework:\n    type: string\n"
    "  framework_version:\n    type: string\n"
)
MODEL_SPEC = {
    "name": "model",
    "type": {"instanceSchema": MODEL_SCHEMA},
    "metadata": {"name": "model"},
}
METRICS_SPEC = {
    "name": "metrics",
    "type": {"schemaTitle": "kfp.Metrics"},
    "metadata": {"name": "metrics"},
}
PARAMETERS = {"message": "Some string value", "num_steps": 5}

# TestGenerateFingerPrint's base key, as protojson writes it.
BASE_KEY = {
    "inputArtifactNames": {
        "dataset_one": {"artifactNames": ["1"]},
        "dataset_two": {"artifactNames": ["2"]},
    },
    "inputParameterValues": PARAMETERS,
    "outputArtifactsSpec": {"model": MODEL_SPEC, "metrics": METRICS_SPEC},
    "outputParametersSpec": {"output_parameter_one": "STRING", "output_parameter_two": "INT"},
    "containerSpec": {"cmdArgs": ["sh", "ec", "test"], "image": "python:3.11"},
}


def test_generate_cache_key_correctly() -> None:
    """TestGenerateCacheKey, "Generate CacheKey Correctly": input artifacts by name only (not
    URI), output artifacts without their URIs, output parameters by type."""
    got = cache_key(
        PARAMETERS,
        {"dataset_one": ["1"], "dataset_two": ["2"]},
        {"model": MODEL_SPEC, "metrics": METRICS_SPEC},
        {"output_parameter_one": "STRING", "output_parameter_two": "INT"},
        ["sh", "ec", "test"],
        "python:3.11",
    )
    assert got == BASE_KEY


def test_generate_cache_key_with_pvc_names() -> None:
    got = cache_key(
        PARAMETERS,
        {"dataset_one": ["1"]},
        {"model": MODEL_SPEC},
        {"output_parameter_one": "STRING"},
        ["sh", "ec", "test"],
        "python:3.11",
        ["workspace-pvc", "data-pvc"],
    )
    assert got["containerSpec"] == {
        "cmdArgs": ["sh", "ec", "test"],
        "image": "python:3.11",
        "pvcNames": ["workspace-pvc", "data-pvc"],
    }
    assert got["inputArtifactNames"] == {"dataset_one": {"artifactNames": ["1"]}}


@pytest.mark.parametrize(
    ("key", "equal", "expected"),
    [
        (BASE_KEY, True, "b498530c9016917298999ec0b01f364a180f8a3862bea0fa672a383ca3f22e4e"),
        (
            {
                "inputArtifactNames": {"dataset": {"artifactNames": ["10"]}},
                "outputParametersSpec": {"output_parameter": "DOUBLE"},
                "containerSpec": {"cmdArgs": ["sh", "ec", "run"], "image": "python:3.11"},
            },
            False,
            "3d9a2a778fa3174c6cfc6e639c507c265b5f21ef6e5b1dd70b236462cc6da464",
        ),
    ],
    ids=["Generated Same FingerPrint", "Generated Different FingerPrint"],
)
def test_generate_fingerprint(key: dict, equal: bool, expected: str) -> None:
    assert (fingerprint(BASE_KEY) == fingerprint(key)) is equal
    assert fingerprint(key) == expected


def test_generate_fingerprint_considers_pvc_names() -> None:
    def key(*pvcs: str) -> dict:
        return cache_key({}, {"dataset_one": ["1"]}, {}, {"output_parameter_one": "STRING"},
                         ["sh", "ec", "test"], "python:3.11", pvcs)  # fmt: skip

    base, with_pvcs = fingerprint(key()), fingerprint(key("workspace-pvc", "data-pvc"))
    assert base != with_pvcs
    assert with_pvcs == fingerprint(key("workspace-pvc", "data-pvc"))
    assert with_pvcs != fingerprint(key("data-pvc", "workspace-pvc", "extra"))


def test_numbers_and_strings_are_written_as_go_writes_them() -> None:
    """KFP re-marshals with Go's encoding/json: its float64 format and its HTML escapes."""
    assert go_json({"b": [5.0, 0.5, 1e-7, 1e21, 1e-6, 123456789.0], "a": "<&>"}) == (
        '{"a":"\\u003c\\u0026\\u003e","b":[5,0.5,1e-7,1e+21,0.000001,123456789]}'
    )


def _component_and_executor(env: dict[str, str] | None = None):
    """A component with a parameter output and an artifact output, and its container."""
    component = json_format.ParseDict(
        {
            "executorLabel": "exec-train",
            "inputDefinitions": {"parameters": {"n": {"parameterType": "NUMBER_INTEGER"}}},
            "outputDefinitions": {
                "parameters": {"Output": {"parameterType": "STRING"}},
                "artifacts": {
                    "model": {
                        "artifactType": {"schemaTitle": "system.Model", "schemaVersion": "0.0.1"}
                    }
                },
            },
        },
        pipeline_spec_pb2.ComponentSpec(),
    )
    container = {
        "image": "python:3.11",
        "command": ["sh", "-c", "train"],
        "args": ["--n", "{{$.inputs.parameters['n']}}"],
    }
    if env:
        container["env"] = [{"name": k, "value": v} for k, v in env.items()]
    executor = json_format.ParseDict(
        {"container": container}, pipeline_spec_pb2.PipelineDeploymentConfig.ExecutorSpec()
    )
    return component, executor


def test_a_tasks_key_is_kfps_of_its_executor_input() -> None:
    """Test_getFingerPrint: cmdArgs are the command then the args, unresolved; the image; the
    outputs' specs and types; every resolved input, an undeclared pipelinechannel one too."""
    component, executor = _component_and_executor()
    parameters = {"n": 1, "pipelinechannel--make-Output": "--epochs=1"}
    made = task_cache.key("p", component, executor, parameters, {})
    assert made.document == {
        "inputParameterValues": parameters,
        "outputArtifactsSpec": {
            "model": {
                "name": "model",
                "type": {"schemaTitle": "system.Model", "schemaVersion": "0.0.1"},
            }
        },
        "outputParametersSpec": {"Output": "STRING"},
        "containerSpec": {
            "image": "python:3.11",
            "cmdArgs": ["sh", "-c", "train", "--n", "{{$.inputs.parameters['n']}}"],
        },
    }
    other = task_cache.key(
        "p", component, executor, {**parameters, "pipelinechannel--make-Output": "--epochs=2"}, {}
    )
    assert other.entry != made.entry


def test_the_engine_keys_the_environment_and_scopes_to_the_pipeline() -> None:
    component, executor = _component_and_executor()
    _, with_env = _component_and_executor({"SEED": "1"})
    plain = task_cache.key("p", component, executor, {"n": 1}, {})
    assert task_cache.key("p", component, with_env, {"n": 1}, {}).entry != plain.entry
    assert task_cache.key("q", component, executor, {"n": 1}, {}).entry != plain.entry
    assert task_cache.key("p", component, executor, {"n": 1}, {}).entry == plain.entry


def test_input_artifacts_are_keyed_by_name_else_by_uri() -> None:
    component, executor = _component_and_executor()
    named = {"name": "projects/p/locations/l/metadataStores/default/artifacts/1", "uri": "gs://a"}
    renamed = {**named, "name": named["name"][:-1] + "2"}
    unnamed = {"name": "artifact", "uri": "gs://b"}
    keys = {
        task_cache.key("p", component, executor, {}, {"data": [a]}).entry
        for a in (named, renamed, unnamed, {**unnamed, "uri": "gs://c"})
    }
    assert len(keys) == 4


def test_a_miss_names_what_changed() -> None:
    component, executor = _component_and_executor()
    before = task_cache.key("p", component, executor, {"n": 1, "pipelinechannel--x": "a"}, {})
    after = task_cache.key("p", component, executor, {"n": 1, "pipelinechannel--x": "b"}, {})
    assert task_cache.changed(before.document, after.document) == [
        "inputParameterValues.pipelinechannel--x"
    ]
