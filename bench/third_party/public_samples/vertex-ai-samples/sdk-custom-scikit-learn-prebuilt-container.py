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
pass  # skipped (package install): ! pip3 install --upgrade --quiet google-cloud-aiplatform google-cloud-storage tensorflow==2.15.1

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

# Set the project id
pass  # skipped (gcloud sign-in or configuration): ! gcloud config set project {PROJECT_ID}

# %% [cell 16]
import random
import string


# Generate a uuid of a specifed length(default=8)
def generate_uuid(length: int = 8) -> str:
    return "".join(random.choices(string.ascii_lowercase + string.digits, k=length))


UUID = generate_uuid()

# %% [cell 18]
BUCKET_URI = "gs://vtp-samples-sklearn-prebuilt"  # @param {type:"string"}

# %% [cell 20]
_shell('gcloud storage buckets create --location {LOCATION} --project {PROJECT_ID} {BUCKET_URI}')

# %% [cell 22]
import json
import os

import tensorflow as tf
from google.cloud import aiplatform

# %% [cell 24]
aiplatform.init(project=PROJECT_ID, staging_bucket=BUCKET_URI)

# %% [cell 26]
TRAIN_VERSION = "scikit-learn-cpu.0-23"
DEPLOY_VERSION = "sklearn-cpu.1-0"

TRAIN_IMAGE = "us-docker.pkg.dev/vertex-ai/training/{}:latest".format(TRAIN_VERSION)
DEPLOY_IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/{}:latest".format(DEPLOY_VERSION)

print("Training:", TRAIN_IMAGE)
print("Deployment:", DEPLOY_IMAGE)

# %% [cell 28]
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

# %% [cell 30]
# Make folder for Python training script
_shell('rm -rf custom')
_shell('mkdir custom')

# Add package information
_shell('touch custom/README.md')

setup_cfg = "[egg_info]\n\ntag_build =\n\ntag_date = 0"
_shell('echo "$setup_cfg" > custom/setup.cfg')

setup_py = "import setuptools\n\nsetuptools.setup(\n\n    install_requires=[\n\n        'tensorflow_datasets',\n\n    ],\n\n    packages=setuptools.find_packages())"
_shell('echo "$setup_py" > custom/setup.py')

pkg_info = "Metadata-Version: 1.0\n\nName: US Census Data (1990) tabular binary classification\n\nVersion: 0.0.0\n\nSummary: Demostration training script\n\nHome-page: www.google.com\n\nAuthor: Google\n\nAuthor-email: aferlitsch@google.com\n\nLicense: Public\n\nDescription: Demo\n\nPlatform: Vertex"
_shell('echo "$pkg_info" > custom/PKG-INFO')

# Make the training subfolder
_shell('mkdir custom/trainer')
_shell('touch custom/trainer/__init__.py')

# %% [cell 31]
_writefile('custom/trainer/task.py', "# Single Instance Training for Census Income\n\nfrom sklearn.ensemble import RandomForestClassifier\nimport joblib\nfrom sklearn.feature_selection import SelectKBest\nfrom sklearn.pipeline import FeatureUnion\nfrom sklearn.pipeline import Pipeline\nfrom sklearn.preprocessing import LabelBinarizer\nimport datetime\nimport pandas as pd\n\nfrom google.cloud import storage\n\nimport numpy as np\nimport argparse\nimport os\nimport sys\n\nparser = argparse.ArgumentParser()\nparser.add_argument('--model-dir', dest='model_dir',\n                    default=os.getenv('AIP_MODEL_DIR'), type=str, help='Model dir.')\nargs = parser.parse_args()\nprint('Python Version = {}'.format(sys.version))\n\n# Public bucket holding the census data\nbucket = storage.Client().bucket('cloud-samples-data')\n\n# Path to the data inside the public bucket\nblob = bucket.blob('ai-platform/sklearn/census_data/adult.data')\n# Download the data\nblob.download_to_filename('adult.data')\n\n# Define the format of your input data including unused columns (These are the columns from the census data files)\nCOLUMNS = (\n    'age',\n    'workclass',\n    'fnlwgt',\n    'education',\n    'education-num',\n    'marital-status',\n    'occupation',\n    'relationship',\n    'race',\n    'sex',\n    'capital-gain',\n    'capital-loss',\n    'hours-per-week',\n    'native-country',\n    'income-level'\n)\n\n\n\n# Categorical columns are columns that need to be turned into a numerical value to be used by scikit-learn\nCATEGORICAL_COLUMNS = (\n    'workclass',\n    'education',\n    'marital-status',\n    'occupation',\n    'relationship',\n    'race',\n    'sex',\n    'native-country'\n)\n\n# Load the training census dataset\nwith open('./adult.data', 'r') as train_data:\n    raw_training_data = pd.read_csv(train_data, header=None, names=COLUMNS)\n\n# Remove the column you're trying to predict ('income-level') from our features list\n# Convert the Dataframe to a lists of lists\ntrain_features = raw_training_data.drop('income-level', axis=1).values.tolist()\n# Create our training labels list, convert the Dataframe to a lists of lists\ntrain_labels = (raw_training_data['income-level'] == ' >50K').values.tolist()\n\n# Since the census data set has categorical features, you need to convert\n# them to numerical values. We'll use a list of pipelines to convert each\n# categorical column and then use FeatureUnion to combine them before calling\n# the RandomForestClassifier.\ncategorical_pipelines = []\n\n# Each categorical column needs to be extracted individually and converted to a numerical value.\n# To do this, each categorical column will use a pipeline that extracts one feature column via\n# SelectKBest(k=1) and a LabelBinarizer() to convert the categorical value to a numerical one.\n# A scores array (created below) will select and extract the feature column. The scores array is\n# created by iterating over the COLUMNS and checking if it's a CATEGORICAL_COLUMN.\nfor i, col in enumerate(COLUMNS[:-1]):\n    if col in CATEGORICAL_COLUMNS:\n        # Create a scores array to get the individual categorical column.\n        # Example:\n        #  data = [39, 'State-gov', 77516, 'Bachelors', 13, 'Never-married', 'Adm-clerical',\n        #         'Not-in-family', 'White', 'Male', 2174, 0, 40, 'United-States']\n        #  scores = [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]\n        #\n        # Returns: [['State-gov']]\n        # Build the scores array.\n        scores = [0] * len(COLUMNS[:-1])\n        # This column is the categorical column you want to extract.\n        scores[i] = 1\n        skb = SelectKBest(k=1)\n        skb.scores_ = scores\n        # Convert the categorical column to a numerical value\n        lbn = LabelBinarizer()\n        r = skb.transform(train_features)\n        lbn.fit(r)\n        # Create the pipeline to extract the categorical feature\n        categorical_pipelines.append(\n            ('categorical-{}'.format(i), Pipeline([\n                ('SKB-{}'.format(i), skb),\n                ('LBN-{}'.format(i), lbn)])))\n\n# Create pipeline to extract the numerical features\nskb = SelectKBest(k=6)\n# From COLUMNS use the features that are numerical\nskb.scores_ = [1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 1, 1, 0]\ncategorical_pipelines.append(('numerical', skb))\n\n# Combine all the features using FeatureUnion\npreprocess = FeatureUnion(categorical_pipelines)\n\n# Create the classifier\nclassifier = RandomForestClassifier()\n\n# Transform the features and fit them to the classifier\nclassifier.fit(preprocess.transform(train_features), train_labels)\n\n# Create the overall model as a single pipeline\npipeline = Pipeline([\n    ('union', preprocess),\n    ('classifier', classifier)\n])\n\n# Split path into bucket and subdirectory\nbucket = args.model_dir.split('/')[2]\nsubdirs = args.model_dir.split('/')[3:]\nsubdir = subdirs[0]\nsubdirs.pop(0)\n\n\n\nfor comp in subdirs:\n    subdir = os.path.join(subdir, comp)\n\n# Write model to a local file\njoblib.dump(pipeline, 'model.joblib')\n\n# Upload the model to GCS\nbucket = storage.Client().bucket(bucket)\nblob = bucket.blob(subdir + 'model.joblib')\nblob.upload_from_filename('model.joblib')\n", append=False)

# %% [cell 33]
_shell('rm -f custom.tar custom.tar.gz')
_shell('tar cvf custom.tar custom')
_shell('gzip custom.tar')
_shell('gcloud storage cp custom.tar.gz $BUCKET_URI/trainer_census.tar.gz')

# %% [cell 37]
job = aiplatform.CustomTrainingJob(
    display_name="census_" + UUID,
    script_path="custom/trainer/task.py",
    container_uri=TRAIN_IMAGE,
    requirements=["gcsfs", "tensorflow-datasets"],
)

print(job)

# %% [cell 40]
MODEL_DIR = "{}/{}".format(BUCKET_URI, UUID)


job.run(
    replica_count=1, machine_type=TRAIN_COMPUTE, base_output_dir=MODEL_DIR, sync=True
)

MODEL_DIR = MODEL_DIR + "/model"
model_path_to_deploy = MODEL_DIR

# %% [cell 43]
model = aiplatform.Model.upload(
    display_name="census_" + UUID,
    artifact_uri=MODEL_DIR,
    serving_container_image_uri=DEPLOY_IMAGE,
    sync=False,
)

model.wait()

# %% [cell 48]
INSTANCES = [
    [
        25,
        "Private",
        226802,
        "11th",
        7,
        "Never-married",
        "Machine-op-inspct",
        "Own-child",
        "Black",
        "Male",
        0,
        0,
        40,
        "United-States",
    ],
    [
        38,
        "Private",
        89814,
        "HS-grad",
        9,
        "Married-civ-spouse",
        "Farming-fishing",
        "Husband",
        "White",
        "Male",
        0,
        0,
        50,
        "United-States",
    ],
]

# %% [cell 50]
gcs_input_uri = BUCKET_URI + "/" + "test.jsonl"
with tf.io.gfile.GFile(gcs_input_uri, "w") as f:
    for i in INSTANCES:
        f.write(json.dumps(i) + "\n")

_shell('gcloud storage cat $gcs_input_uri')

# %% [cell 52]
MIN_NODES = 1
MAX_NODES = 1

batch_predict_job = model.batch_predict(
    job_display_name="census_" + UUID,
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

# %% [cell 55]
batch_predict_job.wait()

# %% [cell 58]
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

# %% [cell 63]
DEPLOYED_NAME = "census-" + UUID

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

# %% [cell 66]
INSTANCE = [
    25,
    "Private",
    226802,
    "11th",
    7,
    "Never-married",
    "Machine-op-inspct",
    "Own-child",
    "Black",
    "Male",
    0,
    0,
    40,
    "United-States",
]

# %% [cell 68]
instances_list = [INSTANCE]

prediction = endpoint.predict(instances_list)
print(prediction)

# %% [cell 71]
endpoint.undeploy_all()

# %% [cell 73]
# Delete endpoint
endpoint.delete()

# Delete the model using the Vertex model object
model.delete()

# Delete the AutoML or Pipeline training job
job.delete()

# Delete the batch prediction job using the Vertex batch prediction object
batch_predict_job.delete()

# Delete the locally generated files
_shell('rm -rf custom custom.tar.gz')

# Delete the Cloud Storage bucket
delete_bucket = False  # set True for deletion
if delete_bucket:
    _shell('gcloud storage rm --recursive $BUCKET_URI')
