"""A tabular dataset's rows for custom training: read from its CSV source, split, written out.

What Vertex does for a TrainingPipeline whose `inputDataConfig` names a tabular (or time-series)
dataset: it reads the dataset's source, assigns each row to training, validation or test by the
config's split, writes each split under
`<gcsDestination>/dataset-<id>-tables-<YYYY-MM-DDThh:mm:ss.sssZ>/` as `<split>-NNNNN-of-NNNNN.csv`
(a header line, then the rows), and gives every replica the files as wildcards:

    AIP_DATA_FORMAT=csv
    AIP_TRAINING_DATA_URI=<folder>/training-*.csv     (and _VALIDATION_, _TEST_)

Splits, as the InputDataConfig reference describes them:
- `fractionSplit` (the default, 0.8/0.1/0.1 when no split is given): rows in a random order
  seeded by the dataset's ID, so the same dataset splits the same way every time; what the
  given fractions leave goes to the splits given none (every row has a split);
- `predefinedSplit`: the column `key` says `training`, `validation` or `test`; other rows are left
  out;
- `timestampSplit`: rows ordered by the RFC 3339 column `key`, the earliest to training, then
  validation, the latest to test, by the fractions; rows without a valid time are left out;
- `stratifiedSplit`: the fractions within each value of the column `key`.
`filterSplit` is for datasets of data items: a tabular dataset refuses it.
"""

import csv
import fnmatch
import io
import random
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path

from google.cloud.aiplatform_v1 import InputDataConfig

from vtp import storage
from vtp.engine import tree_walk
from vtp.local.base import buckets, stored_files

SPLITS = ("training", "validation", "test")
DEFAULT_FRACTIONS = (0.8, 0.1, 0.1)

Row = list[str]


MAX_TABLE_BYTES = 512 << 20
"""The largest CSV file of a table read (held in memory whole, then split)."""


class TableError(ValueError):
    """The source or the split cannot be used; the message says which and why."""


def read_source(root: Path, uris: Sequence[str]) -> tuple[Row, list[Row]]:
    """The header and rows of the CSV files `uris` name (wildcards allowed), in order; every
    file starts with the same header."""
    header: Row | None = None
    rows: list[Row] = []
    for uri in uris:
        for path in _matches(root, uri):
            what = uri if "*" not in uri else f"{uri} ({path.name})"
            try:
                text = stored_files.read_text(root, path, MAX_TABLE_BYTES, what, "utf-8-sig")
            except stored_files.StoredFileError as exc:
                raise TableError(str(exc)) from None
            lines = [line for line in csv.reader(io.StringIO(text)) if line]
            if not lines:
                continue
            if header is None:
                header = lines[0]
            elif lines[0] != header:
                raise TableError(f"{uri}: its header {lines[0]} differs from {header}")
            rows += lines[1:]
    if header is None:
        raise TableError(f"no rows: {', '.join(uris)} hold no CSV header")
    return header, rows


def check_split(config: InputDataConfig) -> None:
    """Refuse a split no table takes (a filter split, fractions adding up to more than 1)."""
    if "filter_split" in config:
        raise TableError(
            "filterSplit selects data items; a tabular dataset has rows: use fractionSplit, "
            "predefinedSplit, timestampSplit or stratifiedSplit"
        )
    for field in ("fraction_split", "timestamp_split", "stratified_split"):
        if field in config:
            _fractions(getattr(config, field), _camel(field))


def split_rows(
    header: Row, rows: list[Row], config: InputDataConfig, seed: str
) -> dict[str, list[Row]]:
    """The rows of each split in SPLITS, each split in source order."""
    check_split(config)
    if "predefined_split" in config:
        column = _column(header, config.predefined_split.key, "predefinedSplit")
        return {s: [r for r in rows if _cell(r, column).strip().lower() == s] for s in SPLITS}
    if "timestamp_split" in config:
        split = config.timestamp_split
        column = _column(header, split.key, "timestampSplit")
        timed = [(t, i) for i, r in enumerate(rows) if (t := _time(_cell(r, column))) is not None]
        order = [i for _, i in sorted(timed)]
        return _pick(rows, _cut(order, _fractions(split, "timestampSplit")))
    if "stratified_split" in config:
        split = config.stratified_split
        column = _column(header, split.key, "stratifiedSplit")
        fractions = _fractions(split, "stratifiedSplit")
        groups: dict[str, list[int]] = {}
        for index, row in enumerate(rows):
            groups.setdefault(_cell(row, column), []).append(index)
        parts = [_cut(_shuffled(g, seed), fractions) for g in groups.values()]
        return _pick(rows, {s: sorted(i for p in parts for i in p[s]) for s in SPLITS})
    fractions = _fractions(config.fraction_split, "fractionSplit")
    return _pick(rows, _cut(_shuffled(list(range(len(rows))), seed), fractions))


def write_splits(folder: Path, header: Row, splits: dict[str, list[Row]]) -> None:
    """`<split>-00000-of-00001.csv` in `folder` for each split: the header, then its rows."""
    folder.mkdir(parents=True, exist_ok=True)
    for which in SPLITS:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(splits[which])
        (folder / f"{which}-00000-of-00001.csv").write_text(buffer.getvalue())


def data_environment(folder_uri: str) -> dict[str, str]:
    """The AIP_* data variables for splits written under `folder_uri`."""
    env = {"AIP_DATA_FORMAT": "csv"}
    for which in SPLITS:
        env[f"AIP_{which.upper()}_DATA_URI"] = f"{folder_uri}/{which}-*.csv"
    return env


def _matches(root: Path, uri: str) -> list[Path]:
    try:
        path = storage.path_under(root, uri)
    except ValueError as exc:
        raise TableError(str(exc)) from None
    if "*" not in uri:
        if not path.is_file():
            raise TableError(f"{uri} does not exist in local Cloud Storage ({path})")
        return [path]
    found = sorted(p for p in _globbed(root, uri) if p.is_file() and storage.is_inside(root, p))
    if not found:
        raise TableError(f"{uri} matches no file in local Cloud Storage ({path})")
    return found


def _globbed(root: Path, uri: str) -> Iterator[Path]:
    """The files and links in the storage root that wildcard `uri` names, by `Path.glob`'s rules
    (`**` alone: any folders between). Not `Path.glob` itself, which recurses once per folder: a
    tree a replica left thousands of folders deep was a RecursionError. The walk is
    `buckets.object_files`' (iterative, from the folder of the literal start, no deeper than an
    object name reaches); TableError naming the limit past `buckets.MAX_WALKED` entries."""
    bucket, pattern = storage.split_gcs_uri(uri)
    wildcard = min((i for i in map(pattern.find, "*?[") if i >= 0), default=len(pattern))
    start = pattern[:wildcard].rpartition("/")[0]
    try:
        bucket_dir = storage.path_under(root, f"gs://{bucket}/")
        storage.path_under(root, f"gs://{bucket}/{start}")  # a link out of the root: ValueError
    except ValueError as exc:
        raise TableError(str(exc)) from None
    cut = len(start) + 1 if start else 0
    parts = [part for part in pattern[cut:].split("/") if part not in ("", ".")]
    levels = None if "**" in parts else len(parts)  # `*` stays within one name
    try:
        for name, _ in buckets.object_files(bucket_dir, start, levels):
            if _glob_matches(parts, name[cut:].split("/")):
                yield bucket_dir / name
    except tree_walk.TooManyEntries:
        raise TableError(
            f"matching {uri} would walk more than {buckets.MAX_WALKED} files and folders, the "
            "most one wildcard walks in the local storage root; name a longer prefix"
        ) from None


def _glob_matches(parts: list[str], names: list[str]) -> bool:
    """Whether a file's folders and name, `names`, match the pattern `parts` as `Path.glob`
    matches: `**` alone is any number of folders (none too), any other part one name
    (`fnmatch`, case-sensitive); `**` last names only folders. Kept as the set of how many
    names the parts so far can cover, so no pattern makes it backtrack."""
    if not parts or parts[-1] == "**":
        return False
    covered = {0}
    for part in parts:
        if part == "**":
            covered = set(range(min(covered), len(names) + 1))
        else:
            covered = {
                n + 1 for n in covered if n < len(names) and fnmatch.fnmatchcase(names[n], part)
            }
        if not covered:
            return False
    return len(names) in covered


def _camel(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(w.title() for w in rest)


def _column(header: Row, key: str, field: str) -> int:
    if key not in header:
        raise TableError(f"{field}.key: {key!r} is not a column; the columns are {header}")
    return header.index(key)


def _cell(row: Row, column: int) -> str:
    return row[column] if column < len(row) else ""


def _time(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError:
        return None


def _fractions(split: object, field: str) -> tuple[float, ...]:
    """The three fractions, adding up to 1: none given is 0.8/0.1/0.1; what the given ones leave
    goes in equal parts to the splits given none, or in proportion when all three are given."""
    cut = [float(getattr(split, f"{s}_fraction", 0.0)) for s in SPLITS]
    if any(f < 0 for f in cut) or sum(cut) > 1 + 1e-9:
        raise TableError(f"{field}: fractions must be >= 0 and add up to at most 1; got {cut}")
    if not any(cut):
        return DEFAULT_FRACTIONS
    unset = [i for i, f in enumerate(cut) if f == 0]
    if not unset:
        return tuple(f / sum(cut) for f in cut)
    rest = (1 - sum(cut)) / len(unset)
    return tuple(rest if i in unset else f for i, f in enumerate(cut))


def _shuffled(indices: list[int], seed: str) -> list[int]:
    random.Random(seed).shuffle(indices)
    return indices


def _cut(order: list[int], fractions: Sequence[float]) -> dict[str, list[int]]:
    """The indices `order` lists, cut in turn by `fractions` of their count; each sorted."""
    edges, total = [], 0.0
    for fraction in fractions:
        total += fraction
        edges.append(round(len(order) * total))
    start, picked = 0, {}
    for which, end in zip(SPLITS, edges, strict=True):
        picked[which] = sorted(order[start:end])
        start = end
    return picked


def _pick(rows: list[Row], indices: dict[str, list[int]]) -> dict[str, list[Row]]:
    return {s: [rows[i] for i in indices[s]] for s in SPLITS}
