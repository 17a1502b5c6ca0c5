"""Safe label discovery and the pilot in the release (issue 27): ``out_of_domain: to_missing``,
the cleaning counts a bundle states (DP, declared public, or not at all), a run after a pilot,
``describe`` and the datasheet naming the pilot, ``verify``."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from own_data_helpers import small_doc, small_frame, write_csv

from workbench.cli.main import main as cli
from workbench.engine import verify_bundle
from workbench.engine.cleaning_counts import CleaningTally
from workbench.specification import SpecError
from workbench.specification.derived import document_plan
from workbench.transform import EncodingError
from workbench.transform.raw import apply_domain_policy, check_missing, read_raw
from workbench.validation import build_spec, save_spec

SECRET = "Zanzibar-77"  # an unknown label: it must never leave the run
N_SECRET = 40


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    frame = small_frame(2000, seed=7)
    frame.loc[frame.index[:N_SECRET], "workclass"] = SECRET
    return write_csv(frame, tmp_path_factory.mktemp("own") / "confidential.csv")


def _frozen(tmp: Path, **sections) -> Path:
    doc = small_doc()
    doc.update(sections)
    path = tmp / "spec.frozen.json"
    save_spec(doc, path)
    return path


# --- to_missing ---------------------------------------------------------------------------
def test_to_missing_needs_a_column_that_may_be_missing() -> None:
    doc = small_doc()
    doc["schema"]["columns"][2]["out_of_domain"] = "to_missing"  # sex: missing forbid
    with pytest.raises(SpecError) as err:
        build_spec(doc)
    assert "schema.columns[2].out_of_domain" in str(err.value)
    assert "'forbid'" in str(err.value)


def test_to_missing_recodes_unknown_labels_and_counts_them(data) -> None:
    spec = build_spec(small_doc())
    frame = read_raw(data, spec.columns, spec.file_format)
    tally: dict[str, int] = {}
    out = apply_domain_policy(frame, spec.columns, tally)
    assert len(out) == len(frame) and SECRET not in set(out.workclass.dropna())
    assert out.workclass.isna().sum() == frame.workclass.isna().sum() + N_SECRET
    assert tally == {"workclass": N_SECRET}


def test_to_missing_still_meets_max_missing_rate_without_quoting_a_value(data) -> None:
    doc = small_doc()
    doc["schema"]["columns"][1]["max_missing_rate"] = 0.05  # 5% '?' + 2% unknown > 5%
    spec = build_spec(doc)
    frame = apply_domain_policy(read_raw(data, spec.columns, spec.file_format), spec.columns)
    with pytest.raises(EncodingError) as err:
        check_missing(frame, spec.columns)
    assert "workclass" in str(err.value) and SECRET not in str(err.value)


# --- cleaning counts --------------------------------------------------------------------------
@pytest.mark.parametrize(("section", "path"), [
    ({"release": "dp"}, "cleaning_counts.epsilon"),
    ({"release": "public", "epsilon": 0.1}, "cleaning_counts.epsilon"),
    ({"release": "secret"}, "cleaning_counts.release"),
])
def test_cleaning_counts_declarations_are_checked(section, path) -> None:
    doc = small_doc()
    doc["cleaning_counts"] = section
    with pytest.raises(SpecError) as err:
        build_spec(doc)
    assert path in str(err.value)


def test_dp_cleaning_counts_are_part_of_epsilon_total() -> None:
    spec = build_spec(small_doc())  # the small design declares dp, ε = 0.05
    plan = spec.budget_plan()
    assert plan.epsilon_cleaning == 0.05 and spec.epsilon_total == pytest.approx(1.05 + 1.0)
    assert "cleaning counts 0.05" in plan.formula()
    assert document_plan(small_doc()).epsilon_total == spec.epsilon_total
    doc = small_doc()
    doc.pop("cleaning_counts")
    assert build_spec(doc).epsilon_total == pytest.approx(spec.epsilon_total - 0.05)


def test_run_with_an_unknown_label_continues_and_states_the_dp_count(data, tmp_path,
                                                                      capsys) -> None:
    """Must-show 3: to_missing on a file with an unknown label: the run continues and the
    bundle states the DP count of recoded cells; verify agrees with ε_total and the ledger."""
    spec = _frozen(tmp_path)
    assert cli(["run", str(spec), str(data), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    capsys.readouterr()
    release = tmp_path / "run" / "release"
    doc = json.loads((release / "cleaning.json").read_text(encoding="utf-8"))
    assert doc["release"] == "dp" and doc["epsilon"] == 0.05 and doc["sensitivity"] == 1
    (count,) = doc["counts"]
    assert count["column"] == "workclass" and count["policy"] == "to_missing"
    assert isinstance(count["count"], int) and count["count"] >= 0
    readme = (release / "README.md").read_text(encoding="utf-8")
    assert "## Data preparation" in readme and "cells recoded to missing" in readme
    ledger = [json.loads(line) for line in (release / "ledger.jsonl").read_text().splitlines()]
    assert [e["epsilon"] for e in ledger if e.get("purpose") == "cleaning counts"] == [0.05]
    check = verify_bundle(release)
    assert check.ok, check.summary()
    assert "DP counts" in check.checks["cleaning"]
    for name in ("release.csv", "README.md", "cleaning.json", "ledger.jsonl", "report.html"):
        assert SECRET not in (release / name).read_text(encoding="utf-8")
    # tampering with the stated count shows
    doc["counts"][0]["count"] += 1
    (release / "cleaning.json").write_text(json.dumps(doc), encoding="utf-8")
    assert "cleaning.json" in verify_bundle(release).checks["manifest"]


def test_without_a_declaration_the_counts_never_leave(data, tmp_path, capsys) -> None:
    doc = small_doc()
    doc.pop("cleaning_counts")
    path = tmp_path / "spec.frozen.json"
    save_spec(doc, path)
    assert cli(["run", str(path), str(data), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    printed = capsys.readouterr()
    release = tmp_path / "run" / "release"
    assert not (release / "cleaning.json").exists()
    assert "is not released" in (release / "README.md").read_text(encoding="utf-8")
    assert str(N_SECRET) not in printed.out + printed.err


def test_declared_public_counts_are_exact_and_spend_nothing(data, tmp_path, capsys) -> None:
    spec = _frozen(tmp_path, cleaning_counts={"release": "public"})
    assert cli(["run", str(spec), str(data), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    capsys.readouterr()
    release = tmp_path / "run" / "release"
    doc = json.loads((release / "cleaning.json").read_text(encoding="utf-8"))
    assert doc["counts"][0]["count"] == N_SECRET and "not differentially private" in doc["how"]
    assert verify_bundle(release).ok


def test_the_tally_is_per_policy_and_first_rule() -> None:
    doc = small_doc()
    doc["constraints"]["raw"] = [{"name": "old", "reject_if": "age > 80"},
                                 {"name": "older", "reject_if": "age > 70"}]
    spec = build_spec(doc)
    frame = pd.DataFrame({"age": [85.0, 75.0, 30.0, 40.0, 50.0, 60.0, 20.0, 25.0],
                          "workclass": ["x", "x", None, *["Private"] * 5],
                          "sex": ["Male"] * 8, "Y": [">50K"] * 8})
    tally = CleaningTally()
    from workbench.transform.clean import clean

    clean(apply_domain_policy(frame, spec.columns, tally.policies), spec, tally.rules)
    # a row counts in every policy column it fails, and for the first rule that removes it
    assert tally.policies == {"workclass": 2} and tally.rules == {"old": 1, "older": 1}


# --- the pilot in the release -----------------------------------------------------------------
def test_a_run_after_a_pilot_needs_spend_again_and_names_it(data, tmp_path, capsys,
                                                            budget_store) -> None:
    """describe shows the pilot's ε beside ε_total; the datasheet names the pilot and its ε."""
    draft = tmp_path / "draft.json"
    draft.write_text(json.dumps(small_doc()), encoding="utf-8")
    facts = tmp_path / "pilot.json"
    assert cli(["pilot", str(draft), str(data), "--epsilon", "0.5", "--out", str(facts)]) == 0
    capsys.readouterr()
    from workbench.specification.document import file_sha256

    pilot = {"facts": "pilot.json", "sha256": file_sha256(facts), "epsilon": 0.5}
    spec = _frozen(tmp_path, pilot=pilot)
    assert cli(["describe", str(spec)]) == 0
    described = capsys.readouterr().out
    assert "pilot (DP, spent before this design) epsilon = 0.5" in described
    assert "pilot + this run: 0.5 + 2.05 = 2.55" in described
    assert cli(["run", str(spec), str(data), "--out", str(tmp_path / "r1"), "--quiet"]) == 2
    assert "already has ε = 0.5 spent" in capsys.readouterr().err
    assert cli(["run", str(spec), str(data), "--out", str(tmp_path / "r2"), "--quiet",
                "--spend-again"]) == 0
    capsys.readouterr()
    readme = (tmp_path / "r2" / "release" / "README.md").read_text(encoding="utf-8")
    assert "a DP pilot (`workbench pilot`)" in readme and "with ε = 0.5" in readme
    assert pilot["sha256"] in readme and verify_bundle(tmp_path / "r2").ok
    # a spec naming a pilot the store does not hold is refused before any noise
    other = _frozen(tmp_path, pilot={**pilot, "sha256": "0" * 64})
    assert cli(["run", str(other), str(data), "--out", str(tmp_path / "r3"), "--quiet",
                "--spend-again"]) == 2
    assert "does not hold" in capsys.readouterr().err


def test_the_pilot_and_the_design_must_fit_the_lifetime_cap() -> None:
    doc = small_doc()
    doc["budget"]["epsilon_lifetime_max"] = 3.0
    doc["pilot"] = {"facts": "p.json", "sha256": "a" * 64, "epsilon": 1.5}
    with pytest.raises(SpecError) as err:
        build_spec(doc)
    assert "pilot.epsilon" in str(err.value)
    doc["pilot"]["epsilon"] = 0.5
    assert build_spec(doc).pilot.epsilon == 0.5


def test_old_specs_keep_their_hash(example_doc) -> None:
    from workbench.specification.document import spec_hash

    before = spec_hash(example_doc)
    assert build_spec(example_doc).sha256 == before
    assert build_spec(example_doc).pilot is None and build_spec(example_doc).cleaning_counts is None
