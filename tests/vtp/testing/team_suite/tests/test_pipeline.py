import team_pipeline
from google.cloud import aiplatform


def test_pipeline_runs_every_task(local_vertex, tmp_path):
    template = team_pipeline.compile_to(str(tmp_path / "pipeline.yaml"))
    run = aiplatform.PipelineJob(
        display_name="team-pipeline", template_path=template, parameter_values={"count": 7}
    )
    run.run(sync=True)
    assert local_vertex.task_states(run.resource_name) == {
        "make-examples": "SUCCEEDED",
        "count-examples": "SUCCEEDED",
    }
    made = [n for n in local_vertex.objects(local_vertex.staging_bucket) if n.endswith("examples")]
    assert len(made) == 1
    assert local_vertex.read(f"{local_vertex.staging_bucket}/{made[0]}").count(b"\n") == 7
