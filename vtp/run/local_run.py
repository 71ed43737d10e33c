"""Run a pipeline on this machine: an embedded local Vertex service plus kfp.local.

The pipeline runs unchanged: its components talk to the local service through the aiplatform
client (`VTP_LOCAL_ENDPOINT`), and `gs://` URIs resolve under the service's storage root
(`VTP_GCS_ROOT`), exactly as they would on Vertex through the Cloud Storage FUSE mount.
"""

import builtins
import contextlib
import logging
import os
import time
import webbrowser
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vtp import storage
from vtp.engine import fork_tasks, kfp_fixes, vertex_tasks
from vtp.engine import task_output as output
from vtp.local.console import console_url
from vtp.vertex import local_auth
from vtp.vertex.endpoint import LOCAL_ENDPOINT_ENV

_log = logging.getLogger(__name__)
LOCAL_PIPELINE_ROOT = "gs://vtp-local/pipeline-root"


@dataclass(frozen=True)
class RunResult:
    """What a local pipeline run produced."""

    pipeline: str
    succeeded: bool
    seconds: float
    outputs: dict[str, Any]
    pipeline_root: Path
    storage_root: Path
    """Where gs:// lives locally: gs://BUCKET/PATH is STORAGE_ROOT/BUCKET/PATH."""
    error: str = ""


@contextlib.contextmanager
def embedded_service(state_dir: Path, **overrides: Any) -> Iterator[str]:
    """A local Vertex service on a free port for the duration; sets the env the components read."""
    from vtp.local.app import running
    from vtp.local.base.config import ServiceConfig
    from vtp.local.runtime.capacity import detect_gpus

    config = ServiceConfig.from_env(state_dir, port=0, gpus=tuple(detect_gpus()), **overrides)
    with running(config) as service:
        # What tasks need: the service, its storage root and token, and the client settings
        # (start-up hook, TLS trust) that point GCPC's launchers and the SDK back at it.
        env = {
            **service.root.client_env,
            LOCAL_ENDPOINT_ENV: service.url,
            storage.GCS_ROOT_ENV: str(config.storage_root.resolve()),
            local_auth.TOKEN_ENV: service.token,
        }
        env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [env.get("PYTHONPATH"), os.environ.get("PYTHONPATH")])
        )
        saved = {key: os.environ.get(key) for key in env}
        os.environ.update(env)
        _log.info("Local Vertex service at %s (state in %s)", service.url, state_dir)
        _log.info("Console: %s", console_url(service.url, service.token))
        try:
            yield service.url
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def run_pipeline(
    name: str,
    pipeline: Callable[..., Any],
    arguments: Mapping[str, Any],
    state_dir: Path,
    open_console: bool = False,
    after: Callable[[], None] = lambda: None,
) -> RunResult:
    """Run `pipeline` (called `name`) with kfp.local against an embedded service in `state_dir`.

    `open_console` opens the console in a browser once the service is up; `after()` runs once
    the pipeline has ended, while the service (and its console) still serve."""
    from kfp import local

    kfp_fixes.apply()
    vertex_tasks.check_runnable(_spec_of(pipeline))
    output.quiet()
    started = time.monotonic()
    # The fork server imports while the service starts: both are ready by the first task.
    with fork_tasks.serving(), embedded_service(state_dir) as url:
        if open_console:
            webbrowser.open(console_url(url, os.environ[local_auth.TOKEN_ENV]))
        # Under the storage root, so every artifact also has a gs:// URI (the Model Registry
        # takes artifact URIs only in Cloud Storage), as under a gs:// pipeline root on Vertex.
        pipeline_root = storage.local_path(LOCAL_PIPELINE_ROOT)
        storage_root = storage.gcs_root()
        local.init(runner=local.SubprocessRunner(use_venv=False), pipeline_root=str(pipeline_root))
        original_print = builtins.print
        try:
            task = pipeline(**arguments)
        except RuntimeError as exc:  # kfp.local's report of a failed task
            elapsed = time.monotonic() - started
            error = "\n".join([output.plain(str(exc)), *output.failure_tail()])
            after()
            return RunResult(name, False, elapsed, {}, pipeline_root, storage_root, error)
        finally:
            # kfp.local indents task output by swapping builtins.print; ParallelFor threads can
            # leave a swapped one installed.
            builtins.print = original_print
        elapsed = time.monotonic() - started
        after()
    outputs = dict(task.outputs) if task.outputs else {}
    return RunResult(name, True, elapsed, outputs, pipeline_root, storage_root)


def _spec_of(pipeline: Any) -> dict[str, Any]:
    """The compiled pipeline spec of a kfp pipeline object, as a dict."""
    from google.protobuf import json_format

    spec = getattr(pipeline, "pipeline_spec", None)
    return json_format.MessageToDict(spec) if spec is not None else {}
