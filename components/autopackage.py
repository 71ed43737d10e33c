"""The `autopackage` component: training code in Cloud Storage -> a staged Python package.

gcloud's autopackaging (`local-package-path` + `python-module` or `script`) as a pipeline step,
without Docker: the directory becomes a reproducible source distribution at a content-addressed
URI, run by a prebuilt executor image as a `pythonPackageSpec`. Its `job_spec` output feeds
`custom_job`'s `job_spec`. The body lives in `vtp.launchers.autopackage`.
"""

# mypy: disable-error-code="valid-type"
# (kfp's own annotations, OutputPath(str) and NamedTuple("Outputs", [...]), are calls, not types)

from typing import NamedTuple

from kfp import dsl

from vtp.images import COMPONENT_IMAGE


@dsl.component(base_image=COMPONENT_IMAGE, install_kfp_package=False)
def autopackage(
    source_uri: str,
    staging_uri: str,
    executor_image_uri: str,
    python_module: str = "",
    script: str = "",
    requirements: list = [],
    extra_packages: list = [],
    extra_dirs: list = [],
    worker_pool_specs: list = ["machine-type=n1-standard-4"],
) -> NamedTuple(
    "Outputs", [("package_uris", list), ("python_package_spec", dict), ("job_spec", dict)]
):
    """Packages training code from Cloud Storage and stages it for a CustomJob, without Docker.

    Args:
        source_uri: Directory of the training code (gs://bucket/path), gcloud's
            local-package-path. Read through Cloud Storage FUSE.
        staging_uri: Cloud Storage prefix (gs://bucket/path) for the packages; each lands at
            <staging_uri>/vtp-packages/<sha256>/<file>, so unchanged code is staged once.
        executor_image_uri: Prebuilt image that installs and runs the package, e.g.
            us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-4.py310:latest.
        python_module: Module to run with `python -m`, e.g. "trainer" or "mytask.train".
            Give this or script.
        script: File to run instead, relative to source_uri (python for .py, else bash).
        requirements: Extra pip requirements (PEP 508), installed with the package.
            A requirements.txt at the top of source_uri is read too.
        extra_packages: Package archives (.whl, .tar.gz, .zip) inside source_uri to install.
        extra_dirs: Directories of source_uri to ship besides the entry point's own.
        worker_pool_specs: Machines for each pool in gcloud's --worker-pool-spec syntax,
            machine keys only (machine-type, replica-count, accelerator-type,
            accelerator-count); every pool runs the package.

    Returns:
        package_uris: The staged packages: the code's archive first, then extra_packages.
        python_package_spec: The pythonPackageSpec (REST field names) every pool runs.
        job_spec: A CustomJobSpec with the pools, for custom_job's job_spec input.
    """
    import logging
    from collections import namedtuple

    from vtp.launchers.autopackage import package_source

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    packaged = package_source(
        source_uri,
        staging_uri,
        executor_image_uri,
        worker_pool_specs,
        python_module=python_module,
        script=script,
        requirements=requirements,
        extra_packages=extra_packages,
        extra_dirs=extra_dirs,
    )
    logging.info("staged %s", ", ".join(packaged.package_uris))
    Outputs = namedtuple("Outputs", ["package_uris", "python_package_spec", "job_spec"])
    return Outputs(packaged.package_uris, packaged.python_package_spec, packaged.job_spec)
