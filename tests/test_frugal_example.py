"""examples/israel_births_2014_frugal_input.json: issue 37, task 4 — the robust design's eight
criteria and thresholds, with the two cheaper regression releases, for `workbench design` at
ε_total ≤ 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.specification.document import forecast_hash
from workbench.specification.errors import SpecError
from workbench.validation import build_spec, load_spec

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
INPUT = EXAMPLES / "israel_births_2014_frugal_input.json"
ROBUST = EXAMPLES / "israel_births_2014_lean_robust.json"


def _criteria(doc: dict) -> dict[str, tuple[str, float]]:
    """Each criterion's kind and threshold, by id."""
    return {c["id"]: (c["kind"], c["threshold"]) for c in doc["criteria"]}


def test_the_frugal_input_keeps_the_robust_criteria_and_opts_into_the_cheaper_releases() -> None:
    """Same eight criteria (kinds and thresholds), columns, bins and generator as the robust
    design; only the regression releases' sensitivity rules and the ε_total cap differ."""
    source = json.loads(INPUT.read_text())
    robust = json.loads(ROBUST.read_text())
    assert _criteria(source) == _criteria(robust)
    assert source["schema"] == robust["schema"]
    assert source["transformations"] == robust["transformations"]
    assert source["faithfulness"] == robust["faithfulness"]
    params = {c["id"]: c["params"] for c in source["criteria"]}
    assert params["regression_coefficients"]["sensitivity"] == "joint"
    assert params["regression_mae"]["sensitivity"] == "prediction_gap"
    assert params["regression_mae"]["max_prediction_gap"] == 150
    spec = load_spec(INPUT)
    assert spec.budget.epsilon_total_max == 2.0
    assert spec.epsilon_total <= 2.0


def test_the_frugal_inputs_cap_refuses_a_draft_over_two() -> None:
    """The cap is what makes `workbench design` skip every draft above ε_total 2: the same
    document at the robust design's ε_gen 2 is refused, naming the field."""
    doc = json.loads(INPUT.read_text())
    doc["budget"]["epsilon_generator"] = 2.0
    doc["budget"].pop("epsilon_criteria", None)
    with pytest.raises(SpecError, match="epsilon_total_max"):
        build_spec(doc)


DRAFT = EXAMPLES / "israel_births_2014_frugal.json"
FROZEN = EXAMPLES / "israel_births_2014_frugal.frozen.json"


def test_the_frugal_design_is_frozen_under_two_with_its_recorded_forecast() -> None:
    """Issue 37 task 4: the derived design keeps the robust criteria and thresholds, its frozen
    file validates with its hash, ε_total ≤ 2, and its recorded forecast (a dry run of exactly
    this design at 95,000 on the proxy and its four scenarios) reaches 0.9 at the low end."""
    frozen = json.loads(FROZEN.read_text())
    spec = load_spec(FROZEN, require_frozen=True)  # checks the SHA-256
    assert spec.sha256 == frozen["frozen"]["sha256"]
    assert _criteria(frozen) == _criteria(json.loads(ROBUST.read_text()))
    assert spec.epsilon_total <= 2.0 and spec.budget.epsilon_total_max == 2.0
    forecast = spec.selection.forecast
    assert forecast.n == 95_000 and forecast.low >= 0.9
    assert set(dict(forecast.scenarios)) == {"proxy", "flatter", "sharper", "rare thinned",
                                             "rare thickened"}
    assert forecast.spec_sha256 == forecast_hash(json.loads(DRAFT.read_text()))
    assert {c.id: c.epsilon for c in spec.criteria} == {
        c["id"]: c["epsilon"] for c in json.loads(DRAFT.read_text())["criteria"]}
