"""A task's `python3` is the service's interpreter (as the image's own would be), and only the
word `python3` in the container's command: values, paths and other Pythons stay as they are."""

import shlex
import sys

from vtp.engine.executors import this_python


def test_python3_words_become_this_interpreter() -> None:
    script = "python3 -m pip install kfp && python3 -m kfp.dsl.executor_main"
    got = this_python(["python3", "-u", "-m", "launcher", "sh", "-c", script])
    assert got[0] == sys.executable
    assert got[-1] == script.replace("python3", shlex.quote(sys.executable))


def test_other_words_with_python3_in_them_stay() -> None:
    command = ["sh", "-c", "ls ~/src/python3-demo python3.11 /usr/bin/python3 mypython3"]
    assert this_python(command) == command


def test_the_components_own_source_is_left_alone() -> None:
    script = 'python3 -m kfp.dsl.executor_main "$program_path/ephemeral_component.py" "$@"'
    source = 'KERNEL = "python3"\n'
    got = this_python(["sh", "-ec", script, source, "--executor_input"])
    assert got[2] != script and got[3] == source
