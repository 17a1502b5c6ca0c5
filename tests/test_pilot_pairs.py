"""``workbench pilot`` measures the declared associations' 2-way tables by default (issue 36):
a proxy built without them holds those columns independent, so a design rehearsed on it never
meets them; ``proxy build`` and ``describe --proxy`` name each declared pair a FACTS file lacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from own_data_helpers import small_doc, small_frame, write_csv

from workbench.cli.main import main as cli
from workbench.criteria.associations import association_columns
from workbench.privacy.budget_store import DatasetBudget
from workbench.validation import build_spec

RR = {"exposure": "sex", "exposed": ["Male"], "outcome": "Y", "positive": [">50K"]}


def _doc() -> dict:
    """The small spec with a declared pair twice (metadata and a criterion) and a group rate."""
    doc = small_doc()
    doc["metadata"]["associations"] = [dict(RR)]
    doc["criteria"] += [
        {"id": "rr", "kind": "relative_risk", "threshold": 5.0, "epsilon": 0.5,
         "params": dict(RR)},
        {"id": "by_class", "kind": "rate_by_group", "threshold": 1.0, "epsilon": 0.5,
         "params": {"group": "workclass", "outcome": "Y", "positive": [">50K"]}},
    ]
    doc["budget"]["epsilon_criteria"] = 2.0
    return doc


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("pairs")
    spec = folder / "spec.json"
    spec.write_text(json.dumps(_doc()), encoding="utf-8")
    return spec, write_csv(small_frame(3000, seed=4), folder / "confidential.csv")


def _pilot(files, tmp: Path, name: str, *extra: str) -> int:
    spec, data = files
    return cli(["pilot", str(spec), str(data), "--epsilon", "3", "--out", str(tmp / name),
                "--budget-store", str(tmp / f"store_{name}"), *extra])


def _pairs(path: Path) -> list[str]:
    return json.loads(path.read_text(encoding="utf-8"))["pilot"]["pairs"]


def test_declared_pairs_are_each_unordered_pair_once() -> None:
    assert association_columns(build_spec(_doc())) == [("sex", "Y"), ("workclass", "Y")]
    assert association_columns(build_spec(small_doc())) == []


def test_the_pilot_measures_the_declared_pairs_unless_told(files, tmp_path, capsys) -> None:
    """Default: the declared pairs (said on stdout); --pairs replaces them; --pairs none."""
    assert _pilot(files, tmp_path, "default.json") == 0
    out = capsys.readouterr().out
    assert "declared associations: sex:Y, workclass:Y" in out
    assert _pairs(tmp_path / "default.json") == ["sex:Y", "workclass:Y"]
    book = DatasetBudget(tmp_path / "store_default.json", "test-own-data")
    two_way = [e for e in book.entries() if e.get("event") == "measurement"
               and "2-way" in str(e.get("purpose", ""))]
    assert len(two_way) == 2  # 4 one-way tables + 2 pairs, ε split over the 6
    assert _pilot(files, tmp_path, "given.json", "--pairs", "age:sex") == 0
    assert _pairs(tmp_path / "given.json") == ["age:sex"]
    assert _pilot(files, tmp_path, "none.json", "--pairs", "none") == 0
    assert "pairs: none" in capsys.readouterr().out
    assert _pairs(tmp_path / "none.json") == []


def test_none_mixed_with_pairs_is_refused_before_any_spend(files, tmp_path, capsys) -> None:
    assert _pilot(files, tmp_path, "mixed.json", "--pairs", "none", "sex:Y") == 2
    assert "--pairs none cannot be combined" in capsys.readouterr().err
    assert not (tmp_path / "mixed.json").exists()
    assert DatasetBudget(tmp_path / "store_mixed.json", "test-own-data").spent() == 0.0


def test_the_pilot_help_names_the_default(capsys) -> None:
    with pytest.raises(SystemExit):
        cli(["pilot", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "declared associations" in text and "--pairs none" in text


def test_proxy_build_and_describe_warn_of_a_missing_declared_pair(files, tmp_path,
                                                                  capsys) -> None:
    """A FACTS file without a declared pair's table: one warning line per pair, exit unchanged;
    with the pairs: no warning."""
    spec, _ = files
    assert _pilot(files, tmp_path, "none.json", "--pairs", "none") == 0
    assert _pilot(files, tmp_path, "some.json", "--pairs", "sex:Y") == 0
    capsys.readouterr()
    proxy = tmp_path / "proxy.csv"
    assert cli(["proxy", "build", str(spec), str(tmp_path / "none.json"), "--n", "2000",
                "--out", str(proxy)]) == 0
    warned = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert len(warned) == 2 and "of sex and Y" in warned[0] and "of workclass and Y" in warned[1]
    assert cli(["proxy", "build", str(spec), str(tmp_path / "some.json"), "--n", "2000",
                "--out", str(tmp_path / "p2.csv")]) == 0
    warned = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert len(warned) == 1 and "of workclass and Y" in warned[0]
    doc = _doc()
    doc["pilot"] = {"facts": str(tmp_path / "none.json"), "sha256": "a" * 64, "epsilon": 3.0}
    named = tmp_path / "named.json"
    named.write_text(json.dumps(doc), encoding="utf-8")
    assert cli(["describe", str(named), "--proxy", str(proxy), "--floor-draws", "0"]) == 0
    err = capsys.readouterr().err
    assert "of sex and Y" in err and "of workclass and Y" in err
