"""Issue #49: a stored model whose files are links out of storage is never served from outside.

The attack: whoever can write the storage root (a job's replica, a task, another tool) leaves
`gs://models/m/model.pt` as a symbolic link to a file outside it (`/etc/...`, another user's
weights), the user uploads the model and deploys it, and the model server reads the link's
target. The storage API refuses that link; now serving does too, by the same rule (a regular
file whose real path is inside the storage root; a link that stays inside is followed):

- the deploy request looks first and fails with FAILED_PRECONDITION naming the file
  (`vtp/local/endpoints/model_files.py`), for `vtp.trainer.serve` and the prebuilt stand-in;
- the server itself loads from a checked private copy (`vtp/trainer/serve_files.py`), so a link
  swapped in after the deploy looked stops it, and the deploy operation fails naming the file.

Against a real `vtp local serve` (which allows pickle files, for the scikit-learn stand-in), a
real short digits run, and plain HTTP with the service's token.
"""

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures import FAST_FLAGS, LocalService, exported_digits, serving_processes
from tests.vtp.local.conftest import DIGITS_INSTANCE, ServiceApi
from vtp.local.endpoints import serving
from vtp.trainer import serve
from vtp.trainer.serve_files import UnsafeModelFile, open_checked, private_copy

pytestmark = pytest.mark.slow

SKLEARN_IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-0:latest"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    """`vtp local serve` whose operator allows pickle-based model files (scikit-learn's)."""
    started = LocalService(
        tmp_path_factory.mktemp("service"), *FAST_FLAGS, env={"VTP_SERVING_ALLOW_PICKLE": "1"}
    ).start()
    yield started
    started.stop()


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder outside the storage root holding an exported digits model (a short run): the
    files a planted link points at."""
    folder = tmp_path_factory.mktemp("outside") / "digits"
    return exported_digits(tmp_path_factory.mktemp("run"), folder)


def stored_copy(outside: Path, folder: Path) -> Path:
    """The exported model's files, copied into `folder` (a model folder in storage)."""
    folder.mkdir(parents=True)
    for name in ("export.json", "config.json", "model.pt"):
        shutil.copyfile(outside / name, folder / name)
    return folder


def plant_link(path: Path, target: Path) -> None:
    """Make `path` a symbolic link to `target` at once (a rename over whatever is there), as a
    replica sharing the storage root would."""
    planted = path.with_name(f".{path.name}.planted")
    planted.symlink_to(target)
    os.replace(planted, path)


def sklearn_model(folder: Path) -> Path:
    """A fitted scikit-learn estimator saved as `folder`/model.joblib."""
    import joblib
    from sklearn.linear_model import LinearRegression

    folder.mkdir(parents=True, exist_ok=True)
    estimator = LinearRegression().fit([[0.0], [1.0], [2.0]], [0.0, 2.0, 4.0])
    joblib.dump(estimator, folder / "model.joblib")
    return folder / "model.joblib"


def test_a_model_pt_linked_out_of_storage_is_refused_at_deploy(service, outside) -> None:
    api = ServiceApi(service)
    folder = stored_copy(outside, service.gcs_root / "models" / "linked")
    plant_link(folder / "model.pt", outside / "model.pt")
    assert api.object_status("models", "linked/model.pt") == 400  # the storage API refuses it

    endpoint = api.endpoint()
    answer = api.deploy(endpoint, api.upload("gs://models/linked"))

    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["status"] == "FAILED_PRECONDITION"
    assert "gs://models/linked/model.pt" in error["message"]
    assert "leads out of the storage root" in error["message"]
    assert serving_processes(endpoint.rsplit("/", 1)[1]) == []
    assert api.deployed_models(endpoint) == []


def test_a_link_swapped_in_after_the_deploy_looked_stops_the_server(service, outside) -> None:
    """The deploy checks the files, answers, and starts the server; the link is planted in that
    moment. The server's own check (its private copy) refuses it, and the operation says so."""
    api = ServiceApi(service)
    folder = stored_copy(outside, service.gcs_root / "models" / "swapped")
    endpoint = api.endpoint()
    answer = api.deploy(endpoint, api.upload("gs://models/swapped"))
    assert answer.status_code == 200, answer.text
    plant_link(folder / "model.pt", outside / "model.pt")  # before the server (torch) starts

    operation = api.finish(answer.json())

    message = operation["error"]["message"]
    assert "the serving process exited with status 1" in message
    assert "gs://models/swapped/model.pt" in message
    assert "leads out of the storage root" in message
    assert api.deployed_models(endpoint) == []


def test_a_link_that_stays_in_storage_is_served_as_the_storage_api_serves_it(
    service, outside
) -> None:
    api = ServiceApi(service)
    stored_copy(outside, service.gcs_root / "models" / "v1")
    folder = stored_copy(outside, service.gcs_root / "models" / "v2")
    plant_link(folder / "model.pt", Path("..") / "v1" / "model.pt")
    assert api.object_status("models", "v2/model.pt") == 200

    endpoint = api.endpoint()
    operation = api.finish(api.deploy(endpoint, api.upload("gs://models/v2")).json())

    assert "error" not in operation, operation
    url = f"{service.url}/v1/{endpoint}:predict"
    answer = api.session.post(url, json={"instances": [DIGITS_INSTANCE]}, timeout=60)
    assert answer.status_code == 200, answer.text
    assert len(answer.json()["predictions"][0]["probabilities"]) == 10


def test_a_prebuilt_model_file_linked_out_of_storage_is_refused(service, tmp_path) -> None:
    api = ServiceApi(service)
    target = sklearn_model(tmp_path / "elsewhere")
    folder = service.gcs_root / "models" / "sk-linked"
    folder.mkdir(parents=True)
    plant_link(folder / "model.joblib", target)

    answer = api.deploy(api.endpoint(), api.upload("gs://models/sk-linked", SKLEARN_IMAGE))

    assert answer.status_code == 400, answer.text
    message = answer.json()["error"]["message"]
    assert "gs://models/sk-linked/model.joblib" in message
    assert "leads out of the storage root" in message


def test_a_prebuilt_model_file_swapped_for_a_link_stops_its_server(service, tmp_path) -> None:
    api = ServiceApi(service)
    target = sklearn_model(tmp_path / "elsewhere")
    folder = service.gcs_root / "models" / "sk-swapped"
    stored = sklearn_model(folder)
    endpoint = api.endpoint()
    answer = api.deploy(endpoint, api.upload("gs://models/sk-swapped", SKLEARN_IMAGE))
    assert answer.status_code == 200, answer.text
    plant_link(stored, target)

    operation = api.finish(answer.json())

    message = operation["error"]["message"]
    assert "gs://models/sk-swapped/model.joblib" in message
    assert "leads out of the storage root" in message
    assert api.deployed_models(endpoint) == []


# -- the servers' reader -------------------------------------------------------------------


def test_the_copy_is_what_was_checked_whatever_is_swapped_in_later(tmp_path) -> None:
    root, secret = tmp_path / "root", tmp_path / "secret"
    secret.write_bytes(b"not the model's")
    model = root / "b" / "m"
    model.mkdir(parents=True)
    (model / "model.pt").write_bytes(b"the model's")
    with private_copy(model, ("model.pt",), root, "gs://b/m") as copy:
        plant_link(model / "model.pt", secret)  # after the copy: the loader reads the copy
        assert (copy / "model.pt").read_bytes() == b"the model's"
        assert copy.stat().st_mode & 0o777 == 0o700
    assert not copy.exists()
    with (
        pytest.raises(UnsafeModelFile, match=r"gs://b/m/model\.pt .* leads out of the storage"),
        private_copy(model, ("model.pt",), root, "gs://b/m"),
    ):
        pass


def test_the_reader_refuses_a_fifo_without_waiting_and_names_a_missing_file(tmp_path) -> None:
    os.mkfifo(tmp_path / "model.pt")
    with pytest.raises(UnsafeModelFile, match="is not a regular file"):
        open_checked(tmp_path, tmp_path / "model.pt", "gs://b/m/model.pt")
    with pytest.raises(UnsafeModelFile, match=r"gs://b/m/export\.json does not exist"):
        open_checked(tmp_path, tmp_path / "export.json", "gs://b/m/export.json")


def test_the_deploy_checks_every_file_the_server_loads() -> None:
    assert serving.SERVED_FILES == serve.SERVED_FILES
