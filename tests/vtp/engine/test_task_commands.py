"""Which kfp.local task commands a forked child can run, and why the others need a fresh
interpreter: commands as kfp 2.17 compiles them, read back."""

import sys
from pathlib import Path

import pytest
from kfp import dsl

from vtp.engine import fork_server, task_commands
from vtp.engine.task_commands import Plan, plan


def _full_command(component: object, python: str = sys.executable) -> list[str]:
    """The command kfp.local runs for `component`, with `python3` replaced as it does."""
    container = component.component_spec.implementation.container
    command = [*container.command, "--executor_input", "{}", "--function_to_execute", "add"]
    user_code = command.index(next(c for c in command if c.startswith("\nimport kfp")))
    return [c if i == user_code else c.replace("python3", python) for i, c in enumerate(command)]


def add(x: int) -> int:
    return x + 1


def test_a_plain_component_runs_the_executor_on_its_source():
    component = dsl.component(add, base_image="python:3.11", install_kfp_package=False)
    found = plan(_full_command(component))
    assert isinstance(found, Plan)
    assert found.module == "kfp.dsl.executor_main"
    assert found.env == {"_KFP_RUNTIME": "true"}
    program = Path(found.argv[found.argv.index("--component_module_path") + 1])
    assert "def add(x: int) -> int:" in program.read_text()
    assert found.argv[-4:] == ["--executor_input", "{}", "--function_to_execute", "add"]


def test_installs_this_environment_already_meets_are_skipped():
    # The default component reinstalls kfp==<this version>; pyyaml and numpy are installed.
    component = dsl.component(
        add, base_image="python:3.11", packages_to_install=["pyyaml>=5", "numpy"],
        pip_index_urls=["https://pypi.org/simple"],
    )  # fmt: skip
    assert isinstance(plan(_full_command(component)), Plan)


@pytest.mark.parametrize(
    ("packages", "reason"),
    [
        (["surely-not-installed-pkg==1.0"], "installs surely-not-installed-pkg==1.0"),
        (["numpy<1"], "installs numpy<1"),
        (["git+https://example.com/x.git"], "installs git+https://example.com/x.git"),
    ],
)
def test_installs_that_would_change_the_environment_need_a_fresh_interpreter(packages, reason):
    component = dsl.component(add, base_image="python:3.11", packages_to_install=packages)
    found = plan(_full_command(component))
    assert isinstance(found, str)
    assert reason in found


def test_a_marker_that_cannot_be_evaluated_is_named_not_crashed_on():
    text = 'foo; python_version ~= "x"'
    component = dsl.component(add, base_image="python:3.11", packages_to_install=[text])
    for call in (plan, task_commands.check_installs):
        with pytest.raises(task_commands.UnusableInstall, match="cannot be evaluated") as caught:
            call(_full_command(component))
        assert repr(text) in str(caught.value)
        assert "marker 'python_version ~= \"x\"'" in str(caught.value)
    skipped = ["foo; python_version < '3'"]  # a marker that does not hold: pip skips it
    fine = dsl.component(add, base_image="python:3.11", packages_to_install=skipped)
    task_commands.check_installs(_full_command(fine))


def test_another_python_needs_a_fresh_interpreter():
    component = dsl.component(add, base_image="python:3.11", install_kfp_package=False)
    found = plan(_full_command(component, python="/opt/other/bin/python3.12"))
    assert found == "it asks for another Python (/opt/other/bin/python3.12)"


def test_a_module_launcher_runs_as_python_dash_m():
    command = [sys.executable, "-u", "-m", "google_cloud_pipeline_components.container.v1.x",
               "--type", "CustomJob"]  # fmt: skip
    assert plan(command) == Plan(
        "google_cloud_pipeline_components.container.v1.x",
        ["--type", "CustomJob"],
        {"PYTHONUNBUFFERED": "1"},
        frozenset({"google_cloud_pipeline_components.container.v1.x"}),
    )


def submits(display_name: str) -> str:
    import json

    from vtp.launchers import custom_job

    return json.dumps(custom_job.task_name([display_name]))


def test_a_task_names_what_its_code_imports_and_so_the_stage_it_wants():
    found = plan(_full_command(dsl.component(submits, install_kfp_package=False)))
    assert isinstance(found, Plan)
    assert {"json", "vtp.launchers", "vtp.launchers.custom_job"} <= found.imports
    # The job-submitting task waits for the stage that imports its launcher; a task that
    # names nothing a stage preloads forks from the first stage at once.
    assert fork_server.wanted_stage(found.imports, fork_server.stages()) == 1
    plain = plan(_full_command(dsl.component(add, install_kfp_package=False)))
    assert isinstance(plain, Plan)
    assert fork_server.wanted_stage(plain.imports, fork_server.stages()) == 0


@pytest.mark.parametrize(
    ("name", "preloaded"),
    [("evaluate_checkpoints", "torch"), ("export_model", "torch.export._trace")],
)
def test_the_tasks_after_a_training_job_wait_for_the_torch_stages(name, preloaded):
    # The project's own components, as a pipeline compiles them: evaluation forks from the
    # stage that imported torch, export from the one that imported torch.export, rather than
    # importing them again beside it; without the run's word, from neither.
    component = getattr(__import__(f"vtp.components.{name}", fromlist=[name]), name)
    found = plan(_full_command(component))
    assert isinstance(found, Plan)
    stages = fork_server.stages()
    assert preloaded in stages[fork_server.wanted_stage(found.imports, stages)]
    assert fork_server.wanted_stage(found.imports, stages, torch_first=False) == 0


@pytest.mark.parametrize(
    "command",
    [
        ["sh", "-c", "echo hi"],
        ["sh", "-ec", "rm -rf /tmp/x; python3 -m kfp.dsl.executor_main", "src"],
        [sys.executable, "-c", "print(1)"],
        [sys.executable, "-X", "dev", "-m", "mod"],
        ["/bin/echo", "hello"],
        [],
    ],
)
def test_anything_else_needs_a_fresh_interpreter(command):
    assert isinstance(plan(command), str)


def test_only_a_run_with_torch_tasks_imports_torch_at_normal_priority():
    # The train pipeline evaluates and exports (the torch stage's tasks); a pipeline of plain
    # components has none, and its fork server leaves torch in the background.
    from google.protobuf import json_format

    from vtp.engine.fork_tasks import wants_torch
    from vtp.pipelines import catalog

    train = json_format.MessageToDict(catalog.entry("train").load().pipeline_spec)
    assert wants_torch(train)

    @dsl.pipeline(name="plain")
    def plain(x: int = 1):
        dsl.component(add, base_image="python:3.11")(x=x)

    assert not wants_torch(json_format.MessageToDict(plain.pipeline_spec))
    # Without the run's word, a task waits for no stage the server may import in the background.
    stages = fork_server.stages()
    assert fork_server.wanted_stage({"vtp.launchers.evaluation"}, stages, torch_first=False) == 0


def sdk_job(project: str) -> str:
    from google.cloud import aiplatform

    aiplatform.init(project=project)
    return project


def test_only_a_run_with_a_task_that_imports_the_sdk_has_its_fork_server_import_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The train pipeline's tasks use aiplatform_v1's clients, never the full SDK; a team's
    # component that imports it, and GCPC's launchers (which import it), want its stage.
    from google.protobuf import json_format
    from google_cloud_pipeline_components.v1.model import ModelUploadOp

    from vtp.engine.fork_tasks import wants_sdk
    from vtp.pipelines import catalog

    def spec(pipeline: object) -> dict:
        return json_format.MessageToDict(pipeline.pipeline_spec)  # type: ignore[attr-defined]

    assert not wants_sdk(spec(catalog.entry("train").load()))

    @dsl.pipeline(name="team")
    def team(project: str = "p"):
        dsl.component(sdk_job, base_image="python:3.11")(project=project)

    @dsl.pipeline(name="gcpc")
    def gcpc(project: str = "p"):
        ModelUploadOp(project=project, display_name="m")

    assert wants_sdk(spec(team))
    assert wants_sdk(spec(gcpc))
    # Modules the user asks the server to preload go to that stage: it is then always built.
    monkeypatch.setenv(fork_server.PRELOAD_ENV, "my_heavy_module")
    assert wants_sdk(spec(catalog.entry("train").load()))
