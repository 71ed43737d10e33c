"""A run's worker started before its run: the standby, prepared once per service.

A run's worker spends its first second importing (kfp, the engine) and starting its fork server,
whose stages import what the tasks need (`vtp.engine.fork_server`); none of it depends on the
run. So the service starts `python -m vtp.engine.worker --standby CACHE_DIR` ahead of time, with
everything a run's worker gets that does not depend on the run or on the service's addresses
(`early_settings`): a container's environment, the engine's settings, the start-up hook and the
user's folder on PYTHONPATH, the CA bundle, the user's folder as its working directory, in a
process group of its own under the shim (`vtp.local.runtime.process`), exactly as a fresh
worker. It imports, starts its fork server (unless the cache holds entries: a rerun's tasks are
all cache hits, and those imports would take the CPU the rerun needs; `worker.run` starts it
then as for any run), and blocks reading its assignment: one JSON line on its stdin, the run's
directory and the settings it lacks. End of file (the service closed the pipe, or is gone) ends
it at once, having started nothing.

Isolation is a fresh worker's. The standby has a run token of its own in its environment from
its start (so its fork server and every task hold it in /proc/PID/environ too), which the
service stores in the run's record before handing the run over, so a restarted service finds
and kills what the run left behind as before. The settings that arrive with the assignment are
only the names in `LATE_NAMES`: ones read when used, never at interpreter start-up or import
(PYTHONPATH is read at start-up, and gRPC reads GRPC_DEFAULT_SSL_ROOTS_FILE_PATH when imported:
those are in the spawned environment). Any other difference between the standby's environment
and the one a fresh worker of the run would get makes the standby unusable for it (`overlay`):
the run gets a fresh worker, the standby is killed, and the service's log says why. The start-up
hook's settings (the service's address, its token, the storage root) are all late: the hook
patches nothing at the standby's start, and the worker applies it once it has them, as a forked
task does.

When (`service.py`): `vtp run` spawns one before importing the service (`vtp.run.target`), so its
imports overlap the service's, and hands it to its service, which ends with that one run. A
service that prepares runs (`ServiceConfig.prepare_runs`: `vtp local serve --prepare-runs`) has
one from its start and, after a run ends with no other run active, spawns one for the next: never
while a run is active, whose CPU it would take. There is never more than one; it is killed (its
whole group, by its shim) when the service stops. An idle standby holds its imports in memory
(with its fork server's stages, torch among them, about 0.9 GB of PSS on the train pipeline's
machine), and one spawned after every run took the CPU of the runs that followed in a test file
that runs small pipelines one after another: other services start a worker per run.
"""

import json
import os
import secrets
import shlex
import signal
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from vtp import containers, storage
from vtp.engine import worker
from vtp.local.base.config import ServiceConfig
from vtp.local.pipeline_jobs.process import RUN_DIR_ENV, worker_environment
from vtp.local.runtime.process import SERVICE_ENV, TOKEN_ENV, signal_group, start
from vtp.vertex import local_auth
from vtp.vertex.endpoint import LOCAL_ENDPOINT_ENV

ROOTS_FILE = Path("tls", "roots.pem")
"""The CA bundle under the state directory, as the service writes it (`base/tls.py`)."""
LATE_NAMES = frozenset(
    {
        RUN_DIR_ENV,
        LOCAL_ENDPOINT_ENV,
        local_auth.API_ENDPOINT_ENV,
        local_auth.TOKEN_ENV,
        "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE",
        "STORAGE_EMULATOR_HOST",
        storage.GCS_ROOT_ENV,
        SERVICE_ENV,
        "VTP_LOCAL_PROJECT",
        "VTP_LOCAL_LOCATION",
        "BOTO_CONFIG",  # gsutil's settings (`local_auth.gsutil_settings`): gsutil reads them
        "CLOUDSDK_CORE_PASS_CREDENTIALS_TO_GSUTIL",
        "CLOUDSDK_CORE_ACCOUNT",
    }
)
"""What a standby may be given with its run: the run's and the bound service's settings, read
when used."""
LATE_PREFIXES = ("CLOUDSDK_API_ENDPOINT_OVERRIDES_",)
"""gcloud's endpoint overrides (read by gcloud, a process of its own)."""


def early_settings(config: ServiceConfig) -> dict[str, str]:
    """What the service gives a run's worker (`service.py`'s `_settings`) that is known before
    the service has bound its ports: the start-up hook, the user's folder and the service's
    own PYTHONPATH, in that order; the CA bundle; the container engine."""
    assert config.project_dir is not None, "ServiceConfig resolves it"
    path = [str(local_auth.STARTUP_HOOK_DIR), str(config.import_dir or "")]
    roots = str(config.state_dir / ROOTS_FILE)
    settings = {
        "PYTHONPATH": os.pathsep.join(filter(None, [*path, os.environ.get("PYTHONPATH")])),
        **({} if config.import_dir else {"PYTHONSAFEPATH": "1"}),  # it works in that folder
        "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": roots,
        "REQUESTS_CA_BUNDLE": roots,
    }
    if config.container_engine:
        settings[containers.ENGINE_ENV] = shlex.join(config.container_engine)
    return settings


def _late(name: str) -> bool:
    return name in LATE_NAMES or name.startswith(LATE_PREFIXES)


class Standby:
    """A worker waiting for its run, and the write end of the pipe its assignment comes by."""

    def __init__(self, config: ServiceConfig, caching: bool = True) -> None:
        """Spawn it for runs of a service with `config` (see the module's docstring);
        `caching=False`: its run will read no cache (`vtp run --no-cache`), so its fork server
        starts at once whatever the cache holds."""
        assert config.project_dir is not None, "ServiceConfig resolves it"
        self.token = secrets.token_hex(16)  # a run token, as `RunProcess` makes one
        settings = early_settings(config)
        self.env = {**worker_environment(settings, config.pass_env), TOKEN_ENV: self.token}
        cache_dir = config.state_dir / "pipelines" / ".cache"  # `worker.run`'s default
        argv = [sys.executable, "-m", "vtp.engine.worker", worker.STANDBY, str(cache_dir)]
        argv += [] if caching else [worker.NO_CACHE]
        read_end, self._assignments = os.pipe()
        try:
            # What it prints before its run goes to a file of its own; the worker copies it
            # into the run's log once it knows the run.
            with tempfile.TemporaryFile(prefix="vtp-standby-") as output:
                self.process = start(argv, self.env, config.project_dir, output, stdin=read_end)
        except BaseException:
            os.close(self._assignments)
            raise
        finally:
            os.close(read_end)

    def overlay(self, env: Mapping[str, str]) -> dict[str, str] | str:
        """What a fresh worker with environment `env` (its token aside) would have that this
        standby lacks: the settings to send with the run; or why this standby cannot take it."""
        if self.process.poll() is not None:
            return f"it exited with status {self.process.returncode}"
        lost = sorted(k for k in self.env if k not in env and k != TOKEN_ENV)
        changed = sorted(k for k, v in env.items() if self.env.get(k) != v and not _late(k))
        if lost or changed:
            return f"its environment differs from the run's in {', '.join(lost + changed)}"
        return {k: v for k, v in env.items() if self.env.get(k) != v}

    def assign(self, run_dir: Path, overlay: Mapping[str, str]) -> bool:
        """Hand it the run in `run_dir` with the settings `overlay`; False when it is gone."""
        line = json.dumps({"runDir": str(run_dir), "env": dict(overlay)}).encode() + b"\n"
        fd, self._assignments = self._assignments, -1
        try:
            with open(fd, "wb") as pipe:  # closed after: the standby reads one line
                pipe.write(line)
        except BrokenPipeError:  # it died before reading
            return False
        return True

    def close(self) -> None:
        """Close the pipe its run would come by: it ends on its own, having run nothing."""
        if self._assignments >= 0:
            os.close(self._assignments)
            self._assignments = -1

    def kill(self) -> None:
        """Kill it and its group (its fork server too), and wait for its end."""
        signal_group(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.close()


def spawn_standby(config: ServiceConfig, caching: bool = True) -> Standby | None:
    """A standby for runs of a service with `config` (`caching` as `Standby` takes it), or None
    when one cannot be started (a fresh worker then fails, with the run's error in the run's
    log)."""
    try:
        return Standby(config, caching)
    except OSError:
        return None
