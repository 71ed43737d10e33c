"""Start-up hook that points an unchanged Python program's Vertex and Cloud Storage clients at
the local Vertex service.

`vtp local exec`, `vtp local env`, local replicas and local pipeline tasks put this folder first
on PYTHONPATH, so Python imports this file at start-up (`sitecustomize`). It reads:

    VTP_LOCAL_API_ENDPOINT     localhost:PORT, the service's TLS endpoint (gRPC and REST)
    VTP_LOCAL_TOKEN            the bearer token, or else the file named by
    CLOUDSDK_AUTH_ACCESS_TOKEN_FILE
    STORAGE_EMULATOR_HOST      http://127.0.0.1:PORT, the service's Cloud Storage JSON API

and, only when those are set, patches these modules as they are first imported (nothing is
imported early, so start-up stays fast):

- `google.cloud.aiplatform.initializer`: the SDK's default `api_endpoint` and credentials, as
  if the program had called `aiplatform.init(api_endpoint=..., credentials=...)`; anything the
  program passes to `aiplatform.init` still wins.
- `google.cloud.aiplatform.utils.resource_manager_utils`: project ID <-> number lookups answered
  in-process (there is one local project, whatever its ID).
- `google.cloud.resourcemanager_v3...projects.client`: `ProjectsClient()` talks to the service's
  TLS endpoint, which answers `get_project` with the local project's number.
- `google.cloud.storage.client`: a `Client()` without credentials, which the library makes
  anonymous under STORAGE_EMULATOR_HOST, carries the token instead (as does
  `Client.create_anonymous_client()`: the service answers no anonymous caller).
- `google.auth`: Application Default Credentials are the service's token and project
  ($GOOGLE_CLOUD_PROJECT, else a replica's $CLOUD_ML_PROJECT_ID, the job's project, which
  Vertex's metadata server answers there, else gcloud's $CLOUDSDK_CORE_PROJECT, as ADC from
  gcloud has it), so code that calls `google.auth.default()` itself (GCPC's launchers do)
  authenticates to the service and, in a job, finds the job's project.
- GCPC's launchers (`..._remote_runner`): they poll every 20 s, which costs nothing locally;
  they poll every second here.
- The SDK's waits (`google.cloud.aiplatform.jobs`, `.training_jobs`, `.pipeline_jobs`,
  `.schedules`, `.base`): `CustomJob.run()`, `job.wait()`, tuning and batch prediction jobs,
  training pipelines, `PipelineJob.run()` and `Schedule.wait()` read the state every 5 s
  (`_JOB_WAIT_TIME`), so a local job that ends is seen up to 5 s late. Here each wait sleeps a
  tenth of the time it has waited so far, from 0.2 s up to 1 s: a job that ran t seconds is seen
  at most max(0.2, t/10) s after it ended, and a long one is read about once a second (a read
  costs the service a few ms of CPU). Their "current state" log lines keep the SDK's cadence
  (`_LOG_WAIT_TIME`, 5 s doubling up to 5 min). The SDK's other fixed sleeps in those modules
  (a resource's creation after `run(sync=False)`, 1 s; a pipeline run's context, 1 s) last
  0.2 s.
- `google.api_core.future.polling`: a long-running operation started with the library's default
  polling (every generated client's; `Model.deploy`, `Endpoint.create`, persistent resources,
  dataset imports, ...) polls from 0.2 s up to 1 s instead of from 1 s up to 20 s, with the
  same predicate, multiplier and 900 s timeout; the local service ends a deployment's operation
  when its model server answers, so `Model.deploy()` returns within a second of that rather
  than up to 20 s later. Polling that the caller passes is kept.
- `kfp.dsl.types.artifact_types` (with VTP_GCS_ROOT, the local storage root): an artifact whose
  URI is `gs://...` has its `.path` under that root, where Vertex has the `/gcs/` mount.
- `tensorflow.python.lib.io.file_io` (with VTP_GCS_ROOT): `tf.io.gfile` on `gs://B/P` works on
  the file `$VTP_GCS_ROOT/B/P` (TensorFlow's C++ Cloud Storage filesystem takes no endpoint):
  `vtp_tf_gfile.py`, beside this file.
- `google.api_core.client_options` and `requests.models`: a client (its `ClientOptions` or
  `client_options={"api_endpoint": ...}` dict) or a request addressed to Vertex's hosts
  (`aiplatform.googleapis.com`, `<region>-aiplatform.googleapis.com`) goes to the service's TLS
  endpoint instead: code with hard-coded Vertex endpoints (GCPC's launchers,
  a team's own clients) reaches the service unchanged.

TLS trust comes from the environment (GRPC_DEFAULT_SSL_ROOTS_FILE_PATH, REQUESTS_CA_BUNDLE). The
file imports nothing but the standard library at start-up and does not import `vtp`: the program
may run in another interpreter. Another `sitecustomize` later on the path still runs.

A program's tracebacks show its own frames and its libraries', never this file's: the patches
replace values and defaults (or a class attribute by a property whose frame returns at once)
rather than wrap the functions that raise, so nothing of ours is on the stack while the library
works. The one frame left is the import hook's, around the import of a patched module; an
uncaught exception printed by `sys.excepthook` leaves it out too.
"""

import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import sys
from collections.abc import Callable
from types import ModuleType

LOCAL_PROJECT_NUMBER = "100000000001"
"""What the local storage API reports as every bucket's project number."""


def _token() -> str:
    token = os.environ.get("VTP_LOCAL_TOKEN", "")
    if token:
        return token
    try:
        with open(os.environ.get("CLOUDSDK_AUTH_ACCESS_TOKEN_FILE", "")) as file:
            return file.read().strip()
    except OSError:
        return ""


def _credentials() -> object:
    from google.oauth2.credentials import Credentials

    return Credentials(_token())


def _patch_initializer(module: ModuleType) -> None:
    config = module.global_config
    if getattr(config, "_api_endpoint", None) is None:
        config._api_endpoint = os.environ["VTP_LOCAL_API_ENDPOINT"]
    if getattr(config, "_credentials", None) is None:
        config._credentials = _credentials()


def _rebind(module: ModuleType, **names: object) -> None:
    """`module.NAME = value` for each of `names` (ModuleType declares no attributes to assign)."""
    vars(module).update(names)


def _patch_resource_manager(module: ModuleType) -> None:
    _rebind(
        module,
        get_project_number=lambda project_id, credentials=None: LOCAL_PROJECT_NUMBER,
        get_project_id=lambda project_number, credentials=None: (
            os.environ.get("GOOGLE_CLOUD_PROJECT") or str(project_number)
        ),
    )


def _patch_projects_client(module: ModuleType) -> None:
    endpoint = os.environ["VTP_LOCAL_API_ENDPOINT"]
    module.ProjectsClient._DEFAULT_ENDPOINT_TEMPLATE = endpoint
    module.ProjectsClient.DEFAULT_ENDPOINT = endpoint


_VERTEX_HOST = re.compile(r"(?:https://)?(?:[a-z0-9-]+-)?aiplatform\.googleapis\.com(?::443)?/?")


def _local_host(endpoint: str) -> str:
    """`endpoint` with a Vertex host replaced by the service's TLS endpoint (else unchanged)."""
    match = _VERTEX_HOST.match(endpoint)
    if not match:
        return endpoint
    scheme = "https://" if endpoint.startswith("https://") else ""
    rest = endpoint[match.end() :]
    slash = "/" if match.group().endswith("/") else ""
    return f"{scheme}{os.environ['VTP_LOCAL_API_ENDPOINT']}{slash}{rest}"


def _local_endpoint_attribute(name: str) -> property:
    """A data descriptor for attribute `name` that stores what is assigned to it, a Vertex host
    replaced by the service's (`_local_host`), in the instance's `__dict__` under `name`: the
    class's own code assigns it as before, and no frame of ours is on the stack afterwards."""

    def get(self: object) -> object:
        try:
            return vars(self)[name]
        except KeyError:
            raise AttributeError(name) from None

    def put(self: object, value: object) -> None:
        vars(self)[name] = _local_host(value) if isinstance(value, str) else value

    return property(get, put)


def _patch_client_options(module: ModuleType) -> None:
    # `ClientOptions(api_endpoint=...)` and `from_dict`, which sets the attribute, both assign it.
    module.ClientOptions.api_endpoint = _local_endpoint_attribute("api_endpoint")


def _patch_requests(module: ModuleType) -> None:
    # Every `Session.request` (google-auth's `AuthorizedSession`'s too) builds a `Request`.
    module.Request.url = _local_endpoint_attribute("url")


def _patch_auth(module: ModuleType) -> None:
    def default(scopes=None, request=None, quota_project_id=None, default_scopes=None):
        names = ("GOOGLE_CLOUD_PROJECT", "CLOUD_ML_PROJECT_ID", "CLOUDSDK_CORE_PROJECT")
        project = next((os.environ[n] for n in names if os.environ.get(n)), None)
        return _credentials(), project

    _rebind(module, default=default)


def _patch_polling(module: ModuleType) -> None:
    if hasattr(module, "_POLLING_INTERVAL_IN_SECONDS"):
        _rebind(module, _POLLING_INTERVAL_IN_SECONDS=1)


SDK_POLL_SECONDS = (0.2, 1.0)
"""Shortest and longest sleep of the SDK's waits between two reads of a job's state (5 s in the
SDK): a wait sleeps a tenth of the time it has waited so far, within these bounds. A job that
ran t seconds is seen at most max(0.2, t/10) s (at most 1 s) after it ended; a long one is read
about once a second (each read costs the service a few ms of CPU)."""

LRO_POLLING = (0.2, 1.0)
"""First and longest delay between polls of a long-running operation (google-api-core's default
polling starts at 1 s and grows 1.5 times a poll up to 20 s)."""


class _PollClock:
    """The `time` module as the SDK's wait modules see it, except `sleep`: called from a wait (a
    method `_block_until_complete`), a sleep lasts a tenth of the time that wait has waited so
    far, within `SDK_POLL_SECONDS`; from anywhere else, the shortest. A sleep is never longer
    than asked. Any other name is the `time` module's, looked up at each use.

    The wait is the calling frame, so the SDK's methods stay as they are: a job that fails
    raises through the SDK's frames alone. Each thread keeps its current wait's frame (and so
    the last one's, until its next wait)."""

    def __init__(self) -> None:
        import threading

        self._waits = threading.local()  # `frame`, `start`: this thread's wait, and its start

    def __getattr__(self, name: str) -> object:
        import time

        return getattr(time, name)

    def sleep(self, seconds: float) -> None:
        import time

        caller = sys._getframe(1)
        waited = 0.0
        if caller.f_code.co_name == "_block_until_complete":
            if getattr(self._waits, "frame", None) is not caller:
                self._waits.frame, self._waits.start = caller, time.monotonic()
            waited = time.monotonic() - self._waits.start
        shortest, longest = SDK_POLL_SECONDS
        time.sleep(min(seconds, max(shortest, min(waited / 10, longest))))


_CLOCK: list[_PollClock] = []
"""The one clock, made when the first SDK module is patched."""


def _patch_sdk_waits(module: ModuleType) -> None:
    """The SDK's job, training pipeline, pipeline job and schedule waits (`_block_until_complete`
    of the module's classes) and its other fixed sleeps (`base`: a resource's creation after
    `run(sync=False)`, 1 s) sleep by `_PollClock`; `_JOB_WAIT_TIME` is the longest sleep. Their
    log lines keep their own cadence (`_LOG_WAIT_TIME`, ...)."""
    if hasattr(module, "_JOB_WAIT_TIME"):
        _rebind(module, _JOB_WAIT_TIME=SDK_POLL_SECONDS[1])
    if getattr(module, "time", None) is not sys.modules.get("time"):
        return
    if not _CLOCK:
        _CLOCK.append(_PollClock())
    _rebind(module, time=_CLOCK[0])


_LRO_POLLING: list[object] = []
"""google-api-core's `DEFAULT_POLLING`, then the local one made from it (`LRO_POLLING`)."""


def _patch_lro_polling(module: ModuleType) -> None:
    """A long-running operation that a client starts with the library's default polling (every
    generated client's `operation.from_gapic`) polls from `LRO_POLLING[0]` s up to
    `LRO_POLLING[1]` s; its predicate and 900 s timeout stay, as does any polling the caller
    passes. `PollingFuture` (here) and its subclasses (`_patch_lro_defaults`) keep their own
    `__init__`: only the default of its `polling` argument changes."""
    default = module.DEFAULT_POLLING
    _LRO_POLLING[:] = [default, default.with_delay(initial=LRO_POLLING[0], maximum=LRO_POLLING[1])]
    _replace_default(module.PollingFuture.__init__)


def _patch_lro_defaults(module: ModuleType) -> None:
    """`Operation` and `ExtendedOperation` take the library's default polling as their own
    `polling` argument's default: the local one instead (`_patch_lro_polling`)."""
    for name in ("Operation", "ExtendedOperation"):
        if isinstance(getattr(module, name, None), type):
            _replace_default(vars(getattr(module, name))["__init__"])


def _replace_default(function: Callable[..., object]) -> None:
    """`function`'s argument defaults with the library's default polling replaced by ours."""
    if not _LRO_POLLING:  # google-api-core's polling module could not be patched
        return
    default, local = _LRO_POLLING
    defaults = getattr(function, "__defaults__", None)
    if defaults:
        function.__defaults__ = tuple(local if d is default else d for d in defaults)


def _patch_storage(module: ModuleType) -> None:
    # Under STORAGE_EMULATOR_HOST, `Client()` without credentials takes `AnonymousCredentials()`.
    _rebind(module, AnonymousCredentials=_credentials)


def _patch_gcs_mount(module: ModuleType) -> None:
    """kfp's artifacts find `gs://B/P` at `/gcs/B/P` (Cloud Storage FUSE on Vertex); here the
    same object is the file `$VTP_GCS_ROOT/B/P`."""
    if hasattr(module, "_GCS_LOCAL_MOUNT_PREFIX"):
        _rebind(module, _GCS_LOCAL_MOUNT_PREFIX=os.environ["VTP_GCS_ROOT"].rstrip("/") + "/")


_TF_GFILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vtp_tf_gfile.py")
_OUR_FILES = {__file__, _TF_GFILE}
"""The files whose frames tracebacks leave out."""


def _patch_tf_gfile(module: ModuleType) -> None:
    """TensorFlow's `tf.io.gfile` takes `gs://B/P` as the file `$VTP_GCS_ROOT/B/P` (its C++
    Cloud Storage filesystem takes no endpoint): `vtp_tf_gfile.py`, beside this file."""
    spec = importlib.util.spec_from_file_location("_vtp_tf_gfile", _TF_GFILE)
    if spec is None or spec.loader is None:
        return
    gfile = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gfile)
    gfile.patch(module, os.environ["VTP_GCS_ROOT"])


def _without_our_frames(exc: BaseException) -> None:
    """Leave this file's frames out of the traceback of `exc` and of the exceptions it chains."""
    seen: set[int] = set()
    chain: list[BaseException | None] = [exc]
    while chain:
        current = chain.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        head = current.__traceback__
        while head is not None and head.tb_frame.f_code.co_filename in _OUR_FILES:
            head = head.tb_next
        entry = head
        while entry is not None:
            while entry.tb_next and entry.tb_next.tb_frame.f_code.co_filename in _OUR_FILES:
                entry.tb_next = entry.tb_next.tb_next
            entry = entry.tb_next
        current.__traceback__ = head
        chain += [current.__cause__, current.__context__]


def _install_excepthook() -> None:
    """`sys.excepthook`, while it is Python's own, prints an uncaught exception without this
    file's frames (the import hook's)."""
    if sys.excepthook is not sys.__excepthook__:
        return

    def excepthook(kind: type[BaseException], exc: BaseException, tb: object) -> None:
        _without_our_frames(exc)
        sys.__excepthook__(kind, exc, exc.__traceback__)

    sys.excepthook = excepthook


class _PatchAfterImport(importlib.abc.MetaPathFinder):
    """Runs `patches[name](module)` right after module `name` is first executed."""

    def __init__(self, patches: dict[str, Callable[[ModuleType], None]]) -> None:
        self._patches = patches

    def find_spec(self, name, path, target=None):
        if name not in self._patches:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None:
            return None
        loader, patch = spec.loader, self._patches[name]

        class Loader(importlib.abc.Loader):
            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module: ModuleType) -> None:
                loader.exec_module(module)
                try:
                    patch(module)
                except Exception as exc:  # never break the program's own import
                    print(f"vtp start-up hook: could not patch {name}: {exc}", file=sys.stderr)

        spec.loader = Loader()
        return spec


def install() -> None:
    """Patch what is imported already, and every other module on the list as it is imported.

    At start-up nothing is imported yet; a task forked from a warm process (the local fork
    server) calls this once it has taken the task's environment.
    """
    patches: dict[str, Callable[[ModuleType], None]] = {}
    if os.environ.get("VTP_GCS_ROOT"):
        patches["kfp.dsl.types.artifact_types"] = _patch_gcs_mount
        patches["tensorflow.python.lib.io.file_io"] = _patch_tf_gfile
    if os.environ.get("VTP_LOCAL_API_ENDPOINT") and _token():
        patches.update(_client_patches())
    for name in [n for n in patches if n in sys.modules]:
        patches.pop(name)(sys.modules[name])
    if patches:
        sys.meta_path.insert(0, _PatchAfterImport(patches))
        _install_excepthook()


def _client_patches() -> dict[str, Callable[[ModuleType], None]]:
    """What points the SDK and Cloud Storage clients at the service."""
    patches: dict[str, Callable[[ModuleType], None]] = {
        "google.cloud.aiplatform.initializer": _patch_initializer,
        "google.cloud.aiplatform.utils.resource_manager_utils": _patch_resource_manager,
        "google.cloud.resourcemanager_v3.services.projects.client": _patch_projects_client,
        "google.auth": _patch_auth,
        "google.api_core.client_options": _patch_client_options,
        "requests.models": _patch_requests,
    }
    for name in ("base", "jobs", "training_jobs", "pipeline_jobs", "schedules"):
        patches["google.cloud.aiplatform." + name] = _patch_sdk_waits
    patches["google.api_core.future.polling"] = _patch_lro_polling  # before its subclasses
    for name in ("operation", "extended_operation"):
        patches["google.api_core." + name] = _patch_lro_defaults
    launchers = "google_cloud_pipeline_components.container.v1.gcp_launcher."
    for runner in ("job_remote_runner", "lro_remote_runner", "pipeline_remote_runner"):
        patches[launchers + runner] = _patch_polling
    if os.environ.get("STORAGE_EMULATOR_HOST"):
        patches["google.cloud.storage.client"] = _patch_storage
    return patches


def _chain() -> None:
    """Run the next `sitecustomize` on the path, which this file hides."""
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec and spec.loader:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


if __name__ == "sitecustomize":
    install()
    _chain()
