"""The workload's ``structure`` option (issue 36): unnamed pairs selected privately, within the
declared model budget, with every charge on the ledger and Σ ε = ε_gen."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from workbench.cli.main import main
from workbench.generators import WorkloadGenerator, make_generator
from workbench.generators.model_size import STRUCTURE_TABLE, ModelLimit, model_size
from workbench.generators.structure_selection import (
    candidates,
    refusal,
    run_structure,
    tree_cells,
)
from workbench.generators.workload import Workload, WorkloadItem
from workbench.privacy import PrivacyContext
from workbench.privacy.noise import SeededNoise
from workbench.specification import SpecError
from workbench.transform import Domain
from workbench.transform.cells import CellCounts
from workbench.validation import build_spec


def planted(n: int, rng: np.random.Generator) -> tuple[np.ndarray, Domain]:
    """a × b is named by a criterion; c copies a 90% of the time (unnamed); d is noise."""
    a = rng.integers(0, 3, n)
    b = rng.integers(0, 4, n)
    c = np.where(rng.random(n) < 0.9, a, rng.integers(0, 3, n))
    d = rng.integers(0, 2, n)
    return np.stack([a, b, c, d], axis=1), Domain(("a", "b", "c", "d"), (3, 4, 3, 2))


NAMED = Workload(("a", "b", "c", "d"), (WorkloadItem(("a", "b"), 1.0, ("named",)),), 0.3)


@pytest.mark.parametrize(("algorithm", "structure"),
                         [("fixed", "pairs"), ("aim", "pairs"), ("fixed", "pairs_triples")])
def test_the_planted_unnamed_pair_is_selected_and_epsilon_adds_up(algorithm: str,
                                                                  structure: str) -> None:
    codes, domain = planted(20_000, np.random.default_rng(1))
    ctx = PrivacyContext.simulation(seed=5, noise=SeededNoise(5))
    gen = WorkloadGenerator(algorithm=algorithm, rounds=1, structure=structure,
                            structure_rounds=2, structure_share=0.2, iters=150)
    gen.bind_workload(NAMED)
    gen.fit(codes, domain, 2.0, ctx)
    assert ctx.epsilon_recorded() == pytest.approx(2.0, rel=1e-12)
    structure = [r for r in ctx.records if "structure" in r.purpose]
    assert [r.mechanism for r in structure] == ["exponential"] * 2
    assert all(r.sensitivity == ctx.histogram_sensitivity() for r in structure)
    assert all(r.purpose for r in ctx.records)
    assert gen.structure_[0] == ("a", "c")  # the strongly dependent pair nobody named
    assert ("a", "b") not in gen.structure_  # already measured: never a candidate
    if structure == "pairs":
        assert all(len(q) == 2 for q in gen.structure_)
    synth = gen.sample(20_000, np.random.default_rng(7))
    assert np.mean(synth[:, 0] == synth[:, 2]) > 0.8  # kept (independent: about 1/3)


def test_without_structure_the_unnamed_pair_comes_out_independent() -> None:
    codes, domain = planted(20_000, np.random.default_rng(1))
    gen = WorkloadGenerator(iters=150)
    gen.bind_workload(NAMED)
    gen.fit(codes, domain, 2.0, PrivacyContext.simulation(seed=5, noise=SeededNoise(5)))
    synth = gen.sample(20_000, np.random.default_rng(7))
    assert np.mean(synth[:, 0] == synth[:, 2]) < 0.45


def test_selection_stays_inside_the_model_budget() -> None:
    """A wide strongly dependent pair (d × e, 900 cells) does not fit a 300-cell budget: a
    narrow pair is chosen instead and the realised tree stays within the budget."""
    rng = np.random.default_rng(2)
    n = 10_000
    a = rng.integers(0, 3, n)
    b = np.where(rng.random(n) < 0.6, a, rng.integers(0, 3, n))
    d = rng.integers(0, 30, n)
    e = np.where(rng.random(n) < 0.95, d, rng.integers(0, 30, n))
    codes = np.stack([a, b, d, e], axis=1)
    domain = Domain(("a", "b", "d", "e"), (3, 3, 30, 30))
    data = CellCounts.from_codes(codes, domain)
    ctx = PrivacyContext.simulation(seed=3, noise=SeededNoise(3))
    from workbench.generators.measurement import measure_marginal

    measured = [measure_marginal(data, (c,), 1.0, ctx) for c in domain.names]
    limit = ModelLimit(cells=300, bytes=10**9)
    _, chosen = run_structure(domain, measured, n, data.marginal,
                              lambda c, eps: measure_marginal(data, c, eps, ctx),
                              epsilon=4.0, rounds=2, triples=False, limit=limit,
                              privacy=ctx, iters=50)
    assert ("d", "e") not in chosen and ("a", "b") in chosen
    sizes = dict(zip(domain.names, domain.sizes, strict=True))
    assert tree_cells(sizes, [m.clique for m in measured]) <= 300
    assert ctx.epsilon_recorded() == pytest.approx(4.0 + 4.0, rel=1e-12)


def test_candidates_left_over_spend_the_rest_on_the_one_way_marginals() -> None:
    """Two columns, one pair: round 2 has nothing to select, its ε re-measures the 1-ways."""
    codes, domain = planted(2_000, np.random.default_rng(3))
    codes, domain = codes[:, [0, 2]], Domain(("a", "c"), (3, 3))
    data = CellCounts.from_codes(codes, domain)
    ctx = PrivacyContext.simulation(seed=4, noise=SeededNoise(4))
    from workbench.generators.measurement import measure_marginal

    measured = [measure_marginal(data, (c,), 0.5, ctx) for c in domain.names]
    _, chosen = run_structure(domain, measured, 2_000, data.marginal,
                              lambda c, eps: measure_marginal(data, c, eps, ctx),
                              epsilon=1.0, rounds=2, triples=True, limit=ModelLimit(),
                              privacy=ctx, iters=30)
    assert chosen == [("a", "c")]
    assert ctx.epsilon_recorded() == pytest.approx(2.0, rel=1e-12)
    assert [r.purpose for r in ctx.records[-2:]] == ["workload marginal: a",
                                                     "workload marginal: c"]


def test_triples_extend_a_chosen_pair_only() -> None:
    names = ("a", "b", "c", "d")
    pool = candidates(names, [("a", "b")], [("a", "c")], triples=True)
    assert ("a", "b") not in pool and ("c", "d") in pool
    assert {q for q in pool if len(q) == 3} == {("a", "b", "c"), ("a", "c", "d")}


def test_no_candidate_that_fits_is_refused_before_any_charge() -> None:
    codes, domain = planted(1_000, np.random.default_rng(1))
    assert refusal(domain, [("a", "b")], ModelLimit(cells=10, bytes=10**9), False)
    assert refusal(domain, [("a", "b", "c", "d")], ModelLimit(), False).startswith(
        "generator structure: every column pair")
    gen = WorkloadGenerator(structure="pairs", iters=10)
    gen.bind_workload(NAMED)
    gen._limit = lambda: ModelLimit(cells=10, bytes=10**9)  # a budget nothing fits
    ctx = PrivacyContext.simulation(seed=0)
    with pytest.raises(ValueError, match="generator structure: no unnamed pair fits"):
        gen.fit(codes, domain, 1.0, ctx)
    assert ctx.records == []


def _structure_doc(doc: dict, **grid: list) -> dict:
    doc["generator"] = {"family": "workload", "search_space": [{"algorithm": ["fixed"],
                                                                **grid}]}
    return doc


def test_the_size_estimate_is_the_budget_not_the_selection(example_doc) -> None:
    doc = _structure_doc(example_doc, structure=["pairs"])
    doc["generator"]["model_limit"] = {"cells": 5_000_000}
    size = model_size(build_spec(doc))
    assert size.cells == 5_000_000  # whatever the rounds select stays below this
    assert STRUCTURE_TABLE in [q for q, _ in size.tables]
    plain = model_size(build_spec(_structure_doc(example_doc)))
    assert plain.cells < 5_000_000 and STRUCTURE_TABLE not in [q for q, _ in plain.tables]


def test_bad_structure_values_name_the_field(example_doc, tmp_path: Path,
                                             capsys: pytest.CaptureFixture) -> None:
    doc = _structure_doc(example_doc, structure=["all"], structure_share=[1.0],
                         structure_rounds=[0])
    with pytest.raises(SpecError) as err:
        build_spec(doc)
    text = str(err.value)
    assert "structure[0]: must be one of 'none', 'pairs', 'pairs_triples'" in text
    assert "structure_share[0]: must be a number in (0, 1)" in text
    assert "structure_rounds[0]: must be a whole number >= 1" in text
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    assert main(["validate", str(path)]) == 2
    assert "structure_share" in capsys.readouterr().err
    with pytest.raises(ValueError, match="structure"):
        make_generator("workload", structure="triples")


@pytest.mark.parametrize("strategy", ["partial", "impute"])
def test_allow_columns_select_the_unnamed_dependence_too(strategy: str) -> None:
    """With 'allow' columns (missing strategies), the rounds read and measure through the same
    view: occupation = workclass mod 14 is found and kept, ε adds up to ε_gen."""
    from test_missing import toy_codes, toy_spec

    spec, _, table = toy_spec()
    codes = toy_codes(table)
    gen = make_generator("workload", missing_strategy=strategy, structure="pairs",
                         structure_rounds=1, structure_share=0.3, iters=200)
    gen.bind_spec(spec, table)
    ctx = PrivacyContext.simulation(1, noise=SeededNoise(1))
    gen.fit(codes, table.domain, 50.0, ctx)
    assert ctx.epsilon_recorded() == pytest.approx(50.0, rel=1e-12)
    assert gen.structure_ == [("workclass", "occupation")]
    synth = gen.sample(len(codes), ctx.rng)
    w, o = table.domain.index("workclass"), table.domain.index("occupation")
    both = ~gen.pattern_.layout.missing(synth).any(axis=1)
    assert (synth[both, o] == synth[both, w] % 14).mean() > 0.6


def test_describe_names_the_structure_rounds_and_their_epsilon() -> None:
    gen = WorkloadGenerator(structure="pairs", structure_share=0.25, structure_rounds=2)
    gen.bind_workload(NAMED)
    lines = gen.describe("(1)", 2.0)
    assert "ε 0.5 of ε_gen goes first to 2 rounds of 1 selecting unnamed pairs" in lines[0]
    assert "a × b: weight 1, ε 1.05" in lines[2]  # the rest, 1.5, less the 1-ways' 0.3


def test_several_picks_per_round_share_its_epsilon() -> None:
    codes, domain = planted(20_000, np.random.default_rng(1))
    ctx = PrivacyContext.simulation(seed=5, noise=SeededNoise(5))
    gen = WorkloadGenerator(structure="pairs", structure_rounds=1, structure_picks=2,
                            structure_share=0.2, iters=150)
    gen.bind_workload(NAMED)
    gen.fit(codes, domain, 2.0, ctx)
    assert ctx.epsilon_recorded() == pytest.approx(2.0, rel=1e-12)
    picks = [r for r in ctx.records if r.mechanism == "exponential"]
    assert [r.purpose for r in picks] == [
        "workload structure round 1.1: select a clique",
        "workload structure round 1.2: select a clique"]
    assert all(r.epsilon == pytest.approx(0.1 * 0.4 / 2) for r in picks)
    assert gen.structure_[0] == ("a", "c") and len(set(gen.structure_)) == 2
