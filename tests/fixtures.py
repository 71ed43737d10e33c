"""Shared test helpers: a local Vertex service in a subprocess, and real clients pointed at it.

`tests/conftest.py` turns these into the `local_service` and `gcloud` fixtures (one service per
test module). Use them from any test directory:

    def test_x(local_service, gcloud):
        client = local_service.client()                  # aiplatform_v1 JobServiceClient, REST
        job = client.create_custom_job(parent=local_service.parent, custom_job=...)
        gcloud("ai", "custom-jobs", "describe", job.name)  # the installed gcloud, same service

A module that needs its own flags starts `LocalService(state_dir, "--max-replicas", "1")` itself.
"""

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import requests
from google.api_core.client_options import ClientOptions
from google.cloud import aiplatform_v1
from google.oauth2.credentials import Credentials

from vtp.vertex.states import JOB_ENDED

REPO = Path(__file__).resolve().parents[1]
PROJECT, REGION = "local", "us-central1"
FAST_FLAGS = ("--poll-interval", "0.05", "--grace-period", "2", "--gpus", "none")
"""Quick polling and short grace periods, and no GPUs whatever the machine has."""

State = aiplatform_v1.JobState


def alive(pid: int) -> bool:
    """Whether process `pid` still exists (a zombie counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class LocalService:
    """`vtp local serve` on a free port with its own state directory."""

    def __init__(
        self, state_dir: Path, *flags: str, env: dict[str, str] | None = None, cwd: Path = REPO
    ) -> None:
        """`cwd`: the folder it starts in, the project its replicas import from."""
        self.state_dir = state_dir
        self.flags = flags or FAST_FLAGS
        self.extra_env = env or {}
        self.cwd = cwd
        self.process: subprocess.Popen[str] | None = None
        self.url = ""

    @property
    def gcs_root(self) -> Path:
        """The service's local Cloud Storage root."""
        return self.state_dir / "gcs"

    @property
    def parent(self) -> str:
        """`projects/local/locations/us-central1`."""
        return f"projects/{PROJECT}/locations/{REGION}"

    def start(self) -> "LocalService":
        """Start the service and wait until it serves."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "vtp", "local", "serve", "--port", "0"]
        stderr = open(self.state_dir / "service.log", "a")  # noqa: SIM115 (lives with the process)
        self.process = subprocess.Popen(
            [*command, "--state-dir", str(self.state_dir), *self.flags],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            cwd=self.cwd,
            env={**os.environ, **self.extra_env},
        )
        match = re.search(r"http://127\.0\.0\.1:\d+", self.process.stdout.readline())
        if not match:
            raise RuntimeError(f"the service did not start:\n{self.service_log()}")
        self.url = match.group()
        return self

    def stop(self) -> None:
        """Stop it as Ctrl-C would (replicas stopped, their jobs queued again)."""
        self._end(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL the service; its replicas keep running, orphaned."""
        self._end(signal.SIGKILL)

    def __enter__(self) -> "LocalService":
        """`with LocalService(...) as service:` starts it, and stops it on the way out."""
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def service_log(self) -> str:
        """What the service logged so far."""
        return (self.state_dir / "service.log").read_text()

    @property
    def token(self) -> str:
        """The bearer token the service wrote at start (what a user reads from the file)."""
        return (self.state_dir / "token").read_text().strip()

    def credentials(self) -> Credentials:
        """Credentials carrying the service's token, as a user passes them to the SDK."""
        return Credentials(self.token)

    def init_sdk(self, **settings: object) -> None:
        """`aiplatform.init` for this service, as a user's script does it: project `local`,
        us-central1, the REST transport and the token; `settings` adds or overrides."""
        from google.cloud import aiplatform

        defaults = {"project": PROJECT, "location": REGION, "api_transport": "rest"}
        aiplatform.init(
            **{**defaults, "api_endpoint": self.url, "credentials": self.credentials(), **settings}
        )

    def session(self) -> requests.Session:
        """A requests Session carrying the token, for raw HTTP calls to the service."""
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {self.token}"
        return session

    def client(self) -> aiplatform_v1.JobServiceClient:
        """The aiplatform JobServiceClient (REST transport, with the token) for this service."""
        return job_client(self.url, self.token)

    def env(self) -> dict[str, str]:
        """Environment for processes that should use this service and its storage root."""
        return {**os.environ, "VTP_LOCAL_ENDPOINT": self.url, "VTP_GCS_ROOT": str(self.gcs_root)}

    def shell_env(self) -> dict[str, str]:
        """What `eval "$(vtp local env)"` sets for this service, as a user's shell gets it."""
        printed = subprocess.run(
            [sys.executable, "-m", "vtp", "local", "env", "--endpoint", self.url],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        pairs = (shlex.split(line)[0].split("=", 1) for line in printed.splitlines() if line)
        return dict(pairs)

    def run_user_program(
        self, folder: Path, script: str, *, hook: bool = True, timeout: float = 240
    ) -> subprocess.CompletedProcess[str]:
        """Run `python <script>` from the user's `folder` (outside the repository) with the
        environment `vtp local env` prints; `hook=False` leaves out the start-up hook, so the
        program must set the SDK's endpoint and credentials itself. Fails with its output."""
        env = {**os.environ, **self.shell_env()}
        if not hook:
            env.pop("PYTHONPATH")
        result = subprocess.run(
            [sys.executable, script],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if result.returncode != 0:
            raise AssertionError(f"{script} exited {result.returncode}:\n{result.stderr[-4000:]}")
        return result

    def _end(self, signum: int) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signum)
            self.process.wait(timeout=60)
            # A clean stop exits 0 without a traceback; a crash on the way out is a bug.
            if signum == signal.SIGTERM and self.process.returncode != 0:
                raise AssertionError(
                    f"the service exited {self.process.returncode} on SIGTERM:\n"
                    f"{self.service_log()[-3000:]}"
                )
        if self.process:
            self.process.stdout.close()


class Gcloud:
    """The installed gcloud, with a throwaway config whose aiplatform endpoint is the service."""

    def __init__(self, config_dir: Path, url: str, token_file: Path) -> None:
        config_dir.mkdir(parents=True, exist_ok=True)
        self.token = token_file
        self.env = {**os.environ, "CLOUDSDK_CONFIG": str(config_dir)}
        # Quiet defaults written directly (each `gcloud config set` costs a second of start-up).
        (config_dir / "configurations").mkdir(exist_ok=True)
        (config_dir / "active_config").write_text("default")
        (config_dir / "configurations" / "config_default").write_text(
            f"[core]\nproject = {PROJECT}\ndisable_usage_reporting = true\n"
            "[component_manager]\ndisable_update_check = true\n"
        )
        # The step a user takes: point gcloud's aiplatform API at the service.
        self.run_raw("config", "set", "api_endpoint_overrides/aiplatform", f"{url}/")

    def run_raw(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """`gcloud ARGS` as given."""
        result = subprocess.run(
            ["gcloud", *args], env=self.env, capture_output=True, text=True, timeout=120
        )
        if check and result.returncode != 0:
            raise AssertionError(f"gcloud {' '.join(args)} failed:\n{result.stderr}")
        return result

    def __call__(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """`gcloud ARGS --region=us-central1 --access-token-file=...`."""
        flags = (f"--region={REGION}", f"--access-token-file={self.token}")
        return self.run_raw(*args, *flags, check=check)

    def json(self, *args: str) -> object:
        """`gcloud ARGS --format=json`, parsed."""
        return json.loads(self(*args, "--format=json").stdout)


def job_client(url: str, token: str) -> aiplatform_v1.JobServiceClient:
    """A JobServiceClient on the REST transport, with the service's token, talking to `url`."""
    return aiplatform_v1.JobServiceClient(
        transport="rest",
        client_options=ClientOptions(api_endpoint=url),
        credentials=Credentials(token),
    )


def wait_until(check: Callable[[], object], timeout: float = 60, what: str = "") -> object:
    """Poll `check` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or check}")
        time.sleep(0.05)


def wait_for_state(
    client: aiplatform_v1.JobServiceClient,
    name: str,
    states: Iterable[int] = JOB_ENDED,
    timeout: float = 60,
) -> aiplatform_v1.CustomJob:
    """Poll the job until its state is one of `states`; return it."""
    wanted = tuple(states)

    def reached() -> aiplatform_v1.CustomJob | None:
        job = client.get_custom_job(name=name)
        return job if job.state in wanted else None

    return wait_until(reached, timeout, f"{name} to reach {[State(s).name for s in wanted]}")


def set_at(data: Any, path: str, value: object) -> None:
    """Set the field at `path` (`workerPoolSpecs[0].machineSpec`: keys and list indices) of the
    nested dicts and lists `data` to `value`; None deletes it."""
    *parents, last = [int(key) if key.isdigit() else key for key in re.findall(r"[^.[\]]+", path)]
    for key in parents:
        data = data[key]
    if value is None:
        del data[last]
    else:
        data[last] = value


def send_json(handler: BaseHTTPRequestHandler, status: int, body: object) -> None:
    """Answer `handler`'s request with `status` and `body` as JSON. Self-contained (only `json`),
    so a test's server program can carry its source: `inspect.getsource(send_json)`."""
    data = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def upload_never_ready_model(session: requests.Session, base: str) -> str:
    """Upload (REST, under `base`: `URL/v1/projects/P/locations/L`) a model whose server never
    becomes healthy; its name."""
    never_ready = {
        "displayName": "never-ready",
        "containerSpec": {
            "imageUri": "python:3.11",
            "command": ["python", "-c", "import time; time.sleep(600)"],
        },
    }
    uploaded = session.post(f"{base}/models:upload", json={"model": never_ready}, timeout=30)
    return uploaded.json()["response"]["model"]


def batch_prediction_job(model: str, input_uri: str, output_prefix: str, name: str = "b") -> dict:
    """A BatchPredictionJob's REST body: JSON Lines from `input_uri` through `model` to
    `output_prefix`."""
    return {
        "displayName": name,
        "model": model,
        "inputConfig": {"instancesFormat": "jsonl", "gcsSource": {"uris": [input_uri]}},
        "outputConfig": {
            "predictionsFormat": "jsonl",
            "gcsDestination": {"outputUriPrefix": output_prefix},
        },
    }


def exec_program(url: str, folder: Path, *args: str) -> dict:
    """`vtp local exec -- python program.py ARGS` in the user's `folder`, against the service
    at `url`; it must succeed, and its last line of output is JSON, returned."""
    command = [sys.executable, "-m", "vtp", "local", "exec", "--endpoint", url]
    result = subprocess.run(
        [*command, "--", sys.executable, "program.py", *args],
        cwd=folder, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def team_folder(tmp_path: Path, task: str) -> Path:
    """A team's folder, outside the repository, with its task module `my_task.py` (`task`)."""
    folder = tmp_path / "team"
    folder.mkdir()
    assert not folder.is_relative_to(REPO)
    (folder / "my_task.py").write_text(task)
    return folder


def train_digits(out: Path, **flags: object) -> Path:
    """`python -m vtp.trainer` on digits, one thread, with checkpoints, model and logs in `out`."""
    dirs = {"checkpoint_dir": out / "checkpoints", "model_dir": out / "model"}
    values = {**dirs, "tensorboard_dir": out / "logs", "eval_interval": 0, **flags}
    subprocess.run(
        [sys.executable, "-m", "vtp.trainer", *(f"--{k}={v}" for k, v in values.items())],
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"},
        check=True,
        capture_output=True,
    )
    return out


def exported_digits(out: Path, model_dir: Path, hidden_size: int = 16) -> Path:
    """A short digits run (20 steps) in `out`, its one checkpoint exported to `model_dir`; that
    model directory."""
    from vtp.trainer.checkpoint import list_checkpoints  # torch: only where a test trains
    from vtp.trainer.export import export_checkpoint

    train_digits(out, hidden_size=hidden_size, max_steps=20, checkpoint_interval=20)
    return export_checkpoint(list_checkpoints(out / "checkpoints")[0].path, model_dir)


def serving_processes(endpoint_id: str) -> list[int]:
    """Pids of live processes started for `endpoint_id` (their AIP_ENDPOINT_ID says so), not
    counting the service's shim above each (`vtp/local/runtime/shim.py`)."""
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            carries = f"AIP_ENDPOINT_ID={endpoint_id}".encode() in environ.read_bytes().split(b"\0")
            if carries and b"runtime/shim.py" not in (environ.parent / "cmdline").read_bytes():
                found.append(int(environ.parent.name))
        except OSError:
            continue
    return found


VERTEX_TARGET = (
    "--project=my-project",
    "--region=europe-west4",
    "--pipeline-root=gs://my-bucket/root",
)
"""The flags of a submission to (dry-run) Vertex that the CLI tests share."""


def compile_user_pipeline(folder: Path, module: str, function: str, yaml_name: str) -> Path:
    """Compile `function` of FOLDER/MODULE.py to FOLDER/YAML_NAME as its user would: kfp's
    compiler in a fresh interpreter, run in their folder (so their own imports resolve)."""
    code = (
        f"from kfp import compiler; from {module} import {function}; "
        f"compiler.Compiler().compile({function}, {yaml_name!r})"
    )
    compiled = subprocess.run(
        [sys.executable, "-c", code], cwd=folder, capture_output=True, text=True
    )
    assert compiled.returncode == 0, compiled.stderr
    return folder / yaml_name


def experiment_rows(experiment: str) -> list[dict[str, Any]]:
    """The rows `aiplatform.get_experiment_df(experiment)` makes its DataFrame of, by the SDK's
    own queries (the SDK's client as `aiplatform.init` set it); pandas, which only assembles
    them, is not installed here. Pipeline runs and experiment runs alike."""
    from google.cloud import aiplatform
    from google.cloud.aiplatform.metadata import experiment_resources as resources
    from google.cloud.aiplatform.metadata import utils

    context = aiplatform.Experiment(experiment)._metadata_context
    loggable = resources._SUPPORTED_LOGGABLE_RESOURCES[aiplatform.Context]
    runs = aiplatform.Context.list(
        utils._make_filter_string(
            schema_title=sorted(loggable), parent_contexts=[context.resource_name]
        )
    )
    rows = [loggable[run.schema_title]._query_experiment_row(run).to_dict() for run in runs]
    return [{**row, "experiment_name": experiment} for row in rows]


def read_until(process: subprocess.Popen[str], marker: str, timeout: float) -> str:
    """What `process` printed up to the line `marker`, or until it ended or `timeout` seconds
    passed (the caller checks that the marker came); the rest is read too, to the end, so that
    `process` never blocks on a full pipe (a report written after the marker, once, stopped a
    run at a 64 KiB pipe)."""
    lines: list[str] = []
    done = threading.Event()

    def read() -> None:
        for line in process.stdout:  # type: ignore[union-attr]
            if not done.is_set():
                lines.append(line)
            if line.strip() == marker:
                done.set()
        done.set()

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + timeout
    while not done.wait(0.1) and process.poll() is None and time.monotonic() < deadline:
        pass
    return "".join(lines)


def point_vtp_at(service: LocalService, monkeypatch: Any) -> LocalService:
    """Point `vtp` commands run in this process (`run_vtp`) at `service`, with no project or
    region of the shell's; `service`."""
    monkeypatch.setenv("VTP_LOCAL_ENDPOINT", service.url)
    for name in ("CLOUDSDK_CORE_PROJECT", "GOOGLE_CLOUD_PROJECT", "CLOUDSDK_AI_REGION"):
        monkeypatch.delenv(name, raising=False)
    return service


def run_vtp(capsys: object, *argv: str) -> tuple[int, str, str]:
    """`vtp ARGV` in this process: its exit status, stdout and stderr."""
    from vtp.cli import main

    capsys.readouterr()
    try:
        code = main(list(argv))
    except SystemExit as exc:  # API errors exit 1 from inside a command, after saying why
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def readme_block(after: str, language: str = "bash") -> str:
    """The first fenced `language` block after the text `after` in the README."""
    text = (REPO / "README.md").read_text().split(after, 1)[1]
    return text.split(f"```{language}", 1)[1].split("```", 1)[0]


def shell_commands(block: str) -> list[str]:
    """A bash block's command lines: continuations joined, comments and blank lines dropped."""
    lines = (line.split("  #", 1)[0].strip() for line in block.replace("\\\n", " ").splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def run_in_worker(pipeline: Any, state: Path, **arguments: Any) -> tuple[dict, dict[str, dict]]:
    """Run `pipeline` in the engine's worker process under `state` (no service: its tasks see
    this process's environment); the result and the tasks' journal records by path."""
    import yaml
    from kfp import compiler

    from vtp.engine import journal, worker
    from vtp.vertex.local_auth import STARTUP_HOOK_DIR

    state.mkdir(parents=True, exist_ok=True)
    package = state / "pipeline.yaml"
    compiler.Compiler().compile(pipeline, str(package))
    spec = yaml.safe_load(package.read_text())
    run_dir = state / "pipelines" / f"run-{len(list(state.glob('pipelines/run-*')))}"
    run_dir.mkdir(parents=True)
    request = worker.request(spec, arguments, state / "gcs" / "root")
    (run_dir / worker.REQUEST).write_text(json.dumps(request))
    env = {
        **os.environ,
        "VTP_GCS_ROOT": str(state / "gcs"),
        "PYTHONPATH": os.pathsep.join([str(STARTUP_HOOK_DIR), *sys.path]),
    }
    subprocess.run([sys.executable, "-m", "vtp.engine.worker", str(run_dir)], env=env, check=False)
    result = worker.read_result(run_dir)
    assert result is not None
    return result, {r["path"] or "": r for r in journal.read(run_dir)}
