"""model-builder's experiment-run snippets in the order a user calls them: create the
experiment and a run, log its parameters; log metrics (a snippet that starts a run of its own)
and time series to a second run; read them back, end the run."""

import create_experiment_run_sample
import create_experiment_sample
import end_experiment_run_sample
import get_experiment_data_frame_sample
import get_experiment_run_metrics_sample
import get_experiment_run_params_sample
import get_experiment_run_time_series_metric_data_frame_sample
import log_metrics_sample
import log_params_sample
import log_time_series_metrics_sample

PROJECT, LOCATION = "vtp-samples", "us-central1"
EXPERIMENT, RUN, RUN_2 = "mb-experiment-runs", "run-1", "run-2"
where = {"project": PROJECT, "location": LOCATION}

create_experiment_sample.create_experiment_sample(
    experiment_name=EXPERIMENT,
    experiment_description="model-builder samples",
    experiment_tensorboard=None,
    **where,
)
create_experiment_run_sample.create_experiment_run_sample(
    experiment_name=EXPERIMENT, run_name=RUN, experiment_run_tensorboard=None, **where
)
log_params_sample.log_params_sample(
    experiment_name=EXPERIMENT,
    run_name=RUN,
    params={"learning_rate": 0.01, "layers": 3},
    **where,
)
log_metrics_sample.log_metrics_sample(
    experiment_name=EXPERIMENT, run_name=RUN_2, metrics={"accuracy": 0.9, "loss": 0.2}, **where
)
for step in range(3):
    log_time_series_metrics_sample.log_time_series_metrics_sample(
        experiment_name=EXPERIMENT,
        run_name=RUN_2,
        metrics={"loss": 1.0 / (step + 1)},
        step=step,
        wall_time=None,
        **where,
    )
params = get_experiment_run_params_sample.get_experiment_run_params_sample(
    run_name=RUN, experiment=EXPERIMENT, **where
)
print("params", params)
assert params == {"learning_rate": 0.01, "layers": 3}, params
metrics = get_experiment_run_metrics_sample.get_experiment_run_metrics_sample(
    run_name=RUN_2, experiment=EXPERIMENT, **where
)
print("metrics", metrics)
assert metrics == {"accuracy": 0.9, "loss": 0.2}, metrics
series = get_experiment_run_time_series_metric_data_frame_sample.get_experiment_run_time_series_metric_data_frame_sample(  # noqa: E501
    run_name=RUN_2, experiment=EXPERIMENT, **where
)
print(series)
assert len(series) == 3, series
frame = get_experiment_data_frame_sample.get_experiments_data_frame_sample(
    experiment=EXPERIMENT, **where
)
print(frame)
assert sorted(frame["run_name"]) == [RUN, RUN_2], frame
end_experiment_run_sample.end_experiment_run_sample(
    experiment_name=EXPERIMENT, run_name=RUN_2, **where
)
