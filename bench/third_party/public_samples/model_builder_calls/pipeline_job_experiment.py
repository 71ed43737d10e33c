"""model-builder's snippets that put a pipeline run in an experiment: submitted with
`experiment=`, and logged to an experiment run (started first) once it is done."""

import log_pipeline_job_sample
import log_pipeline_job_to_experiment_sample
from google.cloud import aiplatform
from kfp import compiler, dsl


@dsl.component
def square(x: float) -> float:
    return x * x


@dsl.pipeline(name="mb-square")
def square_pipeline(x: float = 3.0):
    square(x=x)


compiler.Compiler().compile(square_pipeline, "square.yaml")
where = {"project": "vtp-samples", "location": "us-central1"}
ROOT = "gs://vtp-samples-model-builder/pipeline_root"
log_pipeline_job_to_experiment_sample.log_pipeline_job_to_experiment_sample(
    experiment_name="mb-pipelines",
    pipeline_job_display_name="mb-square-1",
    template_path="square.yaml",
    pipeline_root=ROOT,
    parameter_values={"x": 2.0},
    **where,
)
job = aiplatform.PipelineJob(
    display_name="mb-square-2",
    template_path="square.yaml",
    pipeline_root=ROOT,
    parameter_values={"x": 4.0},
    job_id="mb-square-logged",  # not the first job's id
)
job.run()
aiplatform.init(experiment="mb-pipelines", **where)
aiplatform.start_run("run-with-pipeline")  # the snippet resumes a run: it must exist
log_pipeline_job_sample.log_pipeline_job_sample(
    experiment_name="mb-pipelines", run_name="run-with-pipeline", pipeline_job=job, **where
)
for listed in aiplatform.PipelineJob.list(filter='display_name="mb-square-1"'):
    listed.wait()
frame = aiplatform.get_experiment_df("mb-pipelines")
print(frame)
assert len(frame) >= 2, frame
