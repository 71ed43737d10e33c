"""Who made the request being served, and what a workload may not do.

Two kinds of caller hold a credential (`guard.py`, `vtp.vertex.local_auth.caller`): the owner,
with the service's token (the user who started it: everything is theirs), and a workload, with
the credential a container the service runs was given (`vtp.containers.workload_token`), which
names the resource it runs for (`projects/.../customJobs/1`, a PipelineJob, an Endpoint).

A container is the one place here where code runs confined: in its image, seeing only what was
mounted into it. So what a workload asks for stays confined too:

- It starts nothing on this machine's host: a CustomJob (or tuning job) whose every pool runs in
  its image through the engine is created; one with a pool that would be a host process (this
  project's image, a python package, an image without an engine) is refused, and so are
  PipelineJobs and schedules (their worker and lightweight tasks are host processes) and
  anything else served or run on the host (`refuse_host`). Otherwise a container would make the
  service run code as its user, outside the container, where the token is.
- It reads the logs only of its own resource and of the jobs it created (`may_read_logs`).

The caller is set per request by the front ends (`serving`) in a context variable, so service
code several calls down asks `current()` without it being passed through every signature; work
the service does later on its own threads (a tuning job's trials, a schedule's runs) is the
owner's, and was checked when the request that asked for it was served.
"""

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass

from vtp.local.base import errors


@dataclass(frozen=True)
class Caller:
    """The holder of a request's credential: the owner, or the workload of resource
    `workload`."""

    workload: str = ""

    @property
    def is_workload(self) -> bool:
        """Whether the credential is a container's, not the service's token."""
        return bool(self.workload)


OWNER = Caller()
_current: contextvars.ContextVar[Caller] = contextvars.ContextVar("vtp_caller", default=OWNER)


def current() -> Caller:
    """The caller of the request this thread serves (the owner outside any request)."""
    return _current.get()


@contextlib.contextmanager
def serving(caller: Caller) -> Iterator[None]:
    """Serve one request as `caller`."""
    reset = _current.set(caller)
    try:
        yield
    finally:
        _current.reset(reset)


def refuse_host(what: str, why: str) -> None:
    """PERMISSION_DENIED when a workload asks for `what`, which would run on the host (`why`);
    nothing when the owner does."""
    caller = current()
    if caller.is_workload:
        raise errors.ApiError(
            errors.PERMISSION_DENIED,
            f"{what}: {why}; the credential of {caller.workload} (a container's) may start only "
            "what runs in its image through the container engine. Create it with the owner's "
            "token (`vtp local env`), or give every pool an image of its own.",
        )


def creator() -> str:
    """What to record as the creator of a resource made now: the workload's name, "" for the
    owner."""
    return current().workload


def may_read(resource: str, created_by: str = "") -> bool:
    """Whether this request's caller may read the logs of `resource` (made by `created_by`):
    the owner always, a workload only its own resource's and those it created."""
    caller = current()
    return not caller.is_workload or caller.workload in (resource, created_by)


def may_read_logs(resource: str, created_by: str = "") -> None:
    """PERMISSION_DENIED when a workload asks for the logs of `resource` (made by
    `created_by`), which is neither its own nor one it created (`may_read`)."""
    if not may_read(resource, created_by):
        raise errors.ApiError(
            errors.PERMISSION_DENIED,
            f"The credential of {current().workload} (a container's) reads only its own logs "
            f"and those of the jobs it created, not {resource}'s.",
        )
