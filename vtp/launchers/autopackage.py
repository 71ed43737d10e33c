"""What the `autopackage` component does inside its container, as a plain function.

The source directory is read through the Cloud Storage mapping (`storage.local_path`: the FUSE
mount `/gcs/...` on Vertex AI, `$VTP_GCS_ROOT` locally), packaged exactly as `vtp custom-jobs
create` packages `local-package-path` (`autopackage.build`), and staged. The pools are gcloud
`--worker-pool-spec` values that give machines only, as later pools do on the command line:
each runs the package, so the returned job spec goes straight into `custom_job`'s `job_spec`.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vtp.storage import local_path, split_gcs_uri
from vtp.vertex import autopackage, poolspec
from vtp.vertex.staging import stage

MACHINE_KEYS = ("machine-type", "replica-count", "accelerator-type", "accelerator-count")
"""The `--worker-pool-spec` keys the component's pools may set: the rest are its own inputs."""


@dataclass(frozen=True)
class Packaged:
    """The component's outputs."""

    package_uris: list[str]
    python_package_spec: dict[str, Any]
    job_spec: dict[str, Any]


def package_source(
    source_uri: str,
    staging_uri: str,
    executor_image_uri: str,
    worker_pool_specs: Sequence[str],
    **local_code: Any,
) -> Packaged:
    """Package `source_uri`, stage it under `staging_uri`, and give every pool the package.

    `local_code` holds gcloud's other local-code keys, in Python spelling: `python_module` or
    `script`, and optionally `requirements`, `extra_packages`, `extra_dirs`.
    """
    if not executor_image_uri:
        raise ValueError("executor_image_uri: required (the prebuilt image that runs the code)")
    split_gcs_uri(staging_uri)  # ValueError unless gs://bucket/...
    keys = {
        "executor-image-uri": executor_image_uri,
        "local-package-path": str(local_path(source_uri)),
        **{name.replace("_", "-"): value for name, value in local_code.items() if value},
    }
    pools = _pools(worker_pool_specs, keys)
    local = autopackage.LocalCode.from_pool_flags(pools[0])
    archives = autopackage.build(local)
    package = autopackage.Package.staged_at(archives, staging_uri, executor_image_uri)
    stage(package.files)
    spec = package.python_package_spec()
    rest = [poolspec.to_rest(pool, [], spec) for pool in pools]
    return Packaged(package.package_uris, spec, {"workerPoolSpecs": rest})


def _pools(specs: Sequence[str], local: dict[str, Any]) -> list[poolspec.PoolFlags]:
    """The parsed pools, pool 0 naming the local code as it would on gcloud's command line."""
    if not specs or not specs[0]:
        raise ValueError(
            'worker_pool_specs: give pool 0 at least, e.g. "machine-type=n1-standard-4"'
        )
    pools = [poolspec.parse_worker_pool_spec(value, i) for i, value in enumerate(specs)]
    clash = [key for key in pools[0] if key not in MACHINE_KEYS]
    if clash:
        raise ValueError(
            f"worker_pool_specs: pool 0 sets {', '.join(clash)}; give machines only "
            "(the code and the image are inputs of their own)"
        )
    pools[0] = {**pools[0], **local}
    poolspec.check_software(pools, [])
    return pools
