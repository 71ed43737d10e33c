"""The Model Registry of the local service: models and their versions, uploaded, read, deleted.

As on Vertex: an upload without `parentModel` creates a model (ID chosen by the caller or
generated) whose version 1 carries the `default` alias; an upload with `parentModel` adds the
next version, and moves `default` to it when asked to. `get` reads `models/ID` (the default
version), `models/ID@3` (version 3) or `models/ID@alias`; `list` shows each model's default
version, `listVersions` every version. Uploads register metadata only (the artifacts stay where
`artifactUri` points), so they finish at once: the Operation returned is already done, and it
stays readable at its name.
"""

from collections.abc import Callable
from datetime import UTC, datetime

from google.cloud import aiplatform_v1
from google.cloud.aiplatform_v1 import Model

from vtp.local.base import errors
from vtp.local.base.names import find
from vtp.local.base.resources import matching_page, new_id, set_times
from vtp.local.base.routing import parse_message, update_fields
from vtp.local.base.services import DatabaseService
from vtp.local.models.store import SCHEMA, ModelStore
from vtp.local.models.upload import (
    artifact_problem,
    check_aliases,
    check_labels,
    check_upload,
    model_dict,
    parse_model_name,
    parse_upload,
    upload_operation,
)
from vtp.local.service import Service

DEFAULT_ALIAS = "default"
DEFAULT_PAGE_SIZE = 100
ORDER_FIELDS = ("display_name", "create_time", "update_time")
"""Fields `orderBy` accepts, as Vertex documents them for models."""
UPDATABLE = ("display_name", "description", "labels", "version_description", "version_aliases")
"""Fields `models.patch` changes, as Vertex lists them."""
Page = tuple[list[Model], str]
"""One page of a list, and the token of the next page ("" at the end)."""
Resources = aiplatform_v1.Model.DeploymentResourcesType
CONTAINER_MODEL_DEFAULTS = {
    "supported_deployment_resources_types": [
        Resources.DEDICATED_RESOURCES,
        Resources.SHARED_RESOURCES,
    ],
    "supported_input_storage_formats": [
        *("jsonl", "bigquery", "csv", "tf-record", "tf-record-gzip", "file-list"),
    ],
    "supported_output_storage_formats": ["jsonl", "bigquery"],
}
"""What Vertex fills in for a model served by a custom or prebuilt container."""


class ModelRegistry(DatabaseService[ModelStore]):
    """Models and versions, their artifacts under the service's storage root."""

    def __init__(self, root: Service) -> None:
        super().__init__(root.config.state_dir / "models.db", SCHEMA, ModelStore)
        self.root = root
        self.deployments: Callable[[str], list[tuple[str, str]]] = lambda _name: []
        """(endpoint, deployed model ID) of each deployment of a model or `model@version`;
        the endpoints package sets it when it is built, since endpoints deploy from here."""

    def upload(self, parent: str, body: bytes) -> dict:
        """Register a model, or a version of one, from an UploadModelRequest; return the LRO.

        The request is checked first (INVALID_ARGUMENT, nothing stored); the artifacts are
        looked at while the operation runs, so a missing directory fails the operation.
        """
        request = parse_upload(body)
        check_upload(request)
        with self._lock:
            if request.parent_model:
                version, demoted = self._next_version(parent, request)
            else:
                version, demoted = self._first_version(parent, request), []
            problem = artifact_problem(version.artifact_uri, self.root.config.storage_root)
            if not problem:
                for previous in demoted:
                    self.store.update(previous)
                self.store.insert(version)
        operation = upload_operation(version, problem)
        self.root.operations.put(operation)
        return operation

    def get(self, name: str) -> Model:
        """The version `name` means (`models/ID`, `models/ID@VERSION_ID` or `@ALIAS`)."""
        model_name, _, version = name.partition("@")
        versions = self._versions(model_name)
        wanted = version or DEFAULT_ALIAS
        for candidate in versions:
            if wanted in (candidate.version_id, *candidate.version_aliases):
                return self._with_deployments(candidate)
        raise errors.not_found(f"Model {name} not found.")

    def update(self, name: str, body: bytes, mask: str) -> Model:
        """Apply the fields `mask` names from `body`: display_name, description and labels
        belong to the model (every version), version_description and version_aliases to the
        version `name` means."""
        change = parse_message(Model, body)
        fields = update_fields(mask, UPDATABLE)
        if "labels" in fields:
            check_labels(dict(change.labels))
        with self._lock:
            version = self.get(name)
            versions = self._versions(version.name)
            if "version_aliases" in fields:
                self._set_aliases(versions, version, list(change.version_aliases))
            now = datetime.now(UTC)
            set_times(version, now, "version_update_time")
            for other in versions:
                target = version if other.version_id == version.version_id else other
                # The model's own fields are every version's; the version_* ones, one version's.
                for field in fields:
                    if field != "version_aliases" and (
                        target is version or not field.startswith("version_")
                    ):
                        setattr(target, field, getattr(change, field))
                set_times(target, now, "update_time")
                self.store.update(target)
        return self.get(f"{version.name}@{version.version_id}")

    def merge_version_aliases(self, name: str, aliases: list[str]) -> Model:
        """Add aliases (`a`) to and remove them (`-a`) from the version `name` means; an added
        alias moves from the version that had it. `default` cannot be removed."""
        add = [a for a in aliases if not a.startswith("-")]
        remove = [a[1:] for a in aliases if a.startswith("-")]
        check_aliases(add + remove)
        if DEFAULT_ALIAS in remove:
            raise errors.invalid_argument(
                "versionAliases: the default alias cannot be removed; add it to another version."
            )
        with self._lock:
            version = self.get(name)
            versions = self._versions(version.name)
            kept = [a for a in version.version_aliases if a not in remove]
            self._set_aliases(versions, version, [*kept, *(a for a in add if a not in kept)])
            set_times(version, datetime.now(UTC), "version_update_time")
            self.store.update(version)
        return self.get(f"{version.name}@{version.version_id}")

    def delete_version(self, name: str) -> dict:
        """Delete one version (`models/ID@VERSION`); not the default one, not a deployed one."""
        if "@" not in name:
            raise errors.invalid_argument(
                f"{name} names a model, not a version: use models/ID@VERSION to delete a version."
            )
        with self._lock:
            version = self.get(name)
            if DEFAULT_ALIAS in version.version_aliases:
                raise errors.failed_precondition(
                    f"Version {version.version_id} of {version.name} carries the default alias; "
                    "move the alias to another version, or delete the model."
                )
            self._refuse_if_deployed(f"{version.name}@{version.version_id}")
            self.store.delete_version(version.name, version.version_id)
        return self.root.operations.deleted(parse_model_name(version.name)[0])

    def list_models(
        self, parent: str, filter: str = "", order_by: str = "", size: int = 0, token: str = ""
    ) -> Page:
        """One page of the models under `parent` (each as its default version), and the token."""
        defaults = [self.get(name) for name in self.store.model_names(parent)]
        return _select(defaults, filter, order_by, size, token)

    def list_versions(
        self, name: str, filter: str = "", order_by: str = "", size: int = 0, token: str = ""
    ) -> Page:
        """One page of the versions of model `name`, oldest first unless `order_by` says."""
        return _select(self._versions(name), filter, order_by, size, token)

    def delete(self, name: str) -> dict:
        """Delete a model with all its versions; return the done Operation."""
        parent, model_id = parse_model_name(self._versions(name)[0].name)  # NOT_FOUND first
        self._refuse_if_deployed(name)
        self.store.delete(parent, model_id)
        return self.root.operations.deleted(parent)

    def _first_version(self, parent: str, request: aiplatform_v1.UploadModelRequest) -> Model:
        """Version 1 of a new model; it always carries the default alias."""
        model_id = request.model_id or new_id()
        if self.store.versions(parent, model_id):
            raise errors.already_exists(f"Model {parent}/models/{model_id} already exists.")
        asked = list(request.model.version_aliases)  # in the order given, as Vertex keeps them
        aliases = asked if DEFAULT_ALIAS in asked else [*asked, DEFAULT_ALIAS]
        now = datetime.now(UTC)
        return _version(request.model, f"{parent}/models/{model_id}", "1", aliases, now)

    def _next_version(
        self, parent: str, request: aiplatform_v1.UploadModelRequest
    ) -> tuple[Model, list[Model]]:
        """The next version of `parentModel`, and the earlier ones it takes an alias from."""
        model_name = request.parent_model.partition("@")[0]
        if parse_model_name(model_name)[0] != parent:
            raise errors.invalid_argument(
                f"parentModel {model_name} is not in {parent}: a version is uploaded where its "
                "model lives."
            )
        versions = self._versions(model_name)
        aliases = list(request.model.version_aliases)
        _check_aliases_free(versions, aliases)
        now = datetime.now(UTC)
        next_id = str(max(int(v.version_id) for v in versions) + 1)
        version = _version(request.model, model_name, next_id, aliases, now)
        version.create_time = versions[0].create_time
        demoted = [
            v for v in versions if DEFAULT_ALIAS in aliases and DEFAULT_ALIAS in v.version_aliases
        ]
        for previous in demoted:
            previous.version_aliases.remove(DEFAULT_ALIAS)
            set_times(previous, now, "update_time")
        return version, demoted

    def _refuse_if_deployed(self, name: str) -> None:
        deployed = self.deployments(name)
        if deployed:
            where = ", ".join(f"{endpoint} (deployed model {i})" for endpoint, i in deployed)
            raise errors.failed_precondition(
                f"Model {name} is deployed to {where}; undeploy it before deleting it."
            )

    def _with_deployments(self, version: Model) -> Model:
        refs = self.deployments(f"{version.name}@{version.version_id}")
        version.deployed_models = [
            aiplatform_v1.DeployedModelRef(endpoint=endpoint, deployed_model_id=i)
            for endpoint, i in refs
        ]
        return version

    def _set_aliases(self, versions: list[Model], version: Model, aliases: list[str]) -> None:
        """Give `version` exactly `aliases`, taking each from any other version that has it."""
        if DEFAULT_ALIAS in version.version_aliases and DEFAULT_ALIAS not in aliases:
            raise errors.invalid_argument(
                "versionAliases: the default alias cannot be removed; add it to another version."
            )
        for other in versions:
            if other.version_id == version.version_id:
                continue
            taken = [a for a in other.version_aliases if a in aliases]
            if taken:
                other.version_aliases = [a for a in other.version_aliases if a not in taken]
                self.store.update(other)
        version.version_aliases = aliases

    def _versions(self, name: str) -> list[Model]:
        """Every version of the model `name` (no `@`), oldest first; raise NOT_FOUND."""
        parent, _ = parse_model_name(name)

        def versions(model_id: str) -> list[Model] | None:
            return self.store.versions(parent, model_id) or None

        return find(name, "models", "Model", versions, lambda found: found[0].name)


def _version(model: Model, name: str, version_id: str, aliases: list[str], now: datetime) -> Model:
    """The stored resource of a new version: the request's model plus what Vertex sets."""
    version = Model(model)
    version.name, version.version_id = name, version_id
    version.version_aliases = aliases
    set_times(version, now, "create_time", "update_time")
    set_times(version, now, "version_create_time", "version_update_time")
    if "container_spec" in model:
        for field, value in CONTAINER_MODEL_DEFAULTS.items():
            setattr(version, field, value)
    return version


def _check_aliases_free(versions: list[Model], aliases: list[str]) -> None:
    for previous in versions:
        taken = set(previous.version_aliases) & set(aliases) - {DEFAULT_ALIAS}
        if taken:
            raise errors.invalid_argument(
                f"model.versionAliases: {sorted(taken)} already name version "
                f"{previous.version_id} of {previous.name}."
            )


def _select(models: list[Model], filter: str, order_by: str, size: int, token: str) -> Page:
    return matching_page(
        models, filter, size, token, DEFAULT_PAGE_SIZE,
        order_by=order_by, allowed=ORDER_FIELDS, as_dict=model_dict,
    )  # fmt: skip
