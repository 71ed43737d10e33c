"""Vertex's runtime placeholders in a task's command, and which components can run here (pure)."""

import json

import pytest

from vtp.engine import vertex_tasks


def resolve(command: list[str], parameters: dict | None = None) -> list[str]:
    """The engine's placeholder resolution on a minimal executor input."""
    executor_input = {
        "inputs": {"parameterValues": parameters or {}},
        "outputs": {"outputFile": "/o"},
    }
    return vertex_tasks.resolve_command(
        full_command=command,
        executor_input_dict=executor_input,
        pipeline_resource_name="p-1",
        task_resource_name="train",
        pipeline_root="/root",
        unique_pipeline_id="1234",
    )


def test_project_location_and_empty_vertex_settings_resolve(monkeypatch):
    monkeypatch.setenv(vertex_tasks.PROJECT_ENV, "team")
    command = [
        "--project", "{{$.pipeline_google_cloud_project_id}}",
        "--resource", "x{{$.pipeline_persistent_resource_id}}y",
        "--job", "jobs/{{$.pipeline_job_uuid}}",
        "--region", "{{$.inputs.parameters['location']}}",
    ]  # fmt: skip
    parameters = {"location": "{{$.pipeline_google_cloud_location}}"}
    assert resolve(command, parameters) == [
        "--project", "team", "--resource", "xy", "--job", "jobs/1234", "--region", "us-central1",
    ]  # fmt: skip


def test_json_escape_embeds_the_executor_input_in_a_json_string():
    payload = '{"args": ["--executor_input", "{{$.json_escape[1]}}"]}'
    (resolved,) = resolve([payload], {"disk": [{"size": 100.0}]})
    inner = json.loads(json.loads(resolved)["args"][1])
    assert inner["inputs"]["parameterValues"]["disk"] == [{"size": 100}]  # whole, as Vertex


def test_an_unknown_vertex_placeholder_names_itself_and_the_component():
    with pytest.raises(ValueError, match=r"component train: .*\{\{\$\.pipeline_nope\}\}"):
        resolve(["{{$.pipeline_nope}}"])


def test_gcpc_launchers_and_lightweight_components_are_runnable_others_are_not():
    spec = {
        "deploymentSpec": {
            "executors": {
                "exec-gcpc": {"container": {"image": "gcr.io/ml-pipeline/gcpc", "command": [
                    "python3", "-u", "-m",
                    "google_cloud_pipeline_components.container.v1.custom_job.launcher"]}},
                "exec-light": {"container": {"image": "python:3.11", "command": [
                    "sh", "-ec", "python3 -m kfp.dsl.executor_main --component_module_path "
                    '"$program_path/ephemeral_component.py" "$@"']}},
                "exec-importer": {"importer": {}},
            }
        }
    }  # fmt: skip
    vertex_tasks.check_runnable(spec)
    spec["deploymentSpec"]["executors"]["exec-shout"] = {
        "container": {"image": "alpine:3", "command": ["echo"]}
    }
    with pytest.raises(ValueError, match=r"container component shout \(image alpine:3\)"):
        vertex_tasks.check_runnable(spec)
    del spec["deploymentSpec"]["executors"]["exec-shout"]
    spec["deploymentSpec"]["executors"]["exec-built"] = {  # kfp component build's: code in image
        "container": {"image": "team:1", "command": ["python3", "-m", "kfp.dsl.executor_main"]}
    }
    with pytest.raises(ValueError, match=r"built \(a containerized Python component: its code"):
        vertex_tasks.check_runnable(spec, engine=())


def test_a_task_s_pipeline_channels_are_put_into_its_constants():
    channel = "{{$.inputs.parameters['pipelinechannel--count-Output']}}"
    specs = [{"count": channel, "args": [f"--count={channel}", "{{$.inputs.parameters['x']}}"]}]
    parameters = {"specs": specs, "pipelinechannel--count-Output": 2}
    (resolved,) = resolve(["{{$.inputs.parameters['specs']}}"], parameters)
    # Alone, the value as it is (an int for an int field); among text, its text; an unknown
    # name is left as written.
    assert json.loads(resolved) == [
        {"count": 2, "args": ["--count=2", "{{$.inputs.parameters['x']}}"]}
    ]
