"""Issue 37 task 2: the regression coefficients' "joint" Δ (the exact L1 diameter) and the ε
that keeps P(false pass) equal."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json

import numpy as np
import pytest
from conftest import REPO

from workbench.audits import audit_scenario, variant_cases, variant_scenario
from workbench.criteria import evaluate_criterion, release_once
from workbench.criteria import sensitivity as sens
from workbench.criteria.kinds.regression_mae import KIND as KIND_MAE
from workbench.criteria.regression import (
    JOINT,
    RegressionDesign,
    _statistics,
    dp_regression_coefficients,
    regression_sensitivity,
    statistic_ranges,
    statistic_weights,
)
from workbench.criteria.regression_false_pass import (
    at_epsilon,
    equal_false_pass_epsilon,
    false_pass,
    regression_false_pass,
)
from workbench.criteria.regression_fit import (
    clipped_mae,
    noise_gradients,
    ols_from_cells,
    prediction_gap,
    tuned_statistic_weights,
)
from workbench.evidence.sampler import sample_proxy
from workbench.privacy import PrivacyContext
from workbench.transform.cells import PairedCells, distinct_cells
from workbench.transform.clean import clean
from workbench.validation import build_spec

ROBUST = REPO / "examples" / "israel_births_2014_lean_robust.json"
SMALL = ["parity", "gestation_week", "birth_sex"]


@pytest.fixture(scope="module")
def document() -> dict:
    return json.loads(ROBUST.read_text())


def regression_spec(document: dict, features: list[str] | str, rule: str | None,
                    weights: dict | None = None):
    """The robust spec with its coefficient criterion on ``features`` under ``rule``."""
    doc = copy.deepcopy(document)
    for c in doc["criteria"]:
        if c["kind"] in ("regression_coefficients", "regression_mae"):
            c["params"]["features"] = features
        if c["kind"] == "regression_coefficients":
            c["params"].pop("statistic_weights")
            if weights:
                c["params"]["statistic_weights"] = weights
            if rule:
                c["params"]["sensitivity"] = rule
    spec = build_spec(doc)
    config = next(iter(spec.configurations()))
    table = spec.table_codec(config)
    crit = spec.criterion("regression_coefficients")
    return spec, config, table, crit, RegressionDesign.build(spec, table, crit)


def all_cells(table, columns) -> np.ndarray:
    """Every combination of codes of ``columns`` (others 0): the public record universe."""
    grids = np.meshgrid(*[np.arange(table.codec(c).size) for c in columns], indexing="ij")
    cells = np.zeros((grids[0].size, len(table.names)), dtype=np.int64)
    for c, g in zip(columns, grids, strict=True):
        cells[:, table.names.index(c)] = g.ravel()
    return cells


def proxy_codes(spec, config, n: int, seed: int) -> np.ndarray:
    """n cleaned public proxy rows, encoded with ``config``."""
    raw = sample_proxy(int(n * 1.1) + 50, seed=seed)[list(spec.column_names)]
    return spec.table_codec(config).encode(clean(raw, spec))[:n]


def test_l1_diameter_is_the_largest_pairwise_distance() -> None:
    """Branch and bound equals brute force over every pair, and is below the per-entry sum."""
    rng = np.random.default_rng(7)
    for shape in [(1, 3), (2, 1), (40, 4), (300, 6)]:
        pts = rng.normal(size=shape) * rng.uniform(0.1, 3, size=shape[1])
        brute = max(np.abs(a - b).sum() for a, b in itertools.product(pts, repeat=2))
        assert sens.l1_diameter(pts, leaf=3) == pytest.approx(brute, abs=1e-12)
        assert sens.l1_diameter(pts) <= sens.sufficient_statistics(np.ptp(pts, axis=0)) + 1e-12
    for bad in (np.zeros((0, 2)), np.array([1.0, 2.0]), np.array([[np.nan, 1.0]])):
        with pytest.raises(ValueError, match="points must be"):
            sens.l1_diameter(bad)


def test_l1_diameter_boxes_never_change_the_value() -> None:
    """Whatever the box size, on grids with ties and duplicate rows (where boxes prune most
    pairs) and on clustered rows, the value is the brute-force largest pairwise distance."""
    rng = np.random.default_rng(11)
    grid = np.stack(np.meshgrid(*[np.arange(k, dtype=float) for k in (6, 5, 4)],
                                indexing="ij"), axis=-1).reshape(-1, 3)
    products = np.hstack([grid, grid[:, :1] * grid[:, 1:], grid ** 2]) * [3, 1, 2, .5, 4, 1, 1, 2]
    clustered = np.repeat(rng.normal(size=(20, 5)) * 5, 25, axis=0) + rng.normal(size=(500, 5))
    for pts in (products, np.vstack([products, products[:40]]), clustered):
        brute = np.abs(pts[:, None, :] - pts[None, :, :]).sum(axis=-1).max()
        for leaf in (1, 2, 7, 12, 64, 10_000):
            assert sens.l1_diameter(pts, leaf=leaf) == pytest.approx(brute, abs=1e-12)


@pytest.mark.parametrize("weights", [None, {"birth_weight*gestation_week": 10.0,
                                            "parity^2": 0.1}])
def test_joint_delta_is_the_largest_move_of_one_replacement(document, weights) -> None:
    """Over EVERY record of the public domain (all target codes, not only the extremes the
    computation lists), the largest move of the weighted statistics by one replacement is
    the joint Δ, attained, and clearly below the entrywise Σ c_e·ρ_e."""
    *_, table, _, design = regression_spec(document, SMALL, JOINT, weights)
    cells = all_cells(table, [*SMALL, "birth_weight"])
    phi = np.vstack([_statistics(design, cell[None, :], np.ones(1)) for cell in cells])
    weighted = phi * statistic_weights(design)
    brute = max(float(np.abs(weighted - row).sum(axis=1).max()) for row in weighted)
    delta = regression_sensitivity(design)
    assert delta == pytest.approx(brute, rel=1e-12)
    entrywise = float(statistic_weights(design) @ statistic_ranges(design))
    assert delta < 0.9 * entrywise


def test_joint_release_on_neighbouring_datasets(document) -> None:
    """Empirical neighbour check on registry-like data: 3000 random replacements move the
    released vector by ≤ Δ, the worst pair by exactly Δ; the ledger records the joint Δ; the
    release is still OLS at a huge ε."""
    spec, config, table, crit, design = regression_spec(document, SMALL, JOINT)
    real = proxy_codes(spec, config, 2000, seed=31)
    c = statistic_weights(design)
    base = c * _statistics(design, real, np.ones(len(real)))
    delta = regression_sensitivity(design)
    universe = all_cells(table, [*SMALL, "birth_weight"])
    rng = np.random.default_rng(4)
    moves = []
    for i, j in zip(rng.integers(0, len(real), 3000), rng.integers(0, len(universe), 3000),
                    strict=True):
        prime = real.copy()
        prime[i] = universe[j]
        moves.append(np.abs(c * _statistics(design, prime, np.ones(len(prime))) - base).sum())
    assert max(moves) <= delta + 1e-9
    phi = np.vstack([_statistics(design, u[None, :], np.ones(1)) for u in universe]) * c
    k = int(np.argmax([np.abs(phi - row).sum(axis=1).max() for row in phi]))
    far = int(np.argmax(np.abs(phi - phi[k]).sum(axis=1)))
    worst_r = real.copy()
    worst_r[0] = universe[k]
    worst_prime = worst_r.copy()
    worst_prime[0] = universe[far]
    move = np.abs(c * (_statistics(design, worst_prime, np.ones(len(real)))
                       - _statistics(design, worst_r, np.ones(len(real))))).sum()
    assert move == pytest.approx(delta, rel=1e-12)
    ctx = PrivacyContext.simulation(0)
    release = dp_regression_coefficients(spec, config, at_epsilon(crit, 1e9), real, ctx)
    assert ctx.records[-1].sensitivity == pytest.approx(delta)
    x, y = design.features(real), design.target_of(real)
    ols, *_ = np.linalg.lstsq(np.hstack([np.ones((len(y), 1)), x]), y, rcond=None)
    np.testing.assert_allclose(release.coef, ols[1:], rtol=1e-4, atol=1e-4)


def test_joint_rule_is_an_explicit_option(document) -> None:
    """Without the param the Δ is the entrywise sum (frozen examples unchanged); a wrong value
    fails naming the field."""
    *_, design = regression_spec(document, SMALL, None)
    assert design.sensitivity_rule == "entrywise"
    assert regression_sensitivity(design) == pytest.approx(
        float(statistic_weights(design) @ statistic_ranges(design)))
    bad = copy.deepcopy(document)
    next(c for c in bad["criteria"] if c["kind"] == "regression_coefficients")["params"][
        "sensitivity"] = "tight"
    with pytest.raises(Exception, match=r"params\.sensitivity") as err:
        build_spec(bad)
    assert "joint" in str(err.value)


def test_joint_variant_audit_flags_half_delta() -> None:
    """The declared worst pair attains the joint Δ (tightness 1, where the entrywise case
    reaches 0.8): ε-DP at Δ, flagged at Δ/2."""
    assert "regression_coefficients (joint Δ)" in variant_cases()
    scn = variant_scenario("regression_coefficients (joint Δ)")
    assert scn.d.sensitivity == pytest.approx(4.0) and scn.tightness == pytest.approx(1.0)
    row = audit_scenario(scn)
    assert not row.at_delta.violates, row.at_delta.summary()
    assert row.at_half.violates, row.at_half.summary()


def test_false_pass_of_known_noise() -> None:
    """The worst gap direction and the triangle bound on noise whose answer is known."""
    t = 30.0
    assert false_pass(np.zeros((4, 3)), t).worst == 0.0
    cancel = np.array([[-33.0, 0.0, 0.0], [0.0, 0.0, 0.0]])  # cancels the +u_0 gap exactly
    fp = false_pass(cancel, t)
    assert fp.worst == 0.5 and fp.bound == 0.5
    spread = np.full((1, 3), -4.0)  # s·e = −12 against the (+,+,+) spread gap of 11 each
    assert false_pass(spread, t).worst == 1.0
    with pytest.raises(ValueError, match="threshold > 0"):
        false_pass(cancel, 0.0)


def test_equal_false_pass_epsilon_keeps_the_release_law(document) -> None:
    """At ε′ = ε·Δ′/Δ the joint release draws the same noise as the entrywise one (same
    seeds), so every P(false pass) is equal; at another ε it differs (the check can fail)."""
    spec, config, table, crit, entry = regression_spec(document, "all_other", None,
                                                        dict(crit_weights(document)))
    joint_crit = dataclasses.replace(crit, params={**crit.params, "sensitivity": JOINT})
    joint = RegressionDesign.build(spec, table, joint_crit)
    d0, d1 = regression_sensitivity(entry), regression_sensitivity(joint)
    assert d1 < 0.75 * d0  # the births design: 11.41 against 15.91
    eps = equal_false_pass_epsilon(0.4, d0, d1)
    assert eps == pytest.approx(0.4 * d1 / d0)
    cells, counts = distinct_cells(proxy_codes(spec, config, 20_000, seed=12), table.domain)
    before = regression_false_pass(entry, at_epsilon(crit, 0.4), cells, counts, 60, 3)
    after = regression_false_pass(joint, at_epsilon(joint_crit, eps), cells, counts, 60, 3)
    assert after == before and before.worst > 0
    # P is not monotone in ε: much noise inflates ‖d + e‖₁ (few passes at all), moderate noise
    # can cancel a spread gap; here (n = 20,000) four times the ε gives more false passes
    dearer = regression_false_pass(joint, at_epsilon(joint_crit, 4 * eps), cells, counts, 60, 3)
    assert dearer.worst > before.worst + 0.1
    with pytest.raises(ValueError, match="must be > 0"):
        equal_false_pass_epsilon(0.0, d0, d1)


def crit_weights(document: dict) -> dict:
    """The robust design's tuned per-entry weights."""
    return next(c for c in document["criteria"]
                if c["kind"] == "regression_coefficients")["params"]["statistic_weights"]


# --- regression_mae: the prediction-gap Δ ---------------------------------------------------
def mae_spec(document: dict, cap: float | None, rule: str | None = "prediction_gap",
             coefficient_epsilon: float | None = None):
    """The robust spec with its MAE criterion priced by the prediction-gap cap ``cap``."""
    doc = copy.deepcopy(document)
    if coefficient_epsilon is not None:
        next(c for c in doc["criteria"]
             if c["kind"] == "regression_coefficients")["epsilon"] = coefficient_epsilon
    mae = next(c for c in doc["criteria"] if c["kind"] == "regression_mae")
    if rule:
        mae["params"]["sensitivity"] = rule
    if cap is not None:
        mae["params"]["max_prediction_gap"] = cap
    return build_spec(doc)


def test_prediction_gap_bounds_every_record(document) -> None:
    """The separable bound is ≥ the gap of every record of the domain, and equal to the
    unclipped maximum over the product domain."""
    spec = mae_spec(document, 100.0)
    config = next(iter(spec.configurations()))
    table = spec.table_codec(config)
    crit = spec.criterion("regression_mae")
    design = RegressionDesign.build(spec, table, crit)
    x = design.features(all_cells(table, list(design.sources)))
    rng = np.random.default_rng(9)
    for _ in range(5):
        a = (rng.normal(3000, 50), rng.normal(0, 30, design.p))
        b = (rng.normal(3000, 50), rng.normal(0, 30, design.p))
        raw = np.abs((a[0] + x @ a[1]) - (b[0] + x @ b[1]))
        clipped = np.abs(np.clip(a[0] + x @ a[1], *crit.bounds)
                         - np.clip(b[0] + x @ b[1], *crit.bounds))
        gap = prediction_gap(design, a, b)
        assert gap == pytest.approx(raw.max(), rel=1e-12)
        assert clipped.max() <= gap + 1e-9


def test_prediction_gap_delta_on_neighbouring_datasets(document) -> None:
    """With two public models at most G apart, 2000 random replacements move the MAE gap by
    ≤ 2G/n, and the y = L → U replacement at a record where the models are G apart gets
    close to it; the release charges Δ = 2G/n, or fails with Δ = 2(U − L)/n over the cap."""
    spec = mae_spec(document, 400.0)
    config = next(iter(spec.configurations()))
    table = spec.table_codec(config)
    crit = spec.criterion("regression_mae")
    design = RegressionDesign.build(spec, table, crit)
    real = proxy_codes(spec, config, 1500, seed=41)
    ones = np.ones(len(real))
    fit_a = ols_from_cells(design, real, ones)
    fit_b = (fit_a[0] + 40.0, fit_a[1] * 0.9)
    cap = prediction_gap(design, fit_a, fit_b)
    assert 0 < cap < 1000

    def gap(codes: np.ndarray) -> float:
        w = np.ones(len(codes))
        return abs(clipped_mae(design, codes, w, *fit_a, crit.bounds)
                   - clipped_mae(design, codes, w, *fit_b, crit.bounds))

    base = gap(real)
    universe = all_cells(table, list(table.names))
    rng = np.random.default_rng(2)
    moves = []
    for i, j in zip(rng.integers(0, len(real), 2000), rng.integers(0, len(universe), 2000),
                    strict=True):
        prime = real.copy()
        prime[i] = universe[j]
        moves.append(abs(gap(prime) - base))
    assert max(moves) <= 2 * cap / len(real) + 1e-12
    delta, _ = KIND_MAE.sensitivity(spec, table, crit, PairedCells.from_codes(real, real,
                                                                              table.domain))
    assert delta == pytest.approx(2 * 400.0 / len(real))
    synth = proxy_codes(spec, config, len(real), seed=42)
    for cap_value, over in ((3000.0, False), (1e-3, True)):
        s = mae_spec(document, cap_value, coefficient_epsilon=1e6)
        ctx = PrivacyContext.simulation(5)
        once = release_once(s, config, real, ctx)
        res = evaluate_criterion(s, config, "regression_mae", real, synth, ctx,
                                 once_results=once, table=table)
        full = 2 * float(np.ptp(crit.bounds)) / len(real)
        assert res.details.get("over_cap", False) is over
        priced = full if over else 2 * cap_value / len(real)
        assert ctx.records[-1].sensitivity == pytest.approx(priced)
        if over:
            assert not res.passed


def test_prediction_gap_needs_its_cap(document) -> None:
    """'prediction_gap' without a cap fails naming the field."""
    with pytest.raises(Exception, match=r"params\.max_prediction_gap"):
        mae_spec(document, None)


def test_prediction_gap_variant_audit_flags_half_delta() -> None:
    """The declared pair moves the gap by exactly 2G/n: ε-DP at Δ, flagged at Δ/2."""
    scn = variant_scenario("regression_mae (prediction-gap Δ)")
    assert scn.d.sensitivity == pytest.approx(2.5) and scn.tightness == pytest.approx(1.0)
    row = audit_scenario(scn)
    assert not row.at_delta.violates, row.at_delta.summary()
    assert row.at_half.violates, row.at_half.summary()


def test_joint_tuned_weights_cut_the_noise_at_the_joint_delta(document) -> None:
    """Under the joint Δ, the weights tuned for it give the coefficients less noise,
    Δ(c)²·Σ_e g_e²/c_e², than the entrywise-shaped weights (both from the same public
    cells)."""
    features = ["mother_age", "parity", "gestation_week", "birth_sex"]
    spec, config, table, _, joint = regression_spec(document, features, JOINT)
    entry = regression_spec(document, features, None)[4]
    cells, counts = distinct_cells(proxy_codes(spec, config, 20_000, 3), table.domain)
    g2 = noise_gradients(joint, cells, counts)

    def noise(weights: dict) -> float:
        design = regression_spec(document, features, JOINT, weights)[4]
        c = statistic_weights(design)
        live = statistic_ranges(design) > 0
        return regression_sensitivity(design) ** 2 * float((g2[live] / c[live] ** 2).sum())

    tuned_joint = tuned_statistic_weights(joint, cells, counts)
    tuned_entry = tuned_statistic_weights(entry, cells, counts)
    assert tuned_joint != tuned_entry
    after, before = noise(tuned_joint), noise(tuned_entry)
    assert after < 0.97 * before
