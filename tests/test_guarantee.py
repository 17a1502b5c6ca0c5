"""The guarantee wiring: the bundle records the chosen configuration's guarantee, the
datasheet, report.html, describe and the release review show its label, and ``verify`` checks
that the bundle states what the family declares (and flags anything but pure ε-DP)."""

from __future__ import annotations

import copy
import json
import shutil
import sys
from pathlib import Path

import pytest

from workbench.cli.main import main
from workbench.engine import verify_bundle
from workbench.engine.bundle import BUNDLE_FILES, MANIFEST
from workbench.evidence.sampler import sample_proxy
from workbench.generators import (
    PURE_EPSILON_DP,
    Guarantee,
    PrivBayes,
    register,
    unregister,
)
from workbench.privacy.budget_plan import BudgetPlan
from workbench.report.guarantee import guarantee_html, guarantee_markdown, guarantee_sentence
from workbench.specification.document import file_sha256
from workbench.trial import bind
from workbench.validation import build_spec, save_spec

REPO = Path(__file__).resolve().parents[1]
PER_RECORD = Guarantee("per-record toy (ε, δ)", dataset_level=False, kind="toy_per_record",
                       explanation="each released record alone", parameters={
                           "epsilon": 1.5, "delta": 2e-9, "t": 3})


class PerRecordBayes(PrivBayes):
    """PrivBayes that claims a per-record guarantee (a toy: tests the wiring only)."""

    name = "toy_per_record"

    def guarantee(self) -> Guarantee:
        return PER_RECORD


def _document(family: str) -> dict:
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        from narrow_example import narrowed_document
    finally:
        sys.path.pop(0)
    doc = narrowed_document()
    config = copy.deepcopy(doc["selection"]["configurations"][0])
    config["generator"]["family"] = family
    doc["selection"]["configurations"] = [config]
    doc["generator"]["family"] = family
    keep = {"marginals": 0.05, "mean_gestation": 3.0}
    doc["criteria"] = [dict(c, threshold=keep[c["id"]]) for c in doc["criteria"]
                       if c["id"] in keep]
    doc["budget"]["epsilon_criteria"] = round(sum(c["epsilon"] for c in doc["criteria"]), 10)
    doc["metadata"]["dataset"] = f"guarantee-{family}"
    return doc


@pytest.fixture(scope="module")
def toy_registered():
    register(PerRecordBayes)
    yield PerRecordBayes
    unregister(PerRecordBayes.name)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, toy_registered) -> dict[str, Path]:
    work = tmp_path_factory.mktemp("guarantee")
    data = work / "data.csv"
    sample_proxy(6_000, seed=3).to_csv(data, index=False)
    out = {}
    for family in ("privbayes", "toy_per_record"):
        spec_path = work / f"{family}.frozen.json"
        save_spec(_document(family), spec_path)
        out[family] = work / f"run-{family}"
        assert main(["run", str(spec_path), str(data), "--out", str(out[family]), "--quiet",
                     "--budget-store", str(work / "budgets"), "--allow-unbounded"]) == 0
    return out


def test_guarantee_round_trips_and_words() -> None:
    assert Guarantee.from_dict(PER_RECORD.as_dict()) == PER_RECORD
    assert PURE_EPSILON_DP.is_pure and not PER_RECORD.is_pure
    assert guarantee_sentence(PER_RECORD) == ("per-record toy (ε, δ) (ε = 1.5, δ = 2e-09, t = 3)"
                                              ": each released record alone")
    assert "not composed over the released dataset" in " ".join(guarantee_markdown(PER_RECORD))
    assert "class='wb-guarantee-label'>per-record toy (ε, δ)<" in guarantee_html(PER_RECORD)
    assert "not composed" not in guarantee_html(PURE_EPSILON_DP)


def test_budget_plan_states_two_parts_and_never_adds_them() -> None:
    plan = BudgetPlan(1.0, 0.5, max_iterations=1)
    two = plan.with_records("per-record toy (ε, δ)", 1.5, 2e-9)
    assert two.epsilon_total == plan.epsilon_total == 1.5
    assert two.formula().startswith(plan.formula() + "; released records: per-record toy")
    assert "not part of ε_total" in two.formula()
    assert two.parts()["records"] == {"label": "per-record toy (ε, δ)", "epsilon": 1.5,
                                      "delta": 2e-9, "composed_over_dataset": False}
    assert "records" not in plan.parts()


def test_pure_bundle_records_pure_guarantee_and_verifies(runs: dict[str, Path]) -> None:
    release = runs["privbayes"] / "release"
    assert "guarantee.json" in BUNDLE_FILES
    assert json.loads((release / "guarantee.json").read_text()) == PURE_EPSILON_DP.as_dict()
    v = verify_bundle(release)
    assert v.ok, v.problems
    assert v.checks["guarantee"] == "ε-DP" and not v.flags
    assert "(pure ε-DP, δ = 0)" in (release / "README.md").read_text()


def test_per_record_bundle_states_the_label_everywhere_and_verify_flags_it(
        runs: dict[str, Path], capsys: pytest.CaptureFixture) -> None:
    release = runs["toy_per_record"] / "release"
    stated = json.loads((release / "guarantee.json").read_text())
    assert stated == PER_RECORD.as_dict()
    spec = build_spec(json.loads((release / "spec.json").read_text()))
    assert bind(spec, next(spec.configurations())).guarantee == PER_RECORD
    readme = (release / "README.md").read_text()
    assert "## Guarantee of the released records" in readme
    assert "**per-record toy (ε, δ)** (ε = 1.5, δ = 2e-09, t = 3)" in readme
    assert "(pure ε-DP, δ = 0)" not in readme and "Pure ε-DP part: ε_total" in readme
    assert "per-record toy (ε, δ)" in (release / "report.html").read_text()
    summary = [json.loads(x) for x in (release / "ledger.jsonl").read_text().splitlines()][-1]
    assert summary["guarantee"] == "per-record toy (ε, δ)"
    assert summary["records_epsilon"] == 1.5 and summary["records_delta"] == 2e-9
    assert "released records: per-record toy (ε, δ)" in summary["epsilon_total_formula"]
    v = verify_bundle(release)
    assert v.ok, v.problems
    assert v.flags == ["the released records are NOT ε-DP over the dataset: "
                       "per-record toy (ε, δ); each released record: ε = 1.5, δ = 2e-09"]
    assert main(["verify", str(release)]) == 0
    assert "NOTE: the released records are NOT ε-DP" in capsys.readouterr().out


def _remanifest(root: Path) -> None:
    (root / MANIFEST).write_text(json.dumps({n: file_sha256(root / n) for n in BUNDLE_FILES}))


def test_verify_refuses_a_bundle_that_claims_more_than_its_family(
        runs: dict[str, Path], tmp_path: Path) -> None:
    root = tmp_path / "claims-pure"
    shutil.copytree(runs["toy_per_record"] / "release", root)
    (root / "guarantee.json").write_text(json.dumps(PURE_EPSILON_DP.as_dict()))
    _remanifest(root)  # the tamperer fixes the manifest too: the guarantee check still fails
    v = verify_bundle(root)
    assert not v.ok and v.checks["guarantee"].startswith("FAILED: the bundle states 'ε-DP'")
    root = tmp_path / "hides-label"
    shutil.copytree(runs["toy_per_record"] / "release", root)
    readme = (root / "README.md").read_text().replace("per-record toy (ε, δ)", "ε-DP")
    (root / "README.md").write_text(readme)
    _remanifest(root)
    assert "README.md does not show the guarantee" in verify_bundle(root).checks["guarantee"]


def test_release_review_shows_the_label(runs: dict[str, Path]) -> None:
    from conftest import widget_by_class

    from workbench.widgets.dashboards.release_review import ReleaseReview, load_bundle

    release = runs["toy_per_record"] / "release"
    bundle = load_bundle(release)
    assert bundle.guarantee == PER_RECORD.as_dict()
    review = ReleaseReview(bundle, verify_bundle(release))
    header = widget_by_class(review.widget, "wb-review-header").value
    assert "wb-guarantee-badge" in header and "per-record toy (ε, δ)" in header
    assert "wb-warn" in header and "NOT ε-DP over the dataset" in header
    budget = widget_by_class(review.widget, "wb-section-budget").value
    assert "wb-guarantee-label'>per-record toy (ε, δ)<" in budget
