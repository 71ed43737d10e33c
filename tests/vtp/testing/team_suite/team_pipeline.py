"""The team's pipeline: make examples, then count them."""

from kfp import compiler, dsl
from kfp.dsl import Dataset, Input, Output


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
