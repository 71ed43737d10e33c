"""The team's trainer: fits y = w * x by gradient descent and saves w to $AIP_MODEL_DIR.

python -m team_trainer --epochs=5 --learning-rate=0.1
"""

import argparse
import json
import os

from google.cloud import storage


def fit(epochs: int, learning_rate: float) -> float:
    """w after `epochs` passes over points of y = 3x."""
    points = [(x / 10, 3 * x / 10) for x in range(1, 11)]
    w = 0.0
    for epoch in range(epochs):
        grad = sum(2 * (w * x - y) * x for x, y in points) / len(points)
        w -= learning_rate * grad
        loss = sum((w * x - y) ** 2 for x, y in points) / len(points)
        print(f"epoch {epoch} loss {loss:.4f}", flush=True)
    return w


def save(w: float, model_dir: str) -> None:
    """Write model.json under the gs:// directory Vertex gives the job."""
    bucket, _, prefix = model_dir.removeprefix("gs://").partition("/")
    blob = storage.Client().bucket(bucket).blob(f"{prefix.rstrip('/')}/model.json")
    blob.upload_from_string(json.dumps({"w": w}))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--learning-rate", type=float, default=0.5)
    args = parser.parse_args()
    w = fit(args.epochs, args.learning_rate)
    save(w, os.environ["AIP_MODEL_DIR"])
