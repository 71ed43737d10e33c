"""Vertex's Vizier REST routes (`studies` and their `trials`), added to the local service's router.

    POST   /v1/projects/{p}/locations/{l}/studies                          create
    GET    /v1/projects/{p}/locations/{l}/studies                          list
    POST   /v1/projects/{p}/locations/{l}/studies:lookup                   {"displayName"}
    GET    /v1/projects/{p}/locations/{l}/studies/{s}                      get
    DELETE /v1/projects/{p}/locations/{l}/studies/{s}                      delete -> {}
    POST   .../studies/{s}/trials:suggest       {"suggestionCount", "clientId"} -> Operation
    POST   .../studies/{s}/trials               create
    GET    .../studies/{s}/trials               list
    POST   .../studies/{s}/trials:listOptimalTrials                        {"optimalTrials"}
    GET    .../studies/{s}/trials/{t}           get
    DELETE .../studies/{s}/trials/{t}           delete -> {}
    POST   .../studies/{s}/trials/{t}:addTrialMeasurement  {"measurement"} -> Trial
    POST   .../studies/{s}/trials/{t}:complete  {"finalMeasurement", "trialInfeasible", ...}
    POST   .../studies/{s}/trials/{t}:stop      -> Trial
    POST   .../studies/{s}/trials/{t}:checkTrialEarlyStoppingState         -> Operation
    GET    .../studies/{s}[/trials/{t}]/operations/{op}                    the operations above

(and the same under /v1beta1/; operations also under /ui/, where the aiplatform clients look
for them first). Enums are names, or integers when the request asks for
`$alt=json;enum-encoding=int`.
"""

import json

from google.cloud.aiplatform_v1 import AddTrialMeasurementRequest

from vtp.local.base import errors
from vtp.local.base.resources import rest_json
from vtp.local.base.routing import (
    OPERATIONS_PARENT,
    Collection,
    Request,
    Router,
    list_page,
    operation_routes,
    parse_message,
)
from vtp.local.vizier.service import Vizier

STUDIES = Collection("studies", "study")
_TRIALS = STUDIES.item + "/trials"
_TRIAL = _TRIALS + "/(?P<trial>[^/:]+)"


def add_routes(router: Router, vizier: Vizier) -> None:
    """Route the Vizier methods to `vizier`."""
    STUDIES.add_create(router, vizier.create_study)
    STUDIES.add_standard(router, vizier.get, vizier.list, vizier.delete_study)
    router.add("POST", STUDIES.path + ":lookup", lambda r: _lookup(vizier, r))

    router.add("POST", _TRIALS + ":suggest", lambda r: _suggest(vizier, r))
    router.add("POST", _TRIALS, lambda r: _json(vizier.create_trial(_study(r), r.body), r))
    router.add("GET", _TRIALS, lambda r: _list_trials(vizier, r))
    router.add("POST", _TRIALS + ":listOptimalTrials", lambda r: _optimal(vizier, r))
    router.add("GET", _TRIAL, lambda r: _json(vizier.get_trial(_trial(r)), r))
    router.add("DELETE", _TRIAL, lambda r: json.dumps(vizier.delete_trial(_trial(r))))
    router.add("POST", _TRIAL + ":addTrialMeasurement", lambda r: _measure(vizier, r))
    router.add("POST", _TRIAL + ":complete", lambda r: _complete(vizier, r))
    router.add("POST", _TRIAL + ":stop", lambda r: _json(vizier.stop_trial(_trial(r)), r))
    router.add("POST", _TRIAL + ":checkTrialEarlyStoppingState", lambda r: _check(vizier, r))

    get_operation = vizier.root.operations.get
    STUDIES.add_operations(router, get_operation)
    operation_routes(router, OPERATIONS_PARENT + "/studies/[^/:]+/trials/[^/:]+", get_operation)


def _study(request: Request) -> str:
    return STUDIES.name(request)


def _trial(request: Request) -> str:
    return f"{STUDIES.name(request)}/trials/{request.params['trial']}"


def _json(message: object, request: Request) -> str:
    return rest_json(message, request.enum_ints)


def _lookup(vizier: Vizier, request: Request) -> str:
    display_name = request.json().get("displayName")
    return _json(vizier.lookup_study(request.params["parent"], display_name), request)


def _suggest(vizier: Vizier, request: Request) -> str:
    operation = vizier.suggest_trials(_study(request), request.body, request.params["version"])
    return json.dumps(operation)


def _list_trials(vizier: Vizier, request: Request) -> str:
    args = request.list_args()
    found, token = vizier.list_trials(_study(request), args.filter, args.page_size, args.page_token)
    return list_page("trials", [json.loads(_json(t, request)) for t in found], token)


def _optimal(vizier: Vizier, request: Request) -> str:
    request.json()  # ListOptimalTrialsRequest has nothing but the parent; the body must be JSON
    found = vizier.list_optimal_trials(_study(request))
    return list_page("optimalTrials", [json.loads(_json(t, request)) for t in found], "")


def _measure(vizier: Vizier, request: Request) -> str:
    parsed = parse_message(AddTrialMeasurementRequest, request.body)
    if "measurement" not in parsed:
        raise errors.invalid_argument("measurement is required.")
    return _json(vizier.add_trial_measurement(_trial(request), parsed.measurement), request)


def _complete(vizier: Vizier, request: Request) -> str:
    return _json(vizier.complete_trial(_trial(request), request.body), request)


def _check(vizier: Vizier, request: Request) -> str:
    request.json()  # the request has nothing but the trial's name; the body must be JSON
    operation = vizier.check_trial_early_stopping_state(_trial(request), request.params["version"])
    return json.dumps(operation)
