"""A warm replica (forked from the service's preloaded server) is what a cold one is (#53).

The same job runs on two services, one whose every replica that can fork does
(`VTP_LOCAL_WARM_REPLICAS=all`) and one where none does (`off`); the replica's script records
what its code can see of its process (interpreter, path, environment, working directory, umask,
process group and parent, signal dispositions, stdin, /gcs, thread pools, `__main__`), and the
records must match. Then how it ends (an exception's traceback and status, `sys.exit`, death by
a signal) and when a replica starts cold instead, saying why.
"""

import json
import textwrap
from pathlib import Path

import pytest

from tests.fixtures import LocalService, State, alive, wait_for_state, wait_until
from tests.vtp.local.conftest import custom_job
from vtp.local.runtime.warm import WARM_ENV

pytestmark = pytest.mark.slow

FACTS = textwrap.dedent(
    """
    import json, os, signal, sys, threading
    import torch
    record = {
        "executable": sys.executable, "prefix": sys.prefix, "path": sys.path,
        "env": {k: v for k, v in os.environ.items() if k != "VTP_LOCAL_REPLICA_TOKEN"},
        "cwd": os.getcwd(), "umask": os.umask(0o22), "argv": sys.argv, "name": __name__,
        "file": __file__, "leads_group": os.getpgrp() == os.getppid(),
        "parent_is_shim": os.getppid() != os.getpid(),
        "signals": {s: str(signal.getsignal(getattr(signal, s)))
                    for s in ("SIGINT", "SIGTERM", "SIGPIPE", "SIGCHLD", "SIGUSR2", "SIGHUP")},
        "blocked": sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])),
        "stdin": sys.stdin.read(), "gcs": sorted(os.listdir("/gcs")),
        "torch_threads": torch.get_num_threads(), "threads": threading.active_count(),
        "modules_main": sys.modules["__main__"].__dict__.get("__file__"),
        "dont_write_bytecode": sys.dont_write_bytecode,
    }
    with open(f"/gcs/facts/{os.environ['WHICH']}.json", "w") as out:
        json.dump(record, out)
    print("recorded")
    """
)


def script_pool(script: Path, *args: str, **env: str) -> dict:
    return {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": "1",
        "containerSpec": {
            "imageUri": "us-docker.pkg.dev/p/vtp/vtp:1",
            "command": ["python", str(script), *args],
            "env": [{"name": k, "value": v} for k, v in env.items()],
        },
    }


@pytest.fixture(scope="module")
def services(tmp_path_factory):
    """A service that forks every replica it can, and one that forks none."""
    root = tmp_path_factory.mktemp("warm")
    with (
        LocalService(root / "warm", env={WARM_ENV: "all"}) as warm,
        LocalService(root / "cold", env={WARM_ENV: "off"}) as cold,
    ):
        yield warm, cold


def run_job(service: LocalService, *pools: dict) -> tuple[object, str]:
    client = service.client()
    job = client.create_custom_job(parent=service.parent, custom_job=custom_job(*pools))
    done = wait_for_state(client, job.name, timeout=300)
    log_dir = service.state_dir / "jobs" / job.name.rsplit("/", 1)[-1] / "logs"
    return done, (log_dir / "workerpool0-0.log").read_text()


def normalized(record: dict, service: LocalService, job_dir: str) -> dict:
    """The record with what names its service and job (state directory, ports, ids) cut out."""
    text = json.dumps(record)
    text = text.replace(str(service.state_dir), "STATE").replace(job_dir, "JOB")
    found = json.loads(text)
    for name in list(found["env"]):
        if name.startswith(("VTP_LOCAL", "CLOUDSDK", "STORAGE_EMULATOR", "MASTER_PORT",
                            "CLUSTER_SPEC", "TF_CONFIG", "CLOUD_ML_JOB_ID", "GRPC_", "REQUESTS_CA",
                            "AIP_", "VTP_")):  # fmt: skip
            found["env"][name] = "..."
    return found


def test_a_warm_replica_sees_what_a_cold_one_sees(services, tmp_path):
    warm, cold = services
    script = tmp_path / "facts.py"
    script.write_text(FACTS)
    records = {}
    for which, service in (("warm", warm), ("cold", cold)):
        (service.gcs_root / "facts").mkdir(parents=True, exist_ok=True)
        (service.gcs_root / "seen-in-gcs").mkdir(exist_ok=True)
        job, log = run_job(service, script_pool(script, "--flag", WHICH=which))
        assert job.state == State.JOB_STATE_SUCCEEDED, log
        assert ("starts warm" in log) == (which == "warm"), log
        job_id = job.name.rsplit("/", 1)[-1]
        record = json.loads((service.gcs_root / "facts" / f"{which}.json").read_text())
        records[which] = normalized(record, service, job_id)
    warm_record, cold_record = records["warm"], records["cold"]
    warm_record["env"].pop("WHICH")
    cold_record["env"].pop("WHICH")
    for key in cold_record:
        assert warm_record[key] == cold_record[key], key
    assert warm_record["leads_group"] and warm_record["argv"][1:] == ["--flag"]
    assert warm_record["stdin"] == "" and "seen-in-gcs" in warm_record["gcs"]


ENDINGS = textwrap.dedent(
    """
    import atexit, os, signal, sys
    import torch
    atexit.register(lambda: print("exit handler ran", flush=True))
    how = sys.argv[1]
    if how == "raise":
        def deep():
            raise ValueError("the team's own error")
        deep()
    if how == "exit":
        sys.exit(3)
    if how == "signal":
        os.kill(os.getpid(), signal.SIGTERM)
    """
)


@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("raise", "exited with a non-zero status of 1"),
        ("exit", "exited with a non-zero status of 3"),
        ("signal", "non-zero status of 143"),
    ],
)
def test_a_warm_replica_ends_as_the_interpreter_would(services, tmp_path, how, message):
    warm, _ = services
    script = tmp_path / "endings.py"
    script.write_text(ENDINGS)
    job, log = run_job(warm, script_pool(script, how))
    assert job.state == State.JOB_STATE_FAILED and message in job.error.message, (job, log)
    assert "starts warm" in log
    if how == "raise":
        traceback = log[log.index("Traceback") :]
        assert 'in deep\n    raise ValueError("the team' in traceback, traceback
        assert "vtp/local" not in traceback and "runpy" not in traceback, traceback
        assert traceback.index("ValueError") < traceback.index("exit handler ran")
    if how != "signal":
        assert "exit handler ran" in log


def test_a_replica_whose_start_a_fork_could_not_match_starts_cold_saying_why(services, tmp_path):
    warm, _ = services
    script = tmp_path / "plain.py"
    script.write_text("import torch, os\nprint('hash seed', os.environ.get('PYTHONHASHSEED'))\n")
    job, log = run_job(warm, script_pool(script, PYTHONHASHSEED="0"))
    assert job.state == State.JOB_STATE_SUCCEEDED, log
    assert "starts cold: its environment sets PYTHONHASHSEED" in log and "hash seed 0" in log
    own = tmp_path / "own"
    (own / "numpy").mkdir(parents=True)
    (own / "numpy" / "__init__.py").write_text("raise SystemExit('the team numpy')\n")
    job, log = run_job(warm, script_pool(script, PYTHONPATH=str(own)))
    assert "starts cold: its path has its own numpy" in log, log
    assert job.state == State.JOB_STATE_FAILED and "the team numpy" in log, log


def test_warm_replicas_die_with_their_service(tmp_path):
    """SIGKILL to the service: the replica's shim sees the service's pipe close and kills it."""
    pids = tmp_path / "pids"
    script = tmp_path / "sleeps.py"
    script.write_text(
        "import os, sys, time, torch\n"
        "open(sys.argv[1], 'w').write(f'{os.getpid()} {os.getppid()}')\n"
        "time.sleep(600)\n"
    )
    service = LocalService(tmp_path / "state", env={WARM_ENV: "all"}).start()
    try:
        client = service.client()
        pool = script_pool(script, str(pids))
        job = client.create_custom_job(parent=service.parent, custom_job=custom_job(pool))
        wait_until(pids.exists, 300, "the replica's pids")
        replica, shim = (int(p) for p in pids.read_text().split())
        log = service.state_dir / "jobs" / job.name.rsplit("/", 1)[-1] / "logs"
        assert "starts warm" in (log / "workerpool0-0.log").read_text()
    finally:
        service.kill()
    wait_until(lambda: not alive(replica) and not alive(shim), 60, "the replica's end")
