"""`vtp.run.spec_inputs`: what a compiled pipeline reads from Cloud Storage, traced through the
spec kfp writes (nested DAGs, conditions, loops, values folded into constants, importers), and
the output locations it knows, each one a name GCPC's or our components declare."""

import importlib
from pathlib import Path
from typing import Any

import pytest
from kfp import compiler, dsl
from kfp.dsl import Dataset

from vtp.run import spec_inputs
from vtp.run.spec_inputs import OUTPUT_LOCATIONS, READ_INPUTS, Read

GCPC = "google_cloud_pipeline_components"
DECLARED_BY = {
    "output_root": [
        "vtp.components.custom_job:custom_job",
        "vtp.components.hyperparameter_tuning:hyperparameter_tuning",
    ],
    "staging_uri": ["vtp.components.autopackage:autopackage"],
    "base_output_directory": [
        f"{GCPC}.v1.custom_job:CustomTrainingJobOp",
        f"{GCPC}.v1.hyperparameter_tuning_job:HyperparameterTuningJobRunOp",
    ],
    "gcs_destination_output_uri_prefix": [f"{GCPC}.v1.batch_predict_job:ModelBatchPredictOp"],
    "gcs_output_directory": [f"{GCPC}.v1.batch_predict_job:ModelBatchPredictOp"],
    "batch_predict_gcs_destination_output_uri": [
        f"{GCPC}.v1.model_evaluation:evaluation_automl_tabular_pipeline"
    ],
    "output_dir": [f"{GCPC}.v1.dataset:ImageDatasetExportDataOp"],
    "artifact_destination": [f"{GCPC}.v1.model:ModelExportOp"],
    "root_dir": [f"{GCPC}.v1.automl.tabular:CvTrainerOp"],
    "staging_location": [f"{GCPC}.v1.dataflow:DataflowFlexTemplateJobOp"],
    "temp_location": [f"{GCPC}.v1.dataflow:DataflowPythonJobOp"],
    "save_heap_dumps_to_gcs_path": [f"{GCPC}.v1.dataflow:DataflowFlexTemplateJobOp"],
    "model_destination_path": [f"{GCPC}.v1.bigquery:BigqueryExportModelJobOp"],
    "judgments_dir": [
        f"{GCPC}._implementation.llm.model_evaluation_text_generation_pairwise"
        ":model_evaluation_text_generation_pairwise"
    ],
    "output_text_gcs_dir": [f"{GCPC}._implementation.model_evaluation:ChunkingOp"],
    "output_error_file_path": [f"{GCPC}._implementation.model_evaluation:ChunkingOp"],
}
"""Where each output location's name comes from: components that declare it."""
NOT_A_COMPONENT_INPUT = {"output_uri_prefix", "pipeline_root"}
"""Vertex's field (CustomJobSpec.baseOutputDirectory.outputUriPrefix) and kfp's pipeline root."""


def component(where: str) -> Any:
    module, _, name = where.partition(":")
    return getattr(importlib.import_module(module), name).component_spec


@pytest.mark.parametrize("name", sorted(DECLARED_BY))
def test_each_output_location_is_a_name_the_components_declare(name: str) -> None:
    for where in DECLARED_BY[name]:
        spec = component(where)
        assert name in {**(spec.inputs or {}), **(spec.outputs or {})}, where


def test_the_list_is_the_components_names_and_no_guess() -> None:
    assert set(OUTPUT_LOCATIONS) == set(DECLARED_BY) | NOT_A_COMPONENT_INPUT
    # GCPC inputs with `output` in their names that are read, not written:
    read = {"inference_output_uri", "evaluated_annotation_output_uri", "output_adapter_path"}
    assert not read & OUTPUT_LOCATIONS
    assert "source_uri" in component("vtp.components.autopackage:autopackage").inputs
    assert "gcs_source" in READ_INPUTS


@dsl.component(base_image="python:3.11")
def read(data: str) -> str:
    return data


@dsl.component(base_image="python:3.11")
def write(output_root: str) -> str:
    return output_root


POOLS = [{"python_package_spec": {"package_uris": ["gs://code/a.tgz"]}}]


@dsl.component(base_image="python:3.11")
def install(pools: list = POOLS):
    print(pools)


@dsl.pipeline(name="inner")
def inner(where: str):
    write(output_root=where)


def compiled(pipeline: Any, tmp_path: Path) -> dict[str, Any]:
    import yaml

    compiler.Compiler().compile(pipeline, str(tmp_path / "p.yaml"))
    return yaml.safe_load((tmp_path / "p.yaml").read_text())


def test_parameters_are_traced_through_dags_loops_and_constants(tmp_path: Path) -> None:
    @dsl.pipeline(name="traced")
    def traced(
        bucket: str, runs: str, nested: str, both: str, compared: str, shards: list, outs: list
    ):
        read(data=f"{bucket}/train.csv")  # folded into a constant: reads under `bucket`
        write(output_root=f"{runs}/today")
        with dsl.If(compared == "gs://x"):  # only compared: no task reads it
            inner(where=nested)  # a pipeline as a component: its DAG
            read(data=both)
            write(output_root=both)
        with dsl.ParallelFor(shards) as shard:
            read(data=shard)
        with dsl.ParallelFor(outs) as out:
            write(output_root=out)

    values = {
        "bucket": "gs://b", "runs": "gs://r", "nested": "gs://n", "both": "gs://both",
        "compared": "gs://c", "shards": ["gs://s/0", "gs://s/1"], "outs": ["gs://o/0"],
    }  # fmt: skip
    found = spec_inputs.reads(compiled(traced, tmp_path), values)
    assert found == [
        Read("both", "gs://both", "both"),  # read by one task, written by another: an input
        Read("bucket", "gs://b", "bucket"),
        Read("compared", "gs://c", "compared"),  # reaching no task's input: an input still
        Read("shards", "gs://s/0", "shards"),
        Read("shards", "gs://s/1", "shards"),
    ]  # not runs, nested, outs: each only reaches where `write` writes


def test_defaults_count_and_an_importer_reads_whatever_its_name(tmp_path: Path) -> None:
    @dsl.pipeline(name="defaults")
    def defaults(output_root: str, data: str = "gs://d/default.csv"):
        read(data=data)
        dsl.importer(artifact_uri=output_root, artifact_class=Dataset)

    found = spec_inputs.reads(compiled(defaults, tmp_path), {"output_root": "gs://i/x"})
    assert found == [
        Read("data", "gs://d/default.csv", "data"),
        Read("output_root", "gs://i/x", "output_root"),
    ]


def test_constants_are_read_by_their_fields(tmp_path: Path) -> None:
    from google_cloud_pipeline_components.v1.custom_job import CustomTrainingJobOp
    from google_cloud_pipeline_components.v1.dataset import ImageDatasetCreateOp

    pool = {
        "machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": 1,
        "pythonPackageSpec": {"executorImageUri": "python:3.11", "packageUris": ["gs://code/b.tgz"],
                              "pythonModule": "trainer.task", "args": ["--data=gs://d/args"]},
    }  # fmt: skip

    @dsl.pipeline(name="constants")
    def constants(project: str = "local"):
        install()  # its default pools
        CustomTrainingJobOp(project=project, display_name="t", worker_pool_specs=[pool],
                            base_output_directory="gs://out/x")  # fmt: skip
        ImageDatasetCreateOp(
            project=project, display_name="images", gcs_source="gs://d/images/*.jsonl",
            import_schema_uri="gs://google-cloud-aiplatform/schema/dataset/ioformat/x.yaml",
        )  # fmt: skip
        read(data="gs://d/constant.csv")  # a constant in a field not known to be read
        dsl.importer(artifact_uri="gs://m/model", artifact_class=Dataset)

    found = spec_inputs.reads(compiled(constants, tmp_path), {})
    assert sorted(str(one) for one in found) == [
        "custom-training-job: worker_pool_specs[0].pythonPackageSpec.packageUris[0] = "
        "gs://code/b.tgz",
        "image-dataset-create: gcs_source = gs://d/images/*.jsonl",
        "importer: artifact_uri = gs://m/model",
        "install: pools[0].python_package_spec.package_uris[0] = gs://code/a.tgz",
    ]  # not base_output_directory, import_schema_uri, the package's args, read's constant


def test_a_wildcard_is_present_when_it_matches(tmp_path: Path) -> None:
    (tmp_path / "d" / "images").mkdir(parents=True)
    assert not spec_inputs.present(tmp_path, "gs://d/images/*.jsonl")
    (tmp_path / "d" / "images" / "a.jsonl").write_text("{}")
    assert spec_inputs.present(tmp_path, "gs://d/images/*.jsonl")
    assert spec_inputs.present(tmp_path, "gs://d/images/a.jsonl")
    assert not spec_inputs.present(tmp_path, "gs://d/images/b.jsonl")
    assert not spec_inputs.present(tmp_path, "gs://d/../../etc/passwd")
