"""The `custom_job` component: run a (distributed) training CustomJob on Vertex AI.

The body runs in the project's image; everything it does lives in
`vtp.launchers.custom_job`, tested on its own against the local service.
"""

# mypy: disable-error-code="valid-type"
# (kfp's own annotations, OutputPath(str) and NamedTuple("Outputs", [...]), are calls, not types)

from kfp import dsl
from kfp.dsl import Artifact, Model, Output, OutputPath

from vtp.images import COMPONENT_IMAGE


@dsl.component(base_image=COMPONENT_IMAGE, install_kfp_package=False)
def custom_job(
    project: str,
    location: str,
    display_name: str,
    output_root: str,
    model: Output[Model],
    checkpoints: Output[Artifact],
    gcp_resources: OutputPath(str),
    worker_pool_specs: list = [],
    job_spec: dict = {},
    args: list = [],
    parameters: dict = {},
    timeout: str = "",
    restart_job_on_worker_restart: bool = False,
    scheduling_strategy: str = "",
    disable_retries: bool = False,
    service_account: str = "",
    network: str = "",
    poll_interval_seconds: float = 10.0,
    pipeline_run: str = dsl.PIPELINE_JOB_ID_PLACEHOLDER,
    task_name: str = dsl.PIPELINE_TASK_NAME_PLACEHOLDER,
):
    """Runs a CustomJob, re-attaching to the one an earlier attempt of this task started.

    Args:
        project: Google Cloud project that runs the job.
        location: Vertex AI region (e.g. us-central1), multi-region (us, eu) or global.
        display_name: Name shown for the job in the Vertex AI console; empty: vtp-<task>.
        output_root: Cloud Storage prefix (gs://bucket/path); the job writes its model and
            checkpoints under <output_root>/<pipeline run>/<task>-<digest of the job>/.
        model: The trained model directory (AIP_MODEL_DIR of the job).
        checkpoints: The job's checkpoint directory (AIP_CHECKPOINT_DIR).
        gcp_resources: The job's resource, so the Vertex console links it and cancelling the
            pipeline cancels the job.
        worker_pool_specs: Worker pools in gcloud's --worker-pool-spec syntax, one string per
            pool, e.g. "machine-type=n1-standard-8,replica-count=1,container-image-uri=IMAGE".
        job_spec: A full CustomJobSpec (REST field names) instead of, or under, the pools.
        args: Arguments for every replica (e.g. ["--epochs=20"]).
        parameters: Hyperparameters appended to the args as --<id>=<value>, as tuning trials do.
        timeout: Maximum run time of the job, e.g. "2h" or "7200s"; empty means Vertex's default.
        restart_job_on_worker_restart: Restart every worker when one restarts (what DDP needs).
        scheduling_strategy: STANDARD, SPOT or FLEX_START; empty means Vertex's default.
        disable_retries: Fail the job instead of retrying it after transient errors.
        service_account: Service account the replicas run as.
        network: VPC network to peer the job with (projects/NUMBER/global/networks/NAME).
        poll_interval_seconds: First wait between two status checks; it grows up to 60 s.
        pipeline_run: Filled in by the pipeline: ties the job to this run for re-attachment.
        task_name: Filled in by the pipeline: ties the job to this task for re-attachment.
    """
    import logging

    from vtp.launchers import custom_job as launcher
    from vtp.vertex import lifecycle

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    job = launcher.build_job(
        display_name,
        worker_pool_specs,
        job_spec,
        args,
        parameters,
        timeout=timeout,
        restart_job_on_worker_restart=restart_job_on_worker_restart,
        scheduling_strategy=scheduling_strategy,
        disable_retries=disable_retries,
        service_account=service_account,
        network=network,
    )
    task = lifecycle.place(lifecycle.CUSTOM_JOB, job, output_root, pipeline_run, task_name)
    target = lifecycle.Target.resolve(project, location)
    polling = lifecycle.Polling(initial=poll_interval_seconds)
    final = lifecycle.run_job(lifecycle.CUSTOM_JOB, target, job, task.key, gcp_resources, polling)
    model.uri = f"{task.output_dir}/model"
    model.metadata["custom_job"] = final.name
    checkpoints.uri = f"{task.output_dir}/checkpoints"
    checkpoints.metadata["custom_job"] = final.name
