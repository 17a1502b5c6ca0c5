"""Survey weights, DP binning, raking and sampling-aware accounting: Merrill's worked numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.privacy import sampling
from workbench.survey.binning import (
    BinSet,
    score,
    score_sensitivity,
    selection_probabilities,
)
from workbench.survey.raking import ipf, rake_weights, weighted_margin
from workbench.survey.weights import (
    max_potential_weight,
    potential_weights,
    smooth_sensitivity,
    weighted_count,
)

# --- Table 5.1 -------------------------------------------------------------------------------


@pytest.mark.parametrize(("eps", "expected"), [(0.5, 0.17), (1, 0.26), (2, 0.60), (5, 2.86),
                                               (10, 7.80)])
def test_table_5_1_fixed_size_amplification_at_beta_0_1(eps, expected):
    assert round(sampling.fixed_size_amplification(eps, 0.1), 2) == expected


def test_amplification_helps_exactly_below_its_threshold():
    eps = 1.0
    edge = (math.e - 1) / (2 * math.e - 1)
    assert sampling.helps_below(eps) == pytest.approx(edge)
    assert sampling.amplification_helps(eps, edge * 0.99)
    assert sampling.fixed_size_amplification(eps, edge * 0.99) < eps
    assert not sampling.amplification_helps(eps, edge * 1.01)
    assert sampling.fixed_size_amplification(eps, edge * 1.01) > eps
    assert sampling.fixed_size_amplification(eps, edge) == pytest.approx(eps)


def test_partitions_random_max_domain_by_neighbour_and_figure_is_never_charged():
    assert sampling.random_partition_epsilon([0.2, 0.5, 0.1]) == 0.5
    assert sampling.domain_partition_epsilon(0.5, "add_remove") == 0.5
    assert sampling.domain_partition_epsilon(0.5, "replace_one") == 1.0
    assert sampling.without_replacement_amplification(1.0, 0.1) == pytest.approx(
        math.log(1 + 0.1 * (math.e - 1)))
    fig = sampling.sampling_figure(1.0, 0.1)
    assert fig.helps and not fig.charged and fig.amplified == pytest.approx(0.2639, abs=1e-4)
    assert "draw is secret" in fig.text() and "guaranteed" in fig.text()
    big = sampling.sampling_figure(0.5, 0.5)
    assert not big.helps and big.amplified == 0.5 and "too large" in big.text()


# --- the 5-age-bin running example (Figures 7.1–7.6) ----------------------------------------

TOTALS = [100000.0] * 5
SAMPLE_A = [1300, 100, 1200, 1200, 1200]
SAMPLE_B = [1600, 100, 1600, 1600, 100]
CANDIDATES = [
    BinSet("separate", ((0,), (1,), (2,), (3,), (4,))),
    BinSet("minors", ((0, 1), (2,), (3,), (4,))),
    BinSet("adults", ((0,), (1,), (2, 3, 4))),
    BinSet("minors-adults", ((0, 1), (2, 3, 4))),
    BinSet("all", ((0, 1, 2, 3, 4),)),
]


def _sample(counts):
    cell_of = np.repeat(np.arange(5), counts)
    return cell_of, np.ones(cell_of.size)


def test_w_k_of_the_separate_binning_on_sample_a_is_100000_over_100_minus_k():
    cell_of, bwt = _sample(SAMPLE_A)
    groups = [bwt[cell_of == i] for i in range(5)]
    for k in (0, 1, 2, 10, 50, 99):
        assert potential_weights(TOTALS, groups, k, 1.0) == pytest.approx(100000 / (100 - k))
    assert potential_weights(TOTALS, groups, 100, 1.0) == 100000
    assert potential_weights(TOTALS, groups, 150, 1.0) == 100000


def test_max_potential_weights_and_scores_of_figures_7_1_and_7_3():
    a = [score(b, TOTALS, *_sample(SAMPLE_A), 1.0) for b in CANDIDATES]
    b = [score(c, TOTALS, *_sample(SAMPLE_B), 1.0) for c in CANDIDATES]
    assert a == pytest.approx([5 / 1000, 4 / (200000 / 1400), 3 / 1000, 2 / (200000 / 1400),
                               1 / 100])
    assert b == pytest.approx([5 / 1000, 4 / 1000, 3 / 1000, 2 / (200000 / 1700), 1 / 100])
    assert score_sensitivity(CANDIDATES, TOTALS, 1.0, 1.0) == pytest.approx(5e-5)
    assert score_sensitivity(CANDIDATES, TOTALS, 1.0, 1.0, "replace_one") == pytest.approx(1e-4)


def test_selection_probabilities_of_figure_7_2_at_epsilon_0_01():
    delta = score_sensitivity(CANDIDATES, TOTALS, 1.0, 1.0)
    scores_a = [score(b, TOTALS, *_sample(SAMPLE_A), 1.0) for b in CANDIDATES]
    p = selection_probabilities(scores_a, delta, 0.01)
    # The thesis rounds the weight 142.86 to 143 before exponentiating: ≤ 0.001 apart.
    assert p == pytest.approx([0.063, 0.627, 0.052, 0.155, 0.104], abs=1e-3)
    scores_b = [score(b, TOTALS, *_sample(SAMPLE_B), 1.0) for b in CANDIDATES]
    pb = selection_probabilities(scores_b, delta, 0.01)
    assert pb == pytest.approx([0.130, 0.118, 0.107, 0.430, 0.215], abs=3e-3)
    # at ε = 0.1 the best binning is returned with probability > .999 (Figure 7.2 caption)
    assert selection_probabilities(scores_a, delta, 0.1).max() > 0.999


def test_smooth_sensitivity_equals_w0_in_example_7_4_4():
    beta = 1 / 6  # ε = 1, γ = 4
    for counts in (SAMPLE_A, SAMPLE_B):
        cell_of, bwt = _sample(counts)
        for b in CANDIDATES:
            groups = [bwt[np.isin(cell_of, cells)] for cells in b.bins]
            totals = b.totals(TOTALS)
            w0 = max_potential_weight(totals, groups, 1.0)
            assert smooth_sensitivity(totals, groups, beta, 1.0) == pytest.approx(w0)
    sep = [np.ones(c) for c in SAMPLE_A]
    assert 6 * smooth_sensitivity(TOTALS, sep, beta, 1.0) == pytest.approx(6000)


def test_unequal_base_weights_keep_the_heaviest_record_and_delete_the_next():
    # one bin, N̂ = 100, base weights 3, 2, 1: W₀ = 100·3/6 = 50 (or add G = 3: 300/9)
    b = [np.array([3.0, 2.0, 1.0])]
    assert max_potential_weight([100.0], b, 3.0) == pytest.approx(50.0)
    # one deletion: drop the 2 → 100·3/4 = 75; two: the bin is only the 3 → 100
    assert potential_weights([100.0], b, 1, 3.0) == pytest.approx(75.0)
    assert potential_weights([100.0], b, 2, 3.0) == pytest.approx(100.0)
    # G heavier than any record: adding it after deleting the 3 gives 100·10/13
    assert max_potential_weight([100.0], b, 10.0) == pytest.approx(100 * 10 / 16)
    assert potential_weights([100.0], b, 1, 10.0) == pytest.approx(100 * 10 / 13)


def test_weighted_count_sums_post_stratified_weights():
    cell_of, bwt = _sample(SAMPLE_A)
    everyone = np.ones(cell_of.size, dtype=bool)
    assert weighted_count(everyone, bwt, cell_of, TOTALS) == pytest.approx(500000)
    teens = cell_of == 1
    assert weighted_count(teens, bwt, cell_of, TOTALS) == pytest.approx(100000)


def test_ipf_meets_both_margins_and_raked_weights_match_them():
    rng = np.random.default_rng(0)
    cells = np.column_stack([rng.integers(0, 3, 500), rng.integers(0, 4, 500)])
    targets = [((0,), np.array([100.0, 300.0, 600.0])), ((1,), np.array([250.0] * 4))]
    w = rake_weights(cells, np.ones(500), targets, (3, 4))
    for axes, target in targets:
        assert weighted_margin(cells, w, axes, (3, 4)) == pytest.approx(target, rel=1e-8)
    fit = ipf(np.array([[1.0, 0.0], [1.0, 1.0]]), [((0,), np.array([5.0, 5.0])),
                                                  ((1,), np.array([6.0, 4.0]))])
    assert fit[0, 1] == 0  # a structural zero stays zero


# --- audits of the raking pipeline's released counts ----------------------------------------


def test_joint_table_audit_passes_at_delta_and_flags_half():
    from workbench.audits.harness import audit_scenario
    from workbench.audits.survey import table_scenario

    scn = table_scenario()
    row = audit_scenario(scn)
    assert scn.d.sensitivity == 2 and scn.tightness == pytest.approx(1.0)
    assert not row.at_delta.violates, row.at_delta.summary()
    assert row.at_half.violates, row.at_half.summary()


def test_weighted_count_smooth_cauchy_audit_passes_at_ss_and_flags_half():
    from workbench.audits.survey import audit_weighted_count, weighted_count_calls

    (v, s, grid), (v2, s2, _) = weighted_count_calls()
    assert (grid.low, grid.high) == (0.0, 500000.0)  # the margin's public total
    assert (v, v2) == (pytest.approx(1000.0), 0.0)  # the shift attains W₀ = SS_β = 1000
    assert s2 / s == pytest.approx(100 / 99, rel=1e-9)  # S(D′) = 100000/99: one step smoother
    at_ss, at_half = audit_weighted_count()
    assert not at_ss.violates, at_ss.summary()
    assert at_half.violates, at_half.summary()
