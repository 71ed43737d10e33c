"""The README's "Going to Vertex" runs as written: every gcloud line parses (offline, gcloud
stops at the missing account, after its flags), and every vtp line parses and its requests are
well-formed (`--dry-run` where the command sends one)."""

import os
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.fixtures import readme_block, shell_commands
from vtp.cli import build_parser

REPO = Path(__file__).resolve().parents[1]


def commands() -> list[str]:
    return shell_commands(readme_block("## Going to Vertex"))


def test_every_step_is_there() -> None:
    found = " ".join(commands())
    for needed in ("services enable", "repositories create", "buckets create",
                   "service-accounts create", "vtp image build", "vtp compile", "vtp submit",
                   "vtp schedule create", "vtp doctor"):  # fmt: skip
        assert needed in found, needed


@pytest.mark.slow
def test_gcloud_lines_parse(tmp_path: Path) -> None:
    env = {**os.environ, "CLOUDSDK_CONFIG": str(tmp_path), "CLOUDSDK_CORE_DISABLE_PROMPTS": "1"}
    for line in (c for c in commands() if c.startswith("gcloud ")):
        result = subprocess.run(shlex.split(line), env=env, capture_output=True, text=True)
        assert result.returncode != 2, (line, result.stderr)
        assert "active account" in result.stderr, (line, result.stderr)


def test_vtp_lines_parse_and_their_requests_are_well_formed(capsys, tmp_path: Path) -> None:
    from tests.fixtures import run_vtp

    for line in (c for c in commands() if c.startswith("vtp ")):
        argv = shlex.split(line)[1:]
        build_parser().parse_args(argv)  # exits 2 on a flag vtp does not take
        if argv[0] in ("submit",) or argv[:2] == ["image", "build"]:
            code, out, err = run_vtp(capsys, *argv, "--dry-run")
            assert code == 0 and out.startswith("{"), (line, err)
