"""Cluster set-up from Vertex's environment: nodes, process ranks, exit statuses."""

import json

import pytest

from vtp.trainer.distributed import Nodes, Placement, nodes_from_env
from vtp.trainer.launch import _first_failure, exit_status


def test_master_variables_describe_nodes():
    env = {"MASTER_ADDR": "workerpool0-0", "MASTER_PORT": "2222", "WORLD_SIZE": "3", "RANK": "2"}
    assert nodes_from_env(env) == Nodes("workerpool0-0", 2222, count=3, rank=2)


def test_cluster_spec_is_the_fallback_with_pool_1_after_pool_0():
    spec = {
        "cluster": {"workerpool0": ["cmle-0:2222"], "workerpool1": ["w-0:2222", "w-1:2222"]},
        "environment": "cloud",
        "task": {"type": "workerpool1", "index": 1},
    }
    assert nodes_from_env({"CLUSTER_SPEC": json.dumps(spec)}) == Nodes("cmle-0", 2222, 3, 2)
    spec["task"] = {"type": "workerpool0", "index": 0}
    assert nodes_from_env({"CLUSTER_SPEC": json.dumps(spec)}).rank == 0


def test_nothing_set_means_a_local_job():
    assert nodes_from_env({}) is None


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"MASTER_ADDR": "h", "WORLD_SIZE": "2", "RANK": "2"}, "RANK=2"),
        ({"MASTER_ADDR": "h", "WORLD_SIZE": "two"}, "WORLD_SIZE"),
        ({"CLUSTER_SPEC": "{not json"}, "CLUSTER_SPEC"),
        (
            {
                "CLUSTER_SPEC": json.dumps(
                    {
                        "cluster": {"workerpool0": ["h:1"]},
                        "task": {"type": "workerpool2", "index": 0},
                    }
                )
            },
            "workerpool2",
        ),
    ],
)
def test_bad_cluster_environment_is_named(env, named):
    with pytest.raises(ValueError, match=named):
        nodes_from_env(env)


def test_process_rank_is_node_rank_times_processes_plus_local_rank():
    placement = Placement(Nodes("h", 1, count=2, rank=1), nproc_per_node=4, local_rank=3)
    assert (placement.rank, placement.world_size) == (7, 8)


def test_exit_status_of_a_killed_process_is_128_plus_signal():
    assert [exit_status(code) for code in (0, 1, 143, -9, -15)] == [0, 1, 143, 137, 143]


class _Child:
    def __init__(self, exitcode: int | None) -> None:
        self.exitcode = exitcode


def test_the_node_blames_the_process_that_raised_first_not_the_first_seen_to_exit():
    # Rank 1 raised at moment 5.0; rank 0's collective lost it and raised at 6.0, and rank 0
    # exited first (or both had exited when the watcher looked).
    rank0, rank1 = _Child(1), _Child(None)
    assert _first_failure([rank0, rank1], [rank0], [6.0, 5.0]) is rank1
    rank1.exitcode = 1
    assert _first_failure([rank0, rank1], [rank0, rank1], [6.0, 5.0]) is rank1


def test_the_node_blames_a_process_killed_outright_over_the_errors_it_caused():
    killed, peer = _Child(-9), _Child(1)  # killed (out of memory): it wrote no moment
    assert _first_failure([peer, killed], [peer, killed], [3.0, 0.0]) is killed
