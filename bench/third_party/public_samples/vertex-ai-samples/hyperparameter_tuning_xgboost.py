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
# Copyright 2022 Google LLC
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
# install packages
pass  # skipped (package install): ! pip3 install --upgrade --quiet google-cloud-aiplatform

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

# %% [cell 17]
BUCKET_URI = "gs://vtp-samples-hpt-xgboost"  # @param {type:"string"}

# %% [cell 19]
_shell('gcloud storage buckets create --location={LOCATION} --project={PROJECT_ID} {BUCKET_URI}')

# %% [cell 21]
from google.cloud import aiplatform

aiplatform.init(project=PROJECT_ID, location=LOCATION, staging_bucket=BUCKET_URI)

# %% [cell 23]
TRAIN_GPU, TRAIN_NGPU = (None, None)
DEPLOY_GPU, DEPLOY_NGPU = (None, None)

# %% [cell 25]
TRAIN_VERSION = "xgboost-cpu.1-1"
DEPLOY_VERSION = "xgboost-cpu.1-1"

TRAIN_IMAGE = "{}-docker.pkg.dev/vertex-ai/training/{}:latest".format(
    LOCATION.split("-")[0], TRAIN_VERSION
)
DEPLOY_IMAGE = "{}-docker.pkg.dev/vertex-ai/prediction/{}:latest".format(
    LOCATION.split("-")[0], DEPLOY_VERSION
)

# %% [cell 27]
TRAIN_COMPUTE = "n1-standard-4"
print("Train machine type", TRAIN_COMPUTE)

# %% [cell 30]
# Make folder for Python training script
_shell('rm -rf custom')
_shell('mkdir custom')

# Add package information
_shell('touch custom/README.md')

setup_cfg = "[egg_info]\n\ntag_build =\n\ntag_date = 0"
_shell('echo "$setup_cfg" > custom/setup.cfg')

setup_py = "import setuptools\n\nsetuptools.setup(\n\n    install_requires=[\n\n        'cloudml-hypertune',\n\n    ],\n\n    packages=setuptools.find_packages())"
_shell('echo "$setup_py" > custom/setup.py')

pkg_info = "Metadata-Version: 1.0\n\nName: Iris tabular classification\n\nVersion: 0.0.0\n\nSummary: Demostration training script\n\nHome-page: www.google.com\n\nAuthor: Google\n\nAuthor-email: aferlitsch@google.com\n\nLicense: Public\n\nDescription: Demo\n\nPlatform: Vertex"
_shell('echo "$pkg_info" > custom/PKG-INFO')

# Make the training subfolder
_shell('mkdir custom/trainer')
_shell('touch custom/trainer/__init__.py')

# %% [cell 32]
_writefile('custom/trainer/task.py', 'import datetime\nimport os\nimport subprocess\nimport sys\nimport pandas as pd\nimport xgboost as xgb\nimport hypertune\nimport argparse\nimport logging\n\nfrom sklearn.model_selection import train_test_split\nfrom sklearn.metrics import accuracy_score\n\nparser = argparse.ArgumentParser()\nparser.add_argument(\'--model-dir\', dest=\'model_dir\',\n                    default=os.getenv(\'AIP_MODEL_DIR\'), type=str, help=\'Model dir.\')\nparser.add_argument("--dataset-data-url", dest="dataset_data_url",\n                    type=str, help="Download url for the training data.")\nparser.add_argument("--dataset-labels-url", dest="dataset_labels_url",\n                    type=str, help="Download url for the training data labels.")\nparser.add_argument("--boost-rounds", dest="boost_rounds",\n                    default=20, type=int, help="Number of boosted rounds")\nargs = parser.parse_args()\n\nlogging.getLogger().setLevel(logging.INFO)\n\ndef get_data():\n    logging.info("Downloading training data and labelsfrom: {}, {}".format(args.dataset_data_url, args.dataset_labels_url))\n    # gsutil outputs everything to stderr. Hence, the need to divert it to stdout.\n    subprocess.check_call([\'gcloud\', \'storage\', \'cp\', args.dataset_data_url, \'data.csv\'], stderr=sys.stdout)\n    subprocess.check_call([\'gcloud\', \'storage\', \'cp\', args.dataset_labels_url, \'labels.csv\'], stderr=sys.stdout)\n\n\n    # Load data into pandas, then use `.values` to get NumPy arrays\n    data = pd.read_csv(\'data.csv\').values\n    labels = pd.read_csv(\'labels.csv\').values\n\n    # Convert one-column 2D array into 1D array for use with XGBoost\n    labels = labels.reshape((labels.size,))\n\n    train_data, test_data, train_labels, test_labels = train_test_split(data, labels, test_size=0.2, random_state=7)\n\n    # Load data into DMatrix object\n    dtrain = xgb.DMatrix(train_data, label=train_labels)\n    return dtrain, test_data, test_labels\n\ndef train_model(dtrain):\n    logging.info("Start training ...")\n    # Train XGBoost model\n    model = xgb.train({}, dtrain, num_boost_round=args.boost_rounds)\n    logging.info("Training completed")\n    return model\n\ndef evaluate_model(model, test_data, test_labels):\n    dtest = xgb.DMatrix(test_data)\n    pred = model.predict(dtest)\n    predictions = [round(value) for value in pred]\n    # evaluate predictions\n    accuracy = accuracy_score(test_labels, predictions)\n    logging.info(f"Evaluation completed with model accuracy: {accuracy}")\n\n    # report metric for hyperparameter tuning\n    hpt = hypertune.HyperTune()\n    hpt.report_hyperparameter_tuning_metric(\n        hyperparameter_metric_tag=\'accuracy\',\n        metric_value=accuracy\n    )\n    return accuracy\n\n\ndtrain, test_data, test_labels = get_data()\nmodel = train_model(dtrain)\naccuracy = evaluate_model(model, test_data, test_labels)\n\n# GCSFuse conversion\ngs_prefix = \'gs://\'\ngcsfuse_prefix = \'/gcs/\'\nif args.model_dir.startswith(gs_prefix):\n    args.model_dir = args.model_dir.replace(gs_prefix, gcsfuse_prefix)\n    dirpath = os.path.split(args.model_dir)[0]\n    if not os.path.isdir(dirpath):\n        os.makedirs(dirpath)\n\n# Export the classifier to a file\ngcs_model_path = os.path.join(args.model_dir, \'model.bst\')\nlogging.info("Saving model artifacts to {}". format(gcs_model_path))\nmodel.save_model(gcs_model_path)\n\nlogging.info("Saving metrics to {}/metrics.json". format(args.model_dir))\ngcs_metrics_path = os.path.join(args.model_dir, \'metrics.json\')\nwith open(gcs_metrics_path, "w") as f:\n    f.write(f"{\'accuracy: {accuracy}\'}")\n', append=False)

# %% [cell 34]
_shell('rm -f custom.tar custom.tar.gz')
_shell('tar cvf custom.tar custom')
_shell('gzip custom.tar')
_shell('gcloud storage cp custom.tar.gz $BUCKET_URI/trainer_iris.tar.gz')

# %% [cell 36]
if TRAIN_GPU:
    machine_spec = {
        "machine_type": TRAIN_COMPUTE,
        "accelerator_type": TRAIN_GPU,
        "accelerator_count": TRAIN_NGPU,
    }
else:
    machine_spec = {"machine_type": TRAIN_COMPUTE, "accelerator_count": 0}

# %% [cell 38]
DISK_TYPE = "pd-ssd"  # [ pd-ssd, pd-standard]
DISK_SIZE = 100  # GB

disk_spec = {"boot_disk_type": DISK_TYPE, "boot_disk_size_gb": DISK_SIZE}

# %% [cell 40]
# Set path to save model
MODEL_DIR = "{}/aiplatform-custom-job".format(BUCKET_URI)
# Set the source path to the dataset
DATASET_DIR = "gs://cloud-samples-data/ai-platform/iris"

# Set the command-line arguments
CMDARGS = [
    "--dataset-data-url=" + DATASET_DIR + "/iris_data.csv",
    "--dataset-labels-url=" + DATASET_DIR + "/iris_target.csv",
]

# Set the worker pool specs
worker_pool_spec = [
    {
        "replica_count": 1,
        "machine_spec": machine_spec,
        "disk_spec": disk_spec,
        "python_package_spec": {
            "executor_image_uri": TRAIN_IMAGE,
            "package_uris": [BUCKET_URI + "/trainer_iris.tar.gz"],
            "python_module": "trainer.task",
            "args": CMDARGS,
        },
    }
]

# %% [cell 42]
job = aiplatform.CustomJob(
    display_name="iris",
    worker_pool_specs=worker_pool_spec,
    base_output_dir=MODEL_DIR,
)

# %% [cell 44]
from google.cloud.aiplatform import hyperparameter_tuning as hpt

hpt_job = aiplatform.HyperparameterTuningJob(
    display_name="iris",
    custom_job=job,
    metric_spec={
        "accuracy": "maximize",
    },
    parameter_spec={
        "boost-rounds": hpt.IntegerParameterSpec(min=10, max=100, scale="linear"),
    },
    search_algorithm=None,
    max_trial_count=6,
    parallel_trial_count=1,
)

# %% [cell 46]
hpt_job.run()

# %% [cell 48]
print(hpt_job.trials)

# %% [cell 50]
# Initialize a tuple to identify the best configuration
best = (None, None, None, 0.0)
# Iterate through the trails and update the best configuration
for trial in hpt_job.trials:
    # Keep track of the best outcome
    if float(trial.final_measurement.metrics[0].value) > best[3]:
        try:
            best = (
                trial.id,
                float(trial.parameters[0].value),
                float(trial.parameters[1].value),
                float(trial.final_measurement.metrics[0].value),
            )
        except:
            best = (
                trial.id,
                float(trial.parameters[0].value),
                None,
                float(trial.final_measurement.metrics[0].value),
            )

# print details of the best configuration
print(best)

# %% [cell 52]
# Fetch the best model
BEST_MODEL_DIR = MODEL_DIR + "/" + best[0] + "/model"

_shell('gcloud storage ls {BEST_MODEL_DIR}')

# %% [cell 54]
# Delete the hyperparameter tuning job
hpt_job.delete()

# Delete the Cloud Storage bucket
delete_bucket = False  # Set True to delete the bucket

if delete_bucket:
    _shell('gcloud storage rm --recursive $BUCKET_URI')

# Delete the locally generated files
_shell('rm -rf custom/')
_shell('rm custom.tar.gz')
