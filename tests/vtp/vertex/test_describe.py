"""`vtp.vertex.describe`: which resource a description is, and its output-only fields as
aiplatform_v1 documents them (the rules gcloud-style `--config` checks apply agree)."""

import json
from pathlib import Path

import pytest
from google.cloud import aiplatform_v1

from vtp.vertex import describe, study, validation
from vtp.vertex.protodict import SpecError


def camel(message: type, names: frozenset[str]) -> set[str]:
    fields = message.pb().DESCRIPTOR.fields_by_name
    return {fields[name].json_name for name in names}


def test_output_only_fields_are_those_vertex_documents() -> None:
    job = describe.output_only(aiplatform_v1.CustomJob)
    assert camel(aiplatform_v1.CustomJob, job) == set(validation.OUTPUT_ONLY_FIELDS)
    tuning = describe.output_only(aiplatform_v1.HyperparameterTuningJob)
    assert camel(aiplatform_v1.HyperparameterTuningJob, tuning) == set(study._OUTPUT_ONLY)
    assert {"job_detail", "state", "name"} <= describe.output_only(aiplatform_v1.PipelineJob)
    assert "pipeline_spec" not in describe.output_only(aiplatform_v1.PipelineJob)
    pipeline = describe.output_only(aiplatform_v1.TrainingPipeline)
    assert "training_task_metadata" in pipeline and "training_task_inputs" not in pipeline


@pytest.mark.parametrize(
    ("document", "kind"),
    [
        ({"name": "projects/1/locations/l/customJobs/2", "pipelineSpec": {}}, "CustomJob"),
        ({"name": "projects/1/locations/l/trainingPipelines/2"}, "TrainingPipeline"),
        ({"job_spec": {}}, "CustomJob"),
        ({"trialJobSpec": {}, "study_spec": {}}, "HyperparameterTuningJob"),
        ({"pipelineSpec": {}}, "PipelineJob"),
        ({"trainingTaskDefinition": "gs://x"}, "TrainingPipeline"),
        ({"studySpec": {}}, None),
        ({"name": 3}, None),
        ([], None),
    ],
)
def test_kind_by_the_name_s_collection_else_by_fields(document: object, kind: str | None) -> None:
    found = describe.kind_of(document)
    assert (found.name if found else None) == kind


def test_request_drops_output_only_and_unknown_fields_and_names_them() -> None:
    described = describe.request(
        {
            "name": "projects/1/locations/l/customJobs/2",
            "display_name": "x",
            "state": 5,
            "job_spec": {"worker_pool_specs": [{"machine_spec": {"accelerator_type": 5}}]},
            "from_a_newer_vertex": True,
        },
        describe.CUSTOM_JOB,
    )
    assert described.body == {
        "displayName": "x",
        "jobSpec": {"workerPoolSpecs": [{"machineSpec": {"acceleratorType": "NVIDIA_TESLA_T4"}}]},
    }
    assert (described.dropped, described.unknown) == (("name", "state"), ("from_a_newer_vertex",))
    line = describe.summary_of("job.json", described)
    assert line == (
        "vtp: job.json is a CustomJob (projects/1/locations/l/customJobs/2); dropped "
        "output-only fields: name, state; dropped fields this SDK does not know: "
        "from_a_newer_vertex"
    )


def test_a_field_of_the_wrong_type_is_named() -> None:
    document = {"jobSpec": {"workerPoolSpecs": [{"replicaCount": []}]}}
    with pytest.raises(SpecError, match=r"jobSpec\.workerPoolSpecs\[0\]\.replicaCount"):
        describe.request(document, describe.CUSTOM_JOB)


def test_read_takes_json_or_yaml(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps({"jobSpec": {}}))
    (tmp_path / "a.yaml").write_text("jobSpec: {}\n")
    (tmp_path / "bad").write_text("not json")
    assert describe.read(tmp_path / "a.json") == describe.read(tmp_path / "a.yaml")
    with pytest.raises(describe.DescriptionError, match="is not JSON"):
        describe.read(tmp_path / "bad")
