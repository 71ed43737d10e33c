"""`vtp hp-tuning-jobs`: the dry-run body matches what the real gcloud sends; bad specs exit 2."""

import copy
import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from google.cloud.aiplatform_v1 import HyperparameterTuningJob

from tests.fixtures import run_vtp, wait_until

TASK = Path(__file__).parents[1] / "local" / "tuning" / "objective_task.py"

CONFIG = {
    "studySpec": {
        "metrics": [{"metricId": "accuracy", "goal": "MAXIMIZE"}],
        "parameters": [
            {
                "parameterId": "learning_rate",
                "doubleValueSpec": {"minValue": 0.0001, "maxValue": 0.1},
                "scaleType": "UNIT_LOG_SCALE",
            },
            {
                "parameterId": "batch_size",
                "discreteValueSpec": {"values": [32, 64, 128, 256]},
                "conditionalParameterSpecs": [
                    {
                        "parentDiscreteValues": {"values": [32]},
                        "parameterSpec": {
                            "parameterId": "warmup_steps",
                            "integerValueSpec": {"minValue": 0, "maxValue": 100},
                        },
                    }
                ],
            },
            {"parameterId": "optimizer", "categoricalValueSpec": {"values": ["sgd", "adam"]}},
        ],
        "algorithm": "ALGORITHM_UNSPECIFIED",
        "measurementSelectionType": "BEST_MEASUREMENT",
        "decayCurveStoppingSpec": {"useElapsedDuration": True},
    },
    "maxTrialCount": 20,
    "maxFailedTrialCount": 4,
    "trialJobSpec": {
        "workerPoolSpecs": [
            {
                "machineSpec": {"machineType": "n1-standard-8"},
                "replicaCount": 1,
                "containerSpec": {
                    "imageUri": "us-docker.pkg.dev/my-project/vtp/trainer:latest",
                    "args": ["--epochs=3"],
                },
            }
        ],
        "baseOutputDirectory": {"outputUriPrefix": "gs://my-bucket/hp"},
        "scheduling": {"timeout": "3600s"},
    },
}
FLAGS = [
    "--region=us-central1",
    "--display-name=digits-hp",
    "--parallel-trial-count=2",
    "--algorithm=random-search",
    "--labels=team=ml,env=dev",
    "--network=projects/123/global/networks/vpc",
    "--service-account=trainer@my-project.iam.gserviceaccount.com",
    "--enable-web-access",
]


def write_config(tmp_path, config: dict) -> str:
    path = tmp_path / "hp.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


class Recorder(BaseHTTPRequestHandler):
    """Records each request and answers like Vertex: create echoes a named job, get returns it."""

    requests: list[tuple[str, str, dict]]
    jobs: dict[str, dict]

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"] or 0)) or b"{}")
        self.requests.append(("POST", self.path, body))
        path = self.path.split("?")[0]
        if path.endswith(":cancel"):
            return self._reply({})
        name = f"{path.removeprefix('/v1/')}/{len(self.jobs) + 1}"
        self.jobs[name] = {**body, "name": name, "state": "JOB_STATE_PENDING"}
        self._reply(self.jobs[name])

    def do_GET(self) -> None:
        self.requests.append(("GET", self.path, {}))
        path = self.path.split("?")[0].removeprefix("/v1/")
        if path.endswith("/hyperparameterTuningJobs"):
            return self._reply({"hyperparameterTuningJobs": list(self.jobs.values())})
        self._reply(self.jobs[path])

    def _reply(self, data: dict) -> None:
        payload = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def recorder() -> Iterator[tuple[str, type[Recorder]]]:
    handler = type("Handler", (Recorder,), {"requests": [], "jobs": {}})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler
    server.shutdown()
    server.server_close()


def gcloud_body(tmp_path, url: str, handler: type[Recorder], args: list[str]) -> dict:
    token = tmp_path / "token"
    token.write_text("test-token")
    # Properties as environment variables: `gcloud config set` in a throwaway CLOUDSDK_CONFIG.
    env = {
        "CLOUDSDK_CONFIG": str(tmp_path / "gcloud"),
        "CLOUDSDK_API_ENDPOINT_OVERRIDES_AIPLATFORM": f"{url}/",
        "CLOUDSDK_CORE_PROJECT": "my-project",
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
    }
    subprocess.run(
        ["gcloud", "ai", "hp-tuning-jobs", "create", f"--access-token-file={token}", *args],
        env=env,
        check=True,
        capture_output=True,
    )
    [(method, path, body)] = handler.requests
    assert method == "POST"
    assert path.startswith("/v1/projects/my-project/locations/us-central1/hyperparameterTuningJobs")
    return body


def vtp(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    return run_vtp(capsys, *argv)


def as_job(body: dict) -> HyperparameterTuningJob:
    return HyperparameterTuningJob.from_json(json.dumps(body))


@pytest.mark.skipif(shutil.which("gcloud") is None, reason="needs the gcloud CLI")
def test_dry_run_body_is_what_gcloud_sends(tmp_path, recorder, capsys):
    url, handler = recorder
    config = write_config(tmp_path, CONFIG)
    sent = gcloud_body(tmp_path, url, handler, [f"--config={config}", *FLAGS])
    code, out, err = vtp(
        capsys, "hp-tuning-jobs", "create", f"--config={config}", *FLAGS, "--dry-run"
    )
    assert (code, err) == (0, "")
    assert as_job(json.loads(out)) == as_job(sent)


@pytest.mark.skipif(shutil.which("gcloud") is None, reason="needs the gcloud CLI")
def test_trial_counts_default_to_one_like_gcloud(tmp_path, recorder, capsys):
    url, handler = recorder
    config = copy.deepcopy(CONFIG)
    del config["maxTrialCount"]
    path = write_config(tmp_path, config)
    args = [f"--config={path}", "--region=us-central1", "--display-name=d"]
    sent = gcloud_body(tmp_path, url, handler, args)
    code, out, _ = vtp(capsys, "hp-tuning-jobs", "create", *args, "--dry-run")
    assert code == 0
    assert as_job(json.loads(out)) == as_job(sent)
    assert (sent["maxTrialCount"], sent["parallelTrialCount"]) == (1, 1)


def test_local_create_describe_list_cancel(local_service, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("VTP_LOCAL_ENDPOINT", local_service.url)
    task = ["python", str(TASK), "--record", str(tmp_path), "--steps=100", "--sleep=0.2"]
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": 1,
        "containerSpec": {"imageUri": "python:3.11-slim", "command": task},
    }
    config = {
        "studySpec": {
            "metrics": [{"metricId": "score", "goal": "MAXIMIZE"}],
            "parameters": [{"parameterId": "x", "doubleValueSpec": {"minValue": 0, "maxValue": 1}}],
        },
        "maxTrialCount": 4,
        "trialJobSpec": {"workerPoolSpecs": [pool]},
    }
    target = ["--region=us-central1", "--local"]
    code, out, err = vtp(
        capsys,
        "hp-tuning-jobs",
        "create",
        f"--config={write_config(tmp_path, config)}",
        "--display-name=cli-hp",
        "--parallel-trial-count=2",
        *target,
    )
    assert code == 0 and "submitted" in err
    job_id = json.loads(out)["name"].rpartition("/")[2]

    def describe() -> dict:
        code, out, _ = vtp(capsys, "hp-tuning-jobs", "describe", job_id, *target)
        assert code == 0
        return json.loads(out)

    wait_until(lambda: len(describe().get("trials", [])) == 2, 60, "two running trials")
    code, out, _ = vtp(capsys, "hp-tuning-jobs", "list", *target)
    rows = [line.split() for line in out.splitlines()]
    assert code == 0 and [job_id, "cli-hp", "JOB_STATE_RUNNING", "0/4"] in rows
    code, _, err = vtp(capsys, "hp-tuning-jobs", "cancel", job_id, *target)
    assert code == 0 and "cancel" in err
    wait_until(lambda: describe()["state"] == "JOB_STATE_CANCELLED", 60, "the job to cancel")
    code, _, err = vtp(capsys, "hp-tuning-jobs", "describe", "404", *target)
    assert code == 1 and "not found" in err


def params(c: dict) -> list[dict]:
    return c["studySpec"]["parameters"]


def pools(c: dict) -> list[dict]:
    return c["trialJobSpec"]["workerPoolSpecs"]


MALFORMED = {
    "missing metrics": (lambda c: c["studySpec"].pop("metrics"), "studySpec.metrics"),
    "goal in lowercase": (
        lambda c: c["studySpec"]["metrics"][0].update(goal="maximize"),
        "studySpec.metrics[0].goal: 'maximize' is not one of",
    ),
    "metric id with a space": (
        lambda c: c["studySpec"]["metrics"][0].update(metricId="val acc"),
        "studySpec.metrics[0].metricId",
    ),
    "no parameters": (lambda c: c["studySpec"].update(parameters=[]), "studySpec.parameters"),
    "min above max": (
        lambda c: params(c)[0]["doubleValueSpec"].update(minValue=1.0),
        "studySpec.parameters[0].doubleValueSpec.maxValue",
    ),
    "log scale from zero": (
        lambda c: params(c)[0]["doubleValueSpec"].update(minValue=0.0),
        "studySpec.parameters[0].doubleValueSpec.minValue",
    ),
    "unsorted discrete values": (
        lambda c: params(c)[1]["discreteValueSpec"].update(values=[64, 32]),
        "studySpec.parameters[1].discreteValueSpec.values",
    ),
    "two value specs": (
        lambda c: params(c)[2].update(integerValueSpec={"minValue": 1, "maxValue": 2}),
        "studySpec.parameters[2]: set only one of",
    ),
    "no value spec": (
        lambda c: params(c)[2].pop("categoricalValueSpec"),
        "studySpec.parameters[2]: 'optimizer' needs one of",
    ),
    "scale on a categorical": (
        lambda c: params(c)[2].update(scaleType="UNIT_LOG_SCALE"),
        "studySpec.parameters[2].scaleType",
    ),
    "duplicate parameter id": (
        lambda c: params(c)[2].update(parameterId="learning_rate"),
        "studySpec.parameters[2].parameterId",
    ),
    "condition of the wrong type": (
        lambda c: params(c)[1]["conditionalParameterSpecs"][0].update(
            parentIntValues={"values": [32]}, parentDiscreteValues=None
        ),
        "studySpec.parameters[1].conditionalParameterSpecs[0]",
    ),
    "condition on a value the parent lacks": (
        lambda c: params(c)[1]["conditionalParameterSpecs"][0].update(
            parentDiscreteValues={"values": [48]}
        ),
        "conditionalParameterSpecs[0].parentDiscreteValues.values[0]",
    ),
    "grid search over a double": (
        lambda c: c["studySpec"].update(algorithm="GRID_SEARCH"),
        "studySpec.parameters[0]: GRID_SEARCH",
    ),
    "misspelled field": (
        lambda c: c["studySpec"].update(measurementSelection="LAST_MEASUREMENT"),
        "studySpec.measurementSelection: unknown field; did you mean 'measurementSelectionType'",
    ),
    "snake_case field": (
        lambda c: c.update(max_failed_trial_count=2),
        "max_failed_trial_count: unknown field; did you mean 'maxFailedTrialCount'",
    ),
    "counts under studySpec (a documented mistake)": (
        lambda c: c["studySpec"].update(parallelTrialCount=2),
        "studySpec.parallelTrialCount: not a StudySpec field",
    ),
    "negative failure budget": (
        lambda c: c.update(maxFailedTrialCount=-1),
        "maxFailedTrialCount: must not be negative",
    ),
    "two early stopping rules": (
        lambda c: c["studySpec"].update(medianAutomatedStoppingSpec={}),
        "set only one of",
    ),
    "observation noise": (
        lambda c: c["studySpec"].update(observationNoise="HIGH"),
        "studySpec.observationNoise: only Vertex AI Vizier",
    ),
    "output-only trials": (lambda c: c.update(trials=[]), "trials: output only"),
    "no trial job spec": (
        lambda c: c.pop("trialJobSpec"),
        "trialJobSpec.workerPoolSpecs: must not be empty; give at least the primary pool",
    ),
    "two primary replicas": (
        lambda c: pools(c)[0].update(replicaCount=2),
        "trialJobSpec.workerPoolSpecs[0].replicaCount",
    ),
    "pool without machine type": (
        lambda c: pools(c)[0].update(machineSpec={}),
        "trialJobSpec.workerPoolSpecs[0].machineSpec.machineType",
    ),
    "timeout in hours": (
        lambda c: c["trialJobSpec"]["scheduling"].update(timeout="1h"),
        "trialJobSpec.scheduling.timeout",
    ),
    "output directory not on Cloud Storage": (
        lambda c: c["trialJobSpec"]["baseOutputDirectory"].update(outputUriPrefix="/tmp/out"),
        "trialJobSpec.baseOutputDirectory.outputUriPrefix",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_config_exits_2_naming_the_field(case, tmp_path, capsys):
    mutate, expected = MALFORMED[case]
    config = copy.deepcopy(CONFIG)
    mutate(config)
    path = write_config(tmp_path, config)
    flags = [f for f in FLAGS if not f.startswith("--algorithm")]
    code, out, err = vtp(
        capsys, "hp-tuning-jobs", "create", f"--config={path}", *flags, "--dry-run"
    )
    assert (code, out) == (2, "")
    assert err.startswith(f"vtp: error: --config {path}: ")
    assert expected in err, err


@pytest.mark.parametrize(
    ("flag", "expected"),
    [
        ("--parallel-trial-count=50", "--parallel-trial-count: 50 is above maxTrialCount 20"),
        ("--max-trial-count=0", "--max-trial-count: required and must be positive"),
        ("--algorithm=bayesian", "--algorithm: 'bayesian' is not one of"),
        ("--labels=Team=ml", "--labels: invalid label key 'Team'"),
        ("--network=vpc", "--network: 'vpc' is not valid"),
        ("--display-name=", "--display-name: required"),
        ("--region=moon", "--region: 'moon' is not a Vertex AI location"),
    ],
)
def test_bad_flag_exits_2_naming_the_flag(flag, expected, tmp_path, capsys):
    path = write_config(tmp_path, CONFIG)
    code, out, err = vtp(
        capsys, "hp-tuning-jobs", "create", f"--config={path}", *FLAGS, flag, "--dry-run"
    )
    assert (code, out) == (2, "")
    assert expected in err, err
