"""The environment each replica gets, as docs/vertex.md describes it."""

import json

import pytest

from vtp.local.runtime.cluster import (
    Cluster,
    layered_environment,
    output_directories,
    project_and_region,
    replica_environment,
)

POOLS = (("127.0.0.1:1000",), ("127.0.0.1:1001", "127.0.0.1:1002"), (), ("127.0.0.1:1003",))
CLUSTER = Cluster("123", POOLS, '{"workerPoolSpecs": []}', "gs://b/out", trial_id="")


@pytest.mark.parametrize(("pool", "index", "rank"), [(0, 0, "0"), (1, 0, "1"), (1, 1, "2")])
def test_pytorch_nodes_are_the_replicas_of_pools_0_and_1(pool, index, rank):
    env = replica_environment(CLUSTER, pool, index)
    assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == ("127.0.0.1", "1000")
    assert (env["WORLD_SIZE"], env["RANK"]) == ("3", rank)


def test_evaluators_are_not_pytorch_nodes():
    env = replica_environment(CLUSTER, 3, 0)
    assert not {"MASTER_ADDR", "RANK", "WORLD_SIZE"} & env.keys()


def test_cluster_spec_names_pools_and_task():
    spec = json.loads(replica_environment(CLUSTER, 1, 1)["CLUSTER_SPEC"])
    assert spec == {
        "cluster": {
            "workerpool0": ["127.0.0.1:1000"],
            "workerpool1": ["127.0.0.1:1001", "127.0.0.1:1002"],
            "workerpool3": ["127.0.0.1:1003"],
        },
        "environment": "cloud",
        "task": {"type": "workerpool1", "index": 1},
        "job": '{"workerPoolSpecs": []}',
    }


def test_tf_config_uses_tensorflow_roles_and_keeps_the_evaluator_out():
    config = json.loads(replica_environment(CLUSTER, 3, 0)["TF_CONFIG"])
    assert config["cluster"] == {
        "chief": ["127.0.0.1:1000"],
        "worker": ["127.0.0.1:1001", "127.0.0.1:1002"],
    }
    assert config["task"] == {"type": "evaluator", "index": 0}


def test_job_and_output_directories():
    env = replica_environment(CLUSTER, 0, 0)
    assert env["CLOUD_ML_JOB_ID"] == "123" and "CLOUD_ML_TRIAL_ID" not in env
    assert env["AIP_MODEL_DIR"] == "gs://b/out/model/"
    assert env["AIP_CHECKPOINT_DIR"] == "gs://b/out/checkpoints/"
    assert env["AIP_TENSORBOARD_LOG_DIR"] == "gs://b/out/logs/"


def test_a_trial_gets_its_id_and_its_own_output_directories():
    trial = Cluster("9", POOLS[:1], "{}", "gs://b/study/", trial_id="4")
    env = replica_environment(trial, 0, 0)
    assert env["CLOUD_ML_TRIAL_ID"] == "4"
    assert env["AIP_MODEL_DIR"] == "gs://b/study/4/model/"
    assert json.loads(env["CLUSTER_SPEC"])["task"]["trial"] == "4"


def test_the_jobs_project_and_region_come_from_its_name():
    named = Cluster("7", POOLS, "{}", job_name="projects/team/locations/europe-west4/customJobs/7")
    for pool, index in ((0, 0), (1, 1), (3, 0)):
        env = replica_environment(named, pool, index)
        assert env["CLOUD_ML_PROJECT_ID"] == "team" and env["CLOUD_ML_REGION"] == "europe-west4"


@pytest.mark.parametrize("name", ["", "7", "projects//locations/x/customJobs/7", "a/b/c/d"])
def test_no_project_or_region_without_a_resource_name(name):
    assert project_and_region(name) == {}
    env = replica_environment(Cluster("7", POOLS, "{}", job_name=name), 0, 0)
    assert "CLOUD_ML_PROJECT_ID" not in env and "CLOUD_ML_REGION" not in env


def test_no_base_output_directory_means_no_aip_directories():
    assert output_directories("") == {}


def test_layers_override_in_order_and_inherited_vertex_variables_are_dropped():
    inherited = {"PATH": "/bin", "RANK": "7", "AIP_MODEL_DIR": "gs://old/", "TEAM": "a"}
    env = layered_environment(inherited, {"RANK": "0"}, {"TEAM": "b"})
    assert env == {"PATH": "/bin", "RANK": "0", "TEAM": "b"}
