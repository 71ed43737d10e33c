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

# %% [cell 8]
pass  # skipped (package install): ! pip3 install --upgrade --quiet google-cloud-aiplatform google-cloud-storage tensorflow==2.15.1

# %% [cell 10]
import sys

if "google.colab" in sys.modules:

    import IPython

    app = IPython.Application.instance()
    app.kernel.do_shutdown(True)

# %% [cell 13]
import sys

if "google.colab" in sys.modules:

    from google.colab import auth

    auth.authenticate_user()

# %% [cell 15]
PROJECT_ID = "vtp-samples"  # @param {type:"string"}
LOCATION = "us-central1"  # @param {type:"string"}

# Set the project id
pass  # skipped (gcloud sign-in or configuration): ! gcloud config set project {PROJECT_ID}

# %% [cell 17]
BUCKET_URI = "gs://vtp-samples-xgboost-prebuilt"  # @param {type:"string"}

# %% [cell 19]
_shell('gsutil mb -l {LOCATION} -p {PROJECT_ID} {BUCKET_URI}')

# %% [cell 21]
import os

import tensorflow as tf
from google.cloud import aiplatform

# %% [cell 23]
aiplatform.init(project=PROJECT_ID, staging_bucket=BUCKET_URI)

# %% [cell 25]
TRAIN_VERSION = "xgboost-cpu.1-1"
DEPLOY_VERSION = "xgboost-cpu.1-1"

TRAIN_IMAGE = "gcr.io/cloud-aiplatform/training/{}:latest".format(TRAIN_VERSION)
DEPLOY_IMAGE = "gcr.io/cloud-aiplatform/prediction/{}:latest".format(DEPLOY_VERSION)

# %% [cell 27]
if os.getenv("IS_TESTING_TRAIN_MACHINE"):
    MACHINE_TYPE = os.getenv("IS_TESTING_TRAIN_MACHINE")
else:
    MACHINE_TYPE = "n1-standard"

VCPU = "4"
TRAIN_COMPUTE = MACHINE_TYPE + "-" + VCPU
print("Train machine type", TRAIN_COMPUTE)

if os.getenv("IS_TESTING_DEPLOY_MACHINE"):
    MACHINE_TYPE = os.getenv("IS_TESTING_DEPLOY_MACHINE")
else:
    MACHINE_TYPE = "n1-standard"

VCPU = "4"
DEPLOY_COMPUTE = MACHINE_TYPE + "-" + VCPU
print("Deploy machine type", DEPLOY_COMPUTE)

# %% [cell 29]
# Make folder for Python training script
_shell('rm -rf custom')
_shell('mkdir custom')

# Add package information
_shell('touch custom/README.md')

setup_cfg = "[egg_info]\n\ntag_build =\n\ntag_date = 0"
_shell('echo "$setup_cfg" > custom/setup.cfg')

setup_py = "import setuptools\n\nsetuptools.setup(\n\n    install_requires=[\n\n        'tensorflow_datasets==1.3.0',\n\n    ],\n\n    packages=setuptools.find_packages())"
_shell('echo "$setup_py" > custom/setup.py')

pkg_info = "Metadata-Version: 1.0\n\nName: Iris tabular classification\n\nVersion: 0.0.0\n\nSummary: Demostration training script\n\nHome-page: www.google.com\n\nAuthor: Google\n\nAuthor-email: aferlitsch@google.com\n\nLicense: Public\n\nDescription: Demo\n\nPlatform: Vertex"
_shell('echo "$pkg_info" > custom/PKG-INFO')

# Make the training subfolder
_shell('mkdir custom/trainer')
_shell('touch custom/trainer/__init__.py')

# %% [cell 30]
_writefile('custom/trainer/task.py', "# Single Instance Training for Iris\n\nimport datetime\nimport os\nimport subprocess\nimport sys\nimport pandas as pd\nimport xgboost as xgb\n\nimport argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument('--model-dir', dest='model_dir',\n                    default=os.getenv('AIP_MODEL_DIR'), type=str, help='Model dir.')\nargs = parser.parse_args()\n\n# Download data\niris_data_filename = 'iris_data.csv'\niris_target_filename = 'iris_target.csv'\ndata_dir = 'gs://cloud-samples-data/ai-platform/iris'\n\n# gsutil outputs everything to stderr so you need to divert it to stdout.\nsubprocess.check_call(['gsutil', 'cp', os.path.join(data_dir,\n                                                    iris_data_filename),\n                       iris_data_filename], stderr=sys.stdout)\nsubprocess.check_call(['gsutil', 'cp', os.path.join(data_dir,\n                                                    iris_target_filename),\n                       iris_target_filename], stderr=sys.stdout)\n\n\n# Load data into pandas, then use `.values` to get NumPy arrays\niris_data = pd.read_csv(iris_data_filename).values\niris_target = pd.read_csv(iris_target_filename).values\n\n# Convert one-column 2D array into 1D array for use with XGBoost\niris_target = iris_target.reshape((iris_target.size,))\n\n\n# Load data into DMatrix object\ndtrain = xgb.DMatrix(iris_data, label=iris_target)\n\n\n# Train XGBoost model\nbst = xgb.train({}, dtrain, 20)\n\n# Export the classifier to a file\nmodel_filename = 'model.bst'\nbst.save_model(model_filename)\n\n# Upload the saved model file to Cloud Storage\ngcs_model_path = os.path.join(args.model_dir, model_filename)\nsubprocess.check_call(['gsutil', 'cp', model_filename, gcs_model_path],\n    stderr=sys.stdout)\n", append=False)

# %% [cell 32]
_shell('rm -f custom.tar custom.tar.gz')
_shell('tar cvf custom.tar custom')
_shell('gzip custom.tar')
_shell('gsutil cp custom.tar.gz $BUCKET_URI/trainer_iris.tar.gz')

# %% [cell 34]
job = aiplatform.CustomTrainingJob(
    display_name="iris-unique",
    script_path="custom/trainer/task.py",
    container_uri=TRAIN_IMAGE,
    requirements=["gcsfs==0.7.1", "tensorflow-datasets==4.4"],
)

print(job)

# %% [cell 37]
MODEL_DIR = "{}/{}".format(BUCKET_URI, "unique")


job.run(
    replica_count=1, machine_type=TRAIN_COMPUTE, base_output_dir=MODEL_DIR, sync=True
)

MODEL_DIR = MODEL_DIR + "/model"
model_path_to_deploy = MODEL_DIR

# %% [cell 39]
model = aiplatform.Model.upload(
    display_name="iris-unique",
    artifact_uri=MODEL_DIR,
    serving_container_image_uri=DEPLOY_IMAGE,
    sync=False,
)

model.wait()

# %% [cell 43]
INSTANCES = [[1.4, 1.3, 5.1, 2.8], [1.5, 1.2, 4.7, 2.4]]

# %% [cell 45]
gcs_input_uri = BUCKET_URI + "/" + "test.jsonl"
with tf.io.gfile.GFile(gcs_input_uri, "w") as f:
    for i in INSTANCES:
        f.write(str(i) + "\n")

_shell('gsutil cat $gcs_input_uri')

# %% [cell 47]
MIN_NODES = 1
MAX_NODES = 1

batch_predict_job = model.batch_predict(
    job_display_name="iris-unique",
    gcs_source=gcs_input_uri,
    gcs_destination_prefix=BUCKET_URI,
    instances_format="jsonl",
    predictions_format="jsonl",
    model_parameters=None,
    machine_type=DEPLOY_COMPUTE,
    starting_replica_count=MIN_NODES,
    max_replica_count=MAX_NODES,
    sync=False,
)

print(batch_predict_job)

# %% [cell 50]
batch_predict_job.wait()

# %% [cell 53]
import json

bp_iter_outputs = batch_predict_job.iter_outputs()

prediction_results = list()
for blob in bp_iter_outputs:
    if blob.name.split("/")[-1].startswith("prediction"):
        prediction_results.append(blob.name)

tags = list()
for prediction_result in prediction_results:
    gfile_name = f"gs://{bp_iter_outputs.bucket.name}/{prediction_result}"
    with tf.io.gfile.GFile(name=gfile_name, mode="r") as gfile:
        for line in gfile.readlines():
            line = json.loads(line)
            print(line)
            break

# %% [cell 57]
DEPLOYED_NAME = "iris-unique"

TRAFFIC_SPLIT = {"0": 100}

MIN_NODES = 1
MAX_NODES = 1

endpoint = model.deploy(
    deployed_model_display_name=DEPLOYED_NAME,
    traffic_split=TRAFFIC_SPLIT,
    machine_type=DEPLOY_COMPUTE,
    min_replica_count=MIN_NODES,
    max_replica_count=MAX_NODES,
)
endpoint.wait()

# %% [cell 60]
INSTANCE = [1.4, 1.3, 5.1, 2.8]

# %% [cell 62]
instances_list = [INSTANCE]

prediction = endpoint.predict(instances_list)
print(prediction)

# %% [cell 64]
endpoint.undeploy_all()

# %% [cell 66]
# Delete the model using the Vertex model object
model.delete()

# Delete the endpoint using the Vertex endpoint object
endpoint.delete()

# Delete the training job
job.delete()

# Delete the batch prediction job using the Vertex batch prediction object
batch_predict_job.delete()

# Delete locally generated files
_shell('rm -rf custom custom.tar.gz')

# Delete cloud storage bucket
delete_bucket = False  # set True for deletion
if delete_bucket:
    _shell('gsutil rm -r $BUCKET_URI')
