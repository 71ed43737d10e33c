"""Fixtures every test directory may use: one local Vertex service per module, and gcloud on it."""

import os
import tempfile
from collections import Counter
from collections.abc import Iterator

import pytest

from tests import durations
from tests.fixtures import Gcloud, LocalService


def pytest_configure(config: pytest.Config) -> None:
    """Services started by the tests publish their runtime files in a directory of the run's
    own, not in the user's (where `vtp` clients would find them)."""
    os.environ.setdefault("VTP_RUNTIME_DIR", tempfile.mkdtemp(prefix="vtp-runtime-"))
    # Nor does an image the user built (`vtp image build`) become the tests' default image.
    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="vtp-state-")
    # Under `-n 2 --dist loadfile`, pytest-xdist hands out files in the order collected below
    # (its own default would put files with many quick tests first, and so the few long ones
    # last, where one of them can keep a process busy while the others have finished).
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
    config.pluginmanager.register(LongestFirst(), "vtp-longest-first")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests of a file that was quick last time (`tests/durations.py`) are marked `quick`, before
    `-m` selects: `pytest -m quick` is the edit loop's subset."""
    seconds = durations.load()
    count = Counter(_path(item) for item in items)
    for item in items:
        if durations.is_quick(_path(item), seconds, count[_path(item)]):
            item.add_marker(pytest.mark.quick)


class LongestFirst:
    """Orders the collection once every other plugin has selected from it."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """The longest files first (`tests/durations.py`), then the others, those with the most
        tests first: the long runs start early, and the short files fill in at the end."""
        seconds = durations.load()
        count = Counter(_path(item) for item in items)
        items.sort(key=lambda item: (-seconds.get(_path(item), 0.0), -count[_path(item)]))


def _path(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


@pytest.fixture(autouse=True)
def _umask_kept() -> Iterator[None]:
    """Each test ends with the umask it began with: a test that takes a state directory in
    process (`StateDir` narrows the umask to 0o077, as the service's own process should) would
    otherwise make every folder later tests of this worker create private."""
    before = os.umask(0o022)
    os.umask(before)
    yield
    os.umask(before)


@pytest.fixture(scope="module")
def local_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    """`vtp local serve` on a free port with a fresh state directory, for this test module."""
    service = LocalService(tmp_path_factory.mktemp("localvertex")).start()
    yield service
    service.stop()


@pytest.fixture(scope="module")
def gcloud(local_service: LocalService, tmp_path_factory: pytest.TempPathFactory) -> Gcloud:
    """The installed gcloud with `api_endpoint_overrides/aiplatform` set to `local_service`."""
    token_file = local_service.state_dir / "token"
    return Gcloud(tmp_path_factory.mktemp("gcloud"), local_service.url, token_file)


@pytest.fixture
def no_gcloud_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    """No project or region from the environment: each test says what it means."""
    for name in ("CLOUDSDK_CORE_PROJECT", "GOOGLE_CLOUD_PROJECT", "CLOUDSDK_AI_REGION"):
        monkeypatch.delenv(name, raising=False)
