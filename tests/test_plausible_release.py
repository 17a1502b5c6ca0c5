"""Must-show 4 of issue 18: ``workbench run examples/adult_plausible_deniability.frozen.json``
on Adult-shaped data releases, ``verify`` passes (and flags the per-record guarantee), and the
release review dashboard shows "per-record plausible deniability (ε, δ)"."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest
from conftest import shared_data, widget_by_class

from workbench.cli.main import main
from workbench.engine import verify_bundle
from workbench.validation import load_spec

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "adult_plausible_deniability.json"
FROZEN = REPO / "examples" / "adult_plausible_deniability.frozen.json"
LABEL = "per-record plausible deniability (ε, δ)"


def _adult_script():
    spec = importlib.util.spec_from_file_location("adult_data", REPO / "scripts" / "adult_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.fixture(scope="module")
def adult_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The frozen example run once on the Adult half made by scripts/adult_data.py; the public
    proxy it names (out/adult/…, relative) sits under the working directory of the run."""
    source = shared_data("adult/adult_train.csv.gz")
    work = tmp_path_factory.mktemp("adult_pd")
    out = work / "out" / "adult"
    assert _adult_script().main(["--source", str(source), "--out", str(out)]) == 0
    here = Path.cwd()
    os.chdir(work)
    try:
        assert main(["run", str(FROZEN), str(work / "out" / "adult" / "adult_confidential.csv"),
                     "--out", str(work / "run"), "--quiet",
                     "--budget-store", str(work / "budgets")]) == 0
    finally:
        os.chdir(here)
    return work / "run" / "release"


def test_example_is_the_draft_frozen_with_the_paper_defaults() -> None:
    frozen = load_spec(FROZEN, require_frozen=True)
    draft = json.loads(EXAMPLE.read_text())
    assert frozen.generator.family == "plausible_deniability" == draft["generator"]["family"]
    for params in frozen.generator.hyperparameter_sets():
        assert (params["k"], params["gamma"], params["epsilon_0"], params["omega_min"]) == (
            50, 4, 1, 5)
    assert frozen.budget.epsilon_generator == 1.0
    assert {c.kind for c in frozen.criteria} == {"tstr", "distinguisher", "tv_marginals"}


def test_run_releases_and_verify_passes_with_the_per_record_flag(adult_run: Path) -> None:
    v = verify_bundle(adult_run)
    assert v.ok, v.problems
    assert v.checks["guarantee"] == LABEL
    assert v.flags == [f"the released records are NOT ε-DP over the dataset: {LABEL}"]
    guarantee = json.loads((adult_run / "guarantee.json").read_text())
    assert guarantee["kind"] == "per_record_plausible_deniability"
    assert guarantee["parameters"]["t"] == 29 and not guarantee["dataset_level"]
    readme = (adult_run / "README.md").read_text()
    assert LABEL in readme and "(pure ε-DP, δ = 0)" not in readme
    lines = [json.loads(x) for x in (adult_run / "ledger.jsonl").read_text().splitlines()]
    split = next(x for x in lines if x["event"] == "parallel_composition")
    assert "disjoint" in split["reason"] and split["epsilon_charged"] == 1.0
    model = [x for x in lines if x["event"] == "measurement" and x.get("group") == split["group"]]
    assert {x["part"] for x in model} == {"D_T (structure)", "D_P (parameters)"}
    assert all(x["epsilon"] == 1.0 for x in model)  # each part ε_gen; charged once (max)
    test2 = [x for x in lines if x["event"] == "plausible_deniability_test"]
    assert test2 and all(x["k"] == 50 and x["epsilon_0"] == 1.0 for x in test2)
    summary = lines[-1]
    assert summary["epsilon_total"] == pytest.approx(2.3)  # 2 × (1 + 0.15): the pure part
    assert "released records: " + LABEL in summary["epsilon_total_formula"]


@pytest.mark.slow
def test_release_review_dashboard_shows_the_per_record_label(adult_run: Path,
                                                             tmp_path: Path) -> None:
    from test_dashboards import _open, _shot, _tab, browser, voila

    from workbench.cli import dashboard as dash
    from workbench.widgets.dashboards.release_review import ReleaseReview, load_bundle

    review = ReleaseReview(load_bundle(adult_run), verify_bundle(adult_run))
    assert LABEL in widget_by_class(review.widget, "wb-review-header").value
    with voila("release", tmp_path) as base, browser(tmp_path, base) as (page, _blocked):
        _open(page, base + "?" + dash.dashboard_query({"bundle": adult_run}))
        header = page.locator(".wb-review-header").inner_text()
        assert "verify PASSED" in header and LABEL in header
        assert "NOT ε-DP over the dataset" in header
        assert page.locator(".wb-guarantee-badge .wb-warn").inner_text() == LABEL
        _tab(page, "Budget")
        assert page.locator(".wb-section-budget .wb-guarantee-label").inner_text() == LABEL
        _shot(page, "release_review_plausible_deniability")


def test_a_missing_distinguisher_proxy_is_refused_before_any_budget(tmp_path: Path,
                                                                    capsys) -> None:
    """The distinguisher's public proxy is checked by the kind's preflight, before the ledger
    opens: a run whose proxy file is absent spends nothing and names the criterion."""
    from workbench.spec.document import read_document
    from workbench.validation import save_spec

    doc = read_document(FROZEN)  # with its recorded forecast
    doc.pop("frozen", None)
    for criterion in doc["criteria"]:
        if criterion["kind"] == "distinguisher":
            criterion["params"]["proxy"] = "no/such/public_proxy.csv"
    spec = tmp_path / "spec.frozen.json"
    save_spec(doc, spec)
    data = tmp_path / "data.csv"
    data.write_text("age\n1\n")  # never read: the preflight refuses first
    code = main(["run", str(spec), str(data), "--out", str(tmp_path / "run"), "--quiet",
                 "--budget-store", str(tmp_path / "budgets")])
    err = capsys.readouterr().err
    assert code == 2
    assert "(distinguisher): its public proxy file 'no/such/public_proxy.csv'" in err
    assert not (tmp_path / "run").exists() and not (tmp_path / "budgets").exists()
