"""A Docker-compatible container engine's command line (Podman or Docker), for every part of the
project that runs something in its image: custom-job replicas (`vtp.local.runtime.containers`),
container components of pipelines (`vtp.engine.task_containers`) and custom serving containers
(`vtp.local.endpoints.containers`).

The engine is named by `VTP_CONTAINER_ENGINE` (`podman`, `docker`, with flags: `podman --runtime
runc`); unset, nothing runs in a container and every task, replica and server is a host process
(docs/containers.md). Variables reach a container by name only (`--env NAME`), so their values
stay out of argv and `ps`; the service's token is never one of them (`client_environment`).

Docker and Podman read the same command line but for two things (`run_argv`): Docker's volumes
take no `nosuid,nodev`, so its containers run with `no-new-privileges` instead; and Docker runs a
container under its daemon, not below the client that started it, so killing the client leaves
the container running: every container carries the service's id (`SERVICE_VARIABLE`), whose
processes the service's watchdog kills if the service dies, and `remove` ends what is left.
"""

import base64
import hashlib
import hmac
import os
import re
import shlex
import stat
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

ENGINE_ENV = "VTP_CONTAINER_ENGINE"
"""The engine's command line; set, images other than this project's run in their images."""

ENGINE_PREFIXES = ("CONTAINERS_", "CONTAINER_", "DOCKER_", "XDG_", "REGISTRY_AUTH_FILE")
"""The variables the engine's client reads (its configuration, socket, storage)."""

PULL_TIMEOUT_SECONDS = 600.0

TOKEN_VARIABLE = "VTP_LOCAL_TOKEN"
"""The local service's bearer token in a process's environment (`vtp.vertex.local_auth`)."""
WORKLOAD_PREFIX = "vtp-workload."
"""How a workload credential begins (no token does: `token_urlsafe` makes no dot)."""
HOST_CREDENTIAL_FILES = frozenset({"CLOUDSDK_AUTH_ACCESS_TOKEN_FILE"})
"""Variables naming the service's token file on the host: a container never gets them."""
SERVICE_VARIABLE = "VTP_LOCAL_SERVICE_ID"
"""The local service's id in all it starts (`vtp.local.runtime.process.SERVICE_ENV`); containers
carry it too, so the watchdog finds their processes where no shim holds them (Docker's)."""
REMOVE_TIMEOUT_SECONDS = 60.0
"""How long `remove` waits for a container to be gone (the engine may be removing it already)."""


def engine_from(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The engine's command line from `VTP_CONTAINER_ENGINE`, () when unset."""
    return tuple(shlex.split(environ.get(ENGINE_ENV, "")))


def engine_name(engine: Sequence[str]) -> str:
    """Which engine a command line runs: "podman", "docker" (any command whose name begins so:
    `podman-remote`), or the command's own name."""
    name = os.path.basename(engine[0]) if engine else ""
    return next((known for known in ("podman", "docker") if name.startswith(known)), name)


def image_problem(engine: Sequence[str], image: str, environ: Mapping[str, str]) -> str:
    """Why `image` cannot run ("" when it is present, or pulled now); one line naming it."""
    if _engine(engine, ["image", "inspect", "--format", "{{.Id}}", image], environ, 60).returncode:
        pulled = _engine(engine, ["pull", "--quiet", image], environ, PULL_TIMEOUT_SECONDS)
        if pulled.returncode:
            said = (pulled.stderr.strip().splitlines() or ["no output"])[-1]
            return f"image {image!r} is not on this machine and could not be pulled ({said})"
    return ""


def run_argv(
    engine: Sequence[str],
    name: str,
    image: str,
    command: Sequence[str],
    args: Sequence[str],
    env_names: Sequence[str],
    volumes: Sequence[tuple[str, str]] = (),
    network: Sequence[str] = ("--network", "host"),
) -> list[str]:
    """`ENGINE run` of `image` as container `name`, removed when it ends: `command` replaces the
    image's entrypoint (its first word `--entrypoint`, the rest ahead of `args`, so Docker and
    Podman read it alike), `args` its CMD; `volumes` are (host path, container path[:options]).
    The container gets `env_names` and the service's id (`SERVICE_VARIABLE`), by name.

    What the container writes to a volume (the storage root) is on the host's filesystem, where
    root in the image may be root: it gets no CAP_MKNOD, so it makes no device node there; and no
    setuid file in it works inside: Podman mounts each volume `nosuid,nodev`, and Docker, whose
    `--volume` has no such options, runs the container with `no-new-privileges` (no setuid file
    raises privileges anywhere in it). Other local users never reach what it writes: the storage
    root must be inside a folder only its owner enters (`storage_exposure`)."""
    argv = [*engine, "run", "--rm", "--name", name, "--cap-drop", "MKNOD", *network]
    podman = engine_name(engine) == "podman"
    if not podman:
        argv += ["--security-opt", "no-new-privileges"]
    for host, inside in volumes:
        if podman:
            target, _, options = inside.partition(":")
            inside = f"{target}:{','.join(filter(None, [options, 'nosuid', 'nodev']))}"
        argv += ["--volume", f"{host}:{inside}"]
    for variable in dict.fromkeys([*env_names, SERVICE_VARIABLE]):
        argv += ["--env", variable]  # one the client's environment lacks is not passed
    if command:
        argv += ["--entrypoint", command[0]]
    return [*argv, image, *command[1:], *args]


def storage_exposure(storage_root: Path) -> str:
    """Why other local users could reach what containers write to `storage_root` ("" when they
    cannot): no folder above it is one only its owner (this user or root) may enter. A
    container may open the root's own mode (it is mounted at /gcs), never a folder above it."""
    for folder in storage_root.resolve().parents:
        try:
            info = folder.stat()
        except OSError:
            continue
        if info.st_uid in (os.geteuid(), 0) and not info.st_mode & (stat.S_IXGRP | stat.S_IXOTH):
            return ""
    return (
        f"the storage root {storage_root} is inside no folder that only you can enter, so other "
        "local users could run a setuid file a container (root in its image) writes there; "
        "with a container engine, keep --gcs-root inside such a folder (`chmod 700` one above "
        "it, or use the default <state-dir>/gcs)"
    )


def client_environment(
    container: Mapping[str, str], service: Mapping[str, str], workload: str
) -> dict[str, str]:
    """The engine client's environment: the container's variables (which `--env NAME` takes from
    it), then the service's PATH, HOME and engine settings, which the client needs itself, and
    the service's id where the caller has one (`SERVICE_VARIABLE`).

    The service's token never goes in: a container gets `workload_token` of it for `workload`
    (the resource it runs for: the API, as a Vertex replica's service account has Vertex's, but
    scoped to that resource and without the console's sign-in), and no path of the service's
    token file (`HOST_CREDENTIAL_FILES`)."""
    own = {
        k: v for k, v in service.items() if k in ("PATH", "HOME") or k.startswith(ENGINE_PREFIXES)
    }
    inside = {k: v for k, v in container.items() if k not in HOST_CREDENTIAL_FILES}
    if SERVICE_VARIABLE in service:  # a task of a service's pipeline: its id, as the task has
        inside.setdefault(SERVICE_VARIABLE, service[SERVICE_VARIABLE])
    token = inside.get(TOKEN_VARIABLE, "")
    if token and not token.startswith(WORKLOAD_PREFIX):
        inside[TOKEN_VARIABLE] = workload_token(token, workload)
    return {**inside, **own}


def workload_token(token: str, workload: str) -> str:
    """The credential a container the service runs for resource `workload` (a CustomJob's,
    PipelineJob's or Endpoint's name) gets instead of its `token`:
    `vtp-workload.<workload, base64url>.<HMAC of both>`. The local service takes it for the API
    (`vtp.vertex.local_auth.caller`) but knows the request comes from that workload, which may
    start nothing on the host and read only its own logs (docs/security.md); no console sign-in
    code can be made from it (codes are keyed by the token), and knowing it tells nothing of
    the token. New at every start, as the token is."""
    if not workload:
        raise ValueError("a workload credential names the resource it is for")
    scope = _b64(workload.encode())
    return f"{WORKLOAD_PREFIX}{scope}.{_workload_mac(token, workload)}"


def workload_of(token: str, presented: str) -> str | None:
    """The workload `presented` is the credential of (`workload_token`), or None when it is
    not one made from `token`; compared in constant time."""
    scope, dot, mac = presented.removeprefix(WORKLOAD_PREFIX).partition(".")
    if not presented.startswith(WORKLOAD_PREFIX) or not dot:
        return None
    try:
        workload = base64.urlsafe_b64decode(scope + "=" * (-len(scope) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        return None
    wanted = _workload_mac(token, workload)
    return workload if workload and hmac.compare_digest(mac.encode(), wanted.encode()) else None


def _workload_mac(token: str, workload: str) -> str:
    message = b"vtp-workload-credential\0" + workload.encode()
    return _b64(hmac.new(token.encode(), message, hashlib.sha256).digest())


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def container_name(*parts: str) -> str:
    """A container name of `parts` that every engine accepts (`[a-zA-Z0-9][a-zA-Z0-9_.-]*`)."""
    return re.sub(r"[^a-zA-Z0-9_.-]", "-", "-".join(("vtp", *parts)))[:200]


def publish_problem(engine: Sequence[str], environ: Mapping[str, str]) -> str:
    """Why `ENGINE run --publish` cannot reach a container here ("" when it can): a Docker
    daemon started with `--bridge=none` has no default network, and its containers' published
    ports are then not published at all (the container is up, nothing answers)."""
    if engine_name(engine) != "docker":
        return ""
    if _engine(engine, ["network", "inspect", "bridge"], environ, 60).returncode == 0:
        return ""
    return (
        "the Docker daemon has no bridge network (dockerd --bridge=none), so a serving "
        "container's port cannot be published on 127.0.0.1; start dockerd with its default "
        "bridge, or use Podman (VTP_CONTAINER_ENGINE=podman)"
    )


def remove(engine: Sequence[str], name: str, environ: Mapping[str, str]) -> None:
    """Stop and remove container `name` if it is still there (its client was killed before
    `--rm`; under Docker the container outlives its client), and return once it is gone: Docker
    refuses `rm` of a container whose `--rm` removal is under way, and lists it until done."""
    deadline = time.monotonic() + REMOVE_TIMEOUT_SECONDS
    _engine(engine, ["rm", "--force", name], environ, REMOVE_TIMEOUT_SECONDS)
    inspect = ["container", "inspect", "--format", "{{.Id}}", name]
    while _engine(engine, inspect, environ, 30).returncode == 0 and time.monotonic() < deadline:
        time.sleep(0.1)
        _engine(engine, ["rm", "--force", name], environ, REMOVE_TIMEOUT_SECONDS)


def remove_carrying(engine: Sequence[str], value: str, environ: Mapping[str, str]) -> int:
    """Remove every container of `engine` whose environment sets `SERVICE_VARIABLE` to `value`
    (a service that died: its watchdog killed their processes, and Podman, whose monitor died
    with them, would list them as running forever); how many there were."""
    listed = _engine(engine, ["ps", "--all", "--quiet", "--no-trunc"], environ, 60)
    ids = listed.stdout.split() if listed.returncode == 0 else []
    if not ids:
        return 0
    each = "{{.Id}}{{range .Config.Env}} {{.}}{{end}}"
    inspected = _engine(engine, ["container", "inspect", "--format", each, *ids], environ, 60)
    mark = f"{SERVICE_VARIABLE}={value}"
    ours = [
        words[0]
        for words in map(str.split, inspected.stdout.splitlines())
        if words and mark in words[1:]
    ]
    if ours:
        _engine(engine, ["rm", "--force", *ours], environ, REMOVE_TIMEOUT_SECONDS)
    return len(ours)


def _engine(
    engine: Sequence[str], args: list[str], environ: Mapping[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [*engine, *args], env=dict(environ), capture_output=True, text=True, timeout=timeout
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess([*engine, *args], 1, "", str(exc))
