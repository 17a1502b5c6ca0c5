"""The survey section, its budget, and an Adult run whose weighted margins verify from a bundle."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from conftest import shared_data

from workbench.specification import SpecError
from workbench.specification.derived import document_plan
from workbench.specification.document import read_document
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
    # ε_w (the weight check's default 0.01) + ε₁ + ε₂ + ε₃ = 0.01 + 0.1 + 0.5 + 0.4
    assert s is not None and s.weight_column == "fnlwgt" and s.epsilon == pytest.approx(1.01)
    assert [m.name for m in s.margins] == ["sex_race", "age_band"]
    assert sum(s.margins[0].totals) == pytest.approx(sum(s.margins[1].totals))
    plan = spec.budget_plan()
    assert plan.epsilon_survey == pytest.approx(1.01)
    assert spec.epsilon_total == pytest.approx(1 * (1 + 0.15) + 1.01)
    assert document_plan(adult_doc).epsilon_total == pytest.approx(spec.epsilon_total)
    assert "survey 1.01" in plan.formula()
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


def adult_sample(path: Path, rows: int, share: float) -> Path:
    """The first ``rows`` Adult records with fnlwgt rescaled to sum to ``share`` × the margins'
    population N (the example's margins are the whole file's weighted totals)."""
    frame = pd.read_csv(shared_data("adult/adult_train.csv.gz"), skipinitialspace=True,
                        nrows=rows)
    n_pop = sum(json.loads(EXAMPLE.read_text())["survey"]["margins"][0]["totals"].values())
    frame["fnlwgt"] = frame["fnlwgt"] * (share * n_pop / frame["fnlwgt"].sum())
    frame.to_csv(path, index=False)
    return path


def quick_doc(adult_doc: dict) -> dict:
    """The example with the independent generator and loose thresholds (a quick release), its
    weight check at ε_w = 0.05: noise sd ≈ 0.7% of N, so correct weights pass but for ~e^{-39}."""
    doc = copy.deepcopy(adult_doc)
    doc["survey"]["weight_check_epsilon"] = 0.05
    doc["generator"] = {"family": "independent", "search_space": [{}]}
    for c in doc["criteria"]:
        c["threshold"] = {"marginals": 1.0, "weighted_sex_income": 1.0,
                          "weighted_mean_age": 90.0}[c["id"]]
    return doc


@pytest.fixture(scope="module")
def adult_run(tmp_path_factory, adult_doc):
    """A quick run on 10,000 Adult rows whose weights describe the margins' population N
    (fnlwgt rescaled to sum to N: the weight check before the loop passes)."""
    from workbench.engine import run

    tmp = tmp_path_factory.mktemp("adult")
    data = adult_sample(tmp / "adult_10000.csv", 10_000, 1.0)
    doc = quick_doc(adult_doc)
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
    assert spent == pytest.approx(1.05)  # ε_w + ε₁ + ε₂ + ε₃, ε_w as the spec writes it
    check = [e for e in ledger if e.get("purpose") == "survey weight check"]
    assert len(check) == 1 and check[0]["epsilon"] == pytest.approx(0.05)
    assert check[0]["stage"] == "once"  # before the loop, priced like the raking
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
    assert app.session.spec.epsilon_total == pytest.approx(1.15 + 0.01 + 0.1 + 0.3 + 0.4)
    total = widget_by_class(app.widget, "wb-survey-total").value
    assert "survey 0.81" in total and "= 1.96" in total
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


def test_weights_summing_to_half_of_n_stop_the_run_before_the_loop(adult_doc, tmp_path, capsys):
    """Issue 34 must-show 4: weights that sum to N/2 are refused by the DP weight check, naming
    every margin and its ratio, before the loop; only ε_w is spent (ledger, store, status)."""
    from workbench.cli.main import main
    from workbench.privacy.budget_store import DatasetBudget

    data = adult_sample(tmp_path / "adult_half.csv", 10_000, 0.5)
    spec_path = tmp_path / "adult_survey.frozen.json"
    save_spec(quick_doc(adult_doc), spec_path)
    out, store = tmp_path / "out", tmp_path / "store"
    code = main(["run", str(spec_path), str(data), "--out", str(out), "--quiet",
                 "--budget-store", str(store)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("refused: survey weight check")
    ratios = dict(re.findall(r"margin '(\w+)': ratio ([0-9]*\.?[0-9]+)", err))
    assert set(ratios) == {"sex_race", "age_band"}
    assert all(0.3 < float(r) < 0.8 for r in ratios.values())  # true 0.4998, noise sd 0.007
    assert "rescale the weight column" in err and "selection loop did not run" in err
    assert "ε = 0.05" in err
    status = json.loads((out / "status.json").read_text())
    assert status["status"] == "refused" and "survey weight check" in status["reason"]
    assert not (out / "release").exists()
    book = DatasetBudget(store, "uci-adult-train")
    measured = [e for e in book.entries() if e.get("event") == "measurement"]
    assert [e["purpose"] for e in measured] == ["survey weight check"]
    assert book.spent() == pytest.approx(0.05)


def test_the_dry_run_on_a_half_weighted_proxy_says_the_same(adult_doc, tmp_path):
    """The public rehearsal refuses the same proxy before any task, with the run's words."""
    from workbench.dryrun import dry_run
    from workbench.dryrun.executors import InlineExecutor
    from workbench.survey.weight_check import WeightCheckFailed

    spec = build_spec(quick_doc(adult_doc))
    half = pd.read_csv(adult_sample(tmp_path / "half.csv", 10_000, 0.5))
    with pytest.raises(WeightCheckFailed) as err:
        dry_run(spec, half, repetitions=1, cache=False, progress=False, noise="seeded")
    text = str(err.value)
    assert "exact total on the public proxy" in text
    assert "margin 'sex_race': ratio 0.5" in text and "margin 'age_band': ratio 0.5" in text
    assert "rescale the weight column" in text and "spent only the check's ε = 0.05" in text
    full = pd.read_csv(adult_sample(tmp_path / "full.csv", 10_000, 1.0))
    result = dry_run(spec, full, repetitions=1, cache=False, progress=False, noise="seeded",
                     executor=InlineExecutor())
    assert result.records and all(r.failure != "survey weight check" for r in result.records)
