"""Which local service a `vtp run` goes to: the `vtp local serve` that holds its state directory,
or a service of its own on it for the duration of the run.

A state directory has one service at a time (its lock, `vtp.local.base.state_dir`), and one
console shows everything in it. So when a `vtp local serve` holds the directory, `vtp run`
submits to that service, found through the runtime file it publishes (`vtp.vertex.local_auth`);
its jobs and console outlive the run. Otherwise `vtp run` starts its own service on free ports,
which resumes nothing an earlier run left unfinished (`ServiceConfig.resume_unfinished=False`)
and ends with the run. Its run comes at once, so the run's worker is started first
(`vtp.local.pipeline_jobs.standby`) and handed to the service: by `prepare`, which `vtp run`
calls before its own imports, or else before the service is imported; its imports overlap the
command's, the service's start and the job's creation. The service prepares no other
(`ServiceConfig.prepare_runs` is off): it ends with this run. Another `vtp run`'s service is not
shared: it ends with that run, and with it anything of ours. `OWNER_FILE` tells one from a
`vtp local serve`.
"""

import contextlib
import json
import logging
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from vtp.local.console import console_url
from vtp.vertex import local_auth

if TYPE_CHECKING:
    from vtp.local.pipeline_jobs.standby import Standby

OWNER_FILE = "vtp-run.json"
"""In a state directory while a `vtp run` serves it: {"pid"} of that run."""
PUBLISH_WAIT_SECONDS = 10.0
"""How long a service that holds the directory may take to publish its address (it publishes
right after its front ends bind)."""
_log = logging.getLogger(__name__)
_prepared: dict[Path, "Standby"] = {}
"""The standby `prepare` spawned, by state directory, for `service_for` to hand its service."""


class StateDirBusy(RuntimeError):
    """The state directory is held by a service `vtp run` cannot submit to; the message says
    what to do."""


@dataclass(frozen=True)
class Target:
    """A running local service a run is submitted to."""

    url: str
    token: str
    state_dir: Path
    storage_root: Path
    embedded: bool
    """True: `vtp run`'s own service, which stops when the run ends."""

    def console(self, job_name: str = "") -> str:
        """The console's address (signed in by the token), at the run `job_name`'s page."""
        page = f"/runs/{job_name.rsplit('/', 1)[-1]}" if job_name else ""
        return console_url(self.url, self.token, page)


def prepare(state_dir: Path, cache: bool | None = None) -> None:
    """Spawn the worker for the run that `service_for(state_dir)` is about to serve now, while
    the caller imports and compiles (`cache=False`: the run reads no cache, as `vtp run
    --no-cache`); nothing when a `vtp local serve` holds the directory (its own service runs the
    run). Should no service take it, it ends with this process (its shim watches this
    process)."""
    from vtp.local.base.config import ServiceConfig
    from vtp.local.pipeline_jobs.standby import spawn_standby

    state_dir = state_dir.resolve()
    if state_dir in _prepared or _served(state_dir) is not None:
        return
    config = ServiceConfig.from_env(state_dir, port=0, resume_unfinished=False)
    standby = spawn_standby(config, caching=cache is not False)
    if standby is not None:
        _prepared[state_dir] = standby


@contextlib.contextmanager
def service_for(state_dir: Path, run_coming: bool = True) -> Iterator[Target]:
    """The service of `state_dir` for the duration: a `vtp local serve`'s, or one of our own
    (stopped on the way out). StateDirBusy when another `vtp run` holds the directory.
    `run_coming=False`: the caller only reads what the directory holds, so our own service
    prepares no worker (whose imports would take the CPU of whatever else runs)."""
    from vtp.local.base.config import ServiceConfig
    from vtp.local.pipeline_jobs.standby import spawn_standby
    from vtp.local.runtime.capacity import detect_gpus

    state_dir = state_dir.resolve()
    serving = _served(state_dir)
    prepared = _prepared.pop(state_dir, None)
    if serving is not None:
        if prepared is not None:  # that service runs the run
            prepared.kill()
        yield serving
        return
    config = ServiceConfig.from_env(
        state_dir,
        port=0,
        gpus=tuple(detect_gpus()),
        resume_unfinished=False,
    )
    # before the service's imports, which it overlaps (`prepare`'s, if it came first)
    standby = prepared or (spawn_standby(config) if run_coming else None)
    from vtp.local.app import running
    from vtp.local.base.state_dir import StateDirInUse

    try:
        service = running(config, standby)
    except StateDirInUse:
        if standby is not None:
            standby.kill()
        yield _holder(state_dir)
        return
    except BaseException:
        if standby is not None:
            standby.kill()
        raise
    with service:
        owner = state_dir / OWNER_FILE
        owner.write_text(json.dumps({"pid": os.getpid()}))
        _log.info("Local Vertex service at %s (state in %s)", service.url, state_dir)
        try:
            yield Target(service.url, service.token, state_dir, config.storage_root, True)
        finally:
            owner.unlink(missing_ok=True)


def storage_root(state_dir: Path) -> Path:
    """Where `gs://` lives for a run in `state_dir`: the storage root of the `vtp local serve`
    that holds it, else `<state_dir>/gcs`, the run's own service's."""
    state_dir = state_dir.resolve()
    serving = _served(state_dir)
    return serving.storage_root if serving is not None else state_dir / "gcs"


def served(state_dir: Path) -> Target | None:
    """The running `vtp local serve` that holds `state_dir`, if one does."""
    return _served(state_dir.resolve())


def _holder(state_dir: Path) -> Target:
    """The `vtp local serve` holding `state_dir`, once it has published its address."""
    deadline = time.monotonic() + PUBLISH_WAIT_SECONDS
    while True:
        if _run_owner(state_dir):
            raise StateDirBusy(
                f"another `vtp run` uses the state directory {state_dir}; wait for it to end, "
                "choose another --state-dir, or serve it with `vtp local serve --state-dir "
                f"{state_dir}` and every `vtp run` there submits to that service"
            )
        found = _served(state_dir)
        if found is not None:
            return found
        if time.monotonic() > deadline:
            raise StateDirBusy(
                f"a local Vertex service holds the state directory {state_dir} but publishes "
                f"no address in {local_auth.runtime_dir()}; stop it, or choose another "
                "--state-dir"
            )
        time.sleep(0.1)


def _served(state_dir: Path) -> Target | None:
    """The running `vtp local serve` (not a `vtp run`'s service) that published `state_dir`."""
    for path in sorted(local_auth.runtime_dir().glob("service-*.json")):
        try:
            info = json.loads(path.read_text())
            same = Path(info["state_dir"]).resolve() == state_dir
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not same or local_auth.published(info["url"]) is None:
            continue  # another directory's, or a service that died without withdrawing it
        if _run_owner(state_dir) == int(info.get("pid", 0)):
            return None  # another `vtp run`'s own service
        try:  # the file's own token, whatever $VTP_LOCAL_TOKEN says (that is for another)
            token = Path(info["token_file"]).read_text().strip()
        except (OSError, KeyError, TypeError):
            continue
        if token:
            root = Path(info.get("storage_root") or state_dir / "gcs")
            _log.info("Using the `vtp local serve` at %s (state in %s)", info["url"], state_dir)
            return Target(info["url"], token, state_dir, root, False)
    return None


def _run_owner(state_dir: Path) -> int:
    """The pid of the live `vtp run` that serves `state_dir` itself, or 0."""
    try:
        pid = int(json.loads((state_dir / OWNER_FILE).read_text())["pid"])
        os.kill(pid, 0)
    except (OSError, ValueError, KeyError, TypeError):
        return 0
    return pid
