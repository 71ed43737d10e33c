"""The trainer's `--task` in a list of its flags: which modules the flags name, and the flags
with one task put first. Shared by the pipelines' `with_task` step (which runs in a task's
process, where only kfp's runtime is importable) and the CLI's checks before a run."""

from collections.abc import Sequence


def named_tasks(args: Sequence[object]) -> list[str]:
    """The modules that `--task` flags in the trainer's `args` name (`--task=M` or `--task M`)."""
    named = []
    for i, arg in enumerate(args):
        if isinstance(arg, str) and arg.startswith("--task="):
            named.append(arg.split("=", 1)[1])
        elif arg == "--task" and i + 1 < len(args):
            named.append(str(args[i + 1]))
    return named


def task_args(task: str, args: Sequence[object]) -> list[object]:
    """`--task=<task>` ahead of the trainer's `args`; ValueError if a `--task` in `args` names
    another module (one task parameter decides; the args may repeat it, not contradict it)."""
    for named in named_tasks(args):
        if named != task:
            raise ValueError(
                f"--task={named} in the trainer's args contradicts the task parameter ({task}): "
                "name the task with the task parameter only"
            )
    return [f"--task={task}", *args]
