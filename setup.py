"""Packages of the distribution, for setuptools (the rest of the metadata is in pyproject.toml).

Four top-level packages: `components`, `pipelines`, `trainer` and `vtp`. The compiled pipelines
stay in `compiled/` at the top of the repository, where `vtp compile` writes them and reviewers
read them, and ship inside the wheel as `pipelines/compiled/` (package data), so a regular install
finds them without a checkout. pyproject.toml's `packages.find` cannot map a folder to a package
name; `package_dir` here does.
"""

from setuptools import find_packages, setup

TOP_LEVEL = ["components", "pipelines", "trainer", "vtp"]

setup(
    packages=[
        *find_packages(include=[f"{name}*" for name in TOP_LEVEL]),
        "pipelines.compiled",
        "pipelines.compiled.components",
    ],
    package_dir={"pipelines.compiled": "compiled"},
    package_data={
        "pipelines.compiled": ["*.yaml", "components/*.yaml"],
        # The start-up hook is a folder put on PYTHONPATH, not a package (vtp/vertex/local_auth.py).
        "vtp.vertex": ["startup/sitecustomize.py"],
        "trainer.tasks": ["*.json"],
        "vtp.local.console": ["static/*", "static/vendor/*"],
    },
)
