"""TensorFlow's `tf.io.gfile` on `gs://` paths reaches the local service's storage (issue #51):
a user's program, in a folder of its own outside the repository, run unchanged under
`vtp local exec` on an interpreter with real TensorFlow (the cached layer the TF prediction
image's stand-in uses), writes and reads objects that google-cloud-storage sees at once, and
the other way round; TensorFlow's errors name the `gs://` path."""

import json
import os
import textwrap
from pathlib import Path

import pytest

from tests.vtp.local.conftest import client_exec, run_client
from vtp.local.runtime import pip_cache, tensorflow_layer

pytestmark = pytest.mark.slow

PROGRAM = """
import json
import tensorflow as tf
from google.cloud import storage

client = storage.Client(project="local")
bucket = client.create_bucket("tf-gfile")
seen = {}

with tf.io.gfile.GFile("gs://tf-gfile/a/b/written.txt", "w") as f:  # no folder to make first
    f.write("from tensorflow\\n")
seen["api_reads"] = bucket.blob("a/b/written.txt").download_as_text()

bucket.blob("data/rows.csv").upload_from_string("1,2\\n3,4\\n")
with tf.io.gfile.GFile("gs://tf-gfile/data/rows.csv") as f:
    seen["gfile_reads"] = f.readlines()
seen["exists"] = [tf.io.gfile.exists("gs://tf-gfile/data/rows.csv"),
                  tf.io.gfile.exists("gs://tf-gfile/data/none.csv")]
seen["isdir"] = tf.io.gfile.isdir("gs://tf-gfile/a")
seen["glob"] = sorted(tf.io.gfile.glob("gs://tf-gfile/*/*.csv"))
seen["size"] = tf.io.gfile.stat("gs://tf-gfile/data/rows.csv").length

tf.io.gfile.makedirs("gs://tf-gfile/made/deeper")
tf.io.gfile.copy("gs://tf-gfile/data/rows.csv", "gs://tf-gfile/copies/rows.csv")
tf.io.gfile.rename("gs://tf-gfile/copies/rows.csv", "gs://tf-gfile/moved/rows.csv")
seen["walk"] = sorted((top, sorted(files)) for top, _, files in tf.io.gfile.walk("gs://tf-gfile"))
tf.io.gfile.remove("gs://tf-gfile/a/b/written.txt")
seen["listed"] = sorted(b.name for b in client.list_blobs("tf-gfile"))
seen["top"] = sorted(tf.io.gfile.listdir("gs://tf-gfile"))

errors = {}
for name, call in {
    "missing": lambda: tf.io.gfile.GFile("gs://tf-gfile/none.txt").read(),
    "no_bucket": lambda: tf.io.gfile.GFile("gs://never-made/x.txt", "w").write("x"),
    "dot_dot": lambda: tf.io.gfile.GFile("gs://tf-gfile/../outside.txt").read(),
}.items():
    try:
        call()
    except tf.errors.OpError as exc:
        errors[name] = [type(exc).__name__, exc.message]
seen["errors"] = errors
print("SEEN", json.dumps(seen))
"""


@pytest.fixture(scope="module")
def tensorflow_python() -> Path:
    """An interpreter with real TensorFlow: the cached layer (built once per user)."""
    return tensorflow_layer.tensorflow_python(
        pip_cache.user_cache_path(os.environ, "tensorflow"), os.environ
    )


def test_tf_io_gfile_reads_and_writes_the_services_objects(
    local_service, tensorflow_python, tmp_path
) -> None:
    (tmp_path / "train.py").write_text(textwrap.dedent(PROGRAM))
    result = run_client(
        client_exec(local_service.url, str(tensorflow_python), "train.py"), dict(os.environ),
        tmp_path,
    )  # fmt: skip
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("SEEN ")]
    seen = json.loads(line.removeprefix("SEEN "))
    assert seen["api_reads"] == "from tensorflow\n"
    assert seen["gfile_reads"] == ["1,2\n", "3,4\n"]
    assert seen["exists"] == [True, False] and seen["isdir"] is True
    assert seen["glob"] == ["gs://tf-gfile/data/rows.csv"]
    assert seen["size"] == 8
    assert ["gs://tf-gfile/moved", ["rows.csv"]] in seen["walk"]
    # Removing or renaming a folder's last object leaves no folder behind (there is none on
    # Cloud Storage); `makedirs` made one, as gfile does there with a placeholder.
    assert seen["listed"] == ["data/rows.csv", "moved/rows.csv"]
    assert seen["top"] == ["data", "made", "moved"]
    stored = local_service.gcs_root / "tf-gfile"
    assert (stored / "moved" / "rows.csv").read_text() == "1,2\n3,4\n"

    errors = seen["errors"]
    missing = "gs://tf-gfile/none.txt; No such file or directory"
    assert errors["missing"] == ["NotFoundError", missing]
    assert errors["no_bucket"][0] == "NotFoundError"
    assert errors["no_bucket"][1].startswith("gs://never-made/x.txt")
    assert errors["dot_dot"] == [
        "InvalidArgumentError",
        "gs://tf-gfile/../outside.txt: a Cloud Storage path has no empty, '.' or '..' segment",
    ]
    assert not (local_service.gcs_root / "never-made").exists()
    assert str(local_service.gcs_root) not in result.stdout  # errors name gs:// paths only


def test_a_link_out_of_the_root_is_refused(local_service, tensorflow_python, tmp_path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("not an object\n")
    bucket = local_service.gcs_root / "tf-links"
    bucket.mkdir(parents=True)
    (bucket / "out").symlink_to(outside)
    program = (
        "import tensorflow as tf\n"
        "try:\n"
        "    tf.io.gfile.GFile('gs://tf-links/out/secret.txt').read()\n"
        "except tf.errors.PermissionDeniedError as exc:\n"
        "    print('REFUSED', exc.message)\n"
    )
    (tmp_path / "read.py").write_text(program)
    result = run_client(
        client_exec(local_service.url, str(tensorflow_python), "read.py"), dict(os.environ),
        tmp_path,
    )  # fmt: skip
    assert (
        "REFUSED gs://tf-links/out/secret.txt: a link leads out of the local storage root"
        in result.stdout
    ), result.stdout + result.stderr
