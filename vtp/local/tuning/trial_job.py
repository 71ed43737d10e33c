"""What a tuning trial runs: the trial job spec with its parameters appended, as on Vertex.

Every worker pool's args get `--<parameterId>=<value>` for each of the trial's parameters, in
the order of the study spec. Integers (and discrete values that are whole numbers, such as batch
sizes) are written without a decimal point so that an `int` argparse flag takes them; other
numbers use Python's shortest round-trip form (`vtp.vertex.trial_args`, which the Vertex
launcher uses too).
"""

from collections.abc import Mapping

from google.cloud.aiplatform_v1 import CustomJob, CustomJobSpec, HyperparameterTuningJob, Trial

from vtp.local.tuning.space import Value
from vtp.vertex.trial_args import trial_args

METRIC_FILE_ENV = "CLOUD_ML_HP_METRIC_FILE"
"""Where cloudml-hypertune writes a trial's reports (one file per trial, set by the tuner)."""


def trial_job(
    tuning: HyperparameterTuningJob, trial_id: str, params: Mapping[str, Value]
) -> CustomJob:
    """The CustomJob of one trial: the trial job spec, every pool's args extended."""
    spec = CustomJobSpec.deserialize(CustomJobSpec.serialize(tuning.trial_job_spec))
    extra = trial_args(params)
    for pool in spec.worker_pool_specs:
        if "container_spec" in pool:
            pool.container_spec.args.extend(extra)
        elif "python_package_spec" in pool:
            pool.python_package_spec.args.extend(extra)
    job = CustomJob(
        display_name=f"{tuning.display_name}-trial-{trial_id}"[:128],
        job_spec=spec,
        labels=dict(tuning.labels),
    )
    if "encryption_spec" in tuning:
        job.encryption_spec = tuning.encryption_spec
    return job


def trial_parameters(params: Mapping[str, Value]) -> list[Trial.Parameter]:
    """The `Trial.parameters` of a parameter set (numbers as number_value, categories as text)."""
    return [Trial.Parameter(parameter_id=k, value=v) for k, v in params.items()]
