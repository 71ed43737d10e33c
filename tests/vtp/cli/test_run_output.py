"""`vtp run`'s task output: kfp's executor-input dump and loading chatter are dropped."""

from vtp.engine.task_output import readable

TASK_OUTPUT = """\
[KFP Executor 2026-11-21 22:00:26,440 INFO]: Looking for component `custom_job` in x.py
[KFP Executor 2026-11-21 22:00:26,440 INFO]: Loading KFP component "custom_job" from x.py
[KFP Executor 2026-11-21 22:00:26,441 INFO]: Got executor_input:
{
    "inputs": {
        "parameterValues": {"project": "local"}
    },
    "outputs": {}
}
2026-11-21 22:00:26,956 Submitted CustomJob customJobs/1
{"a json line the task printed": true}
}
[KFP Executor 2026-11-21 22:00:28,000 INFO]: Wrote executor output file to /x/executor_output.json.
"""


def test_only_the_tasks_own_lines_remain() -> None:
    kept = list(readable(TASK_OUTPUT.splitlines(keepends=True)))
    assert kept == [
        "2026-11-21 22:00:26,956 Submitted CustomJob customJobs/1\n",
        '{"a json line the task printed": true}\n',
        "}\n",
    ]


def test_a_task_that_fails_before_the_dump_keeps_its_traceback() -> None:
    lines = ["Traceback (most recent call last):\n", "ValueError: bad\n"]
    assert list(readable(lines)) == lines
