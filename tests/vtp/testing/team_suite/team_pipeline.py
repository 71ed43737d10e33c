"""The team's pipelines: make examples, then count them; and train, as a CustomJob."""

import team_jobs
from google_cloud_pipeline_components.v1.custom_job import CustomTrainingJobOp
from kfp import compiler, dsl
from kfp.dsl import Dataset, Input, Output

TRAINER_POOL = {
    "machine_spec": {"machine_type": "n1-standard-4"},
    "replica_count": 1,
    "container_spec": {"image_uri": team_jobs.IMAGE, "command": ["python", "-m", "team_trainer"]},
}


@dsl.component(base_image="python:3.11")
def make_examples(count: int, examples: Output[Dataset]):
    with open(examples.path, "w") as out:
        out.writelines(f"{i},{3 * i}\n" for i in range(count))


@dsl.component(base_image="python:3.11")
def count_examples(examples: Input[Dataset]) -> int:
    with open(examples.path) as lines:
        return sum(1 for _ in lines)


@dsl.pipeline(name="team-pipeline")
def team_pipeline(count: int = 10):
    made = make_examples(count=count)
    count_examples(examples=made.outputs["examples"])


def compile_to(path: str) -> str:
    compiler.Compiler().compile(team_pipeline, path)
    return path


@dsl.pipeline(name="team-training")
def training_pipeline(project: str, output_dir: str, location: str = "us-central1"):
    """Train with Google's own component: the task creates the team's CustomJob on Vertex."""
    CustomTrainingJobOp(
        project=project,
        location=location,
        display_name="team-train",
        worker_pool_specs=[TRAINER_POOL],
        base_output_directory=output_dir,
    )


def compile_training_to(path: str) -> str:
    compiler.Compiler().compile(training_pipeline, path)
    return path
