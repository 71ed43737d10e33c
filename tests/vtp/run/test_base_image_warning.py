"""kfp's FutureWarning about the default base image is never ours to show (issue #51).

kfp warns at every `@dsl.component` that names no `base_image`. Each of our components names
our image on purpose, so importing all of them (and the pipelines built from them) warns of
nothing; a user's components without one still get the warning, once a run
(`tests/vtp/run/test_user_pipelines.py`).
"""

import subprocess
import sys

WARNING = "The default base_image used by the @dsl.component decorator"
"""The start of kfp's warning (`-W` matches a message by its start)."""

IMPORT_ALL = """
import importlib, pkgutil
import vtp.components, vtp.pipelines

for package in (vtp.components, vtp.pipelines):
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")
        print(f"imported {package.__name__}.{module.name}")
"""


def test_our_components_and_pipelines_warn_of_no_default_base_image() -> None:
    result = subprocess.run(
        [sys.executable, "-W", f"error:{WARNING}:FutureWarning", "-c", IMPORT_ALL],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    for module in ("components.custom_job", "components.hyperparameter_tuning", "pipelines.tune"):
        assert f"imported vtp.{module}\n" in result.stdout, result.stdout
