"""`vtp doctor`: is a project ready for a first submission? Each gap with the command that fixes it.

    vtp doctor --project my-project --region us-central1 \
        --bucket gs://my-project-vtp --repository us-central1-docker.pkg.dev/my-project/ml

First what needs no network: an image built (without one, submit and schedule refuse the
placeholder), `compiled/` current (`vtp compile --check`), and something to build the image
with (a Docker or Podman engine here, or gcloud for Cloud Build). Then, in order: Application
Default Credentials; the APIs the pipelines use; the staging bucket; the Artifact Registry
repository; that the image (the last built, or --image) is in the registry; the permissions the
caller holds on the project. Every call is a plain REST GET (or testIamPermissions) with the
caller's credentials. Each check is one line; offline, the local ones are still printed, then
one line says that the project cannot be checked, and it exits 1.
"""

import argparse
import shutil
import subprocess
from typing import Any

from vtp.cli import failures, target

APIS = (
    "aiplatform.googleapis.com",
    "artifactregistry.googleapis.com",
    "cloudbuild.googleapis.com",
    "cloudscheduler.googleapis.com",
    "storage.googleapis.com",
)
PERMISSIONS = (
    "aiplatform.customJobs.create",
    "aiplatform.pipelineJobs.create",
    "aiplatform.schedules.create",
    "iam.serviceAccounts.actAs",
    "storage.objects.create",
)
Check = tuple[str, bool, str]
"""(what was checked, whether it holds, the command that fixes it)."""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `doctor`."""
    parser = subparsers.add_parser(
        "doctor",
        help="check a Google Cloud project before the first submission",
        allow_abbrev=False,
    )
    parser.add_argument("--project", help="Google Cloud project (default $CLOUDSDK_CORE_PROJECT)")
    parser.add_argument("--region", help=f"Vertex AI region (default ${target.REGION_ENV})")
    parser.add_argument("--bucket", default="", help="the staging bucket, gs://BUCKET")
    parser.add_argument("--repository", default="", help="REGION-docker.pkg.dev/PROJECT/REPO")
    parser.add_argument("--image", default="", help="image to look for (default: last built)")
    parser.set_defaults(func=_doctor, local=False)


def _doctor(args: argparse.Namespace) -> int:
    project, region = target.project(args), target.region(args)
    local = [_built(args.image, args.repository), _compiled(), _builder()]
    _report(local)
    checks = _cloud(args, project, region)
    _report(checks)
    return 0 if all(ok for _, ok, _ in local + checks) else 1


def _report(checks: list[Check]) -> None:
    """One line a check: what holds, or what is missing and the command that fixes it."""
    for what, ok, fix in checks:
        print(f"ok      {what}" if ok else f"MISSING {what}; fix: {fix}", flush=True)


def _built(flag: str, repository: str) -> Check:
    """An image to run: --image, else the last build; the placeholder is not one."""
    from vtp.vertex.image_build import last_built

    image = flag or last_built()
    fix = f"vtp image build --repository {repository or 'REGION-docker.pkg.dev/PROJECT/REPO'}"
    if image:
        return (f"image {image}" + ("" if flag else " (the last `vtp image build`)"), True, fix)
    return ("image: none built, so submit and schedule would refuse the placeholder", False, fix)


def _compiled() -> Check:
    """`compiled/` as `vtp compile --check` sees it (each file against its own image)."""
    from vtp.pipelines.compile import compile_all, compiled_dir

    try:
        stale = [o.path.name for o in compile_all(check=True) if o.changed]
    except Exception as exc:  # one line whatever kfp raises; doctor is for finding problems
        return (f"compiled/ cannot be checked: {type(exc).__name__}: {exc}", False, "vtp compile")
    where = compiled_dir()
    if stale:
        return (f"{where} out of date: {', '.join(stale)}", False, "vtp compile")
    return (f"{where} current", True, "vtp compile")


def _builder() -> Check:
    """What `vtp image build` can build with: an engine that answers, else Cloud Build."""
    for engine in ("docker", "podman"):
        if shutil.which(engine) and _answers(engine):
            return (f"container engine {engine}", True, "")
    if shutil.which("gcloud"):
        return ("Cloud Build (gcloud on PATH; no container engine answers here)", True, "")
    fix = "install Docker (https://docs.docker.com/engine/install/) or the gcloud CLI"
    return ("no container engine (docker, podman) and no gcloud for Cloud Build", False, fix)


def _answers(engine: str) -> bool:
    try:
        probe = subprocess.run([engine, "info"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def _cloud(args: argparse.Namespace, project: str, region: str) -> list[Check]:
    """The checks that ask Google Cloud; Failed (one line) when it cannot be asked."""
    import google.auth
    from google.auth.transport.requests import AuthorizedSession, Request

    credentials, _ = failures.call(
        lambda: google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"]),
        "Google Cloud",
    )
    try:
        credentials.refresh(Request())
    except Exception as exc:
        reason = failures.describe(exc) or f"{type(exc).__name__}: {exc}"
        raise failures.Failed(f"cannot check project {project} from here: {reason}") from None
    session = AuthorizedSession(credentials)
    checks = [*_apis(session, project), *_storage(session, args.bucket, project, region)]
    checks += _registry(session, args.repository, args.image, project, region)
    return checks + _permissions(session, project)


def _get(session: Any, url: str) -> Any:
    return failures.call(lambda: session.get(url, timeout=30), "Google Cloud")


def _apis(session: Any, project: str) -> list[Check]:
    base = f"https://serviceusage.googleapis.com/v1/projects/{project}/services"
    found = []
    for api in APIS:
        state = _get(session, f"{base}/{api}").json().get("state")
        found.append((f"API {api}", state == "ENABLED", f"gcloud services enable {api}"))
    return found


def _storage(session: Any, bucket: str, project: str, region: str) -> list[Check]:
    if not bucket:
        return []
    name = bucket.removeprefix("gs://").rstrip("/")
    ok = _get(session, f"https://storage.googleapis.com/storage/v1/b/{name}").ok
    fix = f"gcloud storage buckets create gs://{name} --project={project} --location={region}"
    return [(f"bucket gs://{name}", ok, fix)]


def _registry(session: Any, repository: str, image: str, project: str, region: str) -> list[Check]:
    from vtp.vertex.image_build import last_built

    found: list[Check] = []
    if repository:
        host, repo_project, repo = repository.rstrip("/").split("/")[:3]
        location = host.removesuffix("-docker.pkg.dev")
        url = (
            f"https://artifactregistry.googleapis.com/v1/projects/{repo_project}/locations/"
            f"{location}/repositories/{repo}"
        )
        fix = (
            f"gcloud artifacts repositories create {repo} --repository-format=docker "
            f"--location={location} --project={repo_project}"
        )
        found.append((f"repository {repository}", _get(session, url).ok, fix))
    image = image or last_built() or ""
    if image and ".pkg.dev/" in image:
        host, path = image.split("/", 1)
        name, _, tag = path.rpartition(":")
        ok = _get(session, f"https://{host}/v2/{name}/manifests/{tag}").ok
        fix = f"vtp image build --repository {image.rsplit('/', 1)[0]}"
        found.append((f"image {image}", ok, fix))
    return found


def _permissions(session: Any, project: str) -> list[Check]:
    url = f"https://cloudresourcemanager.googleapis.com/v1/projects/{project}:testIamPermissions"

    def ask() -> Any:
        return session.post(url, json={"permissions": list(PERMISSIONS)}, timeout=30)

    held = set(failures.call(ask, "Google Cloud").json().get("permissions", []))
    fix = (
        "grant the roles in the README's 'Going to Vertex' (gcloud projects add-iam-policy-binding)"
    )
    return [(f"permission {p}", p in held, fix) for p in PERMISSIONS]
