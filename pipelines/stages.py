"""What the pipelines share: the trainer's task in its flags, and the tail that evaluates
checkpoints, then exports and registers the best if it is good enough.

`evaluate_and_register` is a plain function that adds tasks to the pipeline being defined (kfp
allows that inside a `@dsl.pipeline` body), so the three pipelines cannot drift apart in how they
gate a release. `with_task` puts the pipeline's `task` parameter into the trainer's flags, so the
trials and the final training of the tune pipeline cannot train different tasks. `inputs_for`
hands a pipeline's parameters on to the same-named inputs of the jobs it runs.
"""

from collections.abc import Mapping
from typing import Any

from kfp import dsl
from kfp.dsl.base_component import BaseComponent

from vtp.components.deploy_model import deploy_model
from vtp.components.evaluate_checkpoints import evaluate_checkpoints
from vtp.components.export_model import export_model
from vtp.components.upload_model import upload_model
from vtp.images import COMPONENT_IMAGE


@dsl.component(base_image=COMPONENT_IMAGE, install_kfp_package=False)
def with_task(task: str, args: list) -> list:
    """The trainer's flags: `--task=<task>` ahead of `args`; fails if `args` name another task."""
    from vtp.vertex.task_flags import task_args  # not this module: its decorators need kfp's
    # full SDK, and a task's runtime (`_KFP_RUNTIME`) has only the executor's part of kfp

    return task_args(task, args)


def inputs_for(
    component: BaseComponent, pipeline: Mapping[str, Any], **given: Any
) -> dict[str, Any]:
    """The arguments of a call to `component` in a pipeline: `given`, and each of the pipeline's
    parameters (`pipeline`, by name) that the component has an input of the same name for.

    A pipeline's parameters carry the names of the inputs they feed (project, location,
    output_root, worker_pool_specs, timeout, ...), so a job's call lists only what the pipeline
    decides itself; a parameter that must not go to the same-named input (tune's
    worker_pool_specs, which are the final job's, not the trials') is overridden in `given`.
    """
    inputs = component.component_spec.inputs or {}
    passed = {name: value for name, value in pipeline.items() if name in inputs}
    return {**passed, **given}


def evaluate_and_register(checkpoints: Any, pipeline: Mapping[str, Any]) -> None:
    """evaluate_checkpoints -> [metric passes the threshold] export_model -> upload_model
    -> [deploy] deploy_model (to `endpoint`, or a new one), smoke-tested with one example.

    `checkpoints` is an Artifact channel. `pipeline` holds the calling pipeline's parameters
    by name (`dict(locals())`, taken first thing in its body), which this stage reads: project,
    location, metric, threshold, model_display_name and parent_model, and where the pipeline
    has them, last_k (else every checkpoint is evaluated), deploy and endpoint (else there is no
    deploy stage). The pipelines name these parameters alike, so each hands them all on in one
    argument instead of repeating the list of them.
    """
    project, location = pipeline["project"], pipeline["location"]
    evaluation = evaluate_checkpoints(
        checkpoints=checkpoints,
        last_k=pipeline.get("last_k", 0),
        metric=pipeline["metric"],
        threshold=pipeline["threshold"],
    )
    with dsl.If(evaluation.outputs["passed"] == True, name="metric-passes"):  # noqa: E712
        exported = export_model(checkpoint=evaluation.outputs["best_checkpoint"])
        uploaded = upload_model(
            project=project,
            location=location,
            display_name=pipeline["model_display_name"],
            model=exported.outputs["model"],
            parent_model=pipeline["parent_model"],
        )
        if "deploy" in pipeline:  # a pipeline without the deploy stage compiles without it
            with dsl.If(pipeline["deploy"] == True, name="deploy"):  # noqa: E712
                deploy_model(
                    project=project,
                    location=location,
                    model=uploaded.outputs["vertex_model"],
                    endpoint_name=pipeline["endpoint"],
                    example_model=exported.outputs["model"],
                )
