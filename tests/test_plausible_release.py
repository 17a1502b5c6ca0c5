"""Must-show 4 of issue 18: ``workbench run examples/adult_plausible_deniability.frozen.json``
on Adult-shaped data releases, ``verify`` passes (and flags the per-record guarantee), and the
release review dashboard shows "per-record plausible deniability (ε, δ)".

Issue 28: the example learns its structure from the public half (``structure: public``), so
the model's ε_gen is spent on D_P alone and the ledger says where the structure came from.

Issue 24: the family runs as a single attempt (T = 1), which ends in ⊥ when a criterion
fails. The example's recorded forecast is p = 0.90 at n = 5,000 on the public half (0.75–0.95
over proxy scenarios), so a few runs in ten would end in ⊥: the runs here use a copy of the
frozen example whose thresholds are loose (``_loose_spec``; nothing they check depends on
them). And the two-datasets test: on two different datasets of the same
n, every published field other than a DP output is identical (no pass count leaks)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import widget_by_class

from workbench.cli.main import main
from workbench.engine import verify_bundle
from workbench.validation import load_spec

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "adult_plausible_deniability.json"
FROZEN = REPO / "examples" / "adult_plausible_deniability.frozen.json"
LABEL = "per-record plausible deniability (ε, δ)"


@pytest.fixture(scope="module")
def adult_work(adult_halves: Path) -> Path:
    """A working directory with the Adult halves made by scripts/adult_data.py (the public
    proxy the example names, out/adult/…, is relative to it)."""
    return adult_halves


def _loose_spec(work: Path, name: str, configurations: int | None = None) -> Path:
    """The frozen example with loose thresholds (a single attempt must not end in ⊥ here),
    optionally narrowed to its first ``configurations``."""
    from workbench.specification.document import read_document
    from workbench.validation import save_spec

    doc = read_document(FROZEN)
    doc.pop("frozen")
    doc["selection"].pop("forecast")  # the design's forecast is not this copy's (T = 1 anyway)
    loose = {"tstr_income": 0.6, "distinguisher": 0.99, "tv_2way": 0.5}
    doc["criteria"] = [dict(c, threshold=loose[c["id"]]) for c in doc["criteria"]]
    for c in doc["criteria"]:  # 1 − accuracy ≤ 0.6: loose (relative to the majority it is not)
        c["params"].pop("baseline", None)
    if configurations is not None:
        doc["selection"]["configurations"] = doc["selection"]["configurations"][:configurations]
    path = work / name
    save_spec(doc, path)
    return path


def _run_in(work: Path, spec: Path, data: Path, out: str, rehearse: int | None = None) -> Path:
    """``workbench run`` from ``work`` (where the relative public proxy is), seeded with
    ``rehearse`` (public data) where a chance ⊥ must not fail the test; the bundle."""
    here = Path.cwd()
    os.chdir(work)
    seeded = [] if rehearse is None else ["--rehearse", str(rehearse)]
    try:
        assert main(["run", str(spec), str(data), "--out", str(work / out), "--quiet",
                     "--budget-store", str(work / f"budgets-{out}"), *seeded]) == 0
    finally:
        os.chdir(here)
    return work / out / "release"


@pytest.fixture(scope="module")
def adult_run(adult_work: Path) -> Path:
    """The example (loose thresholds) run once on the confidential Adult half."""
    return _run_in(adult_work, _loose_spec(adult_work, "loose.frozen.json"),
                   adult_work / "out" / "adult" / "adult_confidential.csv", "run")


def test_example_is_the_draft_frozen_with_the_paper_defaults() -> None:
    frozen = load_spec(FROZEN, require_frozen=True)
    draft = json.loads(EXAMPLE.read_text())
    assert frozen.generator.family == "plausible_deniability" == draft["generator"]["family"]
    for params in frozen.generator.hyperparameter_sets():
        assert (params["k"], params["gamma"], params["epsilon_0"], params["omega_min"]) == (
            50, 4, 1, 5)
    assert frozen.budget.epsilon_generator == 1.0
    assert {c.kind for c in frozen.criteria} == {"tstr", "distinguisher", "tv_marginals"}
    assert frozen.selection.max_iterations == 1 == draft["selection"]["max_iterations"]
    (tstr,) = [c for c in frozen.criteria if c.kind == "tstr"]
    assert tstr.params["baseline"] == "majority" and tstr.threshold < 1  # issue 28


def test_the_example_pins_the_public_half_that_scripts_adult_data_writes(
        adult_work: Path) -> None:
    """Issue 28: the structure comes from the public half; the spec's SHA-256 is that file's."""
    import hashlib

    frozen = load_spec(FROZEN, require_frozen=True)
    (params,) = {tuple(sorted(p.items())) for p in frozen.generator.hyperparameter_sets()}
    params = dict(params)
    assert params["structure"] == "public" and "split_structure" not in params
    proxy = adult_work / params["structure_proxy"]
    assert params["structure_proxy"] == "out/adult/adult_public_proxy.csv"
    assert hashlib.sha256(proxy.read_bytes()).hexdigest() == params["structure_proxy_sha256"]


def test_a_loop_over_plausible_deniability_is_refused_naming_the_field() -> None:
    """Issue 24: a PD candidate is not ε₁-DP, so Liu–Talwar cannot cover a loop (T > 1)."""
    from workbench.specification import SpecError
    from workbench.validation import build_spec

    draft = json.loads(EXAMPLE.read_text())
    for selection in ({"gamma": 0, "max_iterations": None, "epsilon_0": 0},
                      {"gamma": 0.5, "max_iterations": 3, "epsilon_0": 0.45}):
        draft["selection"].update(selection)
        with pytest.raises(SpecError) as err:
            build_spec(draft)
        (problem,) = [p for p in err.value.problems if p.path == "selection.max_iterations"]
        assert "plausible_deniability" in problem.message and "set selection.max_iterations " \
            "to 1" in problem.message


def test_run_releases_and_verify_passes_with_the_per_record_flag(adult_run: Path) -> None:
    v = verify_bundle(adult_run)
    assert v.ok, v.problems
    assert v.checks["guarantee"] == LABEL
    guarantee_flags = [f for f in v.flags if "forecast" not in f]  # (an old forecast's note)
    (flag,) = guarantee_flags
    assert flag.startswith(f"the released records are NOT ε-DP over the dataset: {LABEL}; "
                           "a released record costs its seed ε = ε_PD + Σε_criteria")
    guarantee = json.loads((adult_run / "guarantee.json").read_text())
    assert guarantee["kind"] == "per_record_plausible_deniability"
    assert guarantee["parameters"]["t"] == 29 and not guarantee["dataset_level"]
    readme = (adult_run / "README.md").read_text()
    assert LABEL in readme and "(pure ε-DP, δ = 0)" not in readme
    assert "PUBLIC proxy 'out/adult/adult_public_proxy.csv'" in guarantee["explanation"]
    lines = [json.loads(x) for x in (adult_run / "ledger.jsonl").read_text().splitlines()]
    (source,) = [x for x in lines if x["event"] == "public_structure"]
    assert (source["epsilon"], source["records_of_r"]) == (0.0, 0)  # issue 28: public structure
    assert not [x for x in lines if x["event"] == "parallel_composition"]  # D_P alone spends
    model = [x for x in lines if x["event"] == "measurement" and "plausible" in x["purpose"]]
    assert [(x["purpose"], x["epsilon"]) for x in model] == [
        ("plausible deniability parameters: noisy counts (D_P)", 1.0)]
    (test2,) = [x for x in lines if x["event"] == "plausible_deniability_test"]  # one plan
    assert (test2["k"], test2["epsilon_0"], test2["gamma"]) == (50, 1.0, 4.0)
    n = summary_n = lines[-1]["n_records"]
    assert (test2["records"], test2["batch"], test2["candidates_max"]) == (
        summary_n, max(1024, 2 * n), 20 * n)  # public: n and the declared cap only
    summary = lines[-1]
    assert summary["epsilon_total"] == pytest.approx(1.0684)  # 1 × (1 + 0.0684): one attempt
    assert "released records: " + LABEL in summary["epsilon_total_formula"]


def test_the_per_record_figure_is_the_test_plus_the_criteria_everywhere(
        adult_run: Path, tmp_path: Path) -> None:
    """Issue 34: a seed also enters every criterion evaluated on R, which gate the release, so
    the stated per-record ε is ε_PD (Thm 1) + Σ criteria ε, computed here from the spec;
    guarantee.json, the README, report.html and the ledger's formula state it, and verify
    fails a bundle that states Thm 1's ε alone (the words before issue 34)."""
    import math
    import shutil

    from workbench.engine.bundle import MANIFEST
    from workbench.privacy.plausible import smallest_epsilon
    from workbench.specification.document import file_sha256

    spec = load_spec(adult_run / "spec.json", require_frozen=True)
    (params,) = {tuple(sorted(p.items())) for p in spec.generator.hyperparameter_sets()}
    params = dict(params)
    theorem = smallest_epsilon(params["k"], params["gamma"], params["epsilon_0"], 2.0 ** -30)
    criteria = math.fsum(c.epsilon for c in spec.criteria)
    assert round(criteria, 12) == 0.0684 and spec.selection.epsilon_0 == 0  # the example's
    stated = json.loads((adult_run / "guarantee.json").read_text())["parameters"]
    assert stated["epsilon_pd"] == pytest.approx(theorem.epsilon, abs=1e-12)
    assert stated["epsilon_criteria"] == pytest.approx(criteria, abs=1e-12)
    assert stated["epsilon"] == pytest.approx(theorem.epsilon + criteria, abs=1e-12)
    assert stated["delta"] == pytest.approx(theorem.delta)
    words = ("a released record costs its seed ε = ε_PD + Σε_criteria = 1.129 + 0.0684 = "
             "1.198, with δ = 7.58e-10")
    for name in ("README.md", "report.html"):
        text = (adult_run / name).read_text()
        assert words in text and f"carry {LABEL} instead" not in text, name
    summary = [json.loads(x) for x in (adult_run / "ledger.jsonl").read_text().splitlines()][-1]
    assert summary["records_epsilon"] == pytest.approx(theorem.epsilon + criteria, abs=1e-12)
    assert ("ε = 1.12921 (the records' test) + 0.0684 (criteria on R, which gate the release) "
            "= 1.19761, δ = 7.58e-10 per record") in summary["epsilon_total_formula"]
    v = verify_bundle(adult_run)
    assert v.ok and words in v.flags[-1]
    root = tmp_path / "thm1-alone"  # the pre-issue-34 figure, manifest re-hashed
    shutil.copytree(adult_run, root)
    doc = json.loads((root / "guarantee.json").read_text())
    doc["parameters"]["epsilon"] = doc["parameters"]["epsilon_pd"]
    (root / "guarantee.json").write_text(json.dumps(doc, ensure_ascii=False))
    manifest = json.loads((root / MANIFEST).read_text())
    manifest["guarantee.json"] = file_sha256(root / "guarantee.json")
    (root / MANIFEST).write_text(json.dumps(manifest))
    v = verify_bundle(root)
    assert [p.split(":")[0] for p in v.problems] == ["guarantee"]
    assert "field 'parameters.epsilon' is 1.12921" in v.checks["guarantee"]
    assert "ε_PD + Σε_criteria = 1.12921 + 0.0684 = 1.19761" in v.checks["guarantee"]


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
    from workbench.specification.document import read_document
    from workbench.validation import save_spec

    doc = read_document(FROZEN)
    doc.pop("frozen", None)
    doc["selection"].pop("forecast")  # made for the example, not this copy (T = 1 anyway)
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


def test_two_datasets_of_the_same_n_publish_the_same_fields_but_dp_outputs(
        adult_work: Path) -> None:
    """Issue 24: the PD example on two different datasets of the same n (3,000 records each,
    disjoint rows of the confidential half): every published field other than a DP output —
    the ledger lines (the Test-2 plan among them), guarantee.json, configuration.json,
    spec.json, criteria.json without its DP values, README.md with them masked — is identical.
    (One configuration, so the uniform choice among configurations does not differ.) Both runs
    are rehearsals of one seed: the same code path, and a CSPRNG run could end in ⊥ by chance."""
    import pandas as pd

    frame = pd.read_csv(adult_work / "out" / "adult" / "adult_confidential.csv", dtype=str)
    spec = _loose_spec(adult_work, "one.frozen.json", configurations=1)
    bundles = []
    for i in (0, 1):
        data = adult_work / f"part{i}.csv"
        frame.iloc[3000 * i:3000 * (i + 1)].to_csv(data, index=False)
        bundles.append(_run_in(adult_work, spec, data, f"part{i}", rehearse=1))
    a, b = bundles
    assert (a / "release.csv").read_bytes() != (b / "release.csv").read_bytes()

    def ledger(root: Path) -> list[dict]:
        return [{k: v for k, v in json.loads(x).items() if k != "run_id"}  # a random id
                for x in (root / "ledger.jsonl").read_text().splitlines()]

    assert ledger(a) == ledger(b)
    assert any(x["event"] == "plausible_deniability_test" for x in ledger(a))
    for name in ("guarantee.json", "configuration.json", "spec.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name

    def criteria(root: Path) -> tuple[list[dict], list[float]]:
        rows = json.loads((root / "criteria.json").read_text())["criteria"]
        return [{k: v for k, v in r.items() if k != "value"} for r in rows], [
            r["value"] for r in rows]

    (rows_a, values_a), (rows_b, values_b) = criteria(a), criteria(b)
    assert rows_a == rows_b and values_a != values_b  # only the DP values differ

    def readme(root: Path, values: list[float]) -> str:
        text = (root / "README.md").read_text()
        for v in values:
            text = text.replace(f"{v:.4g}", "DP")
        return text

    assert readme(a, values_a) == readme(b, values_b)
