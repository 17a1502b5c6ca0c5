"""Issue 36: the design assistant proposes a criterion for every declared association no
criterion sees, and ``validate --strict --proxy`` refuses a spec whose criteria all pass a
release with a declared association reversed (small n, few repetitions)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import shared_csv
from test_associations import PAIR, _document, plant_smoking

from workbench.cli.main import main
from workbench.design.proposals import intended_use_lines, propose_associations
from workbench.dryrun.reversal import reversal_check
from workbench.evidence.prepare import as_evidence
from workbench.validation import build_spec, save_spec

N = "3000"


@pytest.fixture(scope="module")
def standin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The planted stand-in of test_associations (RR ≈ 1.8 for smoking → LBW)."""
    frame = pd.read_csv(shared_csv("us_births_2019_singleton_sample10k.csv"))
    frame = plant_smoking(frame[["mother_age", "parity", "gestation_week", "birth_weight"]])
    path = tmp_path_factory.mktemp("propose") / "standin.csv"
    frame.to_csv(path, index=False)
    return path


def _loose(with_rr: bool = False) -> dict[str, Any]:
    """The stand-in spec with a marginal threshold a candidate at n = 3,000 meets, and an
    intended use naming two undeclared columns."""
    doc = _document(with_rr)
    doc["criteria"][0]["threshold"] = 0.2
    doc["metadata"]["intended_uses"] = ["gestation_week by mother_age, and smoking"]
    return doc


def test_design_adds_a_relative_risk_criterion_that_sees_the_reversal(
        standin: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A declared pair without a criterion: ``design`` writes a draft holding a relative_risk
    criterion on it, with a threshold below the proxy's |log RR| and ε from the rule, says
    why, and the draft's criteria no longer all pass the reversed release."""
    spec_path, draft = tmp_path / "spec.json", tmp_path / "draft.json"
    save_spec(_loose(), spec_path)
    code = main(["design", str(spec_path), str(standin), "--n", N, "--eps-gen", "5",
                 "--divisors", "3", "--repetitions", "1", "--check-repetitions", "2",
                 "--draws", "2", "--target-p", "0.05", "--out", str(draft), "--quiet",
                 "--workers", "0"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert ("proposed criterion 'rr_smoking_birth_weight' (relative_risk, threshold"
            in printed)
    assert ("for the declared association smoking → birth_weight: no criterion sees its "
            "direction") in printed
    assert "names the columns 'mother_age' and 'gestation_week'" in printed
    assert "'smoking' and" not in printed  # the declared pair is not suggested again
    doc = json.loads(draft.read_text())
    rr = [c for c in doc["criteria"] if c["kind"] == "relative_risk"]
    assert len(rr) == 1 and rr[0]["id"] == "rr_smoking_birth_weight"
    assert {k: rr[0]["params"][k] for k in PAIR} == PAIR
    frame = pd.read_csv(standin)
    low, smoke = frame["birth_weight"] < 2500, frame["smoking"] == "yes"
    proxy_log_rr = math.log(low[smoke].mean() / low[~smoke].mean())
    assert 0 < rr[0]["threshold"] < proxy_log_rr  # a loss of the association fails too
    assert 0 < rr[0]["epsilon"] < math.inf
    assert "rr_smoking_birth_weight" in printed.split("| criterion |")[1]  # priced by the rule
    checks = reversal_check(build_spec(doc), str(standin), int(N), draws=2)
    assert len(checks) == 1 and not checks[0].all_pass


def test_a_covered_pair_gets_no_proposal(standin: Path) -> None:
    spec = build_spec(_loose(with_rr=True))
    out = propose_associations(spec, as_evidence(spec, str(standin)), int(N))
    assert out.added == () and out.spec is spec
    assert [c.id for c in out.spec.criteria] == ["marginals", "smoking_lbw"]


def test_no_outcome_among_the_unexposed_proposes_a_risk_difference(tmp_path: Path) -> None:
    """RR is undefined when the unexposed have no outcome: a risk_difference is proposed."""
    frame = pd.read_csv(shared_csv("us_births_2019_singleton_sample10k.csv"))
    frame = plant_smoking(frame[["mother_age", "parity", "gestation_week", "birth_weight"]])
    frame.loc[(frame["smoking"] == "no") & (frame["birth_weight"] < 2500), "birth_weight"] = 3200
    spec = build_spec(_loose())
    out = propose_associations(spec, as_evidence(spec, frame), 2000, draws=2)
    assert out.added == ("rd_smoking_birth_weight",)
    added = out.spec.criterion("rd_smoking_birth_weight")
    assert added.kind == "risk_difference" and 0 < added.threshold < 0.5
    assert any("'rd_smoking_birth_weight' (risk_difference" in line for line in out.lines)


def test_intended_uses_name_column_pairs_without_guessing_levels() -> None:
    doc = _loose()
    doc["metadata"]["intended_uses"] = ["birth weight by parity", "nothing here"]
    lines = intended_use_lines(build_spec(doc))
    assert len(lines) == 1 and "'parity' and 'birth_weight'" in lines[0]
    assert "does not guess their levels" in lines[0]


def test_validate_strict_refuses_when_every_criterion_passes_the_reversal(
        standin: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Exit 2 naming the pair without an association criterion; 0 with the RR criterion."""
    without, with_rr = tmp_path / "without.json", tmp_path / "with.json"
    save_spec(_document(False), without)
    save_spec(_document(True), with_rr)
    args = ["--strict", "--proxy", str(standin), "--n", N, "--floor-draws", "2"]
    assert main(["validate", str(without), *args]) == 2
    err = capsys.readouterr().err
    assert "smoking → birth_weight (declared in metadata.associations)" in err
    assert "reversed" in err and "no criterion sees its direction" in err
    assert main(["validate", str(with_rr), *args]) == 0
    assert "OK:" in capsys.readouterr().out


def test_the_budget_tab_design_button_proposes_as_the_cli_does(standin: Path) -> None:
    """The co-design Design assistant adds the same proposal and says why; the applied draft
    holds the relative_risk criterion on the declared pair."""
    from workbench.dryrun.executors import InlineExecutor
    from workbench.widgets.editors.design_panel import DesignPanel
    from workbench.widgets.model.lab import ProxyLab
    from workbench.widgets.model.session import Session

    doc = _loose()
    doc["schema"]["expected_n"] = [int(N), int(N)]
    proxy = pd.read_csv(standin)
    session = Session(doc, proxy)
    panel = DesignPanel(session, ProxyLab(proxy), epsilon_generators=(5.0,), divisors=(3.0,),
                        repetitions=1, draws=2, check_repetitions=2, scenarios=("proxy",),
                        executor=InlineExecutor())
    panel.target.value = 0.05
    panel.button.click()
    assert panel.result is not None
    assert "proposed criterion &#x27;rr_smoking_birth_weight&#x27;" in panel.output.value
    ids = [c["id"] for c in panel.result.document["criteria"]]
    assert "rr_smoking_birth_weight" in ids
    if panel.result.reached:
        assert panel.apply() and "rr_smoking_birth_weight" in [
            c.id for c in session.spec.criteria]
