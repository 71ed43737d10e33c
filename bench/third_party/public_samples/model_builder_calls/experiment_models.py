"""model-builder's experiment-model snippets: save a scikit-learn model, log one to a run, get
it back, its info, load it, list the run's models, register it in the Model Registry."""

import create_experiment_run_sample
import get_experiment_model_sample
import get_experiment_run_models_sample
import get_model_info_sample
import load_experiment_model_sample
import log_model_sample
import register_experiment_model_sample
import save_model_sample
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression

where = {"project": "vtp-samples", "location": "us-central1"}
EXPERIMENT, RUN = "mb-experiment-models", "run-1"
BUCKET = "gs://vtp-samples-model-builder"
iris = load_iris()
model = LogisticRegression(max_iter=200).fit(iris.data, iris.target)

save_model_sample.save_model_sample(
    model=model,
    artifact_id="my-saved-model",
    input_example=iris.data[:2],
    display_name="saved-iris",
    staging_bucket=BUCKET,
    **where,
)
create_experiment_run_sample.create_experiment_run_sample(
    experiment_name=EXPERIMENT, run_name=RUN, experiment_run_tensorboard=None, **where
)
log_model_sample.log_model_sample(
    experiment_name=EXPERIMENT,
    run_name=RUN,
    model=model,
    artifact_id="my-logged-model",
    uri=f"{BUCKET}/logged-model",
    input_example=iris.data[:2],
    display_name="logged-iris",
    **where,
)
got = get_experiment_model_sample.get_experiment_model_sample(artifact_id="my-saved-model", **where)
print(got.resource_name)
info = get_model_info_sample.get_model_info_sample(artifact_id="my-saved-model", **where)
print("info", info)
assert info["model_class"].endswith("LogisticRegression"), info
loaded = load_experiment_model_sample.load_experiment_model_sample(
    artifact_id="my-logged-model", **where
)
print("loaded predicts", loaded.predict(iris.data[:3]))
models = get_experiment_run_models_sample.get_experiment_run_models_sample(
    run_name=RUN, experiment=EXPERIMENT, **where
)
print("run models", [m.name for m in models])
assert [m.name for m in models] == ["my-logged-model"], models
registered = register_experiment_model_sample.register_experiment_model_sample(
    artifact_id="my-saved-model", display_name="registered-iris", **where
)
print(registered.resource_name, registered.container_spec.image_uri)
