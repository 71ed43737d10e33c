"""The environment Vertex gives each replica, as pure functions of the job and the replica.

docs/vertex.md, "What a replica sees": `CLUSTER_SPEC` and `TF_CONFIG` describe the whole cluster;
`MASTER_ADDR`/`MASTER_PORT`/`WORLD_SIZE`/`RANK` describe the PyTorch nodes (the replicas of
pools 0 and 1); `AIP_*` directories come from `baseOutputDirectory` (under `<trial id>/` for a
tuning trial); `CLOUD_ML_JOB_ID` and `CLOUD_ML_TRIAL_ID` name the job and the trial;
`CLOUD_ML_PROJECT_ID` and `CLOUD_ML_REGION` its project and region (from its resource name), where
the aiplatform SDK finds its default project and location when the code sets none
(`aiplatform.init(experiment=...)` in a replica, as on Vertex); a job created with an experiment
(`jobSpec.experiment`, `experimentRun`) tells them in `AIP_EXPERIMENT_NAME` and
`AIP_EXPERIMENT_RUN_NAME`, where the SDK's `aiplatform.log_*` find the run. Locally every
replica is a process on 127.0.0.1, so each gets its own port in place of its own host.

The one variable Vertex does not set: `VTP_RENDEZVOUS_DIR`, a private folder (mode 0700) of the
service's user where the PyTorch nodes' processes meet (vtp.trainer.rendezvous), when they all run
as processes of this machine. On Vertex, where the nodes are machines, the trainer's store is a TCP
store on the cluster's network; here every local user and network namespace could reach one, and
no one else may enter the folder.
"""

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from vtp.trainer.rendezvous import RENDEZVOUS_DIR_ENV

# Role names TensorFlow expects in TF_CONFIG, by pool index.
_TF_ROLES = ("chief", "worker", "ps", "evaluator")

# Variables the service owns: inherited values would mislead a replica, so they are dropped.
OWNED_PREFIXES = ("AIP_", "CLOUD_ML_")
OWNED_NAMES = frozenset(
    {"CLUSTER_SPEC", "TF_CONFIG", "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK"}
    | {"LOCAL_RANK", "LOCAL_WORLD_SIZE", "CUDA_VISIBLE_DEVICES", RENDEZVOUS_DIR_ENV}
)


@dataclass(frozen=True)
class Cluster:
    """One attempt of a job as the replicas see it."""

    job_id: str
    """The CustomJob's ID (the last part of its name)."""
    pools: tuple[tuple[str, ...], ...]
    """`host:port` of every replica, per pool index; an empty tuple is a skipped pool."""
    job_spec_json: str
    """The CustomJobSpec as JSON: CLUSTER_SPEC's `job`."""
    base_output_dir: str = ""
    """`jobSpec.baseOutputDirectory.outputUriPrefix` (a gs:// URI), or empty."""
    trial_id: str = ""
    """The tuning trial this job runs, or empty."""
    rendezvous_dir: str = ""
    """The private folder where pools 0 and 1 meet (`VTP_RENDEZVOUS_DIR`), or empty: replicas
    in images, which do not see this machine's folders, meet at MASTER_ADDR:MASTER_PORT."""
    job_name: str = ""
    """The CustomJob's resource name, `projects/P/locations/L/customJobs/ID`: the project and
    region the replicas are told (`CLOUD_ML_PROJECT_ID`, `CLOUD_ML_REGION`); empty or another
    form, neither is set."""
    experiment: str = ""
    """`jobSpec.experiment` (the experiment's context name), or empty: `AIP_EXPERIMENT_NAME`."""
    experiment_run: str = ""
    """`jobSpec.experimentRun` (the run's context name), or empty: `AIP_EXPERIMENT_RUN_NAME`."""


def replica_name(pool: int, index: int) -> str:
    """Vertex's name of a replica: `workerpool<pool>-<index>`."""
    return f"workerpool{pool}-{index}"


def replica_environment(cluster: Cluster, pool: int, index: int) -> dict[str, str]:
    """Every variable Vertex sets for replica `index` of pool `pool`."""
    env = {
        "CLUSTER_SPEC": json.dumps(_cluster_spec(cluster, pool, index)),
        "TF_CONFIG": json.dumps(_tf_config(cluster, pool, index)),
        "CLOUD_ML_JOB_ID": cluster.job_id,
    }
    if cluster.trial_id:
        env["CLOUD_ML_TRIAL_ID"] = cluster.trial_id
    env.update(project_and_region(cluster.job_name))
    if cluster.experiment:  # the SDK's `aiplatform.log_*` in the job then logs to its run
        env["AIP_EXPERIMENT_NAME"] = cluster.experiment
        if cluster.experiment_run:
            env["AIP_EXPERIMENT_RUN_NAME"] = cluster.experiment_run
    if pool in (0, 1):
        env.update(_torch_nodes(cluster, pool, index))
    env.update(output_directories(cluster.base_output_dir, cluster.trial_id))
    return env


def project_and_region(job_name: str) -> dict[str, str]:
    """`CLOUD_ML_PROJECT_ID` and `CLOUD_ML_REGION` of the job named `job_name`
    (`projects/P/locations/L/...`), as Vertex sets them; {} for a name of another form."""
    parts = job_name.split("/")
    if len(parts) < 4 or parts[0] != "projects" or parts[2] != "locations" or "" in parts[:4]:
        return {}
    return {"CLOUD_ML_PROJECT_ID": parts[1], "CLOUD_ML_REGION": parts[3]}


CONTAINER_NAMES = ("HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM")
"""What a replica keeps of the service's environment by default, besides PATH and LC_*: what
a container on Vertex has too. Credentials and everything else stay with the service."""


def container_environment(
    inherited: Mapping[str, str], interpreter_bin: str, passed: Sequence[str] = ()
) -> dict[str, str]:
    """A replica's starting environment: PATH with the service interpreter's `bin` first (so
    `torchrun` and `pip` resolve), HOME, locale and the names in `passed`; nothing else."""
    env = {
        k: v
        for k, v in inherited.items()
        if k in CONTAINER_NAMES or k.startswith("LC_") or k in passed
    }
    rest = [p for p in inherited.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(":") if p]
    env["PATH"] = ":".join([interpreter_bin, *(p for p in rest if p != interpreter_bin)])
    return env


def layered_environment(inherited: Mapping[str, str], *layers: Mapping[str, str]) -> dict[str, str]:
    """`inherited` without the variables the service owns, then each layer over the previous."""
    env = {
        k: v
        for k, v in inherited.items()
        if k not in OWNED_NAMES and not k.startswith(OWNED_PREFIXES)
    }
    for layer in layers:
        env.update(layer)
    return env


def output_directories(base_output_dir: str, trial_id: str = "") -> dict[str, str]:
    """`AIP_MODEL_DIR`, `AIP_CHECKPOINT_DIR`, `AIP_TENSORBOARD_LOG_DIR` under the base directory."""
    if not base_output_dir:
        return {}
    base = base_output_dir.rstrip("/") + "/"
    if trial_id:
        base += f"{trial_id}/"
    return {
        "AIP_MODEL_DIR": base + "model/",
        "AIP_CHECKPOINT_DIR": base + "checkpoints/",
        "AIP_TENSORBOARD_LOG_DIR": base + "logs/",
    }


def _cluster_spec(cluster: Cluster, pool: int, index: int) -> dict:
    task: dict[str, object] = {"type": f"workerpool{pool}", "index": index}
    if cluster.trial_id:
        task["trial"] = cluster.trial_id
    hosts = {f"workerpool{i}": list(h) for i, h in enumerate(cluster.pools) if h}
    return {"cluster": hosts, "environment": "cloud", "task": task, "job": cluster.job_spec_json}


def _tf_config(cluster: Cluster, pool: int, index: int) -> dict:
    task: dict[str, object] = {"type": _TF_ROLES[pool], "index": index}
    if cluster.trial_id:
        task["trial"] = cluster.trial_id
    # TensorFlow keeps the evaluator out of the cluster it trains on.
    hosts = {_TF_ROLES[i]: list(h) for i, h in enumerate(cluster.pools) if h and i < 3}
    return {"cluster": hosts, "environment": "cloud", "task": task, "job": cluster.job_spec_json}


def _torch_nodes(cluster: Cluster, pool: int, index: int) -> dict[str, str]:
    primary = cluster.pools[0][0]
    host, _, port = primary.rpartition(":")
    workers = cluster.pools[1] if len(cluster.pools) > 1 else ()
    nodes = {
        "MASTER_ADDR": host,
        "MASTER_PORT": port,
        "WORLD_SIZE": str(1 + len(workers)),
        "RANK": str(0 if pool == 0 else 1 + index),
    }
    if cluster.rendezvous_dir:
        nodes[RENDEZVOUS_DIR_ENV] = cluster.rendezvous_dir
    return nodes
