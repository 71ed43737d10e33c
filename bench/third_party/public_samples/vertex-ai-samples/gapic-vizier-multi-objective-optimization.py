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

# %% [cell 6]
pass  # skipped (package install): ! pip3 install --upgrade --quiet google-cloud-aiplatform numpy==1.23.0 google-vizier

# %% [cell 8]
import sys

if "google.colab" in sys.modules:

    import IPython

    app = IPython.Application.instance()
    app.kernel.do_shutdown(True)

# %% [cell 11]
import sys

if "google.colab" in sys.modules:

    from google.colab import auth

    auth.authenticate_user()

# %% [cell 13]
PROJECT_ID = "vtp-samples"  # @param {type:"string"}
LOCATION = "us-central1"  # @param {type:"string"}

# Set the project id
pass  # skipped (gcloud sign-in or configuration): ! gcloud config set project {PROJECT_ID}

# %% [cell 15]
import datetime

from google.cloud import aiplatform
from google.cloud.aiplatform.vizier import Study, pyvizier

# %% [cell 18]
# These will be automatically filled in.
STUDY_DISPLAY_NAME = "{}_study_{}".format(
    PROJECT_ID.replace("-", ""), datetime.datetime.now().strftime("%Y%m%d_%H%M%S")
)
PARENT = "projects/{}/locations/{}".format(PROJECT_ID, LOCATION)

print("LOCATION: {}".format(LOCATION))
print("PARENT: {}".format(PARENT))

# %% [cell 20]
# Parameter Configuration
problem = pyvizier.StudyConfig()
problem.algorithm = pyvizier.Algorithm.RANDOM_SEARCH

# Objective Metrics
problem.metric_information.append(
    pyvizier.MetricInformation(name="y1", goal=pyvizier.ObjectiveMetricGoal.MINIMIZE)
)
problem.metric_information.append(
    pyvizier.MetricInformation(name="y2", goal=pyvizier.ObjectiveMetricGoal.MAXIMIZE)
)

# Defines the parameters configuration.
root = problem.search_space.select_root()
root.add_float_param("r", 0, 1.0, scale_type=pyvizier.ScaleType.LINEAR)
root.add_float_param("theta", 0, 1.57, scale_type=pyvizier.ScaleType.LINEAR)

# %% [cell 22]
aiplatform.init(project=PROJECT_ID, location=LOCATION)
study = Study.create_or_load(display_name=STUDY_DISPLAY_NAME, problem=problem)

STUDY_ID = study.name
print("STUDY_ID: {}".format(STUDY_ID))

# %% [cell 24]
import math


# r * sin(theta)
def Metric1Evaluation(r, theta):
    """Evaluate the first metric on the trial."""
    return r * math.sin(theta)


# r * cos(theta)
def Metric2Evaluation(r, theta):
    """Evaluate the second metric on the trial."""
    return r * math.cos(theta)


def CreateMetrics(trial_id, r, theta):
    print(("=========== Start Trial: [{}] =============").format(trial_id))

    # Evaluate both objective metrics for this trial
    y1 = Metric1Evaluation(r, theta)
    y2 = Metric2Evaluation(r, theta)
    print(
        "[r = {}, theta = {}] => y1 = r*sin(theta) = {}, y2 = r*cos(theta) = {}".format(
            r, theta, y1, y2
        )
    )
    measurement = pyvizier.Measurement()
    measurement.metrics["y1"] = y1
    measurement.metrics["y2"] = y2

    # Return the results for this trial
    return measurement

# %% [cell 26]
worker_id = "worker1"  # @param {type: 'string'}
suggestion_count_per_request = 3  # @param {type: 'integer'}
max_trial_id_to_stop = 4  # @param {type: 'integer'}

print("worker_id: {}".format(worker_id))
print("suggestion_count_per_request: {}".format(suggestion_count_per_request))
print("max_trial_id_to_stop: {}".format(max_trial_id_to_stop))

# %% [cell 28]
while len(study.trials()) < max_trial_id_to_stop:
    trials = study.suggest(count=suggestion_count_per_request, worker=worker_id)

    for suggested_trial in trials:
        measurement = CreateMetrics(
            suggested_trial.name,
            suggested_trial.parameters["r"].value,
            suggested_trial.parameters["theta"].value,
        )
        suggested_trial.add_measurement(measurement=measurement)
        suggested_trial.complete(measurement=measurement)

# %% [cell 30]
optimal_trials = study.optimal_trials()
print("optimal_trials: {}".format(optimal_trials))

# %% [cell 32]
study.delete()
