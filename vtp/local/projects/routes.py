"""Resource Manager's project lookup on the local service: every project ID is the one local
project, whose number is the one the local Cloud Storage reports for every bucket.

    GET /v3/projects/{id}   google.cloud.resourcemanager.v3.Project:
                            {"name": "projects/<number>", "projectId": id, "state": "ACTIVE"}
    GET /v1/projects/{id}   cloudresourcemanager v1 (gcloud): {"projectNumber", "projectId"}

The resource-manager client reaches it over gRPC (`Projects/GetProject`, transcoded to the
first) or REST on the SDK's endpoint, as `vtp local exec` points it there; a number looks up
as itself. Clients ask this to turn an ID into a number (the SDK's pipelines, its system tests).
"""

import json
import re

from vtp.local.base import errors
from vtp.local.base.names import LOCAL_PROJECT_NUMBER
from vtp.local.base.routing import Request, Router

PROJECT_ID = re.compile(r"[a-z0-9][a-z0-9.:-]{0,62}")
_CREATED = "2024-01-01T00:00:00Z"


def add_routes(router: Router) -> None:
    """Route the project lookups."""
    router.add("GET", r"/v3/projects/(?P<project>[^/:]+)", _project_v3)
    router.add("GET", r"/v1/projects/(?P<project>[^/:]+)", _project_v1)


def _project_id(request: Request) -> str:
    project = request.params["project"]
    if not PROJECT_ID.fullmatch(project):
        raise errors.not_found(f"Project projects/{project} not found.")
    return project


def _project_v3(request: Request) -> str:
    project = _project_id(request)
    return json.dumps(
        {
            "name": f"projects/{LOCAL_PROJECT_NUMBER}",
            "projectId": project,
            "displayName": project,
            "state": 1 if request.enum_ints else "ACTIVE",
            "createTime": _CREATED,
            "updateTime": _CREATED,
        }
    )


def _project_v1(request: Request) -> str:
    project = _project_id(request)
    return json.dumps(
        {
            "projectNumber": LOCAL_PROJECT_NUMBER,
            "projectId": project,
            "name": project,
            "lifecycleState": "ACTIVE",
            "createTime": _CREATED,
        }
    )
