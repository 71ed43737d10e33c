"""Packages of the distribution, for setuptools (the rest of the metadata is in pyproject.toml).

One top-level package, `vtp`: a team's own folders (`trainer/`, `components/`, `pipelines/`,
`task.py`, ...) never meet a name of ours. The repository keeps `trainer/`, `components/` and
`pipelines/` at its top, where readers look for them, and maps them into the namespace with the
links `vtp/trainer`, `vtp/components` and `vtp/pipelines` (setuptools follows them: the wheel
holds the files). The compiled pipelines stay in `compiled/` at the top of the repository, where
`vtp compile` writes them and reviewers read them, and ship inside the wheel as
`vtp/pipelines/compiled/` (package data), so a regular install finds them without a checkout.
"""

from setuptools import find_packages, setup

setup(
    packages=[
        *find_packages(include=["vtp", "vtp.*"]),
        "vtp.pipelines.compiled",
        "vtp.pipelines.compiled.components",
    ],
    package_dir={"vtp.pipelines.compiled": "compiled"},
    package_data={
        "vtp.pipelines.compiled": ["*.yaml", "components/*.yaml"],
        # The start-up hook is a folder put on PYTHONPATH, not a package (vtp/vertex/local_auth.py).
        "vtp.vertex": ["startup/*.py"],
        "vtp.trainer.tasks": ["*.json"],
        "vtp.local.console": ["static/*", "static/vendor/*"],
    },
)
