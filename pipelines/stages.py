"""What the pipelines share: the trainer's task in its flags, and the tail that evaluates
checkpoints, then exports and registers the best if it is good enough.

`evaluate_and_register` is a plain function that adds tasks to the pipeline being defined (kfp
allows that inside a `@dsl.pipeline` body), so the three pipelines cannot drift apart in how they
gate a release. `with_task` puts the pipeline's `task` parameter into the trainer's flags, so the
trials and the final training of the tune pipeline cannot train different tasks.
"""

from typing import Any

from kfp import dsl

from components.deploy_model import deploy_model
from components.evaluate_checkpoints import evaluate_checkpoints
from components.export_model import export_model
from components.upload_model import upload_model
from vtp.images import COMPONENT_IMAGE


@dsl.component(base_image=COMPONENT_IMAGE, install_kfp_package=False)
def with_task(task: str, args: list) -> list:
    """The trainer's flags: `--task=<task>` ahead of `args`; fails if `args` name another task."""
    from vtp.vertex.task_flags import task_args  # not this module: its decorators need kfp's
    # full SDK, and a task's runtime (`_KFP_RUNTIME`) has only the executor's part of kfp

    return task_args(task, args)


def evaluate_and_register(
    checkpoints: Any,
    project: Any,
    location: Any,
    metric: Any,
    threshold: Any,
    model_display_name: Any,
    parent_model: Any,
    last_k: Any = 0,
    deploy: Any = False,
    endpoint: Any = "",
) -> None:
    """evaluate_checkpoints -> [metric passes the threshold] export_model -> upload_model
    -> [deploy] deploy_model (to `endpoint`, or a new one), smoke-tested with one example.

    Arguments are pipeline channels (or constants); `checkpoints` is an Artifact channel.
    """
    evaluation = evaluate_checkpoints(
        checkpoints=checkpoints, last_k=last_k, metric=metric, threshold=threshold
    )
    with dsl.If(evaluation.outputs["passed"] == True, name="metric-passes"):  # noqa: E712
        exported = export_model(checkpoint=evaluation.outputs["best_checkpoint"])
        uploaded = upload_model(
            project=project,
            location=location,
            display_name=model_display_name,
            model=exported.outputs["model"],
            parent_model=parent_model,
        )
        if deploy is not False:  # a pipeline without the deploy stage compiles without it
            with dsl.If(deploy == True, name="deploy"):  # noqa: E712
                deploy_model(
                    project=project,
                    location=location,
                    model=uploaded.outputs["vertex_model"],
                    endpoint_name=endpoint,
                    example_model=exported.outputs["model"],
                )
