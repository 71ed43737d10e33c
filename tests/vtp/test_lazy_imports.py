"""`vtp.lazy_imports`: a package's declared lazy imports (PEP 810) on this Python.

Each case runs in a fresh interpreter: whether a module is imported is the point, and this
process may have imported the packages already.
"""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

EXPORTS = """
import json, sys
{prelude}
from google.cloud import aiplatform_v1
names = {{n: f"{{getattr(aiplatform_v1, n).__module__}}.{{getattr(aiplatform_v1, n).__name__}}"
         for n in aiplatform_v1.__all__ if hasattr(getattr(aiplatform_v1, n), "__name__")}}
print(json.dumps({{"names": names, "all": list(aiplatform_v1.__all__),
                  "version": aiplatform_v1.__version__}}))
"""


def python(code: str, cwd: Path | None = None) -> str:
    """What `code` prints in a fresh interpreter (which must exit 0)."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_aiplatform_imports_only_what_is_used() -> None:
    out = python("""
        import sys
        from vtp import lazy_imports
        lazy_imports.install()
        from google.cloud import aiplatform_v1
        job = "google.cloud.aiplatform_v1.services.job_service"
        before = job in sys.modules, "google.cloud.aiplatform_v1.types" in sys.modules
        client = aiplatform_v1.JobServiceClient
        from google.cloud.aiplatform_v1.services.job_service import JobServiceClient
        print(before, client is JobServiceClient, job in sys.modules,
              "google.cloud.aiplatform_v1.services.dataset_service" in sys.modules,
              aiplatform_v1.CustomJob is aiplatform_v1.types.CustomJob)
    """)
    assert out.split() == ["(False,", "False)", "True", "True", "False", "True"]


def test_kfp_leaves_its_backend_client_until_it_is_used() -> None:
    out = python("""
        import sys
        from vtp import lazy_imports
        lazy_imports.install()
        import kfp
        from kfp import compiler, dsl
        before = "kfp.client" in sys.modules, "kubernetes" in sys.modules
        from kfp.client import Client
        print(before, kfp.Client is Client, kfp.dsl is dsl, "Client" in dir(kfp))
    """)
    assert out.split() == ["(False,", "False)", "True", "True", "True"]


def test_every_exported_name_is_the_object_an_eager_import_binds() -> None:
    eager = json.loads(python(EXPORTS.format(prelude="")))
    lazy = json.loads(
        python(EXPORTS.format(prelude="from vtp import lazy_imports; lazy_imports.install()"))
    )
    assert len(eager["all"]) > 1000
    assert lazy == eager


def test_a_package_is_lazy_only_as_it_declares(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "slow.py").write_text("print('slow imported')\nVALUE = 1\n")
    (package / "other.py").write_text("print('other imported')\nOTHER = 2\n")
    (package / "never.py").write_text("raise SystemExit('a branch not taken was imported')\n")
    (package / "__init__.py").write_text(
        textwrap.dedent("""
            __lazy_modules__ = {"pkg.slow", "pkg.never"}
            from .slow import VALUE as renamed
            from pkg.other import OTHER
            if OTHER == 3:
                from .never import NEVER
            print("init ran")
            __all__ = ("renamed", "OTHER")
        """)
    )
    out = python(
        """
        from vtp import lazy_imports
        lazy_imports.install({"pkg": frozenset()})
        import pkg
        print("imported")
        print(pkg.renamed, "renamed" in dir(pkg), "NEVER" in dir(pkg))
        try:
            pkg.missing
        except AttributeError as exc:
            print("AttributeError:", exc)
        """,
        cwd=tmp_path,
    )
    assert out.splitlines() == [
        "other imported",  # not declared lazy: imported as written
        "init ran",
        "imported",
        "slow imported",
        "1 True False",
        "AttributeError: module 'pkg' has no attribute 'missing'",
    ]


@pytest.mark.parametrize(
    "init",
    [
        'from .slow import VALUE\nprint("init ran")\n',  # declares nothing
        '__lazy_modules__ = {"pkg.slow"}\nfrom .slow import VALUE\nDOUBLE = VALUE * 2\n',  # uses it
    ],
)
def test_a_package_that_cannot_be_lazy_imports_as_written(tmp_path: Path, init: str) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "slow.py").write_text("print('slow imported')\nVALUE = 1\n")
    (package / "__init__.py").write_text(init)
    out = python(
        """
        from vtp import lazy_imports
        lazy_imports.install({"pkg": frozenset()})
        import pkg
        print("imported", pkg.VALUE)
        """,
        cwd=tmp_path,
    )
    assert out.splitlines()[0] == "slow imported"
    assert out.splitlines()[-1] == "imported 1"


def test_aiplatform_types_are_imported_module_by_module_and_an_operation_still_parses() -> None:
    """The job client takes the type modules it names; an Operation whose metadata is a type
    no module imported yet parses once the service's gRPC front has imported what it packs."""
    out = python("""
        import sys
        from vtp import lazy_imports
        lazy_imports.install()
        from google.cloud.aiplatform_v1.services.job_service import JobServiceClient
        from google.cloud.aiplatform_v1 import types
        loaded = sum(m.startswith("google.cloud.aiplatform_v1.types.") for m in sys.modules)
        deploy = "google.cloud.aiplatform_v1.types.endpoint_service" in sys.modules
        from google.longrunning import operations_pb2
        from google.protobuf import json_format
        text = ('{"name": "op", "metadata": {"@type": "type.googleapis.com/'
                'google.cloud.aiplatform.v1.DeployModelOperationMetadata", '
                '"genericMetadata": {"createTime": "2026-01-01T00:00:00Z"}}}')
        from vtp.local.grpc_server import _define_packed_types
        _define_packed_types(text)
        parsed = json_format.Parse(text, operations_pb2.Operation())
        print(loaded < len(types.__all__) // 4, deploy,
              parsed.metadata.type_url.endswith("DeployModelOperationMetadata"),
              types.DeployModelOperationMetadata.__module__)
    """)
    assert out.split() == [
        "True",
        "False",
        "True",
        "google.cloud.aiplatform_v1.types.endpoint_service",
    ]
