"""The workload's ``structure: junction`` option (issue 36): a width-2 junction tree, each
remaining component joined to a placed column or edge by noisy max, measured, and joined to the
criteria's fit in closed form."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from workbench.audits import junction_score_scenario
from workbench.generators import WorkloadGenerator, make_generator
from workbench.generators.measurement import measure_marginal
from workbench.generators.model_limit import ModelLimit, junction_tables
from workbench.generators.structure_junction import Junction, junction_scores, run_junction
from workbench.generators.workload import Workload, WorkloadItem
from workbench.privacy import PrivacyContext
from workbench.privacy.noise import SeededNoise
from workbench.specification import SpecError
from workbench.transform import Domain
from workbench.transform.cells import CellCounts
from workbench.validation import build_spec

NAMES = ("a", "b", "c", "d", "e")
NAMED = Workload(NAMES, (WorkloadItem(("a", "b"), 1.0, ("named",)),), 0.3)


def planted(n: int, rng: np.random.Generator) -> tuple[np.ndarray, Domain]:
    """a × b named; c = (a + b) mod 3 90% of the time (independent of a alone and of b alone:
    only the edge (a, b) explains it); e copies d 85% of the time."""
    a, b = rng.integers(0, 3, n), rng.integers(0, 3, n)
    c = np.where(rng.random(n) < 0.9, (a + b) % 3, rng.integers(0, 3, n))
    d = rng.integers(0, 2, n)
    e = np.where(rng.random(n) < 0.85, d, rng.integers(0, 2, n))
    return np.stack([a, b, c, d, e], axis=1), Domain(NAMES, (3, 3, 3, 2, 2))


def fitted(structure: str, codes: np.ndarray, domain: Domain, eps: float, seed: int,
           **params) -> tuple[WorkloadGenerator, PrivacyContext]:
    """A workload fit with the named (a, b) and the structure option."""
    gen = WorkloadGenerator(structure=structure, structure_share=0.5, iters=200, **params)
    gen.bind_workload(NAMED)
    ctx = PrivacyContext.simulation(seed=seed, noise=SeededNoise(seed))
    gen.fit(codes, domain, eps, ctx)
    return gen, ctx


def test_the_junction_keeps_a_dependence_on_an_edge_that_a_tree_loses(caplog) -> None:
    """At high ε the junction picks (a, b, c): the release keeps c = (a + b) mod 3, which the
    tree (pairs only: c is independent of a alone and of b alone) cannot; ε adds up, each
    selection on the ledger with its purpose and Δ."""
    codes, domain = planted(20_000, np.random.default_rng(1))
    with caplog.at_level(logging.DEBUG, logger="workbench.structure"):
        gen, ctx = fitted("junction", codes, domain, 20.0, 5)
    assert ctx.epsilon_recorded() == pytest.approx(20.0, rel=1e-12)
    select = [r for r in ctx.records if r.mechanism == "exponential"]
    # components {a, b}, {c}, {d}, {e}: three steps, three noisy maxes, three measurements
    assert [r.purpose for r in select] == [
        f"workload structure junction step {k} of 3: select a clique" for k in (1, 2, 3)]
    assert all(r.sensitivity == ctx.histogram_sensitivity() for r in select)
    assert sum(r.epsilon for r in select) == pytest.approx(0.1 * 0.5 * 20.0, rel=1e-12)
    assert ("a", "b", "c") in gen.structure_ and len(gen.structure_) == 3
    assert any({"d", "e"} <= set(q) for q in gen.structure_)
    synth = gen.sample(20_000, np.random.default_rng(7))
    assert np.mean(synth[:, 2] == (synth[:, 0] + synth[:, 1]) % 3) > 0.85  # 1/3 if lost
    assert np.mean(synth[:, 3] == synth[:, 4]) > 0.8
    tree, _ = fitted("tree", codes, domain, 20.0, 5)
    other = tree.sample(20_000, np.random.default_rng(7))
    assert np.mean(other[:, 2] == (other[:, 0] + other[:, 1]) % 3) < 0.45
    public = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert any("3 steps from a component of 2 columns" in m for m in public)
    assert not any(f"{x} x {y}" in m for m in public for x in NAMES for y in NAMES)


def test_the_closed_form_join_has_the_clique_table_and_keeps_the_placed_part() -> None:
    """(a, b, c) onto the fitted (a, b): the model's (a, b, c) table is the release raked to
    the model's (a, b) (c free: its margin comes from the release), (a, b) and d are kept."""
    from workbench.generators.mbi_model import NoisyMarginal, estimate
    from workbench.generators.mbi_numpy import log_factors, marginal
    from workbench.generators.structure_junction import join_clique, to_model
    from workbench.generators.structure_tree import rake

    codes, domain = planted(5_000, np.random.default_rng(6))
    data = CellCounts.from_codes(codes, domain)
    ctx = PrivacyContext.simulation(seed=6, noise=SeededNoise(6))
    measured = [measure_marginal(data, q, 1.0, ctx)
                for q in [(c,) for c in NAMES] + [("a", "b")]]
    base = estimate(domain, measured, 5_000, 200)
    table = data.marginal(("a", "b", "c")).astype(np.float64)
    table[0, 0, 1] = -40.0  # a negative release cell
    state = Junction(base)
    join_clique(state, NoisyMarginal(("a", "b", "c"), table, 3.0), free=True)
    joined = to_model(state)
    f0, sizes = log_factors(base)
    f1, _ = log_factors(joined)
    pab = marginal(f0, sizes, ("a", "b"), 1.0)
    want = rake(table.reshape(9, 3), pab.reshape(-1), None).reshape(3, 3, 3)
    assert np.allclose(marginal(f1, sizes, ("a", "b", "c"), 1.0), want, atol=1e-9)
    assert np.allclose(marginal(f1, sizes, ("a", "b"), 1.0), pab, atol=1e-9)
    assert np.allclose(marginal(f1, sizes, ("d",), 1.0), marginal(f0, sizes, ("d",), 1.0))
    assert ("a", "b", "c") in joined.cliques


def test_the_junction_stays_within_the_model_limit_and_epsilon_adds_up() -> None:
    """A 23-cell budget: the 3×3 piece and the 1-ways make 16 cells, so only a 3×2 pair onto a
    or b fits (16 + 6 ≤ 23; no triple, no pair to c), and then nothing (20 + 4 > 23); the
    steps' unused ε measures that pair again (Σ ε = ε_gen)."""
    codes, domain = planted(5_000, np.random.default_rng(3))
    data = CellCounts.from_codes(codes, domain)
    ctx = PrivacyContext.simulation(seed=4, noise=SeededNoise(4))
    measured = [measure_marginal(data, q, 1.0, ctx)
                for q in [(c,) for c in NAMES] + [("a", "b")]]
    sizes = dict(zip(NAMES, domain.sizes, strict=True))
    limit = ModelLimit(cells=23, bytes=10**9)
    _, chosen = run_junction(domain, measured, 5_000, data.marginal,
                             lambda q, e: measure_marginal(data, q, e, ctx), epsilon=2.0,
                             select_share=0.2, edges=0, limit=limit, privacy=ctx, iters=30)
    assert len(chosen) == 1 and chosen[0][0] in "ab" and chosen[0][1] in "de"
    assert sum(c for _, c in junction_tables(sizes, [m.clique for m in measured])) <= 23
    assert ctx.epsilon_recorded() == pytest.approx(6 * 1.0 + 2.0, rel=1e-12)
    again = [r.purpose for r in ctx.records if r.mechanism != "exponential"][-2:]
    assert again[0] == again[1]  # the last clique measured twice


def test_steps_cap_and_refusal() -> None:
    codes, domain = planted(2_000, np.random.default_rng(4))
    gen, ctx = fitted("junction", codes, domain, 2.0, 1, structure_edges=1)
    assert len(gen.structure_) == 1 and ctx.epsilon_recorded() == pytest.approx(2.0)
    assert "width-2 junction tree" in gen.describe("(1)", 2.0)[0]
    full = Workload(NAMES, (WorkloadItem(NAMES, 1.0, ("named",)),), 0.3)
    gen = WorkloadGenerator(structure="junction", iters=20)
    gen.bind_workload(full)
    ctx = PrivacyContext.simulation(seed=1)
    with pytest.raises(ValueError, match=r"already connect every column, so a junction has "
                                         r"nothing to join; .*nothing was spent"):
        gen.fit(codes, domain, 2.0, ctx)
    assert ctx.records == []


def test_bad_junction_values_name_the_field(example_doc) -> None:
    example_doc["generator"] = {"family": "workload", "search_space": [
        {"algorithm": ["fixed"], "structure": ["junctions"], "structure_edges": [-1]}]}
    with pytest.raises(SpecError) as err:
        build_spec(example_doc)
    text = str(err.value)
    assert "structure[0]: must be one of" in text and "'junction'" in text
    assert "structure_edges[0]: must be a whole number >= 0" in text
    example_doc["generator"]["search_space"][0].update(structure=["junction"],
                                                       structure_edges=[0])
    build_spec(example_doc)  # the new value is accepted
    with pytest.raises(ValueError, match="structure"):
        make_generator("workload", structure="width2")


def test_every_score_moves_by_at_most_delta_on_neighbours() -> None:
    """Replace-one neighbours (one row changed at random, 300 tries), the model fixed (a DP
    output, the same on D and D′): no candidate's score moves by more than Δ = 2, and some move
    by exactly 2 (the bound is tight)."""
    from workbench.generators.mbi_model import NoisyMarginal, estimate

    codes, domain = planted(400, np.random.default_rng(8))
    released = [NoisyMarginal((c,), np.full(domain.size((c,)), 400 / domain.size((c,))), 9.0)
                for c in NAMES] + [NoisyMarginal(("a", "b"), np.full((3, 3), 400 / 9), 9.0)]
    state = Junction(estimate(domain, released, 400, 20))
    pool = [("a", "c"), ("b", "c"), ("a", "b", "c"), ("a", "d"), ("a", "b", "e")]
    base = junction_scores(state, pool, 400, CellCounts.from_codes(codes, domain).marginal,
                           3.0, {})
    rng = np.random.default_rng(9)
    moved = 0.0
    for _ in range(300):
        other = codes.copy()
        other[rng.integers(0, 400)] = [rng.integers(0, s) for s in domain.sizes]
        near = junction_scores(state, pool, 400,
                               CellCounts.from_codes(other, domain).marginal, 3.0, {})
        moved = max(moved, max(abs(x - y) for x, y in zip(near, base, strict=True)))
    assert moved <= PrivacyContext.simulation(0).histogram_sensitivity() + 1e-9
    assert moved == pytest.approx(2.0)


def test_structure_junction_score_audit() -> None:
    """The step's noisy max over (a, c), (b, c), (a, b, c): a tie on D split by the full Δ on
    D′; audited at Δ (holds) and Δ/2 (flagged)."""
    from test_audits import assert_audit

    scn = junction_score_scenario()
    assert scn.d.primitive == "noisy_max" and scn.d.epsilon == pytest.approx(1.0)
    assert scn.d.sensitivity == pytest.approx(2.0)
    assert scn.d.values[0] == pytest.approx(scn.d.values[1])
    assert (scn.d_prime.values - scn.d.values)[:2].tolist() == pytest.approx([-2.0, 2.0])
    assert_audit(scn)


def test_allow_columns_grow_the_junction_through_the_missing_view() -> None:
    """'allow' columns: the steps read and measure through the strategy's view; the strong
    unnamed pair (occupation = workclass mod 14) ends in one clique, ε adds up to ε_gen."""
    from test_missing import toy_codes, toy_spec

    spec, _, table = toy_spec()
    codes = toy_codes(table)
    gen = make_generator("workload", missing_strategy="partial", structure="junction",
                         structure_share=0.4, iters=200)
    gen.bind_spec(spec, table)
    ctx = PrivacyContext.simulation(1, noise=SeededNoise(1))
    gen.fit(codes, table.domain, 50.0, ctx)
    assert ctx.epsilon_recorded() == pytest.approx(50.0, rel=1e-12)
    assert any({"workclass", "occupation"} <= set(q) for q in gen.structure_)
    synth = gen.sample(len(codes), ctx.rng)
    w, o = table.domain.index("workclass"), table.domain.index("occupation")
    both = ~gen.pattern_.layout.missing(synth).any(axis=1)
    assert (synth[both, o] == synth[both, w] % 14).mean() > 0.6
