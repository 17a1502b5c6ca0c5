"""The workload's ``structure: tree`` option (issue 36): a spanning forest of unnamed pairs,
chosen by noisy max among pairs joining separate components, measured and refitted once."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from workbench.generators import WorkloadGenerator, make_generator
from workbench.generators.measurement import measure_marginal
from workbench.generators.model_limit import ModelLimit, cap_cells, junction_tables
from workbench.generators.structure_tree import Forest, run_tree, shares, tree_refusal
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
    """a × b named; c copies a 90% of the time, e copies d 85% (both unnamed)."""
    a, b = rng.integers(0, 3, n), rng.integers(0, 4, n)
    c = np.where(rng.random(n) < 0.9, a, rng.integers(0, 3, n))
    d = rng.integers(0, 2, n)
    e = np.where(rng.random(n) < 0.85, d, rng.integers(0, 2, n))
    return np.stack([a, b, c, d, e], axis=1), Domain(NAMES, (3, 4, 3, 2, 2))


def test_the_tree_picks_the_planted_pairs_and_epsilon_adds_up(caplog) -> None:
    codes, domain = planted(20_000, np.random.default_rng(1))
    ctx = PrivacyContext.simulation(seed=5, noise=SeededNoise(5))
    gen = WorkloadGenerator(structure="tree", structure_share=0.4, iters=200)
    gen.bind_workload(NAMED)
    with caplog.at_level(logging.DEBUG, logger="workbench.structure"):
        gen.fit(codes, domain, 8.0, ctx)
    assert ctx.epsilon_recorded() == pytest.approx(8.0, rel=1e-12)
    # components {a, b}, {c}, {d}, {e}: three edges, three noisy maxes, three measurements
    select = [r for r in ctx.records if r.mechanism == "exponential"]
    assert [r.purpose for r in select] == [
        f"workload structure tree edge {k} of 3: select a pair" for k in (1, 2, 3)]
    assert all(r.sensitivity == ctx.histogram_sensitivity() for r in select)
    assert sum(r.epsilon for r in select) == pytest.approx(0.1 * 0.4 * 8.0, rel=1e-12)
    assert {("a", "c"), ("d", "e")} <= set(gen.structure_) and len(gen.structure_) == 3
    assert all(r.purpose for r in ctx.records)
    synth = gen.sample(20_000, np.random.default_rng(7))
    assert np.mean(synth[:, 0] == synth[:, 2]) > 0.8  # independent: about 1/3
    assert np.mean(synth[:, 3] == synth[:, 4]) > 0.8  # independent: about 1/2
    lines = [r.getMessage() for r in caplog.records]
    assert [m.split(":")[1].strip() for m in lines if ": edge " in m] == [
        f"edge {k} of 3" for k in (1, 2, 3)]  # DEBUG: each choice, for public benchmarks
    public = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert any("closed form" in m for m in public) and any("up to 3 edges" in m for m in public)
    # INFO lines (a run's console) never name a choice: private selection may discard it
    assert not any(f"{x} x {y}" in m for m in public for x in NAMES for y in NAMES)


def test_the_junction_tree_grows_only_by_the_new_pairs() -> None:
    """Every edge joins two separate pieces: old tables + the new pair cliques, no fill."""
    codes, domain = planted(5_000, np.random.default_rng(2))
    data = CellCounts.from_codes(codes, domain)
    ctx = PrivacyContext.simulation(seed=3, noise=SeededNoise(3))
    measured = [measure_marginal(data, q, 1.0, ctx)
                for q in [(c,) for c in NAMES] + [("a", "b")]]
    sizes = dict(zip(NAMES, domain.sizes, strict=True))
    before = junction_tables(sizes, [m.clique for m in measured])
    _, chosen = run_tree(domain, measured, 5_000, data.marginal,
                         lambda q, e: measure_marginal(data, q, e, ctx), epsilon=2.0,
                         select_share=0.2, edges=0, limit=ModelLimit(), privacy=ctx, iters=30)
    after = junction_tables(sizes, [m.clique for m in measured])
    assert len(chosen) == 3
    kept = [t for t in before if not any(set(t[0]) < set(q) for q in chosen)]  # 1-ways absorbed
    assert sorted(after) == sorted(kept + [(q, sizes[q[0]] * sizes[q[1]]) for q in chosen])
    assert ("a", "b") in [q for q, _ in after]
    assert Forest(sizes, [m.clique for m in measured]).components() == 1


def test_the_closed_form_join_has_the_pair_table_and_keeps_the_rest() -> None:
    """p̃_ab/(p_a p_b) across two independent components: two free columns take the release's
    table; a pair onto the criteria's (a, b) piece is raked to its shares; (a, b), e and the
    earlier (c, d) table stay as they were."""
    from workbench.generators.mbi_model import NoisyMarginal, estimate
    from workbench.generators.mbi_numpy import log_factors, marginal
    from workbench.generators.structure_tree import join_tree, rake

    codes, domain = planted(5_000, np.random.default_rng(6))
    data = CellCounts.from_codes(codes, domain)
    ctx = PrivacyContext.simulation(seed=6, noise=SeededNoise(6))
    measured = [measure_marginal(data, q, 1.0, ctx)
                for q in [(c,) for c in NAMES] + [("a", "b")]]
    base = estimate(domain, measured, 5_000, 200)
    # c × d: two free columns, the release's own table; then a × c: a is held by (a, b)
    cd = NoisyMarginal(("c", "d"), np.array([[900, -5], [30, 700], [400, 60]]), 3.0)
    ac = NoisyMarginal(("a", "c"), np.array([[800, 90, 60], [70, 700, 80], [40, 50, 600]]), 3.0)
    joined = join_tree(base, [cd, ac])
    f0, sizes = log_factors(base)
    f1, _ = log_factors(joined)
    want_cd = 5_000 * rake(cd.counts, None, None)
    assert np.allclose(marginal(f1, sizes, ("c", "d"), 5_000), want_cd, rtol=1e-6)
    assert want_cd[0, 1] < 1e-3 * 5_000  # the negative cell is clipped, not flipped
    pa = marginal(f0, sizes, ("a",), 1.0)
    want_ac = 5_000 * rake(ac.counts, pa, want_cd.sum(axis=1) / 5_000)
    assert np.allclose(marginal(f1, sizes, ("a", "c"), 5_000), want_ac, rtol=1e-6)
    assert np.allclose(marginal(f1, sizes, ("a", "b"), 5_000),
                       marginal(f0, sizes, ("a", "b"), 5_000), rtol=1e-6)
    assert np.allclose(marginal(f1, sizes, ("e",), 1.0), marginal(f0, sizes, ("e",), 1.0))
    assert np.allclose(marginal(f1, sizes, ("c", "d"), 5_000), want_cd, rtol=1e-6)  # kept
    assert ("a", "b") in joined.marginals.cliques and ("c",) not in joined.marginals.cliques


def test_the_tree_stays_within_the_model_limit() -> None:
    """A 20-cell budget: the 3×4 piece and the 1-ways make 19; d × e keeps 19, and after it
    every other join (22 or more) is over: the junction-tree rule checks each edge."""
    codes, domain = planted(5_000, np.random.default_rng(3))
    data = CellCounts.from_codes(codes, domain)
    ctx = PrivacyContext.simulation(seed=4, noise=SeededNoise(4))
    measured = [measure_marginal(data, q, 1.0, ctx)
                for q in [(c,) for c in NAMES] + [("a", "b")]]
    sizes = dict(zip(NAMES, domain.sizes, strict=True))
    limit = ModelLimit(cells=20, bytes=10**9)
    _, chosen = run_tree(domain, measured, 5_000, data.marginal,
                         lambda q, e: measure_marginal(data, q, e, ctx), epsilon=2.0,
                         select_share=0.2, edges=0, limit=limit, privacy=ctx, iters=30)
    assert chosen == [("d", "e")]  # the strong pair; then c × d or c × e would make 22
    assert sum(c for _, c in junction_tables(sizes, [m.clique for m in measured])) <= 20
    assert cap_cells(limit) == 20
    assert ctx.epsilon_recorded() == pytest.approx(6 * 1.0 + 2.0, rel=1e-12)


def test_edges_limit_and_refusals() -> None:
    sizes = {"a": 3, "b": 4, "c": 3}
    assert tree_refusal(sizes, [("a", "b", "c")], ModelLimit()).startswith(
        "generator structure: the criteria's marginals already connect every column")
    assert "no unnamed pair fits" in tree_refusal(sizes, [("a", "b")],
                                                  ModelLimit(cells=14, bytes=10**9))
    assert tree_refusal(sizes, [("a", "b")], ModelLimit()) is None
    codes, domain = planted(2_000, np.random.default_rng(4))
    gen = WorkloadGenerator(structure="tree", structure_edges=1, iters=20)
    gen.bind_workload(NAMED)
    ctx = PrivacyContext.simulation(seed=1, noise=SeededNoise(1))
    gen.fit(codes, domain, 2.0, ctx)
    assert len(gen.structure_) == 1 and ctx.epsilon_recorded() == pytest.approx(2.0)
    full = Workload(NAMES, (WorkloadItem(NAMES, 1.0, ("named",)),), 0.3)
    gen = WorkloadGenerator(structure="tree", iters=20)
    gen.bind_workload(full)
    ctx = PrivacyContext.simulation(seed=1)
    with pytest.raises(ValueError, match="already connect every column"):
        gen.fit(codes, domain, 2.0, ctx)
    assert ctx.records == []


def test_the_independence_score_reads_released_tables_only() -> None:
    """Shares come from the noisy releases (clipped), never the data: a table of zeros and a
    negative cell give uniform and clipped shares."""
    from workbench.generators.mbi_model import NoisyMarginal

    domain = Domain(("a", "b"), (2, 3))
    q = shares(domain, [NoisyMarginal(("a",), np.array([0, 0]), 1.0),
                        NoisyMarginal(("a", "b"), np.array([[4, -2, 4], [0, 0, 0]]), 1.0)])
    assert q["a"].tolist() == [0.5, 0.5] and q["b"].tolist() == [0.5, 0.0, 0.5]


def test_tree_pairs_spends_the_rest_on_rounds_and_adds_up() -> None:
    codes, domain = planted(5_000, np.random.default_rng(5))
    gen = WorkloadGenerator(structure="tree_pairs", structure_rounds=1, iters=40)
    gen.bind_workload(NAMED)
    ctx = PrivacyContext.simulation(seed=2, noise=SeededNoise(2))
    gen.fit(codes, domain, 3.0, ctx)
    assert ctx.epsilon_recorded() == pytest.approx(3.0, rel=1e-12)
    purposes = [r.purpose for r in ctx.records if r.mechanism == "exponential"]
    assert purposes[-1] == "workload structure round 1.1: select a clique"
    assert len(gen.structure_) == 4
    assert "then 1 rounds of 1" in gen.describe("(1)", 3.0)[0]


def test_bad_tree_values_name_the_field(example_doc) -> None:
    example_doc["generator"] = {"family": "workload", "search_space": [
        {"algorithm": ["fixed"], "structure": ["trees"], "structure_edges": [-1],
         "structure_select_share": [1.5]}]}
    with pytest.raises(SpecError) as err:
        build_spec(example_doc)
    text = str(err.value)
    assert "structure[0]: must be one of" in text and "'tree'" in text
    assert "structure_edges[0]: must be a whole number >= 0" in text
    assert "structure_select_share[0]: must be a number in (0, 1)" in text
    with pytest.raises(ValueError, match="structure_edges"):
        make_generator("workload", structure="tree", structure_edges=-2)


def test_allow_columns_grow_the_tree_through_the_missing_view() -> None:
    """'allow' columns: the tree reads and measures through the strategy's view; the strong
    unnamed pair (occupation = workclass mod 14) is an edge, ε adds up to ε_gen."""
    from test_missing import toy_codes, toy_spec

    spec, _, table = toy_spec()
    codes = toy_codes(table)
    gen = make_generator("workload", missing_strategy="partial", structure="tree",
                         structure_share=0.4, iters=200)
    gen.bind_spec(spec, table)
    ctx = PrivacyContext.simulation(1, noise=SeededNoise(1))
    gen.fit(codes, table.domain, 50.0, ctx)
    assert ctx.epsilon_recorded() == pytest.approx(50.0, rel=1e-12)
    assert ("workclass", "occupation") in gen.structure_
    synth = gen.sample(len(codes), ctx.rng)
    w, o = table.domain.index("workclass"), table.domain.index("occupation")
    both = ~gen.pattern_.layout.missing(synth).any(axis=1)
    assert (synth[both, o] == synth[both, w] % 14).mean() > 0.6


def test_every_score_moves_by_at_most_delta_on_neighbours() -> None:
    """Replace-one neighbours (one row changed at random, 300 tries): no pair's score moves by
    more than Δ = 2, and some move by exactly 2 (the bound is tight)."""
    from workbench.generators.mbi_model import NoisyMarginal
    from workbench.generators.structure_tree import tree_scores

    codes, domain = planted(400, np.random.default_rng(8))
    released = [NoisyMarginal((c,), np.full(domain.size((c,)), 400 / domain.size((c,))), 9.0)
                for c in NAMES]  # a fixed public history: the same on D and D′
    pairs = [(a, b) for i, a in enumerate(NAMES) for b in NAMES[i + 1:]]
    base = tree_scores(domain, released, 400, CellCounts.from_codes(codes, domain).marginal,
                       pairs, 3.0)
    rng = np.random.default_rng(9)
    moved = 0.0
    for _ in range(300):
        other = codes.copy()
        other[rng.integers(0, 400)] = [rng.integers(0, s) for s in domain.sizes]
        near = tree_scores(domain, released, 400,
                           CellCounts.from_codes(other, domain).marginal, pairs, 3.0)
        moved = max(moved, max(abs(near[p] - base[p]) for p in pairs))
    assert moved <= PrivacyContext.simulation(0).histogram_sensitivity() + 1e-9
    assert moved == pytest.approx(2.0)
