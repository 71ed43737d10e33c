"""Assemble a validated `aiplatform_v1.CustomJob` from `custom-jobs create` flags and `--config`.

The merge follows gcloud (`command_lib/ai/custom_jobs/custom_jobs_util.py`): the file is the
base; `--worker-pool-spec` replaces its pools wholesale; `--network`, `--service-account` and
`--persistent-resource-id` replace single fields; `--enable-web-access` only ever turns access on;
`--args` replaces the args of every pool and `--command` the command of every container pool.
Our scheduling and output flags (`--timeout`, `--scheduling-strategy`, `--base-output-dir`, ...)
replace the matching fields, and `--display-name`, `--labels` and `--kms-key` replace those of
a whole-CustomJob file. The merged request is validated once, and each error is reported
against whatever set the field at fault: a flag, a `--worker-pool-spec` key, or the file.
"""

import json
import re
from dataclasses import dataclass
from typing import Any, Protocol

from google.cloud import aiplatform_v1
from google.protobuf import json_format

from vtp import storage
from vtp.vertex import autopackage, poolspec
from vtp.vertex.config import ConfigFile, load_config
from vtp.vertex.protodict import SpecError
from vtp.vertex.validation import problem_of, relocated, validate_custom_job


@dataclass(frozen=True)
class JobFlags:
    """The `custom-jobs create` flags that shape the CustomJob, as typed on the command line."""

    display_name: str | None = None
    worker_pool_specs: tuple[str, ...] = ()
    """Each `--worker-pool-spec` value in order; '' is a skipped pool."""
    config: str | None = None
    """Path of the `--config` YAML file."""
    described_config: bool = False
    """Take a CustomJob's describe output as `--config`, its output-only fields dropped
    (`--local`); otherwise they are refused, as gcloud refuses them."""
    args: tuple[str, ...] = ()
    """Each `--args` value, unsplit (repeats add up, as in gcloud)."""
    command: tuple[str, ...] = ()
    python_package_uris: str | None = None
    service_account: str | None = None
    network: str | None = None
    enable_web_access: bool = False
    enable_dashboard_access: bool = False
    persistent_resource_id: str | None = None
    labels: tuple[str, ...] = ()
    """Each `--labels` value (KEY=VALUE,...); repeats add up."""
    kms_key: str | None = None
    timeout: str | None = None
    restart_job_on_worker_restart: bool = False
    scheduling_strategy: str | None = None
    max_wait_duration: str | None = None
    disable_retries: bool = False
    base_output_dir: str | None = None
    staging_bucket: str | None = None
    """gs:// prefix for archives autopackaged from local code (default: --base-output-dir)."""


class SpecFlags(Protocol):
    """The flags that `custom-jobs create` and `hp-tuning-jobs create` both set on a
    CustomJobSpec (the job's, or the tuning job's `trialJobSpec`)."""

    @property
    def network(self) -> str | None: ...
    @property
    def service_account(self) -> str | None: ...
    @property
    def enable_web_access(self) -> bool: ...
    @property
    def enable_dashboard_access(self) -> bool: ...


JOB_FLAG_FIELDS = {
    "displayName": ("--display-name", "display_name"),
    "labels": ("--labels", "labels"),
    "encryptionSpec": ("--kms-key", "kms_key"),
}
"""REST path in a job -> (flag, attribute of the flags) for the job flags both commands take."""


def spec_flag_fields(spec_path: str) -> dict[str, tuple[str, str]]:
    """`JOB_FLAG_FIELDS` for the SpecFlags, whose fields lie under `spec_path`."""
    return {
        f"{spec_path}.network": ("--network", "network"),
        f"{spec_path}.serviceAccount": ("--service-account", "service_account"),
    }


def spec_flag_values(flags: SpecFlags) -> dict[str, Any]:
    """The CustomJobSpec fields the SpecFlags set, as gcloud sets them (access only turned on)."""
    fields: dict[str, Any] = {}
    if flags.network is not None:
        fields["network"] = flags.network
    if flags.service_account is not None:
        fields["serviceAccount"] = flags.service_account
    if flags.enable_web_access:
        fields["enableWebAccess"] = True
    if flags.enable_dashboard_access:
        fields["enableDashboardAccess"] = True
    return fields


# REST path in the CustomJob -> (flag, JobFlags attribute that holds it).
_FLAG_FIELDS = {
    **JOB_FLAG_FIELDS,
    **spec_flag_fields("jobSpec"),
    "jobSpec.persistentResourceId": ("--persistent-resource-id", "persistent_resource_id"),
    "jobSpec.baseOutputDirectory": ("--base-output-dir", "base_output_dir"),
    "jobSpec.scheduling.timeout": ("--timeout", "timeout"),
    "jobSpec.scheduling.maxWaitDuration": ("--max-wait-duration", "max_wait_duration"),
    "jobSpec.scheduling.strategy": ("--scheduling-strategy", "scheduling_strategy"),
}

_POOL_FIELD = re.compile(r"^jobSpec\.workerPoolSpecs\[(\d+)\](?:\.(.*))?$")
_DURATION_PARTS = re.compile(r"^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s?)?$")


def build_custom_job(flags: JobFlags) -> aiplatform_v1.CustomJob:
    """The CustomJob that `custom-jobs create` would submit; SpecError names any bad input.

    Pools that name local code are refused here: only `build_packaged_job` packages it.
    """
    job, _ = _build(flags, package_local_code=False)
    return _custom_job(job)


def build_packaged_job(
    flags: JobFlags, default_staging: str | None = None
) -> tuple[aiplatform_v1.CustomJob, autopackage.Package | None]:
    """The CustomJob and, when pool 0 names local code, the archives it runs (not staged yet).

    The archives go under `--staging-bucket`, else `--base-output-dir`, else `default_staging`.
    """
    job, package = _build(flags, package_local_code=True, default_staging=default_staging)
    return _custom_job(job), package


def _custom_job(job: dict[str, Any]) -> aiplatform_v1.CustomJob:
    return aiplatform_v1.CustomJob.from_json(json.dumps(job), ignore_unknown_fields=False)


def request_body(job: aiplatform_v1.CustomJob) -> dict[str, Any]:
    """The JSON body of the create request, as gcloud sends it (REST names, enum names)."""
    return json_format.MessageToDict(aiplatform_v1.CustomJob.pb(job))


def build_request_body(flags: JobFlags) -> dict[str, Any]:
    """The validated CustomJob as a REST-form dict (see `build_custom_job`)."""
    return _build(flags, package_local_code=False)[0]


def _build(
    flags: JobFlags, package_local_code: bool, default_staging: str | None = None
) -> tuple[dict[str, Any], autopackage.Package | None]:
    if not flags.worker_pool_specs and not flags.config:
        raise SpecError(
            "--worker-pool-spec",
            "give at least one --worker-pool-spec, or a --config file with workerPoolSpecs",
        )
    config = load_config(flags.config, flags.described_config) if flags.config else None
    pools = [poolspec.parse_worker_pool_spec(v, i) for i, v in enumerate(flags.worker_pool_specs)]
    package_uris = poolspec.split_list(flags.python_package_uris or "")
    spec = dict(config.spec) if config else {}
    package = None
    if pools:
        poolspec.check_software(pools, package_uris)
        package = _package(pools[0], flags, package_local_code, default_staging)
        software = package.python_package_spec(package_uris) if package else None
        spec["workerPoolSpecs"] = [poolspec.to_rest(p, package_uris, software) for p in pools]
    elif flags.staging_bucket is not None:
        raise SpecError("--staging-bucket", "only used with local-package-path; drop it")
    _check_package_uris_used(pools, package_uris)
    _apply_spec_flags(spec, flags)
    _apply_args_and_command(spec, flags)
    job = _job_fields(config, flags) | {"jobSpec": spec}
    try:
        validate_custom_job(job)
    except SpecError as exc:
        raise _attribute(exc, flags, config, bool(pools)) from None
    return job, package


def _package(
    pool: poolspec.PoolFlags, flags: JobFlags, allowed: bool, default_staging: str | None
) -> autopackage.Package | None:
    """Pool 0's local code built into archives under the staging location; None if it has none."""
    if not poolspec.names_local_code(pool):
        if flags.staging_bucket is not None:
            raise SpecError("--staging-bucket", "only used with local-package-path; drop it")
        return None
    where = poolspec.Pool(0).where
    if not allowed:
        raise SpecError(
            where("local-package-path"),
            "local code is packaged by `vtp custom-jobs create` or the autopackage component; "
            "pass the pythonPackageSpec they make instead",
        )
    try:
        archives = autopackage.build(autopackage.LocalCode.from_pool_flags(pool))
    except SpecError as exc:
        raise SpecError(where(exc.path), problem_of(exc)) from None
    flag, staging = staging_location(flags, default_staging)
    try:
        storage.split_gcs_uri(staging)
    except ValueError as exc:
        raise SpecError(flag, str(exc)) from None
    return autopackage.Package.staged_at(archives, staging, pool["executor-image-uri"])


def staging_location(flags: JobFlags, default: str | None = None) -> tuple[str, str]:
    """(flag that set it, gs:// prefix) where autopackaged archives go."""
    if flags.staging_bucket:
        return "--staging-bucket", flags.staging_bucket
    if flags.base_output_dir:
        return "--base-output-dir", flags.base_output_dir
    if default:
        return "--staging-bucket", default
    raise SpecError(
        "--staging-bucket",
        "local-package-path needs a Cloud Storage location for the package: pass "
        "--staging-bucket=gs://BUCKET[/PATH] (or --base-output-dir, used when it is absent)",
    )


def _check_package_uris_used(pools: list[poolspec.PoolFlags], package_uris: list[str]) -> None:
    if not package_uris:
        return
    if not pools:
        # gcloud silently ignores the flag here; a dropped package is worse than an error.
        raise SpecError(
            "--python-package-uris",
            "applies to --worker-pool-spec pools only; "
            "with --config pools set pythonPackageSpec.packageUris in the file",
        )
    if not any("executor-image-uri" in p for p in pools):
        raise SpecError(
            "--python-package-uris",
            "no --worker-pool-spec runs a Python "
            "package (executor-image-uri + python-module); drop the flag",
        )


def _apply_spec_flags(spec: dict[str, Any], flags: JobFlags) -> None:
    spec.update(spec_flag_values(flags))
    if flags.persistent_resource_id is not None:
        spec["persistentResourceId"] = flags.persistent_resource_id
    if flags.base_output_dir is not None:
        spec["baseOutputDirectory"] = {"outputUriPrefix": flags.base_output_dir}
    scheduling = _scheduling_flags(flags)
    if scheduling:
        spec["scheduling"] = dict(spec.get("scheduling") or {}) | scheduling


def _scheduling_flags(flags: JobFlags) -> dict[str, Any]:
    scheduling: dict[str, Any] = {}
    if flags.timeout is not None:
        scheduling["timeout"] = parse_flag_duration(flags.timeout, "--timeout")
    if flags.max_wait_duration is not None:
        scheduling["maxWaitDuration"] = parse_flag_duration(
            flags.max_wait_duration, "--max-wait-duration"
        )
    if flags.scheduling_strategy is not None:
        scheduling["strategy"] = flags.scheduling_strategy.upper()
    if flags.restart_job_on_worker_restart:
        scheduling["restartJobOnWorkerRestart"] = True
    if flags.disable_retries:
        scheduling["disableRetries"] = True
    return scheduling


def _apply_args_and_command(spec: dict[str, Any], flags: JobFlags) -> None:
    args = [a for value in flags.args for a in poolspec.split_list(value)]
    command = [c for value in flags.command for c in poolspec.split_list(value)]
    pools = spec.get("workerPoolSpecs")
    if not isinstance(pools, list) or not (args or command):
        return  # a malformed file is reported by validation, naming the field
    if command and not any(isinstance(p, dict) and p.get("containerSpec") for p in pools):
        raise SpecError(
            "--command",
            "no pool runs a container image, and Python package "
            "pools take no command; drop --command or use --args",
        )
    spec["workerPoolSpecs"] = [_with_args(p, args, command) for p in pools]


def _with_args(pool: Any, args: list[str], command: list[str]) -> Any:
    """A copy of `pool` whose tasks take `args` and (containers only) `command`, as gcloud does."""
    if not isinstance(pool, dict):
        return pool
    pool = dict(pool)
    for task in ("containerSpec", "pythonPackageSpec"):
        if isinstance(pool.get(task), dict) and pool[task]:
            pool[task] = dict(pool[task])
            if args:
                pool[task]["args"] = list(args)
            if command and task == "containerSpec":
                pool[task]["command"] = list(command)
    return pool


def _job_fields(config: ConfigFile | None, flags: JobFlags) -> dict[str, Any]:
    job = dict(config.job_fields) if config else {}
    if flags.display_name is not None:
        job["displayName"] = flags.display_name
    if flags.labels:
        job["labels"] = parse_labels(flags.labels)
    if flags.kms_key is not None:
        job["encryptionSpec"] = {"kmsKeyName": flags.kms_key}
    return job


def parse_labels(values: tuple[str, ...]) -> dict[str, str]:
    """`--labels` values (`k=v,k2=v2`, repeatable) as one dict; syntax errors name the flag."""
    labels: dict[str, str] = {}
    for value in values:
        for item in poolspec.split_list(value):
            key, sep, label = item.partition("=")
            if not sep:
                raise SpecError("--labels", f"{item!r} is not KEY=VALUE")
            if key in labels:
                raise SpecError("--labels", f"label {key!r} is given twice; keep one value")
            labels[key] = label
    return labels


def parse_flag_duration(text: str, flag: str) -> str:
    """A gcloud-style duration (`90m`, `2h30m`, `1d`, `3600s`, `3600`) as protobuf `Ns`."""
    match = _DURATION_PARTS.match(text.strip())
    if not text.strip() or not match:
        raise SpecError(flag, f"{text!r} is not a duration; write e.g. 90m, 2h30m, 1d or 3600s")
    days, hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
    total = ((days * 24 + hours) * 60 + minutes) * 60 + seconds
    if total <= 0:
        raise SpecError(flag, f"{text!r} must be longer than 0s")
    return f"{total:.9f}".rstrip("0").rstrip(".") + "s"


def _attribute(
    exc: SpecError, flags: JobFlags, config: ConfigFile | None, flag_pools: bool
) -> SpecError:
    """Re-word an error on the merged request against the flag or file that set the field."""
    field, problem = exc.path, problem_of(exc)
    for path, (flag, attr) in _FLAG_FIELDS.items():
        if is_under(field, path) and (getattr(flags, attr) or not _in_config(config, path)):
            return SpecError(flag, problem)
    pool = _POOL_FIELD.match(field)
    if flag_pools and (pool or field == "jobSpec.workerPoolSpecs"):
        return _pool_flag_error(pool, problem)
    if config is not None:
        if field.startswith("jobSpec."):
            field = config.spec_path(field.removeprefix("jobSpec."))
        return relocated(exc, config.where, field)
    return exc


def _pool_flag_error(pool: re.Match[str] | None, problem: str) -> SpecError:
    if pool is None:
        return SpecError(poolspec.FLAG, problem)
    index, rest = int(pool.group(1)), pool.group(2) or ""
    key = poolspec.REST_FIELDS.get(re.sub(r"\[\d+\]$", "", rest), "")
    if key.startswith("--"):
        return SpecError(key, problem)
    if rest and not key:
        return SpecError(f"{poolspec.Pool(index).where()}: {rest}", problem)
    return SpecError(poolspec.Pool(index).where(key), problem)


def is_under(field: str, path: str) -> bool:
    """True when `field` is the REST path `path` or a field inside it."""
    return field == path or field.startswith((f"{path}.", f"{path}["))


def _in_config(config: ConfigFile | None, path: str) -> bool:
    if config is None:
        return False
    head, _, rest = path.partition(".")
    if head == "jobSpec":
        return rest.split(".")[0] in config.spec
    return head in config.job_fields
