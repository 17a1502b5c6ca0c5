"""Plausible-deniability synthesis (issue 18): the entropy sensitivity on brute-forced
neighbours, Theorem 1's (ε, δ) at the paper's defaults, the group-by test against a scan of
D_S, parallel composition in the accountant and the ledger, and the family end to end."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from workbench.generators import make_generator
from workbench.generators.plausible_deniability import LABEL, PlausibleDeniability
from workbench.generators.plausible_deniability.model import PrefixIndex
from workbench.generators.plausible_deniability.structure import entropy_bits
from workbench.privacy import Accountant, BudgetExceeded, Ledger, PrivacyContext, sensitivity
from workbench.privacy.noise import SeededNoise
from workbench.privacy.parallel import parallel_composition
from workbench.privacy.plausible import privacy_test, smallest_epsilon, theorem1
from workbench.privacy.records import charged_epsilon
from workbench.transform import Domain


# --- must-show 1a: Δ_H on brute-forced neighbouring datasets ----------------------------------
@pytest.mark.parametrize(("n", "cells"), [(2, 2), (3, 3), (4, 3), (5, 4), (6, 2), (7, 3)])
def test_entropy_sensitivity_holds_on_every_replace_one_neighbour(n: int, cells: int) -> None:
    """Every dataset of n records over ``cells`` values and every replace-one neighbour: the
    entropy moves by at most Δ_H(n) = (1/n)[2 + 1/ln 2 + 2 log₂ n], and by at least the direct
    bound's worst case (log₂ n + 1/ln 2)/n minus the slack, so the test would see a wrong Δ."""
    bound = sensitivity.entropy(n)
    assert bound == pytest.approx((2 + 1 / math.log(2) + 2 * math.log2(n)) / n)
    worst = 0.0
    for data in itertools.product(range(cells), repeat=n):
        h = entropy_bits(np.bincount(data, minlength=cells))
        for i in range(n):
            for value in range(cells):
                if value != data[i]:
                    neighbour = list(data)
                    neighbour[i] = value
                    h2 = entropy_bits(np.bincount(neighbour, minlength=cells))
                    worst = max(worst, abs(h - h2))
    assert worst <= bound
    assert worst <= (math.log2(n) + 1 / math.log(2)) / n + 1e-12  # the docstring's derivation
    assert worst >= entropy_bits(np.array([n - 1, 1])) - 1e-12  # all-equal → one moved away


def test_entropy_sensitivity_refuses_bad_n() -> None:
    with pytest.raises(ValueError, match="n"):
        sensitivity.entropy(0)


# --- must-show 1b: Theorem 1 at the paper's defaults ------------------------------------------
def test_theorem1_at_the_paper_defaults() -> None:
    """k = 50, γ = 4, ε₀ = 1, δ ≤ 2⁻³⁰ (paper §6): t = 29, ε = 1 + ln(1 + 4/29) ≈ 1.1292,
    δ = e^{−21} ≈ 7.58e-10; t = 1 would give ε = 1 + ln 5 ≈ 2.609 with δ = e^{−49}."""
    best = smallest_epsilon(50, 4, 1.0, 2.0 ** -30)
    assert best.t == 29
    assert best.epsilon == pytest.approx(1 + math.log(1 + 4 / 29))
    assert best.epsilon == pytest.approx(1.12921, abs=1e-5)
    assert best.delta == pytest.approx(math.exp(-21)) and best.delta <= 2.0 ** -30
    assert theorem1(50, 4, 1.0, 30).delta > 2.0 ** -30  # t = 30 breaks the ceiling
    one = theorem1(50, 4, 1.0, 1)
    assert one.epsilon == pytest.approx(1 + math.log(5)) and one.delta == pytest.approx(
        math.exp(-49))
    with pytest.raises(ValueError, match="t must satisfy"):
        theorem1(50, 4, 1.0, 50)
    with pytest.raises(ValueError, match="no t in"):
        smallest_epsilon(10, 4, 0.1, 2.0 ** -30)


def test_family_guarantee_is_per_record_and_never_epsilon_dp() -> None:
    g = make_generator("plausible_deniability").guarantee()
    assert g.label == LABEL == "per-record plausible deniability (ε, δ)"
    assert not g.dataset_level and g.strict and not g.is_pure and g.label != "ε-DP"
    assert g.parameters["t"] == 29 and g.parameters["epsilon"] == pytest.approx(1.12921, 1e-5)
    fixed = make_generator("plausible_deniability", t=10).guarantee()
    assert fixed.parameters["epsilon"] == pytest.approx(1 + math.log(1.4))
    assert fixed.parameters["delta"] == pytest.approx(math.exp(-40))
    with pytest.raises(ValueError, match="t must be < k"):
        make_generator("plausible_deniability", t=50)
    with pytest.raises(ValueError, match="split_structure \\+ split_parameters"):
        make_generator("plausible_deniability", split_structure=0.6, split_parameters=0.5)


# --- must-show 1c: the group-by test decides as a scan of D_S ---------------------------------
def _small_problem(seed: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, ...]]:
    rng = np.random.default_rng(seed)
    sizes = (3, 2, 4, 2, 3)
    seeds = np.column_stack([rng.integers(0, s, 200) for s in sizes])
    seeds[:60, :3] = (1, 0, 2)  # a popular prefix, so counts cross k
    cands = np.column_stack([rng.integers(0, s, 400) for s in sizes])
    cands[:150] = seeds[rng.integers(0, 200, 150)]
    omegas = rng.integers(1, 6, 400)
    return seeds, cands, omegas, (2, 0, 4, 1, 3)


def plausible_counts_scan(seeds: np.ndarray, candidates: np.ndarray, omegas: np.ndarray,
                          order) -> np.ndarray:
    """The same k′ by scanning D_S once per candidate (the reference the index is tested on)."""
    m = len(order)
    out = np.zeros(candidates.shape[0], dtype=np.int64)
    for i, (row, omega) in enumerate(zip(candidates, omegas, strict=True)):
        copied = list(order[:m - int(omega)])
        out[i] = int(np.all(seeds[:, copied] == row[copied], axis=1).sum())
    return out


def test_group_by_index_counts_and_decisions_equal_a_scan_of_the_seeds() -> None:
    seeds, cands, omegas, order = _small_problem()
    sizes = [3, 2, 4, 2, 3]
    by_index = PrefixIndex(seeds, order, sizes).plausible_counts(cands, omegas)
    by_scan = plausible_counts_scan(seeds, cands, omegas, order)
    assert np.array_equal(by_index, by_scan)
    assert by_index[omegas == 5].tolist() == [200] * int((omegas == 5).sum())
    assert (by_index >= 20).any() and (by_index < 20).any()
    decisions = [privacy_test(PrivacyContext.simulation(0, noise=SeededNoise(9)), counts,
                              k=20, epsilon_0=1.0)
                 for counts in (by_index, by_scan)]
    assert np.array_equal(*decisions)
    assert 0 < decisions[0].mean() < 1


def test_privacy_test_draws_fresh_noise_per_candidate_through_the_context() -> None:
    """Equal counts at the threshold get different decisions (fresh noise each); the noise is
    the context's (a seeded source repeats them exactly)."""
    counts = np.full(2000, 50)
    a = privacy_test(PrivacyContext.simulation(0, noise=SeededNoise(4)), counts, k=50,
                     epsilon_0=1.0)
    b = privacy_test(PrivacyContext.simulation(0, noise=SeededNoise(4)), counts, k=50,
                     epsilon_0=1.0)
    assert np.array_equal(a, b) and 0.5 < a.mean() < 0.8  # P(L ≤ 0) = 1/(1 + e^{-1}) ≈ 0.73


# --- parallel composition -------------------------------------------------------------------
def test_parallel_composition_charges_the_max_with_the_reason_in_the_ledger(tmp_path) -> None:
    ledger = Ledger(tmp_path / "l.jsonl", run_id="r")
    acc = Accountant(10.0)
    ctx = PrivacyContext.simulation(0, accountant=acc, ledger=ledger, noise=SeededNoise(0))
    with parallel_composition(ctx, "model", {"A": 2.0, "B": 2.0}, reason="disjoint") as split:
        with split.part("A"):
            ctx.laplace([1.0], sensitivity=1, epsilon=1.5, purpose="a1")
            ctx.laplace([1.0], sensitivity=1, epsilon=0.5, purpose="a2")
        with split.part("B"):
            ctx.laplace([1.0], sensitivity=1, epsilon=2.0, purpose="b")
    assert acc.epsilon_spent() == pytest.approx(2.0) == ctx.epsilon_recorded()
    ctx.laplace([1.0], sensitivity=1, epsilon=1.0, purpose="plain")
    assert acc.epsilon_spent() == pytest.approx(3.0)
    ledger.close()
    lines = [json.loads(x) for x in (tmp_path / "l.jsonl").read_text().splitlines()]
    event = next(x for x in lines if x["event"] == "parallel_composition")
    assert event["reason"] == "disjoint" and event["epsilon_charged"] == 2.0
    assert charged_epsilon([x for x in lines if x["event"] == "measurement"]) == 3.0
    with (pytest.raises(ValueError, match="unknown part"),
          parallel_composition(PrivacyContext.simulation(0), "m", {"A": 1.0},
                               reason="r") as split, split.part("C")):
        pass


def test_parallel_groups_still_respect_the_budget() -> None:
    ctx = PrivacyContext.simulation(0, accountant=Accountant(1.0), noise=SeededNoise(0))
    with parallel_composition(ctx, "m", {"A": 1.0, "B": 1.0}, reason="r") as split:
        with split.part("A"):
            ctx.laplace([1.0], sensitivity=1, epsilon=1.0, purpose="a")
        with split.part("B"):
            ctx.laplace([1.0], sensitivity=1, epsilon=1.0, purpose="b")  # max stays 1
            with pytest.raises(BudgetExceeded):
                ctx.laplace([1.0], sensitivity=1, epsilon=0.5, purpose="b2")


# --- the family ------------------------------------------------------------------------------
def _toy(n: int = 6000, seed: int = 0) -> tuple[np.ndarray, Domain]:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, n)
    b = (a + rng.integers(0, 2, n)) % 4
    c = rng.integers(0, 3, n)
    d = (b + c) % 5
    e = rng.integers(0, 2, n)
    f = (a * 2 + e) % 6
    return np.column_stack([a, b, c, d, e, f]), Domain(tuple("abcdef"), (4, 4, 3, 5, 2, 6))


def test_family_fits_with_parallel_charge_and_releases_tested_records() -> None:
    codes, domain = _toy()
    ctx = PrivacyContext.simulation(1, noise=SeededNoise(1))
    gen = make_generator("plausible_deniability", omega_min=2, k=20, t=5)
    assert isinstance(gen, PlausibleDeniability)
    gen.fit(codes, domain, 1.0, ctx)
    assert ctx.epsilon_recorded() == pytest.approx(1.0)  # max(ε_T, ε_P), not 2
    assert {r.part for r in ctx.records} == {"D_T (structure)", "D_P (parameters)"}
    assert sorted(gen.order_) == list(range(6))
    placed = set()
    for column, parents in zip(gen.order_, [n.parents for n in gen.nodes_], strict=True):
        assert set(parents) <= placed  # acyclic: parents come first in the order
        assert np.prod([gen.buckets if domain.sizes[p] > gen.buckets else domain.sizes[p]
                        for p in parents]) <= gen.maxcost
        placed.add(column)
    out = gen.sample(3000, ctx.rng)
    assert out.shape == (3000, 6)
    assert all((out[:, j] < s).all() and (out[:, j] >= 0).all()
               for j, s in enumerate(domain.sizes))
    assert gen.attempted_ >= gen.released_ == 3000
    # ω = m everywhere: plain ancestral sampling, every seed plausible, all pass
    plain = make_generator("plausible_deniability", omega_min=6, k=20, t=5)
    plain.fit(codes, domain, 1.0, ctx)
    plain.sample(500, ctx.rng)
    assert (plain.released_, plain.attempted_) == (500, 1024)  # one batch, every one passed


def test_sampling_publishes_one_plan_that_no_pass_count_moves(tmp_path) -> None:
    """Issue 24: batch sizes are public (n and the cap), one ledger line per fit. Two datasets
    whose pass rates differ (a skewed one passes almost all, a uniform one few) run different
    numbers of batches, yet write the same line."""
    lines, attempted = [], []
    for seed, skew in ((0, True), (1, False)):
        codes, domain = _toy(seed=seed)
        if not skew:
            rng = np.random.default_rng(seed)
            codes = np.column_stack([rng.integers(0, s, codes.shape[0]) for s in domain.sizes])
        ledger = Ledger(tmp_path / f"l{seed}.jsonl", run_id="r")
        ctx = PrivacyContext.simulation(seed, ledger=ledger, noise=SeededNoise(seed))
        gen = make_generator("plausible_deniability", omega_min=2, k=200, t=5, max_attempts=6)
        gen.fit(codes, domain, 1.0, ctx)
        gen.sample(800, ctx.rng)
        gen.sample(300, ctx.rng)  # a second call (rejection rounds) writes nothing more
        attempted.append(gen.attempted_)
        ledger.close()
        events = [json.loads(x) for x in (tmp_path / f"l{seed}.jsonl").read_text().splitlines()]
        (plan,) = [e for e in events if e["event"] == "plausible_deniability_test"]
        lines.append({k: v for k, v in plan.items() if k not in ("timestamp", "seq")})
        assert (plan["batch"], plan["candidates_max"]) == (1600, 4800)  # 2n and the cap
    assert lines[0] == lines[1]
    assert attempted == [2624, 4224]  # the uniform data needed one batch more (seeded)
