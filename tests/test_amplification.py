"""MCAR amplification (Mohapatra et al. §5): the paper's worked examples, exact formula."""

from __future__ import annotations

import math

import pytest

from workbench.privacy import amplification as amp
from workbench.privacy.amplification import Measure

PHI = {"State": 0.25, "Occupation": 0.0, "Gender": 0.25, "Income": 0.25}
COLUMNS = ("State", "Occupation", "Gender", "Income")
TINY = 1e-7  # the paper's figures are the small-ε limit ε̄/ε → Σ p·ε_j / ε


def four(eps: float) -> list[Measure]:
    """Ex. 5.5's M1..M4 at ε/4 each: State, Occupation, Gender, (Gender, Income)."""
    return [Measure(("State",), eps / 4), Measure(("Occupation",), eps / 4),
            Measure(("Gender",), eps / 4), Measure(("Gender", "Income"), eps / 4)]


def test_exact_formula_and_why_the_approximation_is_not_a_bound() -> None:
    assert amp.amplified(1.0, 0.5) == pytest.approx(math.log(1 + 0.5 * (math.e - 1)))
    assert amp.amplified(2.0, 1.0) == pytest.approx(2.0) and amp.amplified(2.0, 0.0) == 0.0
    for eps in (0.1, 1.0, 3.0):  # ln(1 + p(e^ε − 1)) ≥ pε: "≈ pε" under-states the loss
        assert amp.amplified(eps, 0.421875) > 0.421875 * eps


def test_example_5_5_complete_rows_only() -> None:
    got = amp.complete_rows(four(TINY), PHI, COLUMNS)
    assert got.ratio == pytest.approx(0.421875, rel=1e-6)  # (3/4)^3, printed 0.421
    assert math.floor(got.ratio * 1000) / 1000 == 0.421
    exact = amp.complete_rows(four(1.0), PHI, COLUMNS)
    assert exact.epsilon_bar == pytest.approx(math.log1p(0.421875 * math.expm1(1.0)))
    assert exact.ratio > 0.421875


def test_example_5_7_disjoint_groups_add_up() -> None:
    measures = [Measure(("State",), TINY / 3), Measure(("Occupation",), TINY / 3),
                Measure(("Gender", "Income"), TINY / 3)]
    got = amp.grouped(measures, PHI)
    assert got.ratio == pytest.approx((3 / 4 + 1 + 9 / 16) / 3, rel=1e-6)
    assert round(got.ratio, 2) == 0.77


def test_example_5_8_naive_and_grouped() -> None:
    naive = amp.naive(four(TINY), PHI)
    grouped = amp.grouped(four(TINY), PHI)
    assert naive.ratio == pytest.approx((3 / 4 + 1 + 1 + 9 / 16) / 4, rel=1e-6)
    assert round(naive.ratio, 2) == 0.83
    assert grouped.ratio == pytest.approx(0.8125, rel=1e-6) and round(grouped.ratio, 2) == 0.81
    # at ε = 1 the exact grouped value is still below the naive one, and above the limit
    n1, g1 = amp.naive(four(1.0), PHI), amp.grouped(four(1.0), PHI)
    assert 0.8125 < g1.ratio < n1.ratio < 1.0
    assert amp.cheap(four(1.0), PHI).epsilon_bar >= g1.epsilon_bar - 1e-12


def test_example_5_13_column_wise_imputation() -> None:
    got = amp.column_wise({c: TINY / 4 for c in COLUMNS}, PHI)
    assert got.ratio == pytest.approx(0.9375, rel=1e-6)
    assert next(g.attributes for g in got.groups if g.attributes) in {
        ("State",), ("Gender",), ("Income",)}


def test_every_grouping_is_valid_and_the_search_falls_back() -> None:
    with pytest.raises(ValueError, match="disjoint"):
        amp.evaluate("x", four(1.0), PHI, {2: ("Gender",), 3: ("Gender", "Income")})
    with pytest.raises(ValueError, match="within"):
        amp.evaluate("x", four(1.0), PHI, {0: ("Gender",)})
    with pytest.raises(ValueError, match="mcar_rate of column 'a'"):
        amp.cheap([Measure(("a",), 1.0)], {"a": 1.0})
    many = dict.fromkeys((f"c{i}" for i in range(amp.MAX_SEARCH_ATTRIBUTES + 1)), 0.1)
    measures = [Measure((c,), 0.1) for c in many]
    assert amp.grouped(measures, many).method == "cheap"
    assert sum(1 for _ in amp.set_partitions(["a", "b", "c", "d"])) == 15  # Bell(4)


def _spec_with_rates(rates: dict[str, float], missing: str = "forbid"):
    import copy
    import json
    from pathlib import Path

    from workbench.validation import build_spec

    doc = json.loads((Path(__file__).resolve().parents[1] / "examples" /
                      "israel_births_2014_lean.json").read_text())
    doc = copy.deepcopy(doc)
    for col in doc["schema"]["columns"]:
        if col["name"] in rates:
            col["mcar_rate"] = rates[col["name"]]
            col["missing"] = missing
    return build_spec(doc)


def test_spec_field_and_the_secondary_figure() -> None:
    from workbench.report.amplification import amplification_figure
    from workbench.specification import SpecError

    with pytest.raises(SpecError, match=r"schema\.columns\[1\]\.mcar_rate"):
        _spec_with_rates({"mother_age": 0.2})
    spec = _spec_with_rates({"mother_age": 0.0})  # a zero rate needs no missing policy
    assert spec.column("mother_age").mcar_rate == 0.0
    assert amplification_figure(spec) is None
    # the figure itself, on a spec whose columns declare rates (duck-typed: no missing policy
    # is needed to compute it)
    import dataclasses

    cols = tuple(dataclasses.replace(c, mcar_rate=0.25) if c.name in {"mother_age", "parity"}
                 else c for c in spec.columns)
    spec = dataclasses.replace(spec, columns=cols)
    fig = amplification_figure(spec)
    plan = spec.budget_plan()
    assert fig.epsilon_total == plan.epsilon_total  # the guaranteed figure is the plan's
    eps = plan.epsilon_generator
    assert fig.epsilon_generator_bar == pytest.approx(math.log1p(0.5625 * math.expm1(eps)))
    assert fig.epsilon_total_bar == pytest.approx(
        dataclasses.replace(plan, epsilon_generator=fig.epsilon_generator_bar).epsilon_total)
    assert fig.epsilon_total_bar < fig.epsilon_total
    text = "\n".join(fig.lines())
    assert "guaranteed" in text and "secondary, not charged" in text
    partial = amplification_figure(spec, strategy="partial")
    assert partial.epsilon_generator_bar < eps
    impute = amplification_figure(spec, strategy="impute")
    assert fig.epsilon_generator_bar < impute.epsilon_generator_bar < eps
