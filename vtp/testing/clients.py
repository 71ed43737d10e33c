"""Point a test's clients at the test service, for one project, and put everything back after.

Two audiences, as under `vtp local exec`:

- processes the test starts (`gcloud`, `gsutil`, `python my_script.py`, `vtp ...`) read the
  environment: `client_environment` is what `vtp local env` prints (`local_auth.client_settings`,
  the start-up hook first on PYTHONPATH), plus the test's project and region, the token, the
  storage root and a gcloud configuration directory of the session's own; `gsutil` runs as
  `gcloud storage` (its `use_gcloud_storage` mode, which needs an account name to pass gcloud's
  credentials on: the token file is what authenticates);
- the test's own process has imported its clients already, so the start-up hook cannot run in
  it: `pointed_at` sets `aiplatform.init`'s defaults (endpoint, credentials, project, location,
  staging bucket) and, for as long as the test runs, patches what the hook patches (Cloud Storage
  clients carry the token, Application Default Credentials are the token, project numbers are
  the local one) and shortens the SDK's wait between polls of a job.

Every change is undone when the `with` block ends: the environment, aiplatform's global
configuration and experiment, and each patched attribute.
"""

import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from vtp.cli.local_clients import gcloud_settings
from vtp.storage import GCS_ROOT_ENV
from vtp.testing.process import ServiceInfo
from vtp.vertex import local_auth

SDK_POLL_SECONDS = 0.2
"""The SDK's wait between polls of a job or pipeline run in a test (5 s, doubling, on Vertex)."""
TEST_ACCOUNT = "tests@local.invalid"
"""gcloud's account in tests: a name only (gcloud authenticates with the token file)."""
BOTO_FILE = "boto.cfg"
LOCAL_PROJECT_NUMBER = "100000000001"
"""The number the local storage API reports as every bucket's project (the start-up hook's)."""


def client_environment(
    info: ServiceInfo, project: str, location: str, gcloud_config: Path
) -> dict[str, str]:
    """The variables that point a test's subprocesses at the service, in `project`."""
    base = {k: v for k, v in os.environ.items() if k not in ("CLOUDSDK_CORE_PROJECT",)}
    base["GOOGLE_CLOUD_PROJECT"] = project
    hook = str(local_auth.STARTUP_HOOK_DIR)
    pythonpath = os.pathsep.join(
        p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != hook
    )
    settings = local_auth.client_settings(
        info.url, info.api_endpoint, str(info.roots_file), pythonpath
    )
    return {
        **settings,
        **gcloud_settings(base),
        "GOOGLE_CLOUD_PROJECT": project,
        "CLOUDSDK_AI_REGION": location,
        "CLOUDSDK_CONFIG": str(gcloud_config),
        "CLOUDSDK_CORE_ACCOUNT": TEST_ACCOUNT,
        "CLOUDSDK_CORE_DISABLE_PROMPTS": "1",
        "BOTO_CONFIG": str(gcloud_config / BOTO_FILE),
        "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE": str(info.token_file),
        local_auth.TOKEN_ENV: info.token,
        local_auth.RUNTIME_DIR_ENV: os.environ.get(local_auth.RUNTIME_DIR_ENV, ""),
        GCS_ROOT_ENV: str(info.storage_root),
    }


def gcloud_config_dir(folder: Path) -> Path:
    """A gcloud configuration of the session's own: no prompts, no update checks (written as
    files: each `gcloud config set` costs a second); and gsutil's, which hands its commands
    to `gcloud storage`."""
    (folder / "configurations").mkdir(parents=True, exist_ok=True)
    (folder / "active_config").write_text("default")
    (folder / "configurations" / "config_default").write_text(
        "[core]\ndisable_usage_reporting = true\n[component_manager]\ndisable_update_check = true\n"
    )
    (folder / BOTO_FILE).write_text("[GSUtil]\nuse_gcloud_storage = True\n")
    return folder


@contextlib.contextmanager
def pointed_at(
    info: ServiceInfo, environment: Mapping[str, str], project: str, location: str
) -> Iterator[None]:
    """Within the block: `environment` set, the SDK's defaults and the in-process clients
    pointed at the service (see the module docstring); all of it undone afterwards."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(_environment(environment))
        patch = _Patcher(stack)
        _patch_clients(patch, info, project)
        stack.enter_context(_sdk_defaults(info, project, location))
        yield


@contextlib.contextmanager
def _environment(values: Mapping[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.update({k: v for k, v in values.items() if v})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


class _Patcher:
    """Sets attributes, and sets them back when its ExitStack closes."""

    def __init__(self, stack: contextlib.ExitStack) -> None:
        self._stack = stack

    def __call__(self, owner: Any, name: str, value: Any) -> None:
        original = owner.__dict__[name] if name in owner.__dict__ else getattr(owner, name)
        setattr(owner, name, value)
        self._stack.callback(setattr, owner, name, original)


def _patch_clients(patch: _Patcher, info: ServiceInfo, project: str) -> None:
    import google.auth
    from google.cloud import storage
    from google.cloud.aiplatform import jobs, pipeline_jobs
    from google.cloud.aiplatform.utils import resource_manager_utils
    from google.oauth2.credentials import Credentials

    token = info.token
    patch(google.auth, "default", lambda *args, **kwargs: (Credentials(token), project))
    patch(resource_manager_utils, "get_project_number", lambda *a, **k: LOCAL_PROJECT_NUMBER)
    patch(resource_manager_utils, "get_project_id", lambda *a, **k: project)
    original_init = storage.Client.__init__

    def storage_init(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) < 2 and kwargs.get("credentials") is None:
            kwargs["credentials"] = Credentials(token)
        original_init(self, *args, **kwargs)

    patch(storage.Client, "__init__", storage_init)
    for module in (jobs, pipeline_jobs):
        patch(module, "_JOB_WAIT_TIME", SDK_POLL_SECONDS)
        patch(module, "_LOG_WAIT_TIME", SDK_POLL_SECONDS)


@contextlib.contextmanager
def _sdk_defaults(info: ServiceInfo, project: str, location: str) -> Iterator[None]:
    """`aiplatform.init` for the service and `project`, undone (experiment included) after."""
    from google.cloud import aiplatform
    from google.cloud.aiplatform import initializer
    from google.cloud.aiplatform.metadata import metadata
    from google.oauth2.credentials import Credentials

    config, tracker = initializer.global_config, metadata._experiment_tracker
    saved_config, saved_tracker = dict(vars(config)), dict(vars(tracker))
    aiplatform.init(
        project=project,
        location=location,
        api_endpoint=info.api_endpoint,
        credentials=Credentials(info.token),
        staging_bucket=f"gs://{project}-staging",
    )
    try:
        yield
    finally:
        vars(config).clear()
        vars(config).update(saved_config)
        vars(tracker).clear()
        vars(tracker).update(saved_tracker)
