"""Vertex's failure rules as a pure function: an exit and a history in, a decision out."""

import pytest

from vtp.local.runtime.rules import (
    Action,
    History,
    Policy,
    ReplicaExit,
    after,
    decide,
    exit_status,
    may_restart_after_crash,
)

WORKER = "workerpool1-0"
PRIMARY = "workerpool0-0"
PLAIN, TOGETHER, NO_RETRIES = (
    Policy(),
    Policy(restart_job_on_worker_restart=True),
    Policy(disable_retries=True),
)


@pytest.mark.parametrize(
    ("event", "history", "policy", "action"),
    [
        (ReplicaExit(PRIMARY, 0), History(), PLAIN, Action.SUCCEED),
        (ReplicaExit(WORKER, 0), History(), PLAIN, Action.CONTINUE),
        (ReplicaExit(WORKER, 1), History(), PLAIN, Action.FAIL),
        (ReplicaExit(WORKER, 143), History(), PLAIN, Action.FAIL),  # SIGTERM not from a preemption
        # Transient exit codes retry the whole job, three times.
        (ReplicaExit(WORKER, 6), History(), PLAIN, Action.RETRY_JOB),
        (ReplicaExit(PRIMARY, 134), History(job_retries=2), PLAIN, Action.RETRY_JOB),
        (ReplicaExit(PRIMARY, 11), History(job_retries=3), PLAIN, Action.FAIL),
        (ReplicaExit(PRIMARY, 139), History(), NO_RETRIES, Action.FAIL),
        (ReplicaExit(PRIMARY, 137), History(), PLAIN, Action.FAIL),  # out of memory
        # Non-permanent failures restart the worker five times, then retry the job three times.
        (ReplicaExit(WORKER, 143, preempted=True), History(), PLAIN, Action.RESTART_WORKER),
        (ReplicaExit(WORKER, 137, preempted=True), History(), TOGETHER, Action.RESTART_ALL),
        (ReplicaExit(WORKER, 143, True), History(0, {WORKER: 4}), PLAIN, Action.RESTART_WORKER),
        (ReplicaExit(WORKER, 143, True), History(0, {WORKER: 5}), PLAIN, Action.RETRY_JOB),
        (ReplicaExit(WORKER, 143, True), History(0, {PRIMARY: 5}), PLAIN, Action.RESTART_WORKER),
        (ReplicaExit(WORKER, 143, True), History(3, {WORKER: 5}), PLAIN, Action.FAIL),
        # disableRetries: no job retries, and restartJobOnWorkerRestart is overridden.
        (ReplicaExit(WORKER, 143, True), History(), Policy(True, True), Action.RESTART_WORKER),
        (ReplicaExit(WORKER, 143, True), History(0, {WORKER: 5}), NO_RETRIES, Action.FAIL),
        # A preempted replica that exits 0 anyway finished its work.
        (ReplicaExit(PRIMARY, 0, preempted=True), History(), PLAIN, Action.SUCCEED),
    ],
)
def test_decide(event, history, policy, action):
    assert decide(event, history, policy).action is action


@pytest.mark.parametrize(
    ("event", "message"),
    [
        (
            ReplicaExit(PRIMARY, 1),
            "The replica workerpool0-0 exited with a non-zero status of 1. "
            "Termination reason: Error.",
        ),
        (
            ReplicaExit(WORKER, 139),
            "The replica workerpool1-0 exited with a non-zero status of 139. "
            "Termination reason: Error.",
        ),
        (
            ReplicaExit(WORKER, 137),
            "The replica workerpool1-0 ran out of memory and exited with a non-zero status of 137.",
        ),
        (
            ReplicaExit(WORKER, 143, preempted=True),
            "The replica workerpool1-0 exited with a non-zero status of 143. "
            "Termination reason: Preempted.",
        ),
    ],
)
def test_failures_use_vertex_wording_and_code_3(event, message):
    exhausted = History(job_retries=3, worker_restarts={WORKER: 5})
    decision = decide(event, exhausted, PLAIN)
    assert (decision.action, decision.error_code, decision.message) == (Action.FAIL, 3, message)


def test_preempting_one_worker_24_times_walks_every_budget():
    history, actions = History(), []
    while not actions or actions[-1] not in (Action.FAIL, Action.SUCCEED):
        decision = decide(ReplicaExit(WORKER, 143, preempted=True), history, PLAIN)
        actions.append(decision.action)
        history = after(decision, history)
    one_attempt = [Action.RESTART_WORKER] * 5
    assert actions == [*one_attempt, Action.RETRY_JOB] * 3 + [*one_attempt, Action.FAIL]


def test_restart_counts_are_per_worker_and_a_job_retry_resets_them():
    history = after(decide(ReplicaExit(WORKER, 143, True), History(), TOGETHER), History())
    assert history == History(0, {WORKER: 1})
    retried = after(decide(ReplicaExit(PRIMARY, 6), history, PLAIN), history)
    assert retried == History(1, {})


@pytest.mark.parametrize(("returncode", "status"), [(0, 0), (3, 3), (-6, 134), (-9, 137)])
def test_exit_status_is_what_a_container_reports(returncode, status):
    assert exit_status(returncode) == status


def test_a_service_crash_restarts_the_job_twice_unless_retries_are_disabled():
    assert [may_restart_after_crash(n, PLAIN) for n in range(3)] == [True, True, False]
    assert not may_restart_after_crash(0, NO_RETRIES)
