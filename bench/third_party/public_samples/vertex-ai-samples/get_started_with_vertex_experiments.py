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

# %% [cell 10]
pass  # skipped (package install): ! pip3 install --upgrade --quiet google-cloud-aiplatform

# %% [cell 12]
import sys

if "google.colab" in sys.modules:

    import IPython

    app = IPython.Application.instance()
    app.kernel.do_shutdown(True)

# %% [cell 15]
import sys

if "google.colab" in sys.modules:

    from google.colab import auth

    auth.authenticate_user()

# %% [cell 17]
PROJECT_ID = "vtp-samples"  # @param {type:"string"}
LOCATION = "us-central1"  # @param {type:"string"}

# %% [cell 19]
BUCKET_URI = "gs://vtp-samples-experiments"  # @param {type:"string"}

# %% [cell 21]
_shell('gcloud storage buckets create --location $LOCATION $BUCKET_URI')

# %% [cell 23]
SERVICE_ACCOUNT = "vtp-samples-runner@vtp-samples.iam.gserviceaccount.com"  # @param {type:"string"}

# %% [cell 24]
IS_COLAB = False

if (
    SERVICE_ACCOUNT == ""
    or SERVICE_ACCOUNT is None
    or SERVICE_ACCOUNT == "[your-service-account]"
):
    # Get your service account from gcloud
    if not IS_COLAB:
        shell_output = _shell('gcloud auth list 2>/dev/null', capture=True)
        SERVICE_ACCOUNT = shell_output[2].replace("*", "").strip()

    if IS_COLAB:
        shell_output = _shell('gcloud projects describe  $PROJECT_ID', capture=True)
        # print("shell_output=", shell_output)
        project_number = shell_output[-1].split(":")[1].strip().replace("'", "")
        SERVICE_ACCOUNT = f"{project_number}-compute@developer.gserviceaccount.com"

    print("Service Account:", SERVICE_ACCOUNT)

# %% [cell 26]
import os
import uuid

import google.cloud.aiplatform as aiplatform

# %% [cell 28]
aiplatform.init(project=PROJECT_ID, location=LOCATION, staging_bucket=BUCKET_URI)

# %% [cell 30]
if os.getenv("IS_TESTING_TRAIN_GPU"):
    TRAIN_GPU, TRAIN_NGPU = (
        aiplatform.gapic.AcceleratorType.NVIDIA_TESLA_K80,
        int(os.getenv("IS_TESTING_TRAIN_GPU")),
    )
else:
    TRAIN_GPU, TRAIN_NGPU = (None, None)

# %% [cell 32]
if os.getenv("IS_TESTING_TF"):
    TF = os.getenv("IS_TESTING_TF")
else:
    TF = "2.12".replace(".", "-")

if TRAIN_GPU:
    TRAIN_VERSION = "tf-gpu.{}.py310".format(TF)
else:
    TRAIN_VERSION = "tf-cpu.{}.py310".format(TF)


TRAIN_IMAGE = "{}-docker.pkg.dev/vertex-ai/training/{}:latest".format(
    LOCATION.split("-")[0], TRAIN_VERSION
)

print("Training:", TRAIN_IMAGE, TRAIN_GPU, TRAIN_NGPU)

# %% [cell 34]
if os.getenv("IS_TESTING_TRAIN_MACHINE"):
    MACHINE_TYPE = os.getenv("IS_TESTING_TRAIN_MACHINE")
else:
    MACHINE_TYPE = "n1-standard"

VCPU = "4"
TRAIN_COMPUTE = MACHINE_TYPE + "-" + VCPU
print("Train machine type", TRAIN_COMPUTE)

# %% [cell 38]
# Specify a name for the experiment
EXPERIMENT_NAME = "[your-experiment-name]"

if EXPERIMENT_NAME == "[your-experiment-name]":
    EXPERIMENT_NAME = f"example-{uuid.uuid1()}"

# %% [cell 39]
# Create experiment
aiplatform.init(experiment=EXPERIMENT_NAME)
aiplatform.start_run("run-1")

# %% [cell 41]
metaparams = {}
metaparams["units"] = 128
aiplatform.log_params(metaparams)

hyperparams = {}
hyperparams["epochs"] = 100
hyperparams["batch_size"] = 32
hyperparams["learning_rate"] = 0.01
aiplatform.log_params(hyperparams)

# %% [cell 43]
metrics = {}
metrics["test_acc"] = 98.7
metrics["train_acc"] = 99.3
aiplatform.log_metrics(metrics)

# %% [cell 45]
aiplatform.end_run()

experiment_df = aiplatform.get_experiment_df()
experiment_df = experiment_df[experiment_df.experiment_name == EXPERIMENT_NAME]
print(experiment_df.T)

# %% [cell 47]
aiplatform.start_run("run-2")

metaparams = {}
metaparams["units"] = 256  # changed the value
aiplatform.log_params(metaparams)

hyperparams = {}
hyperparams["epochs"] = 100
hyperparams["batch_size"] = 32
hyperparams["learning_rate"] = 0.01
aiplatform.log_params(hyperparams)

metrics = {}
metrics["test_acc"] = 98.8  # value changed
metrics["train_acc"] = 99.5  # value changed
aiplatform.log_metrics(metrics)

# %% [cell 49]
aiplatform.end_run()

experiment_df = aiplatform.get_experiment_df()
experiment_df = experiment_df[experiment_df.experiment_name == EXPERIMENT_NAME]
print(experiment_df.T)

# %% [cell 51]
exp = aiplatform.Experiment(EXPERIMENT_NAME)
try:
    exp.delete()
except Exception as e:
    print(e)

# %% [cell 53]
# Create experiment
EXPERIMENT_NAME = f"example-{uuid.uuid1()}"
aiplatform.init(experiment=EXPERIMENT_NAME)
aiplatform.start_run("run-1")

# %% [cell 55]
DATASET_URI = "gs://example/dataset.csv"
MODEL_URI = "gs://example/saved_model.pb"

dataset_artifact = aiplatform.Artifact.create(
    schema_title="system.Dataset", display_name="example_dataset", uri=DATASET_URI
)

model_artifact = aiplatform.Artifact.create(
    schema_title="system.Model", display_name="example_modl", uri=MODEL_URI
)

# %% [cell 57]
with aiplatform.start_execution(
    schema_title="system.ContainerExecution", display_name="example_training"
) as execution:
    execution.assign_input_artifacts([dataset_artifact])

    aiplatform.log_params({"units": 256})
    aiplatform.log_metrics({"acc": 96.8})

    execution.assign_output_artifacts([model_artifact])

    aiplatform.log_metrics(
        {"lineage": execution.get_output_artifacts()[0].lineage_console_uri}
    )

# %% [cell 59]
aiplatform.end_run()

experiment_df = aiplatform.get_experiment_df()
experiment_df = experiment_df[experiment_df.experiment_name == EXPERIMENT_NAME]
print(experiment_df.T)

# %% [cell 61]
print(
    "Open the following link:", execution.get_output_artifacts()[0].lineage_console_uri
)

# %% [cell 63]
try:
    dataset_artifact.delete()
except Exception as e:
    print(e)
try:
    model_artifact.delete()
except Exception as e:
    print(e)

# %% [cell 65]
try:
    exp.delete()
except Exception as e:
    print(e)

# %% [cell 68]
# Make folder for Python training script
_shell('rm -rf custom')
_shell('mkdir custom')

# Add package information
_shell('touch custom/README.md')

setup_cfg = "[egg_info]\n\ntag_build =\n\ntag_date = 0"
_shell('echo "$setup_cfg" > custom/setup.cfg')

setup_py = "import setuptools\n\nsetuptools.setup(\n\n    install_requires=[\n\n        'google-cloud-aiplatform',\n\n  ],\n\n    packages=setuptools.find_packages())"
_shell('echo "$setup_py" > custom/setup.py')

pkg_info = "Metadata-Version: 1.0\n\nName: Synethic Training Script for Experiments\n\nVersion: 0.0.0\n\nSummary: Demostration training script\n\nHome-page: www.google.com\n\nAuthor: Google\n\nAuthor-email: aferlitsch@google.com\n\nLicense: Public\n\nDescription: Demo\n\nPlatform: Vertex"
_shell('echo "$pkg_info" > custom/PKG-INFO')

# Make the training subfolder
_shell('mkdir custom/trainer')
_shell('touch custom/trainer/__init__.py')

# %% [cell 70]
_writefile('custom/trainer/task.py', '\nimport argparse\nimport os\n\nimport google.cloud.aiplatform as aiplatform\n\nparser = argparse.ArgumentParser()\n# Args for experiment\nparser.add_argument(\'--experiment\', dest=\'experiment\',\n                    required=True, type=str,\n                    help=\'Name of experiment\')\nparser.add_argument(\'--run\', dest=\'run\',\n                    required=True, type=str,\n                    help=\'Name of run within the experiment\')\n\n# Hyperparameters for experiment\nparser.add_argument(\'--epochs\', dest=\'epochs\',\n                    default=10, type=int,\n                    help=\'Number of epochs.\')\n\nparser.add_argument(\'--dataset-uri\', dest=\'dataset_uri\',\n                    required=True, type=str,\n                    help=\'Location of the dataset\')\n\nparser.add_argument(\'--model-dir\', dest=\'model_dir\',\n                    default=os.getenv("AIP_MODEL_DIR"), type=str,\n                    help=\'Storage location for the model\')\nargs = parser.parse_args()\n\ndef get_data(dataset_uri, execution):\n    # get the training data\n    \n    dataset_artifact = aiplatform.Artifact.create(\n        schema_title="system.Dataset", display_name="example_dataset", uri=dataset_uri\n    )\n    \n    execution.assign_input_artifacts([dataset_artifact])\n\n    return None\n\ndef get_model():\n    # get or create the model architecture\n    return None\n\ndef train_model(dataset, model, epochs):\n    aiplatform.log_params({"epochs": epochs})\n    # train the model\n    return model\n\ndef save_model(model, model_dir, execution):\n    # save the model\n    \n    model_artifact = aiplatform.Artifact.create(\n        schema_title="system.Model", display_name="example_model", uri=model_dir\n    )\n    execution.assign_output_artifacts([model_artifact])\n\n# Create a run within the experiment\naiplatform.init(experiment=args.experiment)\naiplatform.start_run(args.run)\n\nwith aiplatform.start_execution(\n    schema_title="system.ContainerExecution", display_name="example_training"\n) as execution:\n    dataset = get_data(args.dataset_uri, execution)\n    model = get_model()\n    model = train_model(dataset, model, args.epochs)\n    save_model(model, args.model_dir, execution)\n    \n    # Store the lineage link in the experiment\n    aiplatform.log_metrics({"lineage": execution.get_output_artifacts()[0].lineage_console_uri})\n\naiplatform.end_run()\n', append=False)

# %% [cell 72]
_shell('rm -f custom.tar custom.tar.gz')
_shell('tar cvf custom.tar custom')
_shell('gzip custom.tar')
_shell('gcloud storage cp custom.tar.gz $BUCKET_URI/trainer.tar.gz')

# %% [cell 74]
DISPLAY_NAME = "example"

job = aiplatform.CustomPythonPackageTrainingJob(
    display_name=DISPLAY_NAME,
    python_package_gcs_uri=f"{BUCKET_URI}/trainer.tar.gz",
    python_module_name="trainer.task",
    container_uri=TRAIN_IMAGE,
)

# %% [cell 76]
EXPERIMENT_NAME = f"example-{uuid.uuid1()}"
aiplatform.init(experiment=EXPERIMENT_NAME)

CMDARGS = [
    "--model-dir=" + BUCKET_URI,
    "--dataset-uri=gs://example/foo.csv",
    "--epochs=5",
    f"--experiment={EXPERIMENT_NAME}",
    "--run=run-1",
]

job.run(
    args=CMDARGS,
    replica_count=1,
    machine_type=TRAIN_COMPUTE,
    service_account=SERVICE_ACCOUNT,
    sync=True,
)

# %% [cell 78]
experiment_df = aiplatform.get_experiment_df()
experiment_df = experiment_df[experiment_df.experiment_name == EXPERIMENT_NAME]
print(experiment_df.T)

# %% [cell 80]
try:
    print("Open the following link", experiment_df["metric.lineage"][0])
except Exception as e:
    print(e)

# %% [cell 82]
job.delete()

# %% [cell 84]
experiments = aiplatform.Experiment.list()
for experiment in experiments:
    if experiment.name == EXPERIMENT_NAME:
        experiment.delete()

# %% [cell 86]
_shell('rm -rf custom')

delete_bucket = False

if delete_bucket:
    _shell('gcloud storage rm --recursive --continue-on-error {BUCKET_URI}')
