from google.cloud import aiplatform


def test_runs_are_logged_to_the_experiment(local_vertex):
    aiplatform.init(experiment="team-exp")
    aiplatform.start_run("lr-01")
    aiplatform.log_params({"learning_rate": 0.1})
    aiplatform.log_metrics({"loss": 0.25})
    aiplatform.end_run()
    run = aiplatform.ExperimentRun("lr-01", experiment="team-exp")
    assert run.get_params() == {"learning_rate": 0.1}
    assert run.get_metrics() == {"loss": 0.25}
