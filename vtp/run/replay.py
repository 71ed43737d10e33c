"""`vtp run --from-job` of a job: a CustomJob, HyperparameterTuningJob or TrainingPipeline as
Vertex, gcloud or the SDK describes it (`vtp.vertex.describe`), run again on the local service.

The description is read (JSON or YAML, camelCase or the SDK's snake_case) and made the create
request it came from: its output-only fields dropped and named in one line with what the file
is. A TrainingPipeline runs its custom task (`trainingTaskInputs`, a CustomJobSpec) as a
CustomJob; any other training task, or one that reads a managed dataset, is refused naming
what is not supported; its `modelToUpload` is not uploaded. `Overrides` are gcloud's `custom-jobs
create` flags: `--args` replaces the args of every pool, `--command` the command of every
container pool (both comma-separated, repeats adding up), and `--container-image-uri` (the
`--worker-pool-spec` key) the image of every container pool; in a tuning job they apply to
`trialJobSpec`, whose trials still get their parameters as flags after the args. The request is
then checked by the rules `vtp custom-jobs create` and `vtp hp-tuning-jobs create` apply
(`vtp.vertex.validation`, `vtp.vertex.study`) before anything starts; an error is one line
naming the field.

The job is created on the service of the state directory (`target.py`, as `vtp run`'s pipeline
jobs are: a `vtp local serve`'s, or one of the run's own), under `projects/local/locations/
us-central1`; accelerator pools the machine's GPUs cannot hold run on CPU, as the service runs
any job. It is followed as `vtp custom-jobs stream-logs` follows one (`vtp.vertex.joblogs`):
its replicas' log lines on stdout, its state changes on stderr; a tuning job's trials each
with their log lines, state and final measurement. The exit status is the job's: 0 when it
SUCCEEDED, 1 otherwise (its error on stderr). Ctrl-C or SIGTERM cancels it (a second stops
waiting) and exits 130.
"""

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.api_core import exceptions
from google.api_core.client_options import ClientOptions
from google.cloud import aiplatform_v1
from google.oauth2.credentials import Credentials

from vtp import import_gc
from vtp.run import follow, target
from vtp.run.job import PARENT
from vtp.vertex import describe, joblogs, poolspec, validation
from vtp.vertex.humanize import readable
from vtp.vertex.protodict import SpecError
from vtp.vertex.states import JOB_ENDED
from vtp.vertex.study import tuning_job_from_dict

POLL_SECONDS = 0.5
"""How often the job (and its log) is read while it runs."""
CUSTOM_TASK = "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml"
"""The one training task a TrainingPipeline replays: a CustomJobSpec in trainingTaskInputs."""
JobState = aiplatform_v1.JobState
Job = aiplatform_v1.CustomJob | aiplatform_v1.HyperparameterTuningJob


class ReplayError(ValueError):
    """A description or override that cannot run here; the message names the field."""


@dataclass(frozen=True)
class Overrides:
    """gcloud's `custom-jobs create` flags, applied to every pool of the described job."""

    args: tuple[str, ...] = ()
    """Each `--args` value, unsplit (comma-separated, as gcloud's; repeats add up)."""
    command: tuple[str, ...] = ()
    """Each `--command` value, unsplit."""
    image: str | None = None
    """`--container-image-uri`: the image of every container pool."""

    def __bool__(self) -> bool:
        return bool(self.args or self.command or self.image is not None)


@dataclass(frozen=True)
class Prepared:
    """A described job made its create request, checked; nothing started."""

    line: str
    """What the file is and what was dropped, one line."""
    job: Job


def prepare(path: Path, document: Any, overrides: Overrides) -> Prepared:
    """The job `document` (read from `path`) describes, with `overrides`, as the create
    request the local service is sent; ReplayError naming the field at fault."""
    kind = describe.kind_of(document)
    if kind is None or kind is describe.PIPELINE_JOB:
        raise ReplayError(
            f"--from-job: {path} describes no CustomJob, HyperparameterTuningJob or "
            "TrainingPipeline"
        )
    try:
        described = describe.request(document, kind)
    except SpecError as exc:
        raise ReplayError(f"--from-job: {path}: {exc}") from None
    body, extra = described.body, ""
    if kind is describe.TRAINING_PIPELINE:
        body, extra = (
            _custom_task(path, body),
            ("; its custom task runs as a CustomJob (its model is not uploaded)"),
        )
    spec_field = "trialJobSpec" if kind is describe.TUNING_JOB else "jobSpec"
    try:
        body[spec_field] = overridden(body.get(spec_field), overrides)
        job: Job
        if kind is describe.TUNING_JOB:
            job = tuning_job_from_dict(body)
        else:
            validation.validate_custom_job(body)
            job = aiplatform_v1.CustomJob.from_json(json.dumps(body))
    except SpecError as exc:
        if kind is describe.TRAINING_PIPELINE and exc.path.startswith("jobSpec"):
            field = exc.path.replace("jobSpec", "trainingTaskInputs", 1)
            exc = SpecError(field, validation.problem_of(exc))
        if exc.path.startswith("--"):  # an override that fits no pool
            raise ReplayError(str(exc)) from None
        raise ReplayError(f"--from-job: {path}: {exc}") from None
    return Prepared(describe.summary_of(str(path), described, extra), job)


def _custom_task(path: Path, pipeline: dict[str, Any]) -> dict[str, Any]:
    """The CustomJob a TrainingPipeline's custom task is; ReplayError for what is not one."""
    definition = pipeline.get("trainingTaskDefinition", "")
    if definition != CUSTOM_TASK:
        raise ReplayError(
            f"--from-job: {path}: trainingTaskDefinition {definition!r} is not supported: "
            f"only a custom training task ({CUSTOM_TASK}) runs here"
        )
    if pipeline.get("inputDataConfig"):
        raise ReplayError(
            f"--from-job: {path}: inputDataConfig is not supported: a training pipeline on a "
            "managed dataset runs only as a TrainingPipeline (create it on the local service)"
        )
    inputs = pipeline.get("trainingTaskInputs")
    if not isinstance(inputs, dict):
        raise ReplayError(
            f"--from-job: {path}: trainingTaskInputs: expected the custom task's CustomJobSpec"
        )
    job = {"displayName": pipeline.get("displayName", ""), "jobSpec": dict(inputs)}
    for key in ("labels", "encryptionSpec"):
        if key in pipeline:
            job[key] = pipeline[key]
    return job


def overridden(spec: Any, overrides: Overrides) -> Any:
    """A copy of the CustomJobSpec `spec` with `overrides` applied to its pools, as gcloud's
    `--args` and `--command` are (`vtp.vertex.jobspec`); SpecError naming a flag that applies
    to no pool. A malformed spec is returned as it is, for validation to name its field."""
    args = [a for value in overrides.args for a in poolspec.split_list(value)]
    command = [c for value in overrides.command for c in poolspec.split_list(value)]
    pools = spec.get("workerPoolSpecs") if isinstance(spec, dict) else None
    if not overrides or not isinstance(pools, list):
        return spec
    containers = [p for p in pools if isinstance(p, dict) and p.get("containerSpec")]
    for flag, given in (("--command", command), ("--container-image-uri", overrides.image)):
        if given and not containers:
            raise SpecError(flag, "no pool runs a container image; drop it (use --args)")
    if overrides.image is not None and not overrides.image.strip():
        raise SpecError("--container-image-uri", "must name an image")
    new_pools = []
    for pool in pools:
        pool = dict(pool) if isinstance(pool, dict) else pool
        for task in ("containerSpec", "pythonPackageSpec"):
            if isinstance(pool, dict) and isinstance(pool.get(task), dict) and pool[task]:
                pool[task] = dict(pool[task])
                if args:
                    pool[task]["args"] = list(args)
                if task == "containerSpec":
                    if command:
                        pool[task]["command"] = list(command)
                    if overrides.image is not None:
                        pool[task]["imageUri"] = overrides.image
        new_pools.append(pool)
    return {**spec, "workerPoolSpecs": new_pools}


def run(prepared: Prepared, state_dir: Path) -> int:
    """Create the job on the service of `state_dir` and follow it to its end: 0 when it
    SUCCEEDED, 1 when it did not, 130 when a signal cancelled it. ReplayError when the
    service refuses it (nothing ran)."""
    interrupts = follow.Interrupts()
    with interrupts.installed(), target.service_for(state_dir, run_coming=False) as service:
        if interrupts.count:
            return 130
        client = aiplatform_v1.JobServiceClient(
            transport="rest",
            client_options=ClientOptions(api_endpoint=service.url),
            credentials=Credentials(service.token),
        )
        run = _Run(client, _session(service.token), service.url, interrupts, prepared.line)
        if isinstance(prepared.job, aiplatform_v1.CustomJob):
            return run.custom_job(prepared.job)
        return run.tuning_job(prepared.job)


def _session(token: str) -> Any:
    import requests

    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {token}"
    session.trust_env = False  # the local service, never through a proxy
    return session


@dataclass
class _Run:
    """One job created on the service and followed to its end."""

    client: aiplatform_v1.JobServiceClient
    session: Any
    url: str
    interrupts: follow.Interrupts
    line: str
    """What the file is (`Prepared.line`), printed once the service has taken the job."""

    def custom_job(self, job: aiplatform_v1.CustomJob) -> int:
        """Create `job`, print its log lines and state changes until it ends; exit status."""
        client = self.client
        created = self._created(lambda: client.create_custom_job(parent=PARENT, custom_job=job))
        name = created.name
        follow.write(sys.stderr, f"CustomJob [{name}] is submitted successfully.\n")
        lines = _LogLines(self.session, self.url, name)
        watch = _Watch(self.interrupts, lambda: client.cancel_custom_job(name=name), name)
        ended = created
        for ended in watch.poll(lambda: client.get_custom_job(name=name)):
            lines.print_new()
            if ended.state != watch.state:
                watch.state = ended.state
                follow.write(sys.stderr, f"CustomJob [{name}] is {ended.state.name}.\n")
        return _exit_status(ended, watch)

    def tuning_job(self, job: aiplatform_v1.HyperparameterTuningJob) -> int:
        """Create `job`, print its trials' log lines, states and final measurements, and its
        own state changes, until it ends; exit status."""
        client = self.client
        created = self._created(
            lambda: client.create_hyperparameter_tuning_job(
                parent=PARENT, hyperparameter_tuning_job=job
            )
        )
        name = created.name
        follow.write(sys.stderr, f"Hyperparameter tuning job [{name}] submitted.\n")
        watch = _Watch(
            self.interrupts, lambda: client.cancel_hyperparameter_tuning_job(name=name), name
        )
        trial_lines: dict[str, _LogLines] = {}
        trial_states: dict[str, int] = {}
        ended = created
        for ended in watch.poll(lambda: client.get_hyperparameter_tuning_job(name=name)):
            for trial in ended.trials:
                if trial.custom_job and trial.id not in trial_lines:
                    prefix = f"trial {trial.id}\t"
                    trial_lines[trial.id] = _LogLines(
                        self.session, self.url, trial.custom_job, prefix
                    )
                if trial.id in trial_lines:
                    trial_lines[trial.id].print_new()
                if trial_states.get(trial.id) != trial.state:
                    trial_states[trial.id] = trial.state
                    follow.write(sys.stderr, _trial_line(trial) + "\n")
            if ended.state != watch.state:
                watch.state = ended.state
                said = f"Hyperparameter tuning job [{name}] is {ended.state.name}.\n"
                follow.write(sys.stderr, said)
        return _exit_status(ended, watch)

    def _created(self, create: Callable[[], Any]) -> Any:
        """The job `create` made; ReplayError when the service refuses it (nothing ran). Once
        it is taken, the file's line is printed and the collector the command paused for its
        imports runs again (`vtp.import_gc`)."""
        try:
            created = create()
        except exceptions.GoogleAPICallError as exc:
            raise ReplayError(f"--from-job: the local service refuses it: {exc.message}") from None
        import_gc.resume()
        follow.write(sys.stderr, self.line + "\n")
        return created


def _trial_line(trial: aiplatform_v1.Trial) -> str:
    """`Trial 1 (x=0.5): SUCCEEDED, score=0.75`."""
    values = ", ".join(f"{p.parameter_id}={readable(p.value)}" for p in trial.parameters)
    metrics = "".join(
        f", {m.metric_id}={readable(m.value)}" for m in trial.final_measurement.metrics
    )
    return f"Trial {trial.id} ({values}): {trial.state.name}{metrics}"


class _LogLines:
    """A job's replica log entries, printed as `stream-logs` prints them, each once."""

    def __init__(self, session: Any, url: str, job_name: str, prefix: str = "") -> None:
        self.reader: joblogs.LogReader | None = joblogs.LogReader(
            session, job_name.split("/")[1], job_name.rsplit("/", 1)[-1], url
        )
        self.prefix = prefix

    def print_new(self) -> None:
        if self.reader is None:
            return
        try:
            entries = self.reader.read()
        except joblogs.LogsUnavailable as exc:
            follow.write(sys.stderr, f"vtp: {exc}; showing state changes only\n")
            self.reader = None
            return
        except OSError:  # a read that failed is tried again at the next poll
            return
        for entry in entries:
            lines = joblogs.format_entry(entry)
            follow.write(sys.stdout, "".join(f"{self.prefix}{line}\n" for line in lines))


class _Watch:
    """Polls a job until it ends; the first signal cancels it, a second stops waiting."""

    def __init__(self, interrupts: follow.Interrupts, cancel: Callable[[], Any], name: str):
        self.interrupts = interrupts
        self.cancel = cancel
        self.name = name
        self.cancelled = False
        self.gave_up = False
        self.state: int = JobState.JOB_STATE_UNSPECIFIED

    def poll(self, get: Callable[[], Any]) -> Iterator[Any]:
        """The job as read at each poll, until it has ended (that read last)."""
        while True:
            if self.interrupts.count and not self.cancelled:
                self.cancelled = True
                follow.write(
                    sys.stderr, f"\nCancelling {self.name} (Ctrl-C again: stop waiting for it)\n"
                )
                with contextlib.suppress(exceptions.GoogleAPICallError):
                    self.cancel()  # else it ended meanwhile: the next read says how
            if self.interrupts.count > 1:
                self.gave_up = True
                return
            job = get()
            yield job
            if job.state in JOB_ENDED:
                return
            self.interrupts.wait(POLL_SECONDS)


def _exit_status(job: Job, watch: _Watch) -> int:
    if watch.cancelled:
        what = "stopped waiting for" if watch.gave_up else "cancelled"
        follow.write(sys.stderr, f"vtp: interrupted: {what} {watch.name}\n")
        return 130
    if job.state == JobState.JOB_STATE_SUCCEEDED:
        return 0
    why = f": {job.error.message}" if job.error.message else ""
    follow.write(sys.stderr, f"vtp: job failed: {watch.name} is {job.state.name}{why}\n")
    return 1
