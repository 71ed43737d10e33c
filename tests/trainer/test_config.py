"""Config: every field is a flag (and a tuning parameterId), round-trips, and is validated."""

import dataclasses
import os
import subprocess
import sys
import typing

import pytest

from vtp.trainer.config import Config, field_docs, flag_fields, output_dirs, parse_args


def _changed_value(field: dataclasses.Field) -> object:
    """A valid value different from the field's default."""
    kind = typing.get_type_hints(Config)[field.name]
    if typing.get_origin(kind) is typing.Literal:
        return next(choice for choice in typing.get_args(kind) if choice != field.default)
    if kind is bool:
        return not field.default
    if kind is str:
        return "vtp.trainer.tasks.digits_copy" if field.name == "task" else f"gs://b/{field.name}"
    if field.name == "dropout":
        return 0.25
    return field.default + (7 if kind is int else 0.5)


def test_every_field_round_trips_through_its_flag():
    changed = Config(**{f.name: _changed_value(f) for f in flag_fields(Config)})
    assert all(getattr(changed, f.name) != f.default for f in flag_fields(Config)), (
        "each field must differ from its default for the round trip to prove anything"
    )
    assert parse_args(changed.to_args()) == changed
    for field in flag_fields(Config):
        value = getattr(changed, field.name)
        flag = [f"--{field.name}={str(value).lower() if isinstance(value, bool) else value}"]
        assert getattr(parse_args(flag), field.name) == value, field.name
    assert Config.from_dict(changed.to_dict()) == changed


def test_every_field_has_a_docstring_used_as_help():
    docs = field_docs()
    assert set(docs) == {f.name for f in dataclasses.fields(Config)}
    assert all(doc.strip() for doc in docs.values())


def test_values_as_vertex_appends_them():
    config = parse_args(
        ["--batch_size=32.0", "--learning_rate=1e-4", "--compile=True", "--seed", "3"]
    )
    assert (config.batch_size, config.learning_rate, config.compile, config.seed) == (
        32,
        1e-4,
        True,
        3,
    )
    assert parse_args(["--compile"]).compile is True
    assert parse_args(["--compile=false"]).compile is False


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--learning_rate=0"], "--learning_rate"),
        (["--batch_size=12.5"], "--batch_size"),
        (["--lr_schedule=linear"], "--lr_schedule"),
        (["--dropout=1"], "--dropout"),
        (["--compile=maybe"], "--compile"),
        (["--learning_rat=0.1"], "--learning_rat"),
        (["--checkpoint_interval=-1"], "--checkpoint_interval"),
    ],
)
def test_bad_flags_exit_2_naming_the_flag(argv, named, capsys):
    with pytest.raises(SystemExit) as exit_info:
        parse_args(argv)
    assert exit_info.value.code == 2
    assert named in capsys.readouterr().err


def test_unknown_flag_from_the_command_line_writes_nothing_to_stdout(tmp_path):
    process = subprocess.run(
        [sys.executable, "-m", "vtp.trainer", "--no_such_flag=1", f"--model_dir={tmp_path}/m"],
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert process.returncode == 2
    assert "--no_such_flag" in process.stderr
    assert process.stdout == ""
    assert not (tmp_path / "m").exists()


def test_output_dirs_prefer_flags_then_vertex_variables(tmp_path, monkeypatch):
    monkeypatch.setenv("VTP_GCS_ROOT", str(tmp_path))
    env = {"AIP_CHECKPOINT_DIR": "gs://bucket/job/checkpoints/", "AIP_MODEL_DIR": "gs://b/m/"}
    dirs = output_dirs(Config(model_dir=str(tmp_path / "mine")), env)
    assert dirs.checkpoints == tmp_path / "bucket/job/checkpoints"
    assert dirs.model == tmp_path / "mine"
    assert dirs.tensorboard.as_posix() == "trainer_output/logs"
