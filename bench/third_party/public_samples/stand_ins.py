"""Small local data in place of what the samples download (bench/public_samples.py).

Each stand-in is written where its sample reads the original, through the Cloud Storage client
under `vtp local exec`, so the sample's own code reads it unchanged: Google's public buckets'
paths (gs://cloud-samples-data/..., gs://ml-pipeline-playground/...) in the local service's
storage. The data is generated here, from what scikit-learn ships (its bundled iris and digits)
or made up to the original's columns, a few hundred rows at most: the samples are tested for
running, not for accuracy.

    python stand_ins.py NAME ...      (under `vtp local exec`)
"""

import csv
import io
import random
import sys

from google.cloud import storage

PROJECT = "vtp-samples-data"


def upload(uri: str, data: str | bytes) -> None:
    """Write `data` at gs:// `uri`, creating the bucket when need be."""
    bucket_name, _, name = uri.removeprefix("gs://").partition("/")
    client = storage.Client(project=PROJECT)
    bucket = client.bucket(bucket_name)
    if not bucket.exists():
        bucket.create()
    bucket.blob(name).upload_from_string(data)
    print(f"stand_ins: {uri} ({len(data)} bytes)", flush=True)


def table(header: list[str] | None, rows: list[list]) -> str:
    """CSV text of `rows`, under `header` when given."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if header:
        writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def iris() -> None:
    """gs://cloud-samples-data/ai-platform/iris/: iris_data.csv (four features) and
    iris_target.csv (the class), each with a header, from scikit-learn's iris."""
    from sklearn.datasets import load_iris

    data = load_iris()
    prefix = "gs://cloud-samples-data/ai-platform/iris"
    features = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    upload(f"{prefix}/iris_data.csv", table(features, data.data.round(1).tolist()))
    upload(f"{prefix}/iris_target.csv", table(["target"], [[int(t)] for t in data.target]))


def iris_xgboost_model() -> None:
    """gs://cloud-samples-data-us-central1/.../models/iris_xgboost/model.bst, the public model
    python-aiplatform's samples and system tests upload: an XGBoost Booster trained here on
    scikit-learn's iris (as bench/aiplatform_system.py seeds it)."""
    import os
    import tempfile

    import xgboost
    from sklearn.datasets import load_iris

    data = load_iris()
    booster = xgboost.train(
        {"objective": "multi:softprob", "num_class": 3, "max_depth": 2},
        xgboost.DMatrix(data.data, label=data.target),
        num_boost_round=10,
    )
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.bst")
        booster.save_model(path)
        with open(path, "rb") as model:
            upload(
                "gs://cloud-samples-data-us-central1/vertex-ai/google-cloud-aiplatform-ci-artifacts/"
                "models/iris_xgboost/model.bst",
                model.read(),
            )


def shakespeare() -> None:
    """gs://ml-pipeline-playground/shakespeare1.txt, the text KFP's importer sample imports: a
    few lines of the public-domain sonnet 18."""
    upload(
        "gs://ml-pipeline-playground/shakespeare1.txt",
        "Shall I compare thee to a summer's day?\n"
        "Thou art more lovely and more temperate:\n"
        "Rough winds do shake the darling buds of May,\n"
        "And summer's lease hath all too short a date;\n",
    )


def mnist_csv() -> None:
    """gs://cloud-samples-data/vertex-ai/training/pytorch/mnist_{train,test}.csv: a `label`
    column, then 784 pixel columns (28x28, 0-255), from scikit-learn's 8x8 digits scaled up."""
    import numpy as np
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = np.kron(digits.images, np.ones((4, 4)))  # 32x32
    images = (images[:, 2:30, 2:30] * 255 / 16).astype(int).reshape(len(images), -1)
    header = ["label"] + [f"pixel{i}" for i in range(784)]
    rows = [[int(t), *map(int, image)] for t, image in zip(digits.target, images, strict=True)]
    prefix = "gs://cloud-samples-data/vertex-ai/training/pytorch"
    upload(f"{prefix}/mnist_train.csv", table(header, rows[:300]))
    upload(f"{prefix}/mnist_test.csv", table(header, rows[300:400]))


CENSUS_COLUMNS = {
    "workclass": ["Private", "Self-emp-not-inc", "State-gov", "Federal-gov"],
    "education": ["Bachelors", "HS-grad", "11th", "Masters", "Some-college"],
    "marital-status": ["Never-married", "Married-civ-spouse", "Divorced"],
    "occupation": ["Adm-clerical", "Exec-managerial", "Machine-op-inspct", "Farming-fishing"],
    "relationship": ["Not-in-family", "Husband", "Wife", "Own-child"],
    "race": ["White", "Black", "Asian-Pac-Islander"],
    "sex": ["Male", "Female"],
    "native-country": ["United-States", "Mexico", "India"],
}


def census() -> None:
    """gs://cloud-samples-data/ai-platform/sklearn/census_data/adult.data: UCI's adult census
    layout (15 columns, no header, ", " separated, income-level last) with made-up rows."""
    pick = random.Random(0).choice
    rows = []
    for _ in range(300):
        age, hours = pick(range(18, 70)), pick(range(20, 60))
        rows.append(
            [age, pick(CENSUS_COLUMNS["workclass"]), pick(range(20000, 400000)),
             pick(CENSUS_COLUMNS["education"]), pick(range(5, 16)),
             pick(CENSUS_COLUMNS["marital-status"]), pick(CENSUS_COLUMNS["occupation"]),
             pick(CENSUS_COLUMNS["relationship"]), pick(CENSUS_COLUMNS["race"]),
             pick(CENSUS_COLUMNS["sex"]), pick([0, 0, 2174, 14084]), pick([0, 0, 1902]), hours,
             pick(CENSUS_COLUMNS["native-country"]), ">50K" if age + hours > 90 else "<=50K"]
        )  # fmt: skip
    text = "".join(", ".join(map(str, row)) + "\n" for row in rows)
    upload("gs://cloud-samples-data/ai-platform/sklearn/census_data/adult.data", text)


def news_aggregator() -> None:
    """gs://vtp-samples-stand-ins/uci/NewsAggregatorDataset.zip, in place of UCI's download:
    newsCorpora.csv (tab separated: id, title, url, publisher, category b/t/e/m, story,
    hostname, timestamp) with made-up headlines."""
    import zipfile

    words = {"b": "stocks bank earnings", "t": "phone chip software", "e": "film star music",
             "m": "health vaccine study"}  # fmt: skip
    pick = random.Random(1).choice
    lines = []
    for i in range(200):
        category = "btem"[i % 4]
        title = f"{pick(['New', 'Big', 'Latest'])} {' '.join(words[category].split()[: i % 3 + 1])}"
        lines.append(
            f"{i}\t{title}!\thttp://example.com/{i}\tPaper\t{category}\ts{i}"
            f"\texample.com\t1394470370698"
        )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("newsCorpora.csv", "\n".join(lines) + "\n")
    upload("gs://vtp-samples-stand-ins/uci/NewsAggregatorDataset.zip", out.getvalue())


def bank_marketing() -> None:
    """gs://cloud-ml-tables-data/bank-marketing.csv: the bank marketing table's 17 columns
    (Deposit, 1 or 2, last) with made-up rows."""
    header = ["Age", "Job", "MaritalStatus", "Education", "Default", "Balance", "Housing",
              "Loan", "Contact", "Day", "Month", "Duration", "Campaign", "PDays", "Previous",
              "POutcome", "Deposit"]  # fmt: skip
    pick = random.Random(2).choice
    rows = [
        [pick(range(20, 70)), pick(["admin.", "technician"]), pick(["married", "single"]),
         pick(["primary", "tertiary"]), "no", pick(range(-100, 5000)), pick(["yes", "no"]),
         "no", "cellular", pick(range(1, 29)), pick(["may", "jun"]), pick(range(10, 900)),
         pick(range(1, 5)), -1, 0, "unknown", pick([1, 2])]
        for _ in range(100)
    ]  # fmt: skip
    upload("gs://cloud-ml-tables-data/bank-marketing.csv", table(header, rows))


def penguins_estimator() -> None:
    """gs://cloud-samples-data/vertex-ai/google-cloud-aiplatform-ci-artifacts/models/penguins/
    estimator/: a TensorFlow SavedModel with a `predict` signature over the penguins features
    (a made-up linear score, written here with TensorFlow)."""
    import os
    import tempfile

    import tensorflow as tf

    class Penguins(tf.Module):
        @tf.function(input_signature=[
            tf.TensorSpec([None], tf.string, name="island"),
            tf.TensorSpec([None], tf.float32, name="culmen_length_mm"),
            tf.TensorSpec([None], tf.float32, name="culmen_depth_mm"),
            tf.TensorSpec([None], tf.float32, name="flipper_length_mm"),
            tf.TensorSpec([None], tf.float32, name="body_mass_g"),
            tf.TensorSpec([None], tf.string, name="sex"),
        ])  # fmt: skip
        def predict(self, island, culmen_length_mm, culmen_depth_mm, flipper_length_mm,
                    body_mass_g, sex):  # fmt: skip
            score = culmen_length_mm / 50 + flipper_length_mm / 200 - culmen_depth_mm / 20
            return {"probabilities": tf.stack([tf.sigmoid(score), 1 - tf.sigmoid(score)], 1)}

    module = Penguins()
    prefix = "gs://cloud-samples-data/vertex-ai/google-cloud-aiplatform-ci-artifacts/models"
    with tempfile.TemporaryDirectory() as folder:
        tf.saved_model.save(module, folder, signatures={"predict": module.predict})
        for root, _, files in os.walk(folder):
            for name in files:
                path = os.path.join(root, name)
                with open(path, "rb") as f:
                    relative = os.path.relpath(path, folder)
                    upload(f"{prefix}/penguins/estimator/{relative}", f.read())


STAND_INS = {
    "bank_marketing": bank_marketing,
    "census": census,
    "iris": iris,
    "mnist_csv": mnist_csv,
    "news_aggregator": news_aggregator,
    "penguins_estimator": penguins_estimator,
    "iris_xgboost_model": iris_xgboost_model,
    "shakespeare": shakespeare,
}


def main() -> None:
    for name in sys.argv[1:]:
        STAND_INS[name]()


if __name__ == "__main__":
    main()
