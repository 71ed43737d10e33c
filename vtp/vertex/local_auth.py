"""The local service's credential, and how clients find it without being told (Jupyter's model).

A running service keeps a random bearer token in `<state-dir>/token` (mode 0600, new at every
start) and refuses API requests without it. So that no client needs a flag for it, the service
also publishes a runtime file per port, readable by its user only (both written and read
through `vtp.private_files`: a folder another user could plant or replace is refused, and a file
that is not the user's own is never read):

    $VTP_RUNTIME_DIR (else $XDG_RUNTIME_DIR/vtp, else ~/.local/share/vtp/runtime)
        service-<port>.json   {"url", "pid", "state_dir", "token_file", "storage_root",
                               "api_endpoint", "roots_file"}
        gsutil-boto.cfg       gsutil's configuration under `vtp local env`/`exec` (no port in
                              it: gsutil runs as `gcloud storage`, see `gsutil_settings`)

A client that talks to `http://127.0.0.1:<port>` takes `$VTP_LOCAL_TOKEN` when set (local
pipeline runs and replicas get it), else the token of the service published for that port. gcloud
reads the same file with `--access-token-file=<state-dir>/token`; the aiplatform SDK takes
`google.oauth2.credentials.Credentials(token)`.
"""

import hmac
import json
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from vtp import containers, private_files

if TYPE_CHECKING:
    import requests
    from google.auth.credentials import Credentials as AuthCredentials

TOKEN_ENV = containers.TOKEN_VARIABLE
"""Environment variable carrying the token to processes a service starts."""

RUNTIME_DIR_ENV = "VTP_RUNTIME_DIR"
TOKEN_FILE = "token"


def runtime_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """Where running services publish themselves for this user."""
    if environ.get(RUNTIME_DIR_ENV):
        return Path(environ[RUNTIME_DIR_ENV])
    if environ.get("XDG_RUNTIME_DIR"):
        return Path(environ["XDG_RUNTIME_DIR"]) / "vtp"
    return Path.home() / ".local" / "share" / "vtp" / "runtime"


def new_token(state_dir: Path) -> str:
    """A fresh random token, written to `<state_dir>/token` readable by this user only."""
    token = secrets.token_urlsafe(32)
    private_files.write_private(state_dir / TOKEN_FILE, token + "\n")
    return token


def caller(token: str, presented: str) -> str | None:
    """Who presents `presented`: "" for the service's `token` (its owner), the workload's
    resource name for a workload credential made from it (`vtp.containers.workload_token`,
    which containers get instead), None for anything else; in constant time."""
    if presented.startswith(containers.WORKLOAD_PREFIX):
        return containers.workload_of(token, presented)
    return "" if hmac.compare_digest(presented.encode(), token.encode()) else None


def publish(
    url: str,
    state_dir: Path,
    storage_root: Path,
    api_endpoint: str = "",
    roots_file: Path | None = None,
) -> Path:
    """Announce the service at `url` (state in `state_dir`, Cloud Storage under
    `storage_root`, the SDK's TLS endpoint `api_endpoint` whose CA is in `roots_file`) to this
    user's clients."""
    path = runtime_dir() / f"service-{urlsplit(url).port}.json"
    info = {
        "url": url,
        "pid": os.getpid(),
        "state_dir": str(state_dir.resolve()),
        "token_file": str((state_dir / TOKEN_FILE).resolve()),
        "storage_root": str(storage_root.resolve()),
        "api_endpoint": api_endpoint,
        "roots_file": str(roots_file.resolve()) if roots_file else "",
    }
    private_files.write_private(path, json.dumps(info, indent=1) + "\n")
    return path


def withdraw(path: Path) -> None:
    """Remove a runtime file `publish` wrote (the service is stopping)."""
    path.unlink(missing_ok=True)


def published(url: str, environ: Mapping[str, str] = os.environ) -> dict[str, str] | None:
    """What the running service at `url` published about itself; None when none is."""
    try:
        path = runtime_dir(environ) / f"service-{urlsplit(url).port}.json"
        info = json.loads(private_files.read_private(path))
        return info if _alive(int(info["pid"])) else None
    except (OSError, ValueError, KeyError, TypeError, private_files.UnsafePath):
        return None


def find_token(url: str, environ: Mapping[str, str] = os.environ) -> str | None:
    """The token for the local service at `url`; None when no running service is published."""
    if environ.get(TOKEN_ENV):
        return environ[TOKEN_ENV]
    info = published(url, environ)
    if not info:
        return None
    try:
        return private_files.read_private(Path(info["token_file"])).decode().strip() or None
    except (OSError, ValueError, KeyError, TypeError, private_files.UnsafePath):
        return None


STARTUP_HOOK_DIR = Path(__file__).resolve().parent / "startup"
"""Holds `sitecustomize.py`, the start-up hook that points an unchanged program's aiplatform SDK
and google-cloud-storage at the service (see that file)."""

API_ENDPOINT_ENV = "VTP_LOCAL_API_ENDPOINT"
"""`localhost:PORT`: the service's TLS endpoint, the SDK's `api_endpoint` (gRPC and REST)."""


def client_settings(
    url: str, api_endpoint: str = "", roots_file: str = "", pythonpath: str = ""
) -> dict[str, str]:
    """The environment that points gcloud, the aiplatform SDK and Cloud Storage clients at the
    service at `url` (`api_endpoint` and the CA bundle `roots_file` as it published them):

    - gcloud: the aiplatform, logging, cloudresourcemanager and storage endpoint overrides;
    - Cloud Storage clients: STORAGE_EMULATOR_HOST (google-cloud-storage, gcsfs, ...);
    - the SDK: the start-up hook on PYTHONPATH (before `pythonpath`), which sets its endpoint
      and credentials; TLS trust in the CA through GRPC_DEFAULT_SSL_ROOTS_FILE_PATH (gRPC) and
      REQUESTS_CA_BUNDLE (REST), each the CA plus the public roots.
    """
    settings = {
        "CLOUDSDK_API_ENDPOINT_OVERRIDES_AIPLATFORM": f"{url}/",
        "CLOUDSDK_API_ENDPOINT_OVERRIDES_LOGGING": f"{url}/",
        "CLOUDSDK_API_ENDPOINT_OVERRIDES_CLOUDRESOURCEMANAGER": f"{url}/",
        "CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE": f"{url}/storage/v1/",
        "VTP_LOCAL_ENDPOINT": url,
        "STORAGE_EMULATOR_HOST": url,
    }
    if api_endpoint:
        settings[API_ENDPOINT_ENV] = api_endpoint
        settings["PYTHONPATH"] = os.pathsep.join(filter(None, [str(STARTUP_HOOK_DIR), pythonpath]))
    if roots_file:
        settings["GRPC_DEFAULT_SSL_ROOTS_FILE_PATH"] = roots_file
        settings["REQUESTS_CA_BUNDLE"] = roots_file
    return settings


def shell_settings(url: str, environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """`client_settings` for the service published at `url`, plus the token file (gcloud reads
    it, and so does the start-up hook) and gsutil's settings (`gsutil_settings`)."""
    info = published(url, environ) or {}
    pythonpath = environ.get("PYTHONPATH", "")
    hook = str(STARTUP_HOOK_DIR)
    pythonpath = os.pathsep.join(p for p in pythonpath.split(os.pathsep) if p and p != hook)
    settings = client_settings(
        url, info.get("api_endpoint", ""), info.get("roots_file", ""), pythonpath
    )
    if info.get("token_file"):
        settings["CLOUDSDK_AUTH_ACCESS_TOKEN_FILE"] = str(info["token_file"])
    return {**settings, **gsutil_settings(environ)}


GSUTIL_CONFIG_FILE = "gsutil-boto.cfg"
"""gsutil's boto configuration under `vtp local env` and `exec`, in the runtime dir."""

GSUTIL_ACCOUNT = "local@vtp.invalid"
"""gcloud's account when the environment names none: a name only (the token file is what
authenticates), which gsutil's `gcloud storage` mode needs to pass gcloud's credentials on."""

GSUTIL_CONFIG = """\
# Written by `vtp local env` and `vtp local exec`: gsutil reaches the local service only.
# gsutil runs each command as `gcloud storage` (use_gcloud_storage), which the environment points
# at the service; a command it cannot translate fails at once (no_fallback) instead of running
# gsutil's own client. That client, if it runs at all, is pointed at a closed local port
# (gs_host), so it fails fast ("gs_json_host is not configured") rather than reach Cloud Storage.
[Credentials]
gs_host = 127.0.0.1
gs_port = 1
[Boto]
num_retries = 3
[GSUtil]
use_gcloud_storage = True
hidden_shim_mode = no_fallback
software_update_check_period = 0
"""


def gsutil_settings(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """What points gsutil at the service: BOTO_CONFIG, `GSUTIL_CONFIG` written in the runtime
    dir (a file of this user's alone; it replaces ~/.boto and /etc/boto.cfg, which may name a
    real endpoint or credentials), gcloud's credentials passed on, and an account name unless
    the environment gives one. Empty when the file cannot be written there."""
    path = runtime_dir(environ) / GSUTIL_CONFIG_FILE
    try:
        current = private_files.read_private(path).decode()
    except (OSError, ValueError, private_files.UnsafePath):
        current = ""
    try:
        if current != GSUTIL_CONFIG:
            private_files.write_private(path, GSUTIL_CONFIG)
    except (OSError, private_files.UnsafePath):
        return {}
    settings = {"BOTO_CONFIG": str(path), "CLOUDSDK_CORE_PASS_CREDENTIALS_TO_GSUTIL": "1"}
    if not environ.get("CLOUDSDK_CORE_ACCOUNT"):
        settings["CLOUDSDK_CORE_ACCOUNT"] = GSUTIL_ACCOUNT
    return settings


def local_credentials(url: str) -> "AuthCredentials":
    """Credentials for the aiplatform clients: the service's bearer token, else anonymous (the
    service then answers 401 saying where the token is)."""
    from google.auth.credentials import AnonymousCredentials
    from google.oauth2.credentials import Credentials

    token = find_token(url)
    return Credentials(token) if token else AnonymousCredentials()


def auth_headers(url: str) -> dict[str, str]:
    """`Authorization` for a plain HTTP request to the local service at `url` (empty if none)."""
    token = find_token(url)
    return {"Authorization": f"Bearer {token}"} if token else {}


def local_session(url: str) -> "requests.Session":
    """A requests Session that carries the token of the local service at `url`."""
    import requests

    session = requests.Session()
    session.headers.update(auth_headers(url))
    return session


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
