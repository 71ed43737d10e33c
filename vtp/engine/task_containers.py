"""Container components of a pipeline, run in their images through the container engine.

With `VTP_CONTAINER_ENGINE` set (docs/containers.md), a task whose command is neither kfp's
executor (a lightweight Python component, which runs on this machine, forked) nor one of GCPC's
launchers runs as Vertex Pipelines runs it: `ENGINE run` of the executor's image, its `command`
as the entrypoint and its `args` as CMD, placeholders resolved. Cloud Storage is where Vertex
has it, at /gcs: the storage root is mounted there and every path under it in the command
(kfp.local's output files and artifact paths) is written as its /gcs path, so
`{{$.outputs.artifacts['x'].path}}` is `/gcs/bucket/...` inside, as on Vertex. A pipeline root
outside the storage root (a plain folder) is mounted at its own path. The container gets the
executor's `env` (by name), shares the host network, and is removed when the task ends, however
it ends (a cancel's SIGTERM reaches it through the engine's client).

Without an engine these components cannot run here, and `vertex_tasks.check_runnable` says so
before a run starts; with one, an image neither here nor pullable fails the run there, naming it.
"""

import contextlib
import os
import secrets
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from vtp import containers, storage
from vtp.engine.fork_tasks import FreshTask
from vtp.engine.vertex_tasks import is_gcpc_launcher, is_lightweight

GCS_MOUNT = storage.FUSE_ROOT
WORKSPACE_MOUNT = "/kfp-workspace"
"""Where the run's workspace is inside a task's container, as on KFP (`dsl_constants`)."""


def runs_in_image(command: Sequence[str], engine: Sequence[str]) -> bool:
    """True when a task of `command` (its command and args) runs in its image: an engine is
    set and the command is neither a lightweight Python component's (kfp's executor with the
    function's source) nor a GCPC launcher. A containerized Python component runs in its image."""
    parts = [str(part) for part in command]
    return bool(engine) and not is_lightweight(parts) and not is_gcpc_launcher(parts)


def in_container_paths(command: Sequence[str], storage_root: Path) -> list[str]:
    """`command` with each path under the storage root written as its /gcs path."""
    root = str(storage_root.resolve()).rstrip("/")
    made = []
    for part in command:
        part = part.replace(root + "/", GCS_MOUNT + "/")
        made.append(GCS_MOUNT if part == root else part)
    return made


@contextlib.contextmanager
def task_process(
    engine: Sequence[str],
    image: str,
    command: Sequence[str],
    args: Sequence[str],
    spec_env: Mapping[str, str],
    task_root: str,
    task_name: str,
    job_name: str,
    workspace: str = "",
) -> Iterator[FreshTask]:
    """Run a container component's resolved `command` and `args` in `image` as a process whose
    lines and status `executors` reads like any task's; the container is gone afterwards. It
    holds the credential of the run `job_name` (`containers.client_environment`)."""
    root = storage.gcs_root().resolve()
    volumes = [(str(root), GCS_MOUNT)]
    local = Path(task_root).resolve()
    if not local.is_relative_to(root):  # a plain-folder pipeline root: the same path inside
        volumes.append((str(local), str(local)))
    if workspace:  # the run's workspace, at KFP's mount path
        volumes.append((str(Path(workspace).resolve()), WORKSPACE_MOUNT))
    name = containers.container_name("task", task_name, secrets.token_hex(4))
    inside = {**spec_env, storage.GCS_ROOT_ENV: GCS_MOUNT}
    argv = containers.run_argv(
        engine, name, image, in_container_paths(command, root), in_container_paths(args, root),
        sorted(inside), volumes,
    )  # fmt: skip
    notice = f"[vtp] this task runs in its image {image} ({' '.join(engine)})\n"
    environment = containers.client_environment(inside, os.environ, job_name)
    task = FreshTask(argv, environment, notice)
    try:
        yield task
    finally:
        task.close()
        containers.remove(engine, name, os.environ)
