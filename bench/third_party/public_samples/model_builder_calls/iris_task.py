"""The training script the model-builder training samples are given (their tests name one,
`task.py`, without its text): scikit-learn on its bundled iris, the model saved as Vertex's
prebuilt scikit-learn serving image reads it, `model.joblib` under $AIP_MODEL_DIR (through the
Cloud Storage FUSE mount, /gcs, as Google's samples write it)."""

import os

import joblib
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression

iris = load_iris()
model = LogisticRegression(max_iter=200).fit(iris.data, iris.target)
print("training accuracy", model.score(iris.data, iris.target))
model_dir = os.environ["AIP_MODEL_DIR"].replace("gs://", "/gcs/", 1)
os.makedirs(model_dir, exist_ok=True)
joblib.dump(model, os.path.join(model_dir, "model.joblib"))
print("saved", os.path.join(model_dir, "model.joblib"))
