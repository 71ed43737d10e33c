"""Vertex AI Vizier in the local service: studies, and trials that the client itself evaluates.

Unlike a HyperparameterTuningJob (`vtp.local.tuning`), a Vizier study runs nothing: a client asks
for parameters (`suggest`), evaluates them where it likes, reports measurements and completes each
trial. The parameters come from the tuner's own algorithms (`vtp.local.tuning.suggest`: grid,
random, and multivariate TPE for ALGORITHM_UNSPECIFIED), rebuilt from the stored trials on every
call, and `checkTrialEarlyStoppingState` applies the tuner's stopping rules
(`vtp.local.tuning.stopping`) to the trial's measurements against the study's completed trials.

The rules Vertex documents:

- a study's display name is unique in its location (create says ALREADY_EXISTS; `lookup` finds
  it by that name); trials are numbered from 1 within their study;
- `suggest` (a long-running operation, done at once here) first hands back the ACTIVE trials
  already assigned to the same `clientId`, then REQUESTED trials (created by a client for someone
  to evaluate), then new suggestions; a grid that has run out ends the study (COMPLETED);
- a trial is REQUESTED, ACTIVE or STOPPING until `complete` makes it SUCCEEDED (with the given
  final measurement, or one of its measurements chosen by the study's measurement selection
  type) or INFEASIBLE (`trialInfeasible`); a completed trial takes no more measurements;
- `listOptimalTrials` is the Pareto front of the succeeded trials over the study's metrics (for
  one metric: the trials with the best value).
"""

import json
import logging
import math
import re
import secrets
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import cast

from google.cloud.aiplatform_v1 import (
    CompleteTrialRequest,
    Measurement,
    Study,
    StudySpec,
    SuggestTrialsRequest,
    Trial,
)

from vtp.local.base import errors
from vtp.local.base.names import name_matches
from vtp.local.base.resources import clear_output_only, matching_page, new_id, rest_json, set_times
from vtp.local.base.routing import parse_message
from vtp.local.base.services import CollectionService, DatabaseService
from vtp.local.service import Service
from vtp.local.tuning import metrics, space, stopping
from vtp.local.tuning.trial_job import trial_parameters
from vtp.local.vizier.store import SCHEMA, StudyRecord, VizierStore
from vtp.vertex.protodict import SpecError
from vtp.vertex.study_rules import check_study_spec

MAX_SUGGESTIONS = 100
"""The most trials one `suggest` may ask for (Vertex documents no limit; TPE refits for each)."""

RUNNING = frozenset({Trial.State.REQUESTED, Trial.State.ACTIVE, Trial.State.STOPPING})
_TRIAL_NAME = re.compile(
    r"(?P<study>projects/[^/]+/locations/[^/]+/studies/[^/]+)/trials/(?P<trial>[^/:]+)"
)
_STUDY_OUTPUT_ONLY = ("name", "state", "create_time", "inactive_reason")
_TRIAL_OUTPUT_ONLY = (
    *("name", "id", "state", "start_time", "end_time", "client_id", "infeasible_reason"),
    *("custom_job", "web_access_uris"),
)
_log = logging.getLogger(__name__)


class Vizier(DatabaseService[VizierStore], CollectionService[Study, StudyRecord]):
    """Studies and their trials (`vizier.db` in the state directory)."""

    collection, kind = "studies", "Study"
    store: VizierStore

    def __init__(self, root: Service) -> None:
        super().__init__(root.config.state_dir / "vizier.db", SCHEMA, VizierStore)
        self.root = root

    # -- studies ------------------------------------------------------------------------------

    def create_study(self, parent: str, body: bytes) -> Study:
        """Check and store a study under `parent`; ALREADY_EXISTS for a display name in use."""
        study = parse_message(Study, body)
        clear_output_only(study, _STUDY_OUTPUT_ONLY)
        if not study.display_name.strip():
            raise errors.invalid_argument("study.displayName is required.")
        if "study_spec" not in study:
            raise errors.invalid_argument("study.studySpec is required.")
        _check_spec(study.study_spec)
        with self._lock:
            if "-" in parent.split("/"):
                raise errors.invalid_argument(f"Invalid parent {parent!r}: name one location.")
            if self.store.find_display_name(parent, study.display_name):
                raise errors.already_exists(
                    f"A study with display name {study.display_name!r} already exists in "
                    f"{parent}; use studies:lookup to find it."
                )
            study.name = f"{parent}/studies/{new_id()}"
            study.state = Study.State(Study.State.ACTIVE)
            set_times(study, datetime.now(UTC), "create_time")
            record = StudyRecord(study, seed=secrets.randbelow(2**31))
            self.store.insert(record)
        _log.info("study %s (%s): created", record.id, study.display_name)
        return study

    def lookup_study(self, parent: str, display_name: object) -> Study:
        """The study under `parent` with `display_name`; raise NOT_FOUND."""
        if not isinstance(display_name, str) or not display_name:
            raise errors.invalid_argument("displayName is required: the study's display name.")
        record = self.store.find_display_name(parent, display_name)
        if record is None:
            raise errors.not_found(f"Study with display name {display_name!r} not found.")
        return record.resource

    def delete_study(self, name: str) -> dict:
        """Delete a study and its trials; return `{}` (Vertex's Empty)."""
        with self._lock:
            record = self._record(name)
            self.store.delete(record.id)
        _log.info("study %s: deleted", record.id)
        return {}

    # -- trials -------------------------------------------------------------------------------

    def suggest_trials(self, study_name: str, body: bytes, version: str = "v1") -> dict:
        """Trials for a client to evaluate, as a done long-running Operation."""
        request = parse_message(SuggestTrialsRequest, body)
        count = request.suggestion_count
        if not 0 < count <= MAX_SUGGESTIONS:
            raise errors.invalid_argument(
                f"Invalid suggestionCount {count}: it must be between 1 and {MAX_SUGGESTIONS}."
            )
        started = _now()
        with self._lock:
            record = self._record(study_name)
            trials = self.store.trials(record.id)
            chosen = self._assigned(record, trials, request.client_id, count)
            if len(chosen) < count and record.resource.state == Study.State.ACTIVE:
                chosen += self._new_trials(record, trials, request.client_id, count - len(chosen))
                self.store.update(record)
        response = {
            "trials": [_json(t) for t in chosen],
            "studyState": record.resource.state.name,
            "startTime": started,
            "endTime": _now(),
        }
        metadata = {"clientId": request.client_id}
        return self._operation(
            record.resource.name,
            version,
            "SuggestTrialsMetadata",
            metadata,
            "SuggestTrialsResponse",
            response,
        )

    def _assigned(
        self, record: StudyRecord, trials: list[Trial], client_id: str, count: int
    ) -> list[Trial]:
        """The client's ACTIVE trials, then REQUESTED ones (now assigned to it), up to count."""
        chosen = [t for t in trials if t.state == Trial.State.ACTIVE and t.client_id == client_id][
            :count
        ]
        for trial in trials:
            if len(chosen) == count:
                break
            if trial.state == Trial.State.REQUESTED:
                trial.state, trial.client_id = Trial.State(Trial.State.ACTIVE), client_id
                set_times(trial, datetime.now(UTC), "start_time")
                self.store.put_trial(record.id, trial)
                chosen.append(trial)
        return chosen

    def _new_trials(
        self, record: StudyRecord, trials: list[Trial], client_id: str, count: int
    ) -> list[Trial]:
        from vtp.local.tuning.suggest import Suggester, record_from_trial  # optuna: when used

        study = record.resource
        metric_ids = [m.metric_id for m in study.study_spec.metrics]
        history = [record_from_trial(t, metric_ids) for t in trials]
        suggester = Suggester(study.study_spec, record.seed, history)
        made: list[Trial] = []
        while len(made) < count:
            trial_id = str(record.last_trial + 1)
            params = suggester.suggest(trial_id)
            if params is None:  # a grid that has run out
                study.state = Study.State(Study.State.COMPLETED)
                study.inactive_reason = "Every point of the search space has been suggested."
                _log.info("study %s: search space exhausted, COMPLETED", record.id)
                break
            record.last_trial += 1
            trial = Trial(
                name=f"{study.name}/trials/{trial_id}",
                id=trial_id,
                state=Trial.State.ACTIVE,
                parameters=trial_parameters(params),
                client_id=client_id,
            )
            set_times(trial, datetime.now(UTC), "start_time")
            self.store.put_trial(record.id, trial)
            made.append(trial)
        return made

    def create_trial(self, study_name: str, body: bytes) -> Trial:
        """Add a trial the client chose: SUCCEEDED when it has a final measurement, REQUESTED
        when it asks to be evaluated (state REQUESTED), otherwise ACTIVE."""
        trial = parse_message(Trial, body)
        requested = trial.state == Trial.State.REQUESTED
        clear_output_only(trial, _TRIAL_OUTPUT_ONLY)
        with self._lock:
            record = self._record(study_name)
            _check_parameters(record.resource.study_spec, trial.parameters, "trial.parameters")
            for index, measurement in enumerate(trial.measurements):
                _check_measurement(measurement, f"trial.measurements[{index}]")
            now = datetime.now(UTC)
            if "final_measurement" in trial:
                _check_measurement(trial.final_measurement, "trial.finalMeasurement")
                trial.state = Trial.State(Trial.State.SUCCEEDED)
                set_times(trial, now, "end_time")
            elif requested:
                trial.state = Trial.State(Trial.State.REQUESTED)
            else:
                trial.state = Trial.State(Trial.State.ACTIVE)
            record.last_trial += 1
            trial.id = str(record.last_trial)
            trial.name = f"{record.resource.name}/trials/{trial.id}"
            set_times(trial, now, "start_time")
            self.store.put_trial(record.id, trial)
            self.store.update(record)
        return trial

    def get_trial(self, name: str) -> Trial:
        """The trial named `name`; raise NOT_FOUND."""
        return self._trial(name)[1]

    def list_trials(
        self, study_name: str, filter: str = "", page_size: int = 0, page_token: str = ""
    ) -> tuple[list[Trial], str]:
        """One page of a study's trials, by ID, and the next page token."""
        record = self._record(study_name)
        return matching_page(self.store.trials(record.id), filter, page_size, page_token)

    def delete_trial(self, name: str) -> dict:
        """Delete a trial; return `{}` (Vertex's Empty)."""
        with self._lock:
            record, trial = self._trial(name)
            self.store.delete_trial(record.id, int(trial.id))
        return {}

    def add_trial_measurement(self, name: str, measurement: Measurement) -> Trial:
        """Append an intermediate measurement to a trial that has not completed."""
        _check_measurement(measurement, "measurement")
        with self._lock:
            record, trial = self._trial(name)
            self._expect_running(trial, "add a measurement to")
            if trial.state == Trial.State.REQUESTED:
                trial.state = Trial.State(Trial.State.ACTIVE)
            trial.measurements.append(measurement)
            self.store.put_trial(record.id, trial)
        return trial

    def complete_trial(self, name: str, body: bytes) -> Trial:
        """End a trial: SUCCEEDED with its final measurement, or INFEASIBLE."""
        request = parse_message(CompleteTrialRequest, body)
        if "final_measurement" in request:
            _check_measurement(request.final_measurement, "finalMeasurement")
        with self._lock:
            record, trial = self._trial(name)
            self._expect_running(trial, "complete")
            if "final_measurement" in request:
                trial.final_measurement = request.final_measurement
            if request.trial_infeasible:
                trial.state = Trial.State(Trial.State.INFEASIBLE)
                trial.infeasible_reason = request.infeasible_reason or "Reported infeasible."
            else:
                if "final_measurement" not in request:
                    trial.final_measurement = _chosen_final(record.resource.study_spec, trial)
                trial.state = Trial.State(Trial.State.SUCCEEDED)
            set_times(trial, datetime.now(UTC), "end_time")
            self.store.put_trial(record.id, trial)
        return trial

    def stop_trial(self, name: str) -> Trial:
        """Ask a trial's client to stop it (STOPPING); it is completed as usual."""
        with self._lock:
            record, trial = self._trial(name)
            self._expect_running(trial, "stop")
            trial.state = Trial.State(Trial.State.STOPPING)
            self.store.put_trial(record.id, trial)
        return trial

    def check_trial_early_stopping_state(self, name: str, version: str = "v1") -> dict:
        """Whether the study's stopping rule stops the trial now, as a done Operation; a trial it
        stops becomes STOPPING."""
        with self._lock:
            record, trial = self._trial(name)
            self._expect_running(trial, "check early stopping of")
            should_stop = trial.state == Trial.State.STOPPING
            if trial.state == Trial.State.ACTIVE:
                decision = self._stopping_decision(record, trial)
                if decision is not None:
                    _log.info("study %s: trial %s should stop: %s", record.id, trial.id, decision)
                    trial.state = Trial.State(Trial.State.STOPPING)
                    self.store.put_trial(record.id, trial)
                    should_stop = True
        metadata = {"study": record.resource.name, "trial": trial.name}
        response = {"shouldStop": should_stop}
        return self._operation(
            trial.name,
            version,
            "CheckTrialEarlyStoppingStateMetatdata",  # sic: Vertex's own spelling
            metadata,
            "CheckTrialEarlyStoppingStateResponse",
            response,
        )

    def _stopping_decision(self, record: StudyRecord, trial: Trial) -> str | None:
        spec = record.resource.study_spec
        rule = type(spec).pb(spec).WhichOneof("automated_stopping_spec")
        if rule is None:
            return None
        elapsed = getattr(spec, rule).use_elapsed_duration
        objective = spec.metrics[0].metric_id
        completed = [
            stopping.curve(
                [metrics.Measurement.from_proto(m) for m in t.measurements],
                objective,
                elapsed,
                metrics.Measurement.from_proto(t.final_measurement),
            )
            for t in self.store.trials(record.id)
            if t.state == Trial.State.SUCCEEDED
        ]
        measured = [metrics.Measurement.from_proto(m) for m in trial.measurements]
        try:
            decision = stopping.should_stop(spec, measured, completed)
        except (ValueError, ArithmeticError) as exc:  # curves the decay-curve GP cannot fit
            _log.warning(
                "study %s: no stopping decision for trial %s: %s", record.id, trial.id, exc
            )
            return None
        return decision.reason if decision else None

    def list_optimal_trials(self, study_name: str) -> list[Trial]:
        """The succeeded trials that no other succeeded trial beats on every metric."""
        record = self._record(study_name)
        spec = record.resource.study_spec
        signs = {
            m.metric_id: -1.0 if m.goal == StudySpec.MetricSpec.GoalType.MINIMIZE else 1.0
            for m in spec.metrics
        }
        scored: list[tuple[Trial, list[float]]] = []
        for trial in self.store.trials(record.id):
            values = {m.metric_id: m.value for m in trial.final_measurement.metrics}
            if trial.state == Trial.State.SUCCEEDED and signs.keys() <= values.keys():
                scored.append((trial, [sign * values[k] for k, sign in signs.items()]))
        return [t for t, mine in scored if not any(_dominates(other, mine) for _, other in scored)]

    # -- helpers ------------------------------------------------------------------------------

    def _trial(self, name: str) -> tuple[StudyRecord, Trial]:
        match = _TRIAL_NAME.fullmatch(name)
        if match is None:
            raise errors.not_found(f"Trial {name} not found.")
        try:
            record = self._record(match["study"])
        except errors.ApiError:
            raise errors.not_found(f"Trial {name} not found.") from None
        number = match["trial"]
        found = None
        if number.isascii() and number.isdigit() and len(number) <= 18:
            found = self.store.trial(record.id, int(number))
        if found is None or not name_matches(name, found.name):
            raise errors.not_found(f"Trial {name} not found.")
        return record, found

    def _expect_running(self, trial: Trial, verb: str) -> None:
        if trial.state not in RUNNING:
            raise errors.failed_precondition(
                f"Cannot {verb} {trial.name}: it has completed ({trial.state.name})."
            )

    def _operation(
        self,
        parent: str,
        version: str,
        metadata_type: str,
        metadata: dict,
        response_type: str,
        response: dict,
    ) -> dict:
        now = _now()
        prefix = f"type.googleapis.com/google.cloud.aiplatform.{version}."
        operation = {
            "name": f"{parent}/operations/{new_id()}",
            "metadata": {
                "@type": prefix + metadata_type,
                "genericMetadata": {"createTime": now, "updateTime": now},
                **metadata,
            },
            "done": True,
            "response": {"@type": prefix + response_type, **response},
        }
        return self.root.operations.put(operation)


def _check_spec(spec: StudySpec) -> None:
    checked = StudySpec.deserialize(StudySpec.serialize(spec))
    checked.observation_noise = StudySpec.ObservationNoise(0)  # Vizier's own option: allowed
    try:
        check_study_spec(checked, "studySpec")
    except SpecError as exc:
        raise errors.invalid_argument(f"study.{exc}") from None


def _check_parameters(spec: StudySpec, parameters: Sequence[Trial.Parameter], path: str) -> None:
    """INVALID_ARGUMENT, naming the field, unless every parameter is one of the study's with a
    value its spec admits."""
    known: dict[str, list[space.Dimension]] = {}
    pending = list(space.dimensions(spec))
    while pending:
        dim = pending.pop()
        known.setdefault(dim.parameter_id, []).append(dim)
        pending.extend(child.dimension for child in dim.children)
    seen: set[str] = set()
    for index, parameter in enumerate(parameters):
        where = f"{path}[{index}]"
        if parameter.parameter_id not in known:
            raise errors.invalid_argument(
                f"{where}.parameterId: {parameter.parameter_id!r} is not a parameter of the study."
            )
        if parameter.parameter_id in seen:
            raise errors.invalid_argument(
                f"{where}.parameterId: {parameter.parameter_id!r} is given twice."
            )
        seen.add(parameter.parameter_id)
        value = cast(object, parameter.value)
        if not any(_admits(dim, value) for dim in known[parameter.parameter_id]):
            raise errors.invalid_argument(
                f"{where}.value: {value!r} is not a value of {parameter.parameter_id!r} in the "
                "study spec."
            )


def _admits(dim: space.Dimension, value: object) -> bool:
    if dim.kind == "CATEGORICAL":
        return isinstance(value, str) and value in dim.values
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return False
    if dim.kind == "DISCRETE":
        return any(abs(float(v) - value) <= space.DISCRETE_EPSILON for v in dim.values)
    if dim.kind == "INTEGER" and value != int(value):
        return False
    return dim.low <= value <= dim.high


def _check_measurement(measurement: Measurement, path: str) -> None:
    if measurement.step_count < 0:
        raise errors.invalid_argument(f"{path}.stepCount: must not be negative.")
    elapsed = type(measurement).pb(measurement).elapsed_duration
    if elapsed.seconds < 0 or elapsed.nanos < 0:
        raise errors.invalid_argument(f"{path}.elapsedDuration: must not be negative.")
    seen: set[str] = set()
    for index, metric in enumerate(measurement.metrics):
        where = f"{path}.metrics[{index}]"
        if not metric.metric_id:
            raise errors.invalid_argument(f"{where}.metricId is required.")
        if metric.metric_id in seen:
            raise errors.invalid_argument(f"{where}.metricId: {metric.metric_id!r} is given twice.")
        seen.add(metric.metric_id)
        if not math.isfinite(metric.value):
            raise errors.invalid_argument(f"{where}.value: must be a finite number.")


def _chosen_final(spec: StudySpec, trial: Trial) -> Measurement:
    """The measurement that becomes the final one when `complete` gives none."""
    measured = [metrics.Measurement.from_proto(m) for m in trial.measurements]
    chosen = metrics.final_measurement(measured, spec)
    if chosen is None:
        wanted = ", ".join(m.metric_id for m in spec.metrics)
        raise errors.failed_precondition(
            f"Cannot complete {trial.name} without finalMeasurement: none of its measurements "
            f"has every metric of the study ({wanted}). Give finalMeasurement, or "
            "trialInfeasible."
        )
    return chosen.to_proto()


def _dominates(other: list[float], mine: list[float]) -> bool:
    """True when `other` is at least as good on every metric and better on one (signed)."""
    pairs = list(zip(other, mine, strict=True))
    return all(a >= b for a, b in pairs) and any(a > b for a, b in pairs)


def _json(trial: Trial) -> dict:
    return cast(dict, json.loads(rest_json(trial)))


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")
