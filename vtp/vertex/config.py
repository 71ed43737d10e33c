"""The `--config` YAML file, in both forms people write.

gcloud reads the file as bare `CustomJobSpec` fields (`workerPoolSpecs`, `scheduling`, ...).
Many teams (and the Vertex docs' REST samples) write a whole `CustomJob` instead, with
`displayName`, `jobSpec` and `labels`; gcloud nests that under `jobSpec` again and Vertex rejects
it. We accept both and tell them apart by their top-level keys. With `described` (`vtp
custom-jobs create --local`), a whole CustomJob as `describe` prints it is taken too: its
output-only fields are dropped (`vtp.vertex.describe`); a file without them is read as before.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from google.cloud import aiplatform_v1

from vtp.vertex import describe
from vtp.vertex.protodict import SpecError
from vtp.vertex.validation import (
    check_custom_job_fields,
    check_custom_job_spec_fields,
    relocated,
)

JOB_ONLY_FIELDS = frozenset({"displayName", "jobSpec", "labels", "encryptionSpec"})
"""Top-level keys that mark a file as a whole CustomJob rather than bare CustomJobSpec fields."""


@dataclass(frozen=True)
class ConfigFile:
    """A parsed `--config` file: the CustomJobSpec it holds and, in the full form, the rest."""

    where: str
    """How messages name the file: `--config PATH`."""
    spec: dict[str, Any]
    """CustomJobSpec fields, REST form."""
    full_form: bool = False
    """True when the file is a whole CustomJob (spec paths then start with `jobSpec.`)."""
    job_fields: dict[str, Any] = field(default_factory=dict)
    """displayName, labels and encryptionSpec from a full-form file."""

    def spec_path(self, field_path: str) -> str:
        """The path of a CustomJobSpec field as the file spells it."""
        return f"jobSpec.{field_path}" if self.full_form else field_path


def load_config(path: str, described: bool = False) -> ConfigFile:
    """Read and field-check a `--config` file; raise SpecError naming the file and field.
    `described`: a CustomJob's describe output is taken, its output-only fields dropped."""
    where = f"--config {path}"
    data = _read_yaml(Path(path), where)
    if not isinstance(data, Mapping) or not data:
        raise SpecError(
            where,
            "expected a mapping of CustomJobSpec fields (workerPoolSpecs, "
            "scheduling, ...) or a whole CustomJob (displayName, jobSpec, labels)",
        )
    data = dict(data)
    if described:
        data = describe.config_request(data, describe.CUSTOM_JOB, where)
    full_form = bool(JOB_ONLY_FIELDS.intersection(data))
    try:
        if full_form:
            return _full_form(data, where)
        check_custom_job_spec_fields(data, "")
    except SpecError as exc:
        raise relocated(exc, where) from None
    return ConfigFile(where, data)


def _full_form(data: dict[str, Any], where: str) -> ConfigFile:
    stray = sorted(set(data) & _spec_fields())
    if stray:
        raise SpecError(
            stray[0],
            "this file is a whole CustomJob (it has "
            f"{', '.join(sorted(JOB_ONLY_FIELDS & set(data)))}), so CustomJobSpec "
            f"fields belong under jobSpec; move {', '.join(stray)} there",
        )
    check_custom_job_fields(data, "")
    spec = dict(data.pop("jobSpec", None) or {})
    return ConfigFile(where, spec, full_form=True, job_fields=data)


def _read_yaml(path: Path, where: str) -> Any:
    try:
        text = path.read_text()
    except OSError as exc:
        raise SpecError(where, f"cannot read the file: {exc.strerror or exc}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise SpecError(where, f"not valid YAML{at}: {problem}") from None


def _spec_fields() -> set[str]:
    return {f.json_name for f in aiplatform_v1.CustomJobSpec.pb().DESCRIPTOR.fields}
