"""`vtp run` / `vtp compile` argument handling: bad input exits 2 before anything runs."""

import pytest

from pipelines.cli import main
from pipelines.cli.pipelines import parse_params


def test_params_are_json_when_they_parse() -> None:
    params = parse_params(["threshold=0.9", 'trainer_args=["--epochs=3"]', "display_name=my run"])
    assert params == {"threshold": 0.9, "trainer_args": ["--epochs=3"], "display_name": "my run"}


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["run", "nope"], "unknown pipeline 'nope'"),
        (["run", "train", "--param", "threshold"], "--param expects NAME=VALUE"),
        (["run", "train", "--param", "=3"], "--param expects NAME=VALUE"),
        (["run", "train", "--param", "thresh=0.5"], "--param thresh: not a parameter"),
        (["compile", "nope"], "unknown pipeline 'nope'"),
    ],
)
def test_bad_input_exits_2_naming_it(
    argv: list[str], names: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert names in captured.err and captured.out == ""
