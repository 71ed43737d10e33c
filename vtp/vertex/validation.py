"""Rules a CustomJob must meet before it is submitted, on REST-form (camelCase) dicts.

Pure functions: they read a dict and raise `SpecError` whose path names the field and whose
message says what is wrong and how to fix it. Field names, types and enum values are checked by
`protodict`; this module adds what Vertex only reports after the job has started (or failed):
pool roles and what each pool must name (`pool_rules`, which the local service applies too),
accelerators the machine cannot carry, package locations, label rules. Hyperparameter tuning
reuses `validate_custom_job_spec` for `trialJobSpec`.
"""

import re
from collections.abc import Mapping
from typing import Any

from google.cloud import aiplatform_v1

from vtp.vertex import accelerators, pool_rules, protodict
from vtp.vertex.protodict import SpecError, join

MAX_LABELS = 64
MAX_DISPLAY_NAME = 128

OUTPUT_ONLY_FIELDS = frozenset(
    {"name", "state", "createTime", "startTime", "endTime", "updateTime", "error"}
    | {"webAccessUris", "satisfiesPzs", "satisfiesPzi"}
)
"""CustomJob fields Vertex sets itself; a request that carries them is a pasted `describe`."""

REDUCTION_SERVER_IMAGE = "us-docker.pkg.dev/vertex-ai-restricted/training/reductionserver:latest"

_NETWORK = re.compile(r"^projects/[^/]+/global/networks/[^/]+$")
_SERVICE_ACCOUNT = re.compile(r"^(.+@.+\..+|[0-9]+)$")  # gcloud's own (deliberately loose) check
_RESOURCE_ID = re.compile(r"^[a-z][a-z0-9-]{0,62}$")
_KMS_KEY = re.compile(r"^projects/[^/]+/locations/[^/]+/keyRings/[^/]+/cryptoKeys/[^/]+$")
_DURATION = re.compile(r"^\d+(\.\d{1,9})?s$")


def problem_of(exc: SpecError) -> str:
    """The message of `exc` without its path: what is wrong and the fix."""
    text = str(exc)
    return text.removeprefix(f"{exc.path}: ") if exc.path else text


def relocated(exc: SpecError, where: str, path: str | None = None) -> SpecError:
    """`exc` reported at `where: path` (default: its own path), e.g. `--config job.yaml: x.y`."""
    path = exc.path if path is None else path
    return SpecError(f"{where}: {path}" if path else where, problem_of(exc))


def validate_custom_job_spec(spec: Any, where: str) -> None:
    """Raise SpecError (path under `where`) unless `spec` is a CustomJobSpec Vertex would run."""
    check_custom_job_spec_fields(spec, where)
    _check_pools(spec.get("workerPoolSpecs"), join(where, "workerPoolSpecs"))
    _check_scheduling(spec.get("scheduling") or {}, join(where, "scheduling"))
    _check_job_fields(spec, where)


def validate_custom_job(job: Any, where: str = "") -> None:
    """Raise SpecError unless `job` is a CustomJob create request (REST form) Vertex would run."""
    check_custom_job_fields(job, where)
    _check_display_name(job.get("displayName"), join(where, "displayName"))
    validate_labels(job.get("labels") or {}, join(where, "labels"))
    kms = (job.get("encryptionSpec") or {}).get("kmsKeyName")
    if kms is not None and not _KMS_KEY.match(kms):
        raise SpecError(
            join(where, "encryptionSpec.kmsKeyName"),
            f"{kms!r} is not a key name; use projects/P/locations/L/keyRings/R/cryptoKeys/K",
        )
    if "jobSpec" not in job:
        raise SpecError(join(where, "jobSpec"), "missing; a CustomJob needs workerPoolSpecs")
    validate_custom_job_spec(job["jobSpec"], join(where, "jobSpec"))


def check_custom_job_fields(job: Any, where: str) -> None:
    """Raise SpecError at the first unknown, output-only or mistyped field of a CustomJob dict."""
    if isinstance(job, Mapping):
        for key in job:
            if key in OUTPUT_ONLY_FIELDS:
                raise SpecError(join(where, key), "output-only field (Vertex sets it); remove it")
        if isinstance(job.get("jobSpec"), Mapping):
            _check_known_mistakes(job["jobSpec"], join(where, "jobSpec"))
    protodict.check(aiplatform_v1.CustomJob.pb().DESCRIPTOR, job, where)


def check_custom_job_spec_fields(spec: Any, where: str) -> None:
    """Raise SpecError at the first unknown or mistyped field of a CustomJobSpec dict."""
    if isinstance(spec, Mapping):
        _check_known_mistakes(spec, where)
    protodict.check(aiplatform_v1.CustomJobSpec.pb().DESCRIPTOR, spec, where)


def _check_known_mistakes(spec: Mapping[str, Any], where: str) -> None:
    # Seed docs invent a `reductionServerSpec`; say where Reduction Server really goes.
    pools = spec.get("workerPoolSpecs")
    places = [(spec, where)]
    if isinstance(pools, list):
        places += [(p, join(join(where, "workerPoolSpecs"), i)) for i, p in enumerate(pools)]
    for data, path in places:
        if isinstance(data, Mapping) and "reductionServerSpec" in data:
            raise SpecError(
                join(path, "reductionServerSpec"),
                "there is no such field: Reduction Server is worker pool 2 (workerPoolSpecs[2]) "
                f"running {REDUCTION_SERVER_IMAGE}; move it there and keep pool 1 for workers",
            )


def validate_labels(labels: Mapping[str, Any], where: str) -> None:
    """Raise SpecError unless `labels` follow Google Cloud's label rules."""
    if len(labels) > MAX_LABELS:
        raise SpecError(where, f"{len(labels)} labels; at most {MAX_LABELS} are allowed")
    for key, value in labels.items():
        if not is_valid_label_key(str(key)):
            raise SpecError(
                where,
                f"invalid label key {key!r}; keys start with a lowercase letter and hold at "
                "most 63 lowercase letters, digits, '_' or '-'",
            )
        if not isinstance(value, str) or not is_valid_label_value(value):
            raise SpecError(
                where,
                f"invalid value {value!r} for label {key!r}; values hold at most 63 lowercase "
                "letters, digits, '_' or '-'",
            )


def is_valid_label_value(value: str) -> bool:
    """Google Cloud label values: up to 63 lowercase letters (any script), digits, `_`, `-`."""
    return len(value) <= 63 and all(c in "_-" or c.isdigit() or _is_lower(c) for c in value)


def is_valid_label_key(key: str) -> bool:
    """Google Cloud label keys: a label value that starts with a lowercase letter."""
    return bool(key) and _is_lower(key[0]) and is_valid_label_value(key)


def _is_lower(c: str) -> bool:
    # Caseless letters (CJK, ...) count as lowercase, as in gcloud's \p{Ll}\p{Lo}.
    return c.isalpha() and (c.islower() or not c.isupper())


def _check_display_name(name: Any, path: str) -> None:
    if not name:
        raise SpecError(path, "missing; name the job (gcloud: --display-name)")
    if len(name) > MAX_DISPLAY_NAME:
        raise SpecError(path, f"{len(name)} characters; at most {MAX_DISPLAY_NAME} are allowed")


def _check_job_fields(spec: Mapping[str, Any], where: str) -> None:
    checks = {
        "network": (_NETWORK, "use projects/PROJECT_NUMBER/global/networks/NETWORK"),
        "serviceAccount": (_SERVICE_ACCOUNT, "use an email: NAME@PROJECT.iam.gserviceaccount.com"),
        "persistentResourceId": (
            _RESOURCE_ID,
            "IDs are 1-63 lowercase letters, digits or '-', starting with a letter",
        ),
    }
    for key, (pattern, fix) in checks.items():
        value = spec.get(key)
        if value is not None and not pattern.match(value):
            raise SpecError(join(where, key), f"{value!r} is not valid; {fix}")
    if "baseOutputDirectory" in spec:
        output = (spec["baseOutputDirectory"] or {}).get("outputUriPrefix") or ""
        if not output.startswith("gs://"):
            raise SpecError(
                join(where, "baseOutputDirectory.outputUriPrefix"),
                f"{output!r} is not a Cloud Storage URI; use gs://BUCKET/PATH",
            )


def _check_pools(pools: Any, path: str) -> None:
    pool_rules.check_pools(pools, path)
    for index, pool in enumerate(pools):
        if pool:
            _check_accelerators(
                pool.get("machineSpec") or {}, join(join(path, index), "machineSpec")
            )
            _check_package_uris(pool.get("pythonPackageSpec") or {}, join(path, index))


def _check_accelerators(machine: Mapping[str, Any], path: str) -> None:
    accelerator = machine.get("acceleratorType")
    if isinstance(accelerator, int):  # JSON may carry the enum's number (the REST client does)
        accelerator = aiplatform_v1.AcceleratorType(accelerator).name
    count = machine.get("acceleratorCount")
    if accelerator in (None, "ACCELERATOR_TYPE_UNSPECIFIED"):
        if count is not None:
            raise SpecError(
                join(path, "acceleratorCount"),
                "an accelerator count needs an accelerator type; set acceleratorType too",
            )
        accelerator = None
    elif accelerator not in accelerators.CARRIERS:
        valid = ", ".join(accelerators.valid_accelerator_types())
        raise SpecError(
            join(path, "acceleratorType"), f"unknown accelerator {accelerator!r}; valid: {valid}"
        )
    elif count is None or int(count) < 1:
        raise SpecError(
            join(path, "acceleratorCount"), f"{accelerator} needs a count of at least 1"
        )
    problem = accelerators.accelerator_problem(machine["machineType"], accelerator, int(count or 0))
    if problem:
        raise SpecError(path, problem)


def _check_package_uris(package: Mapping[str, Any], path: str) -> None:
    # The local service finds packages under its own storage root, and says so itself.
    for i, uri in enumerate(package.get("packageUris") or []):
        if not uri.startswith("gs://"):
            raise SpecError(
                join(path, f"pythonPackageSpec.packageUris[{i}]"),
                f"{uri!r} is not a Cloud Storage URI; upload the package and use gs://BUCKET/PATH",
            )


def _check_scheduling(scheduling: Mapping[str, Any], path: str) -> None:
    for key in ("timeout", "maxWaitDuration"):
        value = scheduling.get(key)
        if value is not None and (not _DURATION.match(value) or float(value[:-1]) <= 0):
            raise SpecError(
                join(path, key), f"{value!r} is not a positive duration in seconds, e.g. '3600s'"
            )
    strategy = scheduling.get("strategy")
    if "maxWaitDuration" in scheduling and strategy != "FLEX_START":
        raise SpecError(
            join(path, "maxWaitDuration"),
            f"only FLEX_START jobs wait for capacity (strategy is {strategy or 'unset'}); set "
            "strategy FLEX_START or drop maxWaitDuration",
        )
