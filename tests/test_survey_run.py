"""The survey section, its budget, and an Adult run whose weighted margins verify from a bundle."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import shared_data

from workbench.privacy.budget_plan import BudgetPlan
from workbench.spec import SpecError
from workbench.spec.document import read_document
from workbench.validation import build_spec, save_spec

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "adult_survey.json"


@pytest.fixture(scope="module")
def adult_doc() -> dict:
    return read_document(EXAMPLE)


def _problems(doc: dict) -> dict[str, str]:
    with pytest.raises(SpecError) as err:
        build_spec(doc)
    return {p.path: p.message for p in err.value.problems}


def test_example_builds_and_budget_adds_the_survey_once(adult_doc):
    spec = build_spec(adult_doc)
    s = spec.survey
    assert s is not None and s.weight_column == "fnlwgt" and s.epsilon == pytest.approx(1.0)
    assert [m.name for m in s.margins] == ["sex_race", "age_band"]
    assert sum(s.margins[0].totals) == pytest.approx(sum(s.margins[1].totals))
    plan = BudgetPlan.of_spec(spec)
    assert plan.epsilon_survey == pytest.approx(1.0)
    assert spec.epsilon_total == pytest.approx(1 * (1 + 0.15) + 1.0)
    assert BudgetPlan.of_document(adult_doc).epsilon_total == pytest.approx(spec.epsilon_total)
    assert "survey 1" in plan.formula()
    words = adult_doc["metadata"]["description"].lower()
    assert "margins are the data's own weighted totals" in words


def test_survey_problems_are_reported_with_paths(adult_doc):
    doc = copy.deepcopy(adult_doc)
    survey = doc["survey"]
    survey["weight"]["column"] = "age"
    survey["neighbour"] = "add_remove"
    survey["margins"][0]["columns"] = ["sex", "rase"]
    del survey["margins"][1]["totals"]["<25"]
    survey["margins"][1]["binnings"]["oldest_merged"] = [["<25"], ["25-34"]]
    survey["epsilon"]["counts"] = 0
    got = _problems(doc)
    assert "not a schema column" in got["survey.weight.column"]
    assert "budget.neighbour" in got["survey.neighbour"]
    assert "rase" in got["survey.margins[0].columns[1]"]
    assert "'<25'" in got["survey.margins[1].totals"]
    assert "every cell exactly once" in got["survey.margins[1].binnings.oldest_merged"]
    assert "weighted counts" in got["survey.epsilon.counts"]


def test_weighted_kinds_need_a_survey_section(adult_doc):
    doc = copy.deepcopy(adult_doc)
    del doc["survey"]
    got = _problems(doc)
    assert "needs a survey section" in got["criteria[1].params"]
    assert "needs a survey section" in got["criteria[2]"]


def test_weighted_sensitivities_come_from_public_weight_bounds(adult_doc):
    from workbench.criteria.kinds import get

    spec = build_spec(adult_doc)
    n_pop = sum(spec.survey.margins[0].totals)
    config = next(iter(spec.configurations()))
    table = spec.table_codec(config)
    wme = spec.criterion("weighted_sex_income")
    assert get(wme.kind).sensitivity(spec, table, wme, None)[0] == pytest.approx(1.5e6 / n_pop)
    wmean = spec.criterion("weighted_mean_age")
    delta, _ = get(wmean.kind).sensitivity(spec, table, wmean, None)
    assert delta == pytest.approx((1.5e6 * 90 - 1e4 * 17) / n_pop)


@pytest.fixture(scope="module")
def adult_run(tmp_path_factory, adult_doc):
    """A quick run: 4000 Adult rows (its ', ' format kept), the independent generator."""
    from workbench.engine import run

    tmp = tmp_path_factory.mktemp("adult")
    source = shared_data("adult/adult_train.csv.gz")
    with gzip.open(source, "rt") as fh:
        lines = fh.read().splitlines()
    data = tmp / "adult_4000.csv"
    data.write_text("\n".join(lines[:4001]) + "\n")
    doc = copy.deepcopy(adult_doc)
    doc["generator"] = {"family": "independent", "search_space": [{}]}
    for c in doc["criteria"]:
        c["threshold"] = {"marginals": 1.0, "weighted_sex_income": 1.0,
                          "weighted_mean_age": 90.0}[c["id"]]
    spec_path = tmp / "adult_survey.frozen.json"
    save_spec(doc, spec_path)
    outcome = run(spec_path, data, tmp / "out", quiet=True, budget_store=tmp / "store")
    return outcome, build_spec(doc)


def test_run_releases_weights_matching_the_public_margins_and_verify_checks_them(adult_run):
    from workbench.engine import verify_bundle
    from workbench.survey.calibrate import margin_gaps

    outcome, spec = adult_run
    assert outcome.status == "complete"
    root = outcome.release_dir
    release = pd.read_csv(root / "release.csv", dtype=str, keep_default_na=False)
    weights = release["fnlwgt"].astype(float).to_numpy()
    gaps = margin_gaps(spec.survey, release, weights)
    assert max(gaps.values()) < 0.01
    survey = json.loads((root / "survey.json").read_text())
    assert survey["sampling_amplification"]["charged"] is False
    assert set(survey["binnings"]) == {"sex_race", "age_band"}
    ledger = [json.loads(x) for x in (root / "ledger.jsonl").read_text().splitlines()]
    spent = sum(e["epsilon"] for e in ledger if str(e.get("purpose", "")).startswith("survey "))
    assert spent == pytest.approx(1.0)
    v = verify_bundle(root)
    assert v.ok, v.summary()
    assert "within 1%" in v.checks["survey"]


def test_verify_flags_weights_that_miss_the_margins(adult_run, tmp_path):
    import shutil

    from workbench.engine import verify_bundle

    outcome, _ = adult_run
    copy_dir = tmp_path / "release"
    shutil.copytree(outcome.release_dir, copy_dir)
    frame = pd.read_csv(copy_dir / "release.csv", dtype=str, keep_default_na=False)
    frame.loc[frame["sex"] == "Female", "fnlwgt"] = (
        frame.loc[frame["sex"] == "Female", "fnlwgt"].astype(float) * 1.05).astype(str)
    frame.to_csv(copy_dir / "release.csv", index=False, lineterminator="\n")
    v = verify_bundle(copy_dir)
    assert not v.ok
    assert "FAILED" in v.checks["survey"] and "sex_race" in v.checks["survey"]
    assert "FAILED" in v.checks["manifest"]


def test_survey_dry_run_writes_plots_what_if_tables_and_crossover(adult_doc, tmp_path):
    from workbench.dryrun.survey import survey_dry_run
    from workbench.survey.design import crossover_epsilon_proportion

    spec = build_spec(adult_doc)
    report = survey_dry_run(spec, shared_data("adult/adult_train.csv.gz"), tmp_path,
                            fraction=0.05, reps=6, seed=1)
    assert {p.name for p in report["files"]} >= {"methods.png", "paired_mean_age.png"}
    assert all(p.stat().st_size > 1000 for p in report["files"])
    table = report["what_if"]
    assert set(table["epsilon"]) == {0.1, 0.5, 1.0, 2.0}
    share = table[table["estimator"] == "share Y=>50K"].iloc[0]
    res = report["result"]
    p = res.truth["share Y=>50K"]
    # √2·Δ/SD with Δ = 1/n (a share) and the binomial SD is the proportion formula
    expected = crossover_epsilon_proportion(res.n, p, 1 - res.n / res.population)
    assert share["crossover_epsilon"] == pytest.approx(expected, rel=0.6)
    assert set(report["binnings"]["margin"]) == {"sex_race", "age_band"}
    probs = report["binnings"].groupby("margin")["selection_probability"].sum()
    assert probs.to_numpy() == pytest.approx([1.0, 1.0])
    assert report["criteria_epsilon"]["weighted_mean_age"] == ("mean age", 0.05)


def test_codesign_app_has_a_survey_tab_whose_fields_edit_the_draft(adult_doc):
    from conftest import widget_by_class

    from workbench.widgets.dashboards.app import CoDesignApp
    from workbench.widgets.model.session import Session

    doc = copy.deepcopy(adult_doc)
    doc["generator"] = {"family": "independent", "search_space": [{}]}  # a quick preview
    spec = build_spec(doc)
    proxy = pd.read_csv(shared_data("adult/adult_train.csv.gz"), skipinitialspace=True,
                        usecols=[*spec.column_names, "fnlwgt"]).head(2000)
    app = CoDesignApp(Session(doc, proxy))
    assert "Survey" in app.tabs.titles
    panel = app.select("Survey")
    table = widget_by_class(app.widget, "wb-survey-table")
    table.value = 0.3
    assert app.session.draft["survey"]["epsilon"]["table"] == 0.3
    assert app.session.spec.epsilon_total == pytest.approx(1.15 + 0.1 + 0.3 + 0.4)
    total = widget_by_class(app.widget, "wb-survey-total").value
    assert "survey 0.8" in total and "= 1.95" in total
    assert "not charged" in widget_by_class(app.widget, "wb-survey-secondary").value
    assert "small_races_merged" in widget_by_class(app.widget, "wb-survey-binnings").value
    crossover = widget_by_class(app.widget, "wb-survey-crossover").value
    assert "weighted_mean_age" in crossover and "DP noise" in crossover
    assert panel.title == "Survey"
    plain = copy.deepcopy(doc)
    del plain["survey"]
    plain["criteria"] = plain["criteria"][:1]
    plain["budget"]["epsilon_criteria"] = 0.05
    assert "Survey" not in CoDesignApp(Session(plain, proxy)).tabs.titles
