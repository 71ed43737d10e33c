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

# %% [cell 7]
# Install the packages
pass  # skipped (line magic of the notebook UI): %pip install --upgrade google-cloud-aiplatform google-cloud-storage kfp google-cloud-pipeline-components

# %% [cell 9]
_shell('python3 -c "import kfp; print(\'KFP SDK version: {}\'.format(kfp.__version__))"')

# %% [cell 11]
import sys

if "google.colab" in sys.modules:

    from google.colab import auth

    auth.authenticate_user()

# %% [cell 13]
PROJECT_ID = "vtp-samples"  # @param {type:"string"}
LOCATION = "us-central1"  # @param {type:"string"}

# %% [cell 15]
BUCKET_URI = "gs://vtp-samples-pipelines-intro"  # @param {type:"string"}

# %% [cell 17]
_shell('gcloud storage buckets create --location={LOCATION} --project={PROJECT_ID} {BUCKET_URI}')

# %% [cell 19]
SERVICE_ACCOUNT = "vtp-samples-runner@vtp-samples.iam.gserviceaccount.com"  # @param {type:"string"}

# %% [cell 20]
import sys

IS_COLAB = "google.colab" in sys.modules
if (
    SERVICE_ACCOUNT == ""
    or SERVICE_ACCOUNT is None
    or SERVICE_ACCOUNT == "[your-service-account]"
):
    # Get your service account from gcloud
    if not IS_COLAB:
        shell_output = _shell('gcloud auth list 2>/dev/null', capture=True)
        SERVICE_ACCOUNT = shell_output[2].replace("*", "").strip()

    else:  # IS_COLAB:
        shell_output = _shell('gcloud projects describe  $PROJECT_ID', capture=True)
        project_number = shell_output[-1].split(":")[1].strip().replace("'", "")
        SERVICE_ACCOUNT = f"{project_number}-compute@developer.gserviceaccount.com"

    print("Service Account:", SERVICE_ACCOUNT)

# %% [cell 22]
_shell('gcloud storage buckets add-iam-policy-binding $BUCKET_URI --member=serviceAccount:{SERVICE_ACCOUNT} --role=roles/storage.objectCreator')

_shell('gcloud storage buckets add-iam-policy-binding $BUCKET_URI --member=serviceAccount:{SERVICE_ACCOUNT} --role=roles/storage.objectViewer')

# %% [cell 24]
import json
from typing import NamedTuple

from google.cloud import aiplatform
from kfp import compiler, dsl
from kfp.dsl import component

# %% [cell 26]
aiplatform.init(project=PROJECT_ID, location=LOCATION, staging_bucket=BUCKET_URI)

# %% [cell 28]
# API service endpoint
API_ENDPOINT = f"{LOCATION}-aiplatform.googleapis.com"
# Pipelne root dir
PIPELINE_ROOT = f"{BUCKET_URI}/pipeline_root/intro"

# %% [cell 30]
@component(base_image="python:3.9")
def hello_world(text: str) -> str:
    print(text)
    return text


compiler.Compiler().compile(hello_world, "hw.yaml")

# %% [cell 33]
@component(packages_to_install=["google-cloud-storage"])
def two_outputs(
    text: str,
) -> NamedTuple(
    "Outputs",
    [
        ("output_one", str),  # Return parameters
        ("output_two", str),
    ],
):
    # the import is not actually used for this simple example, but the import
    # is successful, as it was included in the `packages_to_install` list.
    from google.cloud import storage  # noqa: F401

    o1 = f"output one from text: {text}"
    o2 = f"output two from text: {text}"
    print("output one: {}; output_two: {}".format(o1, o2))
    return (o1, o2)

# %% [cell 35]
@component
def consumer(text1: str, text2: str, text3: str) -> str:
    print(f"text1: {text1}; text2: {text2}; text3: {text3}")
    return f"text1: {text1}; text2: {text2}; text3: {text3}"

# %% [cell 37]
@dsl.pipeline(
    name="intro-pipeline-unique",
    description="A simple intro pipeline",
    pipeline_root=PIPELINE_ROOT,
)
def pipeline(text: str = "hi there"):
    hw_task = hello_world(text=text)
    two_outputs_task = two_outputs(text=text)
    consumer_task = consumer(  # noqa: F841
        text1=hw_task.output,
        text2=two_outputs_task.outputs["output_one"],
        text3=two_outputs_task.outputs["output_two"],
    )

# %% [cell 39]
compiler.Compiler().compile(pipeline_func=pipeline, package_path="intro_pipeline.json")

# %% [cell 41]
DISPLAY_NAME = "intro_pipeline_job_unique"

job = aiplatform.PipelineJob(
    display_name=DISPLAY_NAME,
    template_path="intro_pipeline.json",
    pipeline_root=PIPELINE_ROOT,
)

job.run()

# %% [cell 44]
job.delete()

# %% [cell 46]
DISPLAY_NAME = "intro_pipeline_job_svc_acc"

job = aiplatform.PipelineJob(
    display_name=DISPLAY_NAME,
    template_path="intro_pipeline.json",
    pipeline_root=PIPELINE_ROOT,
)

job.run(
    service_account=SERVICE_ACCOUNT
)  # <-- CHANGE to use non-default service account

# %% [cell 48]
job.delete()

# %% [cell 50]
job = aiplatform.PipelineJob(
    display_name="intro_pipeline_job_cached_unique",
    template_path="intro_pipeline.json",
    enable_caching=False,
)

job.run()

# %% [cell 52]
job.delete()

# %% [cell 55]
_shell('curl -X GET -H "Authorization: Bearer $(gcloud auth print-access-token)" https://{API_ENDPOINT}/v1beta1/projects/{PROJECT_ID}/locations/{LOCATION}/pipelineJobs')

# %% [cell 57]
# Load the pipeline specification
with open("intro_pipeline.json") as fp:
    pipeline_job_spec = json.load(fp)

# %% [cell 58]
# Specify the pipeline configuration details
pipeline_config = {
    "displayName": "intro-pipeline-rest-api",
    "runtimeConfig": {
        "gcsOutputDirectory": PIPELINE_ROOT,
    },
    "pipelineSpec": pipeline_job_spec,
}

# Save the configuration to a json file
with open("pipeline_config.json", "w") as fp:
    json.dump(pipeline_config, fp)

# %% [cell 59]
# Set a job ID (optional)
PIPELINE_RUN_ID = "intro-pipeline-job-unique"

# Send the job creation request using the configuration payload
output = _shell('curl -X POST  -H "Authorization: Bearer $(gcloud auth print-access-token)" -H "Content-Type: application/json; charset=utf-8"   https://{API_ENDPOINT}/v1beta1/projects/{PROJECT_ID}/locations/{LOCATION}/pipelineJobs?pipelineJobId={PIPELINE_RUN_ID}  --data "@pipeline_config.json"', capture=True)

# In case you didn't use a pre-defined PipelineJobId, Vertex AI
# generates one automatically. In such a case, use the following
# commented code to retrieve the generated job id.
# output_json = json.loads(" ".join(output))
# PIPELINE_RUN_ID = output_json['name'].split("/")[-1]
# print(PIPELINE_RUN_ID)

# %% [cell 61]
_shell('curl -X GET -H "Authorization: Bearer $(gcloud auth print-access-token)"  https://{API_ENDPOINT}/v1beta1/projects/{PROJECT_ID}/locations/{LOCATION}/pipelineJobs/{PIPELINE_RUN_ID}')

# %% [cell 63]
_shell('curl -X POST -H "Authorization: Bearer $(gcloud auth print-access-token)" https://{API_ENDPOINT}/v1beta1/projects/{PROJECT_ID}/locations/{LOCATION}/pipelineJobs/{PIPELINE_RUN_ID}:cancel')

# %% [cell 65]
_shell('curl -X DELETE -H "Authorization: Bearer $(gcloud auth print-access-token)"  https://{API_ENDPOINT}/v1beta1/projects/{PROJECT_ID}/locations/{LOCATION}/pipelineJobs/{PIPELINE_RUN_ID}')

# %% [cell 67]
# Delete the Cloud Storage bucket
delete_bucket = False  # Set True for deletion

if delete_bucket:
    _shell('gcloud storage rm --recursive $BUCKET_URI')

# Delete the locally generated files
_shell('rm intro_pipeline.json')
_shell('rm pipeline_config.json')
