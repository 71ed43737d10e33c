"""A resource as Vertex, gcloud or the SDK describes it, made a create request again.

A description is what `gcloud ai custom-jobs describe --format=json|yaml` prints (and the
`hp-tuning-jobs` one), a GET of the REST resource, the SDK's `job.to_dict()` (camelCase) or
proto-plus's `CustomJob.to_dict(job)` (snake_case, every field at its default too, enums as
numbers). Each carries fields Vertex sets itself and refuses in a create request (`name`,
`state`, the times, `error`, a tuning job's `trials`): gcloud refuses such a file one field at a
time. `kind_of` tells which resource a description is: by the collection its `name` names
(`.../customJobs/123`), else by the fields only that resource has (`jobSpec`; `trialJobSpec`
and `studySpec`; `pipelineSpec`; `trainingTaskDefinition`). `request` gives it back as the
create request's REST body: camelCase, enum names, defaults left out as protobuf's JSON leaves
them out, without the output-only fields (`dropped`) and without fields this SDK does not know
(`unknown`: a newer Vertex's), both named so a caller can say so in one line (`summary`).

Which fields are output only is read from aiplatform_v1, not listed here: the
`google.api.field_behavior` options of a field where its descriptor carries them, else the
field's documentation, which the generator writes from them ("Output only. ..."; the
descriptors proto-plus builds carry no options). Nested messages count too (a TrainingPipeline's
`modelToUpload.createTime`).
"""

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import proto
import yaml
from google.cloud import aiplatform_v1
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor

from vtp.vertex import protodict
from vtp.vertex.protodict import SpecError
from vtp.vertex.validation import relocated


@dataclass(frozen=True)
class Kind:
    """A resource a description may be."""

    name: str
    """`CustomJob`, as Vertex names the type."""
    message: type[proto.Message]
    collection: str
    """The collection in its resource names: `customJobs`."""
    marks: tuple[str, ...]
    """Fields (REST names) that together mark a description as this kind when its name does not."""


CUSTOM_JOB = Kind("CustomJob", aiplatform_v1.CustomJob, "customJobs", ("jobSpec",))
TUNING_JOB = Kind(
    "HyperparameterTuningJob",
    aiplatform_v1.HyperparameterTuningJob,
    "hyperparameterTuningJobs",
    ("trialJobSpec", "studySpec"),
)
PIPELINE_JOB = Kind("PipelineJob", aiplatform_v1.PipelineJob, "pipelineJobs", ("pipelineSpec",))
TRAINING_PIPELINE = Kind(
    "TrainingPipeline",
    aiplatform_v1.TrainingPipeline,
    "trainingPipelines",
    ("trainingTaskDefinition",),
)
KINDS = (CUSTOM_JOB, TUNING_JOB, PIPELINE_JOB, TRAINING_PIPELINE)
_COLLECTION = re.compile(r"(?:^|/)([A-Za-z]+)/[^/]+$")
_DOCUMENTED = re.compile(r"^ +(\w+) \([^\n]*\):\n +Output only\.", re.M)
_OUTPUT_ONLY = 3
"""google.api.FieldBehavior.OUTPUT_ONLY."""
_FIELD_BEHAVIOR = 1052
"""The number of the `google.api.field_behavior` field option."""
_output_only: dict[str, frozenset[str]] = {}
"""`output_only`'s answers, by message type."""


class DescriptionError(ValueError):
    """The file is no description this module reads; the message says why."""


@dataclass(frozen=True)
class Described:
    """A description made a create request (`request`)."""

    kind: Kind
    name: str
    """The described resource's name ("" if it has none)."""
    body: dict[str, Any]
    """The create request's REST body."""
    dropped: tuple[str, ...]
    """The output-only fields left out, as the description spells them (nested: `a.b`)."""
    unknown: tuple[str, ...] = ()
    """Fields this SDK does not know, left out."""


def read(path: Path) -> Any:
    """The document in `path`, JSON or YAML; DescriptionError naming the file otherwise
    (a message that says "is not JSON" when it is neither)."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise DescriptionError(f"cannot read {str(path)!r}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise DescriptionError(f"{path} is not JSON or YAML: not UTF-8 text") from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        not_json = exc
    try:
        document = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError):
        document = None
    if not isinstance(document, dict):
        raise DescriptionError(f"{path} is not JSON (nor YAML describing a job): {not_json}")
    return document


def kind_of(document: Any) -> Kind | None:
    """The resource `document` describes: by its name's collection, else by its fields."""
    if not isinstance(document, Mapping):
        return None
    name = document.get("name")
    match = _COLLECTION.search(name) if isinstance(name, str) else None
    for kind in KINDS:
        if match and match.group(1) == kind.collection:
            return kind
    for kind in KINDS:
        fields = kind.message.pb().DESCRIPTOR.fields_by_camelcase_name
        if all(m in document or fields[m].name in document for m in kind.marks):
            return kind
    return None


def name_of(document: Mapping[str, Any]) -> str:
    """The resource name in `document`, on one line ("" if none)."""
    name = document.get("name")
    return " ".join(name.split())[:300] if isinstance(name, str) else ""


def request(document: Mapping[str, Any], kind: Kind, where: str = "") -> Described:
    """`document`, a description of a `kind`, as its create request; SpecError (under
    `where`) naming a field of the wrong type, as `protodict` names one."""
    dropped: list[str] = []
    unknown: list[str] = []
    rest = _strip(kind.message, document, "", dropped, unknown)
    descriptor = kind.message.pb().DESCRIPTOR
    protodict.check(descriptor, rest, where, rules=protodict.REQUEST)
    try:
        message = json_format.ParseDict(rest, kind.message.pb()())
    except json_format.ParseError as exc:  # what the walker does not model (int ranges)
        raise SpecError(where, str(exc)) from None
    body = json_format.MessageToDict(message)
    return Described(kind, name_of(document), body, tuple(sorted(dropped)), tuple(unknown))


def config_request(data: dict[str, Any], kind: Kind, where: str) -> dict[str, Any]:
    """A `--config` file's mapping as a create request when it is a `kind` as a describe
    prints it (output-only fields in it), else `data` itself, to be read as any `--config`;
    SpecError naming the file (`where`) when it describes another kind, or a field of the
    wrong type."""
    found = kind_of(data)
    if found is not None and found is not kind:
        raise SpecError(where, f"describes a {found.name}, not a {kind.name}")
    if found is None or not dropped_fields(data, kind):
        return data
    try:
        return request(data, kind).body
    except SpecError as exc:
        raise relocated(exc, where) from None


def config_summary(path: str, kind: Kind) -> str | None:
    """`summary_of` the `--config` file at `path` when `config_request` made it a request;
    None otherwise (or when it does not read: its loader says why)."""
    try:
        data = read(Path(path))
        if kind_of(data) is not kind or not dropped_fields(data, kind):
            return None
        return summary_of(path, request(data, kind))
    except (DescriptionError, SpecError):
        return None


def dropped_fields(document: Mapping[str, Any], kind: Kind) -> tuple[str, ...]:
    """The output-only fields `document` (a `kind`) carries, as it spells them."""
    dropped: list[str] = []
    _strip(kind.message, document, "", dropped, [])
    return tuple(sorted(dropped))


def summary(where: str, kind: Kind, name: str, dropped: tuple[str, ...], extra: str = "") -> str:
    """One line: what the file `where` is and what was left out of it."""
    named = f" ({name})" if name else ""
    left = "no output-only fields"
    if dropped:
        left = f"dropped output-only fields: {', '.join(dropped)}"
    return f"vtp: {where} is a {kind.name}{named}; {left}{extra}"


def summary_of(where: str, described: Described, extra: str = "") -> str:
    """`summary` of a `request`'s result, its unknown fields named too."""
    if described.unknown:
        extra = f"; dropped fields this SDK does not know: {', '.join(described.unknown)}{extra}"
    return summary(where, described.kind, described.name, described.dropped, extra)


def output_only(message: type[proto.Message]) -> frozenset[str]:
    """The proto names of `message`'s output-only fields."""
    descriptor = message.pb().DESCRIPTOR
    found = _output_only.get(descriptor.full_name)
    if found is None:
        fields = descriptor.fields
        marked = {f.name for f in fields if _OUTPUT_ONLY in _behaviors(f)}
        documented = set(_DOCUMENTED.findall(message.__doc__ or ""))
        found = frozenset(marked | (documented & {f.name for f in fields}))
        _output_only[descriptor.full_name] = found
    return found


def _behaviors(field: FieldDescriptor) -> list[int]:
    """The field's `google.api.field_behavior` values, where its descriptor carries them."""
    options = field.GetOptions()
    for option, value in options.ListFields():
        if option.number == _FIELD_BEHAVIOR:
            return list(value)
    return []


def _strip(
    message: type[proto.Message],
    data: Any,
    path: str,
    dropped: list[str],
    unknown: list[str],
) -> Any:
    """`data` without the output-only and unknown fields of `message` (at any depth), each
    noted; values of the wrong type are kept, for `protodict` to name."""
    if not isinstance(data, Mapping):
        return data
    descriptor = message.pb().DESCRIPTOR
    by_name = {**{f.name: f for f in descriptor.fields}, **descriptor.fields_by_camelcase_name}
    kept: dict[str, Any] = {}
    for key, value in data.items():
        where = f"{path}.{key}" if path else str(key)
        field = by_name.get(key)
        if field is None:
            unknown.append(where)
        elif field.name in output_only(message):
            dropped.append(where)
        else:
            inner = _message_class(message, field.name)
            if inner is None:
                kept[key] = value
            elif isinstance(value, list):
                kept[key] = [
                    _strip(inner, item, f"{where}[{i}]", dropped, unknown)
                    for i, item in enumerate(value)
                ]
            else:
                kept[key] = _strip(inner, value, where, dropped, unknown)
    return kept


def _message_class(message: type[proto.Message], field: str) -> type[proto.Message] | None:
    """The proto-plus class of message field `field` (None: a scalar, a map, a well-known
    type such as Struct or Timestamp, whose contents are not fields)."""
    inner: Any = getattr(message.meta.fields[field], "message", None)
    if not (isinstance(inner, type) and issubclass(inner, proto.Message)):
        return None
    entry: bool = message.pb().DESCRIPTOR.fields_by_name[field].message_type.GetOptions().map_entry
    return None if entry else inner
