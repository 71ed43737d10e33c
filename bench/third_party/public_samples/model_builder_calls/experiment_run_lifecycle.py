"""model-builder's snippets that change an experiment run: resume it, log classification
metrics and read them back, set its state, delete the run, then the experiment."""

import create_experiment_run_sample
import delete_experiment_run_sample
import delete_experiment_sample
import get_experiment_run_classification_metrics_sample
import log_classification_metrics_sample
import resume_experiment_run_sample
import update_experiment_run_state_sample
from google.cloud import aiplatform

PROJECT, LOCATION = "vtp-samples", "us-central1"
EXPERIMENT, RUN = "mb-run-lifecycle", "run-1"
where = {"project": PROJECT, "location": LOCATION}

create_experiment_run_sample.create_experiment_run_sample(
    experiment_name=EXPERIMENT, run_name=RUN, experiment_run_tensorboard=None, **where
)
aiplatform.end_run()
resume_experiment_run_sample.resume_experiment_run_sample(
    experiment_name=EXPERIMENT, run_name=RUN, **where
)
log_classification_metrics_sample.log_classification_metrics_sample(
    experiment_name=EXPERIMENT,
    run_name=RUN,
    labels=["cat", "dog"],
    matrix=[[9, 1], [1, 9]],
    fpr=[0.1, 0.5, 0.9],
    tpr=[0.1, 0.7, 0.9],
    threshold=[0.9, 0.5, 0.1],
    display_name="my-classification-metrics",
    **where,
)
metrics = get_experiment_run_classification_metrics_sample.get_experiment_run_classification_metrics_sample(  # noqa: E501
    run_name=RUN, experiment=EXPERIMENT, **where
)
print(metrics)
assert metrics[0]["matrix"] == [[9, 1], [1, 9]], metrics
update_experiment_run_state_sample.update_experiment_run_state_sample(
    run_name=RUN,
    experiment=EXPERIMENT,
    state=aiplatform.gapic.Execution.State.COMPLETE,
    **where,
)
run = aiplatform.ExperimentRun(run_name=RUN, experiment=EXPERIMENT, **where)
print("state", run.state)
assert run.state == aiplatform.gapic.Execution.State.COMPLETE, run.state
delete_experiment_run_sample.delete_experiment_run_sample(
    run_name=RUN, experiment=EXPERIMENT, **where
)
delete_experiment_sample.delete_experiment_sample(experiment_name=EXPERIMENT, **where)
