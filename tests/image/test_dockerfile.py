"""The component image, built the way the Dockerfile builds it, minus the Docker engine.

No engine runs here, so the test plays the Dockerfile's instructions itself: COPY into a build
directory, ENV into the environment, RUN in a fresh virtual environment standing in for the
base image's Python. Then the trainer must start from the installed package alone.

The stand-in base sees the test environment's packages (a `.pth` file), as the GPU variant's
base already holds torch: the dependency layer's `pip install` resolves the project's
requirements under the constraints against them rather than unpacking 700 MB again (the set-up
command installs them into a fresh environment already). The project itself is built and
installed into the stand-in, and only that copy of it is imported.
"""

import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from vtp.local.runtime.launch import TRAINER_COMMAND

REPO = Path(__file__).resolve().parents[2]
KEEP_PIP_CACHE = {"PIP_NO_CACHE_DIR"}
"""ENV the test drops: the image build wants no cache, a test run wants pip's cache."""


def instructions() -> list[tuple[str, str]]:
    """The Dockerfile's (instruction, arguments), with continuation lines joined."""
    text = (REPO / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    return [tuple(line.split(None, 1)) for line in lines if line and not line.startswith("#")]


def build(root: Path, build_args: dict[str, str] | None = None) -> dict[str, str]:
    """Play the Dockerfile into `root` (ARGs from `build_args`, else their defaults); return
    the image's environment."""
    venv = root / "python"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "base_image.pth").write_text(sysconfig.get_path("purelib") + "\n")
    env = {**os.environ, "PATH": f"{venv / 'bin'}:{os.environ['PATH']}"}
    env.pop("VIRTUAL_ENV", None)
    workdir = root
    for instruction, args in instructions():
        if instruction == "WORKDIR":
            workdir = root / args.lstrip("/")
            workdir.mkdir(parents=True, exist_ok=True)
        elif instruction == "ARG":
            name, _, default = args.partition("=")
            env[name] = (build_args or {}).get(name, shlex.split(default)[0] if default else "")
        elif instruction == "ENV":
            pairs = dict(pair.split("=", 1) for pair in shlex.split(args))
            env.update({k: v for k, v in pairs.items() if k not in KEEP_PIP_CACHE})
        elif instruction == "COPY":
            *sources, target = args.split()
            for source in sources:
                copy(REPO / source, workdir / target, many=len(sources) > 1)
        elif instruction == "RUN":
            subprocess.run(["bash", "-c", args], cwd=workdir, env=env, check=True)
    return env


def entrypoint() -> list[str]:
    """The image's ENTRYPOINT + CMD (exec form): what a pool without a command runs."""
    found = dict(instructions())
    return [*json.loads(found["ENTRYPOINT"]), *json.loads(found.get("CMD", "[]"))]


def copy(source: Path, target: Path, many: bool) -> None:
    """COPY semantics: a directory copies as `target`; files into `target/` when several."""
    if source.is_dir():
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(source, target, ignore=ignore, dirs_exist_ok=True)
    else:
        destination = target / source.name if many or str(target).endswith("/") else target
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, destination)


TEAM_FOLDER = {
    # Google's guide: every training application is a `trainer` package run as `trainer.task`.
    "trainer/__init__.py": "",
    "trainer/task.py": "import sys\nprint('team trainer.task', sys.argv[1:])\n",
    "components/__init__.py": "",
    "components/custom_job.py": "WHOSE = 'team'\n",
    "pipelines/__init__.py": "",
    "pipelines/train.py": "WHOSE = 'team'\n",
    "task.py": "WHOSE = 'team'\n",
    "model.py": "WHOSE = 'team'\n",
    "utils.py": "WHOSE = 'team'\n",
}
"""A team's folder with every name a team may give its own code (the image's /workspace/team)."""


@pytest.mark.slow
def test_image_runs_our_trainer_and_a_teams_own_beside_it(tmp_path: Path) -> None:
    """The wheel installed as the image installs it, a team's `trainer/`, `components/` and
    `pipelines/` first on the path (PYTHONPATH and the working directory): both trainers run,
    and each name means the team's code or ours by its namespace alone."""
    env = build(tmp_path / "image")
    python = str(tmp_path / "image" / "python" / "bin" / "python")
    team = tmp_path / "image" / env["PYTHONPATH"].lstrip("/")
    for relative, text in TEAM_FOLDER.items():
        (team / relative).parent.mkdir(parents=True, exist_ok=True)
        (team / relative).write_text(text)
    env = {**env, "PYTHONPATH": str(team)}
    command = [python if word == "python" else word for word in entrypoint()]
    help_text = subprocess.run(
        [*command, "--help"], cwd=team, env=env, capture_output=True, text=True
    )
    assert help_text.returncode == 0 and "--learning_rate" in help_text.stdout
    out = tmp_path / "out"
    flags = ["--max_steps=1", f"--model_dir={out / 'model'}"]
    flags += [f"--checkpoint_dir={out / 'ckpt'}", f"--tensorboard_dir={out / 'tb'}"]
    run = subprocess.run(  # as Vertex runs a pool's args against the entrypoint
        [*command, *flags], cwd=team, env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads((out / "model" / "metrics.json").read_text())["step"] == 1
    theirs = subprocess.run(
        [python, "-m", "trainer.task", "--epochs=1"], cwd=team, env=env, capture_output=True,
        text=True,
    )  # fmt: skip
    assert theirs.stdout == "team trainer.task ['--epochs=1']\n", theirs.stderr[-2000:]
    probe = (
        "import json, components.custom_job, pipelines.train, task, model, utils, trainer\n"
        "import vtp.trainer, vtp.components.custom_job, vtp.pipelines.compile as c\n"
        "print(json.dumps({'team': [components.custom_job.WHOSE, pipelines.train.WHOSE,"
        " task.WHOSE, model.WHOSE, utils.WHOSE, trainer.__file__],"
        " 'ours': [vtp.trainer.__file__, vtp.components.custom_job.__file__,"
        " str(c.compiled_dir() / 'train.yaml')]}))"
    )
    seen = subprocess.run(
        [python, "-c", probe], cwd=team, env=env, capture_output=True, text=True, check=True
    )
    found = json.loads(seen.stdout)
    assert found["team"] == [*["team"] * 5, str(team / "trainer" / "__init__.py")]
    installed = str(tmp_path / "image" / "python")  # the stand-in's own copy, not a checkout's
    assert all(p.startswith(installed) and "/vtp/" in p for p in found["ours"]), found["ours"]
    assert Path(found["ours"][2]).is_file()


def test_the_local_service_runs_what_the_image_runs() -> None:
    """A project-image pool without a command: the service runs the image's entrypoint."""
    assert tuple(entrypoint()) == TRAINER_COMMAND
