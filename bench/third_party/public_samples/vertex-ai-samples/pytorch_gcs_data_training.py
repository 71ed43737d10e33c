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
# Copyright 2023 Google LLC
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

# %% [cell 9]
pass  # skipped (package install): ! pip3 install --upgrade --quiet google-cloud-aiplatform google-cloud-storage torch==1.13

# %% [cell 11]
import sys

if "google.colab" in sys.modules:

    import IPython

    app = IPython.Application.instance()
    app.kernel.do_shutdown(True)

# %% [cell 14]
import sys

if "google.colab" in sys.modules:

    from google.colab import auth

    auth.authenticate_user()

# %% [cell 16]
PROJECT_ID = "vtp-samples"  # @param {type:"string"}
LOCATION = "us-central1"  # @param {type:"string"}

# %% [cell 18]
BUCKET_URI = "gs://vtp-samples-pytorch-gcs"  # @param {type:"string"}
BUCKET_PREFIX = "pytorch-on-gcs"  # @param

# %% [cell 20]
_shell('gcloud storage buckets create --location={LOCATION} --project={PROJECT_ID} {BUCKET_URI}')

# %% [cell 22]
from google.cloud import aiplatform

aiplatform.init(project=PROJECT_ID, location=LOCATION, staging_bucket=BUCKET_URI)

# %% [cell 24]
import os
from datetime import datetime

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from google.cloud import aiplatform
from matplotlib import pyplot as plt
from torch.utils.data import DataLoader, Dataset

# %% [cell 26]
TRAIN_URI = "gs://cloud-samples-data/vertex-ai/training/pytorch/mnist_train.csv"
TEST_URI = "gs://cloud-samples-data/vertex-ai/training/pytorch/mnist_test.csv"

print(TRAIN_URI)
print(TEST_URI)

# %% [cell 28]
_shell('gcloud storage cp --recursive $TRAIN_URI .')
_shell('gcloud storage cp --recursive $TEST_URI .')

# %% [cell 30]
class CustomImageDataset(Dataset):
    width = 28  # hard-coded width & height of image matrix
    height = 28

    def __init__(self, data_file, transform=None, target_transform=None):
        self.dataset = pd.read_csv(data_file)
        self.transform = (
            transform  # We would use ToTensor() if we were taking in raw images
        )
        self.target_transform = target_transform

    def __len__(self):
        return self.dataset.shape[0]

    def __getitem__(self, idx):
        label = self.dataset.at[idx, "label"]
        image = self.dataset.iloc[idx, 1:]

        # Create a matrix from the pandas.Series
        image = image.to_numpy() * 0.00392156862745098  # 1 / 255
        image = image.reshape(self.width, self.height)
        image = image.astype(float)
        image = torch.Tensor(image)

        if self.target_transform:
            label = self.target_transform(label)
        if self.transform:
            image = self.transform(image)
        return image, label

# %% [cell 31]
train_set = CustomImageDataset("mnist_train.csv")
test_set = CustomImageDataset("mnist_test.csv")

batch_size = 64
shuffle = False

train_dataloader = DataLoader(train_set, batch_size=batch_size, shuffle=shuffle)
test_dataloader = DataLoader(test_set, batch_size=batch_size, shuffle=shuffle)

# %% [cell 33]
for batch, (X, y) in enumerate(train_dataloader):
    print(len(X))
    print(len(y))

    first_image = X[0]
    first_label = y[0]

    print(len(first_image))
    print(first_label)  # This is a Tensor object with a single scalar value, 5
    break

# %% [cell 35]
first_image, label = (None, None)
for i in range(len(train_set)):
    sample = train_set[i]
    sample, label = sample
    first_image = sample.numpy()
    break

# %% [cell 36]
np.shape(first_image)
imgplot = plt.imshow(first_image, cmap="gray")

# %% [cell 38]
# Get cpu or gpu device for training
device = (
    "cuda"
    if torch.cuda.is_available()
    else "mps" if torch.backends.mps.is_available() else "cpu"
)
print(f"Using {device} device")


# Define model
class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28 * 28, 512, dtype=torch.float),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Linear(512, 10),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


model = NeuralNetwork().to(device)
print(model)

# %% [cell 39]
def train(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        X, y = X.to(device), y.to(device)

        pred = model(X)
        loss = loss_fn(pred, y)

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        if batch % 100 == 0:
            loss, current = loss.item(), batch * len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test(dataloader, model, loss_fn) -> bool:
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in dataloader:
            X, y = X.to(device), y.to(device)
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    test_loss /= num_batches
    correct /= size
    accuracy = 100 * correct
    print(f"Test Error: \n Accuracy: {(accuracy):>0.1f}%, Avg loss: {test_loss:>8f} \n")
    if accuracy <= 0.0:
        return False
    return True


# Define a loss function and an optimizer.
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)

epochs = 5
for t in range(epochs):
    print(f"Epoch {t+1}\n-------------------------------")
    train(train_dataloader, model, loss_fn, optimizer)
    is_going_well = test(test_dataloader, model, loss_fn)
    if not is_going_well:
        print("unacceptable accuracy")
        break
print("Done!")

# %% [cell 41]
TRAIN_GPU, TRAIN_NGPU = (aiplatform.gapic.AcceleratorType.NVIDIA_TESLA_T4, 1)
if TRAIN_GPU:
    TRAIN_VERSION = "pytorch-gpu.1-13"
else:
    TRAIN_VERSION = "pytorch-xla.1-11"

TRAIN_IMAGE = "{}-docker.pkg.dev/vertex-ai/training/{}:latest".format(
    LOCATION.split("-")[0], TRAIN_VERSION
)

MACHINE_TYPE = "n1-standard"

VCPU = "4"
TRAIN_COMPUTE = MACHINE_TYPE + "-" + VCPU
print("Train machine type", TRAIN_COMPUTE)

# %% [cell 43]
# Make folder for Python training script
if not os.path.exists("trainer"):
    os.mkdir("trainer")

# %% [cell 44]
_writefile('trainer/task.py', 'import os\nimport argparse\nimport logging\n\nimport torch\nimport torch.nn as nn\nimport torch.optim as optim\nimport pandas as pd\nfrom torch.utils.data import Dataset\nfrom torch.utils.data import DataLoader\n\nparser = argparse.ArgumentParser(description=\'PyTorch CNN Training\')\nparser.add_argument(\'--train_uri\', dest=\'train_uri\',\n                    type=str, help=\'Storage location of training CSV\')\nparser.add_argument(\'--test_uri\', dest=\'test_uri\',\n                    type=str, help=\'Storage location of test CSV\')\nparser.add_argument(\'--model-dir\', dest=\'model_dir\',\n                    default=os.getenv(\'AIP_MODEL_DIR\'), type=str, help=\'Model directory\')\nparser.add_argument(\'--batch_size\', dest=\'batch_size\',\n                    type=int, default=16, help=\'Batch size\')\nparser.add_argument(\'--epochs\', dest=\'epochs\',\n                    type=int, default=20, help=\'Number of epochs\')\nparser.add_argument(\'--lr\', dest=\'lr\',\n                    type=int, default=20, help=\'Learning rate\')\nargs = parser.parse_args()\n\nlogging.getLogger().setLevel(logging.INFO)\n\nclass CustomImageDataset(Dataset):\n    width = 28\n    height = 28\n\n    def __init__(self, data_file, transform=None, target_transform=None):\n        self.dataset = pd.read_csv(data_file)\n        self.transform = transform\n        self.target_transform = target_transform\n\n    def __len__(self):\n        return self.dataset.shape[0]\n\n    def __getitem__(self, idx):\n        label = self.dataset.at[idx, "label"]\n        image = self.dataset.iloc[idx,1:]\n\n        # Create a matrix from the pandas.Series\n        image = image.to_numpy() * 0.00392156862745098 # 1 / 255\n        image = image.reshape(self.width, self.height)\n        image = image.astype(float)\n        image = torch.Tensor(image)\n\n        if self.target_transform:\n            label = self.target_transform(label)\n        if self.transform:\n            image = self.transform(image)\n        return image, label\n\n# Define model\nclass NeuralNetwork(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.flatten = nn.Flatten()\n        self.linear_relu_stack = nn.Sequential(\n            nn.Linear(28*28, 512, dtype=torch.float),\n            nn.ReLU(),\n            nn.Linear(512, 512),\n            nn.ReLU(),\n            nn.Linear(512, 10)\n        )\n\n    def forward(self, x):\n        x = self.flatten(x)\n        logits = self.linear_relu_stack(x)\n        return logits\n\ndef get_data(train_gcs_uri, test_gcs_uri):\n\n    train_set = CustomImageDataset(train_gcs_uri)\n    test_set = CustomImageDataset(test_gcs_uri)\n\n    # HARDCODED batch_size and shuffle-can customize\n    batch_size = 64\n    shuffle = False\n\n    train_dataloader = DataLoader(train_set, batch_size=batch_size, shuffle=shuffle)\n    test_dataloader = DataLoader(test_set, batch_size=batch_size, shuffle=shuffle)\n\n    return train_dataloader, test_dataloader\n\ndef get_model():\n    logging.info("Get model architecture")\n    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")\n    gpu_id = "0" if torch.cuda.is_available() else None\n    logging.info(f"Device: {device}")\n\n    model = NeuralNetwork()\n    model.to(device)\n\n    loss = nn.CrossEntropyLoss()\n    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)\n    return model, loss, optimizer, device\n\ndef train_model(model, loss_func, optimizer, train_loader, test_loader, device):\n    def train(dataloader, model, loss_fn, optimizer):\n        size = len(dataloader.dataset)\n        model.train()\n        for batch, (X, y) in enumerate(dataloader):\n            X, y = X.to(device), y.to(device)\n\n            pred = model(X)\n            loss = loss_fn(pred, y)\n\n            optimizer.zero_grad()\n            loss.backward()\n            optimizer.step()\n\n            if batch % 100 == 0:\n                loss, current = loss.item(), batch * len(X)\n                print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")\n\n    def test(dataloader, model, loss_fn):\n        size = len(dataloader.dataset)\n        num_batches = len(dataloader)\n        model.eval()\n        test_loss, correct = 0, 0\n        with torch.no_grad():\n            for X, y in dataloader:\n                X, y = X.to(device), y.to(device)\n                pred = model(X)\n                test_loss += loss_fn(pred, y).item()\n                correct += (pred.argmax(1) == y).type(torch.float).sum().item()\n        test_loss /= num_batches\n        correct /= size\n        accuracy = 100 * correct\n        print(f"Test Error: \\n Accuracy: {(accuracy):>0.1f}%, Avg loss: {test_loss:>8f} \\n")\n\n    # Define a loss function and an optimizer.\n    loss_fn = nn.CrossEntropyLoss()\n    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)\n\n    epochs = 5\n    for t in range(epochs):\n        print(f"Epoch {t+1}\\n-------------------------------")\n        train(train_loader, model, loss_fn, optimizer)\n        test(test_loader, model, loss_fn)\n\n    # Done training\n    return model\n\n# import data from Cloud Storage\nlogging.info(\'importing training data\')\ngs_prefix = \'gs://\'\ngcsfuse_prefix = \'/gcs/\'\n\nif args.train_uri.startswith(gs_prefix):\n    args.train_uri.replace(gs_prefix, gcsfuse_prefix)\n\nif args.test_uri.startswith(gs_prefix):\n    args.test_uri.replace(gs_prefix, gcsfuse_prefix)\n\ntrain_dataset, test_dataset = get_data(train_gcs_uri=args.train_uri,\n                                      test_gcs_uri=args.test_uri)\n\nlogging.info(\'starting training\')\nmodel, loss, optimizer, device = get_model()\ntrain_model(model, loss, optimizer, train_dataset, test_dataset, device)\n\n\n# export model to gcs using GCSFuse\nlogging.info(\'start saving\')\nlogging.info("Exporting model artifacts ...")\ngs_prefix = \'gs://\'\ngcsfuse_prefix = \'/gcs/\'\nif args.model_dir.startswith(gs_prefix):\n    args.model_dir = args.model_dir.replace(gs_prefix, gcsfuse_prefix)\n    dirpath = os.path.split(args.model_dir)[0]\n    if not os.path.isdir(dirpath):\n        os.makedirs(dirpath)\n\ngcs_model_path = os.path.join(os.path.join(args.model_dir, \'model.pth\'))\ntorch.save(model.state_dict(), gcs_model_path)\nlogging.info(f\'Model is saved to {args.model_dir}\')\n', append=False)

# %% [cell 46]
# Use timestamped path to save your model in Cloud Storage
TIMESTAMP = datetime.now().strftime("%Y%m%d-%H%M%S")
# Set a display name for the training job
JOB_DISPLAY_NAME = "pytorch-custom-job"

# Create a custom training job in Vertex AI
job = aiplatform.CustomTrainingJob(
    display_name=JOB_DISPLAY_NAME,
    script_path="trainer/task.py",
    container_uri=TRAIN_IMAGE,
)

# Run the job
job.run(
    replica_count=1,
    machine_type=TRAIN_COMPUTE,
    accelerator_type=TRAIN_GPU.name,
    accelerator_count=TRAIN_NGPU,
    args=[
        "--train_uri",
        TRAIN_URI,
        "--test_uri",
        TEST_URI,
        "--model-dir",
        f"{BUCKET_URI}/{BUCKET_PREFIX}/{TIMESTAMP}/",
    ],
)

# %% [cell 48]
# Delete training job created
job.delete(sync=False)

# Delete Cloud Storage objects that were created
delete_bucket = False
if delete_bucket:
    _shell('gcloud storage rm --recursive $BUCKET_URI')
