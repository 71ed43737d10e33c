"""The root of the local Vertex service: what every resource type shares, and nothing more.

`Service` holds the configuration, the state directory (locked, with the token), the service's
id, where it answers (`url`, `api_endpoint`) and the client settings its processes get, the
long-running operations every resource answers with, the watchdog, and the `closing` signal.
Resource packages (`vtp.local.custom_jobs`, `tuning`, ...) take it in their constructors; the
composition root (`vtp.local.app`) builds it once the front ends have bound their ports, so
nothing here is filled in later.

Every resource service has the same lifecycle (`Part`): built (nothing runs yet), `start()`
(recover what a previous run left, start its threads), `close()` (stop what it started).
"""

import os
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from vtp.local.base import errors
from vtp.local.base.buckets import ensure_bucket_of
from vtp.local.base.config import ServiceConfig
from vtp.local.base.operations import SCHEMA as OPERATIONS_SCHEMA
from vtp.local.base.operations import Operations
from vtp.local.base.sqlite import Database
from vtp.local.base.state_dir import StateDir
from vtp.local.runtime.watchdog import Watchdog
from vtp.vertex import local_auth


@dataclass(frozen=True)
class Addresses:
    """Where the service answers, known once its front ends have bound their ports."""

    url: str
    """`http://127.0.0.1:PORT`: REST, Cloud Storage's JSON API, the console."""

    api_endpoint: str
    """`localhost:PORT`: the SDK's endpoint, TLS, gRPC and REST alike."""

    roots_file: Path
    """The CA that signs the TLS endpoint's certificate (clients add it to their trust)."""


class Part(Protocol):
    """A resource service, as the composition root drives it."""

    def start(self) -> None:
        """Recover what a previous service left, start working (threads, processes)."""
        ...

    def close(self) -> None:
        """Stop what `start` started; the state stays for the next start."""
        ...


class Service:
    """The service's root: configuration, identity, addresses, operations, lifecycle signals."""

    def __init__(self, config: ServiceConfig, state_dir: StateDir, addresses: Addresses) -> None:
        os.umask(0o077)  # what it creates is the user's alone (StateDir set it already)
        self.config = config
        self.token = state_dir.token
        """The bearer token every request must carry (also in `<state-dir>/token`)."""
        self.service_id = secrets.token_hex(8)
        """Carried by every process the service starts, so its watchdog can find them."""
        self.url = addresses.url
        self.api_endpoint = addresses.api_endpoint
        self.client_env: dict[str, str] = {
            **local_auth.client_settings(self.url, self.api_endpoint, str(addresses.roots_file)),
            local_auth.TOKEN_ENV: self.token,
            "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE": str(config.state_dir / "token"),
            **local_auth.gsutil_settings(),
        }
        """What points a process's Vertex and Cloud Storage clients back at this service
        (replicas, pipeline tasks, model servers), gsutil included: a trainer that shells out to
        `gsutil cp` (as Vertex's samples do) reaches this service, never Cloud Storage."""
        self._db = Database(config.state_dir / "state.db", OPERATIONS_SCHEMA)
        self.operations = Operations(self._db)
        self.closing = threading.Event()
        """Set when the service begins to close: resources create nothing more."""
        self._state_dir = state_dir
        self._watchdog: Watchdog | None = None

    def bucket_for_writing(self, uri: str, field: str) -> None:
        """Make the bucket of `gs://` `uri`, which request field `field` names as a place to
        write, on first use (`vtp.local.base.buckets`: one log line; NOT_FOUND naming `field`
        under --strict-buckets; INVALID_ARGUMENT naming it for a URI that is not one)."""
        try:
            ensure_bucket_of(self.config.storage_root, uri, self.config.strict_buckets, field)
        except ValueError as exc:
            raise errors.invalid_argument(f"{field}: {exc}.") from None
        except errors.ApiError as exc:
            raise errors.ApiError(exc.code, f"{field}: {exc.message}", exc.http_status) from None

    def start(self) -> None:
        """Start the watchdog: from now on, what the service starts dies with it."""
        self._watchdog = Watchdog(self.service_id)

    def close(self) -> None:
        """Release everything the root holds; the resources have closed already."""
        self.closing.set()
        self._db.close()
        if self._watchdog:
            self._watchdog.close()
        self._state_dir.release()
