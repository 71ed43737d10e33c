# --- added by the conversion (notebook_to_script.py): what IPython does for `!` and `%%` ---
import re as _re
import subprocess as _subprocess
import sys as _sys


def _shell(command, capture=False):
    """IPython's `!command`: `{expr}` and `$name` expanded from the caller's names, run in bash;
    the lines of its output for `x = !command`."""
    frame = _sys._getframe(1)
    command = _expand(command, {**frame.f_globals, **frame.f_locals})
    print(f"[notebook shell] {command}", flush=True)
    done = _subprocess.run(["bash", "-c", command], text=True, capture_output=capture)
    if capture:
        print(done.stdout, end="", flush=True)
        return done.stdout.splitlines()
    return None


def _expand(text, names):
    """IPython's expansion of `{expr}` and `$name` in a shell or magic line."""

    def braces(match):
        try:
            return str(eval(match.group(1), names))
        except Exception:
            return match.group(0)

    text = _re.sub(r"(?<!\{)\{([^{}]+)\}(?!\})", braces, text)
    return _re.sub(r"\$(\w+)", lambda m: str(names.get(m.group(1), m.group(0))), text)


def _env(argument):
    """IPython's `%env NAME` (its value) and `%env NAME=VALUE` (set, expanded)."""
    import os

    frame = _sys._getframe(1)
    name, _, value = argument.partition("=")
    if not _:
        return os.environ.get(name.strip(), "")
    os.environ[name.strip()] = _expand(value, {**frame.f_globals, **frame.f_locals})
    return None


def _cd(folder):
    """IPython's `%cd FOLDER`."""
    import os

    os.chdir(os.path.expanduser(folder))


class _IPython:
    """What `get_ipython()` answers in a script: the magics above."""

    def run_line_magic(self, name, argument):
        return {"env": _env, "cd": _cd}[name](argument)

    def system(self, command):
        return _shell(command)


def get_ipython():
    return _IPython()


def _writefile(path, text, append=False):
    """IPython's `%%writefile [-a] PATH`."""
    with open(path, "a" if append else "w") as f:
        f.write(text)
    print(("Appending to " if append else "Writing ") + path, flush=True)
# --- end of the conversion's additions ---


# %% [cell 0]
# Copyright 2021 Google LLC
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     https://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# %% [cell 7]
pass  # skipped (package install): ! pip3 install --upgrade --quiet google-cloud-aiplatform fsspec gcsfs pandas

# %% [cell 9]
import sys

if "google.colab" in sys.modules:

    import IPython

    app = IPython.Application.instance()
    app.kernel.do_shutdown(True)

# %% [cell 12]
import sys

if "google.colab" in sys.modules:

    from google.colab import auth

    auth.authenticate_user()

# %% [cell 14]
PROJECT_ID = "vtp-samples"  # @param {type:"string"}
LOCATION = "us-central1"  # @param {type:"string"}

# %% [cell 16]
BUCKET_URI = "gs://vtp-samples-automl-tabular"  # @param {type:"string"}

# %% [cell 18]
_shell('gcloud storage buckets create --location={LOCATION} {BUCKET_URI}')

# %% [cell 20]
import google.cloud.aiplatform as aiplatform
import pandas as pd

# %% [cell 22]
aiplatform.init(project=PROJECT_ID, staging_bucket=BUCKET_URI)

# %% [cell 24]
IMPORT_FILE = "gs://cloud-ml-tables-data/bank-marketing.csv"

# %% [cell 26]
count = _shell('gcloud storage cat $IMPORT_FILE | wc -l', capture=True)
print("Number of Examples", int(count[0]))

print("First 10 rows")
_shell('gcloud storage cat $IMPORT_FILE | head')

heading = _shell('gcloud storage cat $IMPORT_FILE | head -n1', capture=True)
label_column = str(heading).split(",")[-1].split("'")[0]
print("Label Column Name", label_column)
if label_column is None:
    raise Exception("label column missing")

# %% [cell 30]
dataset = aiplatform.TabularDataset.create(
    display_name="Bank Marketing" + "_" + "unique", gcs_source=[IMPORT_FILE]
)

print(dataset.resource_name)

# %% [cell 35]
job = aiplatform.AutoMLTabularTrainingJob(
    display_name="bank_" + "unique",
    optimization_prediction_type="classification",
    optimization_objective="minimize-log-loss",
)

print(job)

# %% [cell 38]
model = job.run(
    dataset=dataset,
    model_display_name="bank_" + "unique",
    training_fraction_split=0.6,
    validation_fraction_split=0.2,
    test_fraction_split=0.2,
    budget_milli_node_hours=1000,
    disable_early_stopping=False,
    target_column=label_column,
)

# %% [cell 43]
# Get model resource ID
models = aiplatform.Model.list(filter="display_name=bank_" + "unique")

# Get a reference to the Model Service client
client_options = {"api_endpoint": f"{LOCATION}-aiplatform.googleapis.com"}
model_service_client = aiplatform.gapic.ModelServiceClient(
    client_options=client_options
)

model_evaluations = model_service_client.list_model_evaluations(
    parent=models[0].resource_name
)
model_evaluation = list(model_evaluations)[0]
print(model_evaluation)

# %% [cell 49]
_shell('gcloud storage cat $IMPORT_FILE | head -n 1 > tmp.csv')
_shell('gcloud storage cat $IMPORT_FILE | tail -n 10 >> tmp.csv')

_shell('cut -d, -f1-16 tmp.csv > batch.csv')

gcs_input_uri = BUCKET_URI + "/test.csv"

_shell('gcloud storage cp batch.csv $gcs_input_uri')

# %% [cell 51]
batch_predict_job = model.batch_predict(
    job_display_name="bank_" + "unique",
    gcs_source=gcs_input_uri,
    gcs_destination_prefix=BUCKET_URI,
    instances_format="csv",
    predictions_format="csv",
    sync=False,
)

print(batch_predict_job)

# %% [cell 54]
batch_predict_job.wait()

# %% [cell 57]
bp_iter_outputs = batch_predict_job.iter_outputs()

prediction_results = list()
for blob in bp_iter_outputs:
    if blob.name.split("/")[-1].startswith("prediction.results"):
        prediction_results.append(blob.name)

for prediction_result in prediction_results:
    gfile_name = f"gs://{bp_iter_outputs.bucket.name}/{prediction_result}"
    df = pd.read_csv(gfile_name)
    print(f"File name: {gfile_name}")
    print("Prediction: \n\n\n\n")
    print(df)
    print("\n\n\n")

# %% [cell 62]
endpoint = model.deploy(machine_type="n1-standard-4")

# %% [cell 66]
INSTANCE = {
    "Age": "58",
    "Job": "managment",
    "MaritalStatus": "married",
    "Education": "teritary",
    "Default": "no",
    "Balance": "2143",
    "Housing": "yes",
    "Loan": "no",
    "Contact": "unknown",
    "Day": "5",
    "Month": "may",
    "Duration": "261",
    "Campaign": "1",
    "PDays": "-1",
    "Previous": "0",
    "POutcome": "unknown",
}

# %% [cell 68]
instances_list = [INSTANCE]

prediction = endpoint.predict(instances_list)
print(prediction)

# %% [cell 71]
endpoint.undeploy_all()

# %% [cell 73]
# Delete the dataset using the Vertex dataset object
dataset.delete()

# Delete the model using the Vertex model object
model.delete()

# Delete the endpoint using the Vertex endpoint object
endpoint.delete()

# Delete the AutoML or Pipeline trainig job
job.delete()

# Delete the batch prediction job using the Vertex batch prediction object
batch_predict_job.delete()

# remove locally generated files
_shell('rm -r batch.csv')
_shell('rm -r tmp.csv')

delete_bucket = False
if delete_bucket:
    _shell('gcloud storage rm --recursive $BUCKET_URI')
