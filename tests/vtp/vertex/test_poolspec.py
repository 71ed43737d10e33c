"""gcloud's --worker-pool-spec syntax -> pool dicts -> REST WorkerPoolSpec dicts."""

import pytest

from vtp.vertex import poolspec
from vtp.vertex.protodict import SpecError


@pytest.mark.parametrize(
    ("value", "delim", "expected"),
    [
        ("a,b,c", ",", ["a", "b", "c"]),
        ("a,b,", ",", ["a", "b"]),  # gcloud drops one trailing delimiter
        ("", ",", []),
        ("^:^a,b:c", ",", ["a,b", "c"]),  # gcloud's alternate-delimiter escape
        ("torch==2.1;numpy", ";", ["torch==2.1", "numpy"]),
    ],
)
def test_split_list_follows_gcloud(value: str, delim: str, expected: list[str]) -> None:
    assert poolspec.split_list(value, delim) == expected


def test_every_gcloud_key_parses_to_its_type() -> None:
    value = (
        "machine-type=n1-standard-4,replica-count=3,accelerator-type=NVIDIA_TESLA_T4,"
        "accelerator-count=2,executor-image-uri=img,python-module=trainer.task,script=run.sh,"
        "local-package-path=.,requirements=torch;numpy,extra-packages=a.whl;b.tar.gz,"
        "extra-dirs=data;conf,output-image-uri=gcr.io/p/i,container-image-uri=c"
    )
    parsed = poolspec.parse_worker_pool_spec(value, 0)
    assert set(parsed) == set(poolspec.KEYS)
    assert parsed["replica-count"] == 3 and parsed["accelerator-count"] == 2
    assert parsed["requirements"] == ["torch", "numpy"]
    assert parsed["extra-dirs"] == ["data", "conf"]


def test_empty_value_is_a_skipped_pool() -> None:
    assert poolspec.parse_worker_pool_spec("", 2) == {}
    assert poolspec.to_rest({}, []) == {}


def test_values_with_commas_use_the_alternate_delimiter() -> None:
    parsed = poolspec.parse_worker_pool_spec(
        "^|^machine-type=n1-standard-4|container-image-uri=a,b", 0
    )
    assert parsed == {"machine-type": "n1-standard-4", "container-image-uri": "a,b"}


def test_container_pool_to_rest_fills_gcloud_defaults() -> None:
    flags = {
        "machine-type": "n1-standard-8",
        "accelerator-type": "NVIDIA_TESLA_T4",
        "container-image-uri": "img",
    }
    assert poolspec.to_rest(flags, []) == {
        "machineSpec": {
            "machineType": "n1-standard-8",
            "acceleratorType": "NVIDIA_TESLA_T4",
            "acceleratorCount": 1,
        },
        "replicaCount": 1,
        "containerSpec": {"imageUri": "img"},
    }


def test_python_pool_to_rest_takes_the_common_package_uris() -> None:
    flags = {
        "machine-type": "n1-standard-4",
        "replica-count": 2,
        "executor-image-uri": "exe",
        "python-module": "trainer.task",
    }
    assert poolspec.to_rest(flags, ["gs://b/t.tar.gz"]) == {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": 2,
        "pythonPackageSpec": {
            "executorImageUri": "exe",
            "packageUris": ["gs://b/t.tar.gz"],
            "pythonModule": "trainer.task",
        },
    }


def test_errors_name_the_flag_the_pool_and_the_key() -> None:
    with pytest.raises(SpecError) as caught:
        poolspec.parse_worker_pool_spec("machine-typ=n1-standard-4", 1)
    assert caught.value.path == "--worker-pool-spec #2 (pool 1) key machine-typ"
    assert "did you mean 'machine-type'" in str(caught.value)


def test_later_pools_may_be_skipped_but_not_the_first() -> None:
    good = {"machine-type": "n1-standard-4", "container-image-uri": "i"}
    poolspec.check_software([good, {}, good], [])
    with pytest.raises(SpecError, match="primary pool cannot be empty"):
        poolspec.check_software([{}, good], [])
