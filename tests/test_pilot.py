"""``workbench pilot`` (issue 27): DP tables with honest sensitivities, charged to the dataset's
budget store like a run, a public FACTS file of DP values only, refusals like a run's."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from own_data_helpers import small_doc, small_frame, write_csv

from workbench.cli.main import main as cli
from workbench.engine import cleaning_counts
from workbench.engine.cleaning_counts import CleaningTally
from workbench.engine.pilot import SENSITIVITY, exact_tables, pilot_columns
from workbench.evidence.fact_list import load_fact_file
from workbench.privacy.budget_store import DatasetBudget
from workbench.transform.clean import clean
from workbench.transform.raw import apply_domain_policy, read_raw
from workbench.validation import build_spec

SECRET = "Zanzibar-77"  # a label the spec never declares: it must never leave


@pytest.fixture(scope="module")
def spec():
    return build_spec(small_doc())


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    frame = small_frame(3000, seed=11)
    frame.loc[frame.index[:25], "workclass"] = SECRET
    return write_csv(frame, tmp_path_factory.mktemp("pilot") / "confidential.csv")


def _read(spec, frame: pd.DataFrame, tmp: Path) -> pd.DataFrame:
    return read_raw(write_csv(frame, tmp / "x.csv"), spec.columns, spec.file_format)


ODD = [{"age": "150", "workclass": SECRET, "sex": "?", "Y": ">50K"},
       {"age": "abc", "workclass": "?", "sex": "Female", "Y": "maybe"},
       {"age": "85", "workclass": "Private", "sex": "Male", "Y": "<=50K"}]


def _neighbours(spec, tmp: Path, trials: int = 40):
    """Pairs of public tables differing in one row, the new row often out of domain."""
    rng = np.random.default_rng(5)
    base = small_frame(60, seed=1).astype(str)
    base.iloc[0] = pd.Series(ODD[2])
    for t in range(trials):
        b = base.copy()
        b.iloc[rng.integers(len(b))] = pd.Series(ODD[t % 3])
        yield _read(spec, base, tmp), _read(spec, b, tmp)


def test_every_pilot_table_moves_by_at_most_two_between_neighbours(spec, tmp_path) -> None:
    """Δ₁ = 2 per table under replace-one, checked on neighbouring datasets (and attained)."""
    columns = pilot_columns(spec)
    worst = 0
    for a, b in _neighbours(spec, tmp_path):
        ta = exact_tables(a, columns, [("sex", "Y"), ("age", "workclass")])
        tb = exact_tables(b, columns, [("sex", "Y"), ("age", "workclass")])
        for key in ta:
            diff = int(np.abs(ta[key].astype(np.int64) - tb[key]).sum())
            assert diff <= SENSITIVITY, key
            worst = max(worst, diff)
    assert worst == SENSITIVITY


def test_cleaning_counts_move_by_at_most_their_sensitivity(tmp_path) -> None:
    """Δ₁ = min(K, 2m) of the cleaning-count vector, on neighbouring datasets (attained)."""
    doc = small_doc()
    for c in doc["schema"]["columns"]:  # age, sex, Y drop; workclass recodes to missing
        c["out_of_domain"] = "to_missing" if c["name"] == "workclass" else "drop"
    doc["constraints"]["raw"] = [{"name": "old", "reject_if": "age > 80"},
                                 {"name": "men", "reject_if": "sex == 'Male' and age > 70"}]
    spec = build_spec(doc)
    delta = cleaning_counts.sensitivity(spec)
    assert delta == min(4 + 2, 2 * (4 + 1))  # p = 4 policy columns, r = 2 rules

    def vector(frame):
        tally = CleaningTally()
        kept = apply_domain_policy(frame, spec.columns, tally.policies)
        clean(kept, spec, tally.rules)
        return cleaning_counts.exact_vector(spec, tally)

    worst = 0
    for a, b in _neighbours(spec, tmp_path, trials=30):
        diff = int(np.abs(vector(a) - vector(b)).sum())
        assert diff <= delta
        worst = max(worst, diff)
    assert worst >= 3  # the bound is not slack by more than one on these neighbours


def test_pilot_charges_the_store_and_writes_dp_facts_only(spec, data, tmp_path, capsys,
                                                          budget_store) -> None:
    """Must-show 2: ledger and store show ε; the FACTS file holds only DP values; a second
    pilot without --spend-again is refused like a second run."""
    out = tmp_path / "pilot.json"
    doc_path = tmp_path / "spec.json"
    doc_path.write_text(json.dumps(small_doc()), encoding="utf-8")
    assert cli(["pilot", str(doc_path), str(data), "--epsilon", "1.5", "--pairs", "sex:Y",
                "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "ε = 1.5 charged to dataset 'test-own-data'" in printed and SECRET not in printed
    book = DatasetBudget(budget_store, "test-own-data")
    lines = [e for e in book.entries() if e.get("event") == "measurement"]
    assert len(lines) == 5 and all(e["stage"] == "once" and e["sensitivity"] == 2 for e in lines)
    assert sum(e["epsilon"] for e in lines) == pytest.approx(1.5)
    assert book.spent() == pytest.approx(1.5)
    end = [e for e in book.entries() if e.get("event") == "pilot_end"][-1]
    text = out.read_text(encoding="utf-8")
    assert end["facts_sha256"] == load_fact_file(out).sha256 and end["epsilon"] == 1.5
    assert SECRET not in text and "3000" not in text  # no label, no exact n
    facts = load_fact_file(out).facts
    assert all(f.noise and f.noise["mechanism"] == "discrete_laplace" for f in facts)
    assert {f.kind for f in facts} == {"shares", "missing_rate", "out_of_domain"}
    ood = next(f for f in facts if f.kind == "out_of_domain" and f.column == "workclass")
    assert ood.value is not None and ood.value >= 0
    # a second pilot (or a run) on the dataset is refused without --spend-again
    assert cli(["pilot", str(doc_path), str(data), "--epsilon", "1", "--out",
                str(tmp_path / "again.json")]) == 2
    err = capsys.readouterr().err
    assert "already has ε = 1.5 spent" in err and "--spend-again" in err
    assert not (tmp_path / "again.json").exists() and book.spent() == pytest.approx(1.5)
    assert cli(["pilot", str(doc_path), str(data), "--epsilon", "1", "--spend-again",
                "--out", str(tmp_path / "again.json")]) == 0
    assert book.spent() == pytest.approx(2.5)


def test_the_pilot_facts_drive_proxy_build(spec, data, tmp_path) -> None:
    from workbench.engine.pilot import pilot
    from workbench.evidence.build import build_proxy

    outcome = pilot(spec, data, 3.0, tmp_path / "p.json", pairs=["sex:Y"])
    built = build_proxy(spec, outcome.facts_path, 2000, seed=0)
    assert built.all_met, [r for r in built.rows if not r.fit_ok]
    share = (built.frame.workclass.isna()).mean()
    assert 0 < share < 0.2  # the DP missing rate reached the proxy


@pytest.mark.parametrize(("args", "words"), [
    (["--epsilon", "0"], "--epsilon must be a number > 0"),
    (["--epsilon", "1", "--pairs", "sex:sex"], "two different columns"),
    (["--epsilon", "1", "--pairs", "sex:nope"], "no column 'nope'"),
    (["--epsilon", "30"], "over budget.epsilon_lifetime_max"),
])
def test_bad_pilots_are_refused_before_any_spend(spec, data, tmp_path, capsys, budget_store,
                                                 args, words) -> None:
    doc_path = tmp_path / "spec.json"
    doc_path.write_text(json.dumps(small_doc()), encoding="utf-8")
    assert cli(["pilot", str(doc_path), str(data), *args, "--out", str(tmp_path / "f.json")]) == 2
    assert words in capsys.readouterr().err
    assert DatasetBudget(budget_store, "test-own-data").spent() == 0.0
