"""Assemble a validated HyperparameterTuningJob from `hp-tuning-jobs create` flags and `--config`.

The merge follows gcloud (`api_lib/ai/hp_tuning_jobs/client.py`): the file is a whole
HyperparameterTuningJob; `--max-trial-count` and `--parallel-trial-count` override it and
default to 1 when neither sets them; `--network`, `--service-account`, `--enable-web-access` and
`--enable-dashboard-access` go into `trialJobSpec`; `--algorithm` sets `studySpec.algorithm`;
`--display-name`, `--labels` and `--kms-key` replace theirs. Each error is reported against the
flag or the `--config` field that set the value at fault. With `described_config` (`--local`), the
file may be a tuning job's describe output: its output-only fields are dropped
(`vtp.vertex.describe`).
"""

from dataclasses import dataclass
from typing import Any

from google.cloud import aiplatform_v1
from google.protobuf import json_format

from vtp.vertex import describe
from vtp.vertex.jobspec import (
    JOB_FLAG_FIELDS,
    is_under,
    parse_labels,
    spec_flag_fields,
    spec_flag_values,
)
from vtp.vertex.protodict import SpecError
from vtp.vertex.study import load_config, tuning_job_from_dict
from vtp.vertex.validation import problem_of, relocated

ALGORITHMS = ("algorithm-unspecified", "grid-search", "random-search")
"""gcloud's `--algorithm` choices (StudySpec.Algorithm, lowercase and dashed)."""


@dataclass(frozen=True)
class TuningFlags:
    """The `hp-tuning-jobs create` flags, as typed on the command line."""

    config: str
    display_name: str | None = None
    max_trial_count: int | None = None
    parallel_trial_count: int | None = None
    algorithm: str | None = None
    """One of ALGORITHMS."""
    network: str | None = None
    service_account: str | None = None
    enable_web_access: bool = False
    enable_dashboard_access: bool = False
    labels: tuple[str, ...] = ()
    kms_key: str | None = None
    """A full key name, projects/P/locations/L/keyRings/R/cryptoKeys/K."""
    described_config: bool = False
    """Take a tuning job's describe output as `--config`, its output-only fields dropped
    (`--local`); otherwise they are refused, as gcloud refuses them."""


# REST path -> (flag, TuningFlags attribute), for errors in values a flag set.
_FLAG_FIELDS = {
    **JOB_FLAG_FIELDS,
    "maxTrialCount": ("--max-trial-count", "max_trial_count"),
    "parallelTrialCount": ("--parallel-trial-count", "parallel_trial_count"),
    "studySpec.algorithm": ("--algorithm", "algorithm"),
    **spec_flag_fields("trialJobSpec"),
}


def build_tuning_job(flags: TuningFlags) -> aiplatform_v1.HyperparameterTuningJob:
    """The HyperparameterTuningJob that `hp-tuning-jobs create` submits; SpecError if bad."""
    body = merged_body(flags)
    try:
        return tuning_job_from_dict(body)
    except SpecError as exc:
        raise _attribute(exc, flags) from None


def request_body(job: aiplatform_v1.HyperparameterTuningJob) -> dict[str, Any]:
    """The JSON body of the create request, as gcloud sends it (REST names, enum names)."""
    return json_format.MessageToDict(aiplatform_v1.HyperparameterTuningJob.pb(job))


def merged_body(flags: TuningFlags) -> dict[str, Any]:
    """The `--config` file with the flags applied, before validation (gcloud's order)."""
    body = dict(load_config(flags.config))
    if flags.described_config:
        body = describe.config_request(body, describe.TUNING_JOB, f"--config {flags.config}")
    for key, value in (
        ("maxTrialCount", flags.max_trial_count),
        ("parallelTrialCount", flags.parallel_trial_count),
    ):
        if value is not None:
            body[key] = value
        body.setdefault(key, 1)  # gcloud's default when neither the file nor a flag sets it
    trial = spec_flag_values(flags)
    if trial:
        body["trialJobSpec"] = _merged(body.get("trialJobSpec"), trial)
    if flags.display_name is not None:
        body["displayName"] = flags.display_name
    if flags.algorithm is not None:
        if flags.algorithm not in ALGORITHMS:
            raise SpecError("--algorithm", f"{flags.algorithm!r} is not one of {ALGORITHMS}")
        study = body.get("studySpec")
        algorithm = flags.algorithm.upper().replace("-", "_")
        body["studySpec"] = _merged(study, {"algorithm": algorithm})
    if flags.kms_key is not None:
        body["encryptionSpec"] = {"kmsKeyName": flags.kms_key}
    if flags.labels:
        body["labels"] = parse_labels(flags.labels)
    return body


def _merged(base: Any, fields: dict[str, Any]) -> Any:
    # A non-mapping base is left for the validator to report against the file.
    if base is None:
        return dict(fields)
    return {**base, **fields} if isinstance(base, dict) else base


def _attribute(exc: SpecError, flags: TuningFlags) -> SpecError:
    """Re-word an error on the merged job against the flag or the file that set the field."""
    for path, (flag, attr) in _FLAG_FIELDS.items():
        set_by_flag = getattr(flags, attr) not in (None, ())
        if set_by_flag and is_under(exc.path, path):
            return SpecError(flag, problem_of(exc))
    return relocated(exc, f"--config {flags.config}")
