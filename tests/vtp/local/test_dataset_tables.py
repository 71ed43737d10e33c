"""How a tabular dataset's rows split for custom training (`vtp/local/datasets/tables.py`)."""

from pathlib import Path

import pytest
from google.cloud.aiplatform_v1 import InputDataConfig

from tests.vtp.engine.test_tree_walk import DeepTrees
from tests.vtp.engine.test_tree_walk import deep_trees as deep_trees  # fixture
from vtp.local.base import buckets
from vtp.local.datasets import tables

HEADER = ["x", "when", "kind"]
ROWS = [[str(i), f"2024-01-{i + 1:02d}T00:00:00Z", "ab"[i % 2]] for i in range(20)]


def split(**config: object) -> dict[str, list[list[str]]]:
    return tables.split_rows(HEADER, ROWS, InputDataConfig(**config), seed="7")


def counts(splits: dict[str, list[list[str]]]) -> list[int]:
    return [len(splits[s]) for s in tables.SPLITS]


def test_fractions_default_to_80_10_10_and_are_deterministic() -> None:
    first = split()
    assert counts(first) == [16, 2, 2]
    assert first == split()
    assert sorted(r for s in first.values() for r in s) == sorted(ROWS)


def test_what_given_fractions_leave_goes_to_the_splits_given_none() -> None:
    assert counts(split(fraction_split={"training_fraction": 0.5})) == [10, 5, 5]
    assert counts(split(fraction_split={"training_fraction": 0.5, "test_fraction": 0.2})) == [
        10,
        6,
        4,
    ]
    with pytest.raises(tables.TableError, match="at most 1"):
        split(fraction_split={"training_fraction": 0.9, "test_fraction": 0.2})


def test_timestamp_split_gives_the_earliest_rows_to_training() -> None:
    fractions = {"training_fraction": 0.5, "validation_fraction": 0.25, "test_fraction": 0.25}
    splits = split(timestamp_split={**fractions, "key": "when"})
    assert [r[0] for r in splits["training"]] == [str(i) for i in range(10)]
    assert [r[0] for r in splits["test"]] == [str(i) for i in range(15, 20)]


def test_stratified_split_keeps_each_value_in_proportion() -> None:
    fractions = {"training_fraction": 0.6, "validation_fraction": 0.2, "test_fraction": 0.2}
    splits = split(stratified_split={**fractions, "key": "kind"})
    for which, expected in zip(tables.SPLITS, (6, 2, 2), strict=True):
        assert [r[2] for r in splits[which]].count("a") == expected


def test_predefined_split_reads_the_column_and_leaves_other_rows_out() -> None:
    rows = [["1", "", "training"], ["2", "", "TEST"], ["3", "", "other"]]
    config = InputDataConfig(predefined_split={"key": "kind"})
    splits = tables.split_rows(HEADER, rows, config, seed="7")
    assert splits == {"training": [rows[0]], "validation": [], "test": [rows[1]]}
    with pytest.raises(tables.TableError, match="'nope' is not a column"):
        split(predefined_split={"key": "nope"})


def test_a_filter_split_is_for_data_items() -> None:
    with pytest.raises(tables.TableError, match="filterSplit"):
        split(filter_split={"training_filter": "-", "validation_filter": "", "test_filter": ""})


def test_sources_with_wildcards_must_share_their_header(tmp_path: Path) -> None:
    folder = tmp_path / "b" / "data"
    folder.mkdir(parents=True)
    (folder / "1.csv").write_text("x,y\n1,2\n")
    (folder / "2.csv").write_text("x,y\n3,4\n")
    assert tables.read_source(tmp_path, ["gs://b/data/*.csv"]) == (
        ["x", "y"],
        [["1", "2"], ["3", "4"]],
    )
    (folder / "3.csv").write_text("x,z\n5,6\n")
    with pytest.raises(tables.TableError, match="header"):
        tables.read_source(tmp_path, ["gs://b/data/*.csv"])
    with pytest.raises(tables.TableError, match="does not exist"):
        tables.read_source(tmp_path, ["gs://b/none.csv"])


def test_the_environment_names_each_split_as_a_wildcard() -> None:
    assert tables.data_environment("gs://b/out/dataset-1-tables-T") == {
        "AIP_DATA_FORMAT": "csv",
        "AIP_TRAINING_DATA_URI": "gs://b/out/dataset-1-tables-T/training-*.csv",
        "AIP_VALIDATION_DATA_URI": "gs://b/out/dataset-1-tables-T/validation-*.csv",
        "AIP_TEST_DATA_URI": "gs://b/out/dataset-1-tables-T/test-*.csv",
    }


def shallow_tree(root: Path) -> None:
    for name in ("x.csv", "data/x.csv", "data/x1.csv", "data/more/x.csv", "data/more/deeper/x.csv",
                 "data/.hidden.csv", "dbta/y.csv", "other/more/z.csv"):  # fmt: skip
        (root / "b" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "b" / name).write_text(f"name\n{name}\n")


@pytest.mark.parametrize(
    "pattern",
    ["**/x.csv", "data/**/x.csv", "data/*/x.csv", "*/x.csv", "data/x*.csv", "d?ta/*.csv",
     "d[a-b]ta/*", "**/more/*.csv", "data/**", "data/**/deeper/*", "*.csv", "data//x.csv"],
)  # fmt: skip
def test_wildcards_match_as_path_glob_does(tmp_path: Path, pattern: str) -> None:
    shallow_tree(tmp_path)
    expected = sorted(p for p in (tmp_path / "b").glob(pattern) if p.is_file())
    if not expected:
        with pytest.raises(tables.TableError, match="matches no file"):
            tables.read_source(tmp_path, [f"gs://b/{pattern}"])
        return
    _, rows = tables.read_source(tmp_path, [f"gs://b/{pattern}"])
    assert [row[0] for row in rows] == [str(p.relative_to(tmp_path / "b")) for p in expected]


def test_a_wildcard_beside_a_deep_tree_reads_what_can_be_an_object(
    tmp_path: Path, deep_trees: DeepTrees
) -> None:
    shallow_tree(tmp_path)
    deep_trees.make(tmp_path / "b" / "deep", 1_200, leaf="x.csv")  # Path.glob: RecursionError
    _, rows = tables.read_source(tmp_path, ["gs://b/**/x.csv"])
    assert [row[0] for row in rows] == [
        "data/more/deeper/x.csv", "data/more/x.csv", "data/x.csv", "x.csv"
    ]  # fmt: skip


def test_a_wildcard_past_the_walk_limit_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(buckets, "MAX_WALKED", 10)
    for index in range(11):
        (tmp_path / "b" / "wide" / str(index)).mkdir(parents=True)
    (tmp_path / "b" / "x.csv").write_text("name\nx\n")
    with pytest.raises(tables.TableError, match="matches no file"):
        tables.read_source(tmp_path, ["gs://b*/x.csv"])  # no wildcard buckets: nothing matches
    with pytest.raises(tables.TableError, match="would walk more than 10 files and folders"):
        tables.read_source(tmp_path, ["gs://b/**/x.csv"])
    # `*` stays within one name: only the top folder is walked for it
    assert tables.read_source(tmp_path, ["gs://b/*.csv"])[1] == [["x"]]
