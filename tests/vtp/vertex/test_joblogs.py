"""Following a job: log entry lines and the state-change loop."""

from google.cloud import aiplatform_v1

from vtp.vertex.joblogs import follow, format_entry

State = aiplatform_v1.JobState


def test_format_entry_splits_lines_and_reads_json_payloads() -> None:
    entry = {
        "severity": "ERROR",
        "timestamp": "T",
        "jsonPayload": {"message": "a\nb"},
        "resource": {"labels": {"task_name": "workerpool1-0"}},
    }
    assert format_entry(entry) == ["ERROR\tT\tworkerpool1-0\ta", "ERROR\tT\tworkerpool1-0\tb"]
    assert format_entry({"textPayload": ""}) == ["DEFAULT\t\tunknown_task\t"]


def test_follow_yields_state_changes_and_logs_until_the_job_ends() -> None:
    states = iter(
        [
            State.JOB_STATE_PENDING,
            State.JOB_STATE_PENDING,
            State.JOB_STATE_RUNNING,
            State.JOB_STATE_FAILED,
        ]
    )
    logs = iter([[], [{"n": 1}], [{"n": 2}, {"n": 3}], []])
    sleeps: list[float] = []
    events = list(
        follow(
            lambda: aiplatform_v1.CustomJob(state=next(states)),
            lambda: next(logs),
            interval=5.0,
            sleep=sleeps.append,
        )
    )
    seen = [e.state if isinstance(e, aiplatform_v1.CustomJob) else e["n"] for e in events]
    assert seen == [
        State.JOB_STATE_PENDING,
        1,
        2,
        3,
        State.JOB_STATE_RUNNING,
        State.JOB_STATE_FAILED,
    ]
    assert sleeps == [5.0, 5.0, 5.0]
