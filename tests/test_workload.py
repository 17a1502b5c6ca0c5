"""The criteria-aware workload: derivation from the spec, ε allocation, the generator's budget,
domain discipline and joint-preserving sampling, the spec validator and the engine hook."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from workbench.generators import WorkloadGenerator, derive_workload, make_generator
from workbench.generators.workload import all_pairs_workload
from workbench.privacy import PrivacyContext
from workbench.privacy.noise import SeededNoise
from workbench.report.spec_summary import describe_spec
from workbench.specification import SpecError
from workbench.transform import Domain
from workbench.trial import bind
from workbench.validation import build_spec

COLUMNS = ("birth_month", "mother_age", "parity", "gestation_week", "birth_sex", "birth_weight")


def _workload_doc(doc: dict, **grid: list) -> dict:
    doc["generator"] = {"family": "workload", "search_space": [grid or {"algorithm": ["fixed"]}]}
    return doc


# ------------------------------------------------------------------ derivation


def test_regression_asks_for_every_pair_of_its_columns(example_spec) -> None:
    workload = derive_workload(example_spec)
    cliques = {item.clique for item in workload.items}
    # the pairs of the regression (and max-marginal) criteria, and the 1-ways that the
    # relative 1-way and max-marginal criteria ask for themselves (issue 26: rare cells)
    assert cliques == set(itertools.combinations(COLUMNS, 2)) | {(c,) for c in COLUMNS}
    for item in workload.items:
        if len(item.clique) == 2:
            assert {"regression_coefficients", "regression_mae"} <= set(item.sources)
        else:
            assert set(item.sources) == {"relative_1way", "marginals"}


def test_weights_follow_what_the_criteria_need_not_their_epsilon(example_spec) -> None:
    """Issue 36: a share criterion needs 0.05/T, any other 1, spread over its cliques."""
    weights = {i.clique: i.weight for i in derive_workload(example_spec).items}
    # regression ×2 (need 1 each) over all pairs; max-marginal (T 0.01: need 5) over the 6
    # 1-ways and 15 pairs
    per_pair = 2 / 15 + 5 / 21
    assert weights[("birth_month", "birth_sex")] == pytest.approx(per_pair)
    # birth weight by sex: plus a quarter of the birth-weight mean criterion (4 group-bys)
    assert weights[("birth_sex", "birth_weight")] == pytest.approx(per_pair + 1 / 4)
    # gestation x weight: plus the mean and faithfulness (T 0.05: need 1, 3 distance pairs)
    expected = per_pair + 1 / 4 + 1 / 3
    assert weights[("gestation_week", "birth_weight")] == pytest.approx(expected)


def test_conditional_means_ask_for_target_by_group_pairs(example_doc) -> None:
    example_doc["criteria"] = [c for c in example_doc["criteria"] if c["id"] == "mean_gestation"]
    example_doc["criteria"][0]["params"].pop("resize_slack")
    example_doc["budget"]["epsilon_criteria"] = 0.02
    workload = derive_workload(build_spec(example_doc))
    assert [i.clique for i in workload.items] == [
        ("mother_age", "gestation_week"),
        ("parity", "gestation_week"),
    ]
    assert all(i.weight == pytest.approx(0.5) for i in workload.items)


def test_multipliers_scale_and_zero_drops(example_spec) -> None:
    base = {i.clique: i.weight for i in derive_workload(example_spec).items}
    doubled = derive_workload(example_spec, multipliers={"regression": 2.0})
    pair = ("birth_month", "birth_sex")
    assert {i.clique: i.weight for i in doubled.items}[pair] == pytest.approx(
        base[pair] + 2 / 15
    )
    only_means = derive_workload(
        example_spec, multipliers={"regression": 0, "marginal": 0, "faithfulness": 0}
    )
    assert {i.clique for i in only_means.items} == {
        ("mother_age", "parity"),
        ("mother_age", "gestation_week"),
        ("mother_age", "birth_weight"),
        ("parity", "gestation_week"),
        ("parity", "birth_weight"),
        ("gestation_week", "birth_weight"),
        ("birth_sex", "birth_weight"),
    }


def test_the_relative_one_way_error_measures_every_one_way_itself(example_doc) -> None:
    """Issue 26: its value is decided by the rarest 1-way cells, so it asks for every 1-way
    marginal whatever the one_way_share (even 0)."""
    example_doc["criteria"] = [c for c in example_doc["criteria"] if c["id"] == "relative_1way"]
    example_doc["budget"]["epsilon_criteria"] = 0.3
    workload = derive_workload(build_spec(example_doc), one_way_share=0.0)
    assert [i.clique for i in workload.items] == [(c,) for c in COLUMNS]
    alloc = workload.allocate(1.5)
    assert [c for c, _ in alloc] == [(c,) for c in COLUMNS]
    assert sum(e for _, e in alloc) == pytest.approx(1.5)  # everything goes to the 1-ways


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 2.0, 4.0, 1 / 3])
@pytest.mark.parametrize("share", [0.1, 0.25, 0.6])
def test_allocation_spends_exactly_epsilon(example_spec, epsilon: float, share: float) -> None:
    workload = derive_workload(example_spec, one_way_share=share)
    alloc = workload.allocate(epsilon)
    assert math.fsum(e for _, e in alloc) == pytest.approx(epsilon, rel=1e-12)
    assert all(e > 0 for _, e in alloc)
    one_way = sum(e for _, e in alloc[: len(workload.columns)])  # the one_way_share part
    assert one_way == pytest.approx(share * epsilon)
    weights = {i.clique: i.weight for i in workload.items}
    multi = [(c, e) for c, e in alloc if len(c) > 1]
    ratios = [e / weights[c] for c, e in multi]
    assert max(ratios) == pytest.approx(min(ratios))  # ε proportional to weight


def test_describe_shows_the_derived_workload(example_doc) -> None:
    spec = build_spec(_workload_doc(example_doc, one_way_share=[0.25, 0.4]))
    text = describe_spec(spec)
    assert "Derived workload 1 (one_way_share=0.25)" in text
    assert "Derived workload 2 (one_way_share=0.4)" in text
    assert "birth_sex × birth_weight" in text
    assert "mean_birth_weight" in text


def test_describe_shows_generator_epsilon_alternatives(example_doc) -> None:
    """ε_gen alternatives: each workload at its own ε, the budget line names the largest."""
    doc = _workload_doc(example_doc, one_way_share=[0.25], epsilon=[1.0, 1.5])
    doc["budget"]["epsilon_generator"] = 1.5
    text = describe_spec(build_spec(doc))
    assert "Derived workload 1 (epsilon=1.0, one_way_share=0.25), ε at ε_gen = 1:" in text
    assert "Derived workload 2 (epsilon=1.5, one_way_share=0.25), ε at ε_gen = 1.5:" in text
    assert "generator epsilon        1.5 (largest of the alternatives 1, 1.5)" in text


# ------------------------------------------------------------------ spec validator


def test_validator_accepts_workload_hyperparameters(example_doc) -> None:
    spec = build_spec(
        _workload_doc(
            example_doc,
            algorithm=["fixed"],
            one_way_share=[0.2, 0.3],
            regression_weight=[1, 2],
            mean_weight=[1.0],
            marginal_weight=[0],
            faithfulness_weight=[0.5],
            iters=[300],
        )
    )
    assert spec.generator.count() == 4
    for params in spec.generator.hyperparameter_sets():
        make_generator("workload", **params)  # every point builds


def test_validator_accepts_aim_and_rejects_bad_values(example_doc) -> None:
    build_spec(_workload_doc(example_doc, algorithm=["fixed", "aim"], rounds=[3]))
    doc = _workload_doc(
        example_doc, algorithm=["mst"], one_way_share=[1.5], mean_weight=[-1], rounds=[0]
    )
    with pytest.raises(SpecError) as err:
        build_spec(doc)
    text = str(err.value)
    assert "algorithm[0]: must be 'fixed' or 'aim'" in text
    assert "one_way_share[0]" in text
    assert "mean_weight[0]" in text
    assert "rounds[0]" in text
    with pytest.raises(ValueError, match="algorithm"):
        make_generator("workload", algorithm="mst")
    with pytest.raises(ValueError, match="rounds"):
        make_generator("workload", algorithm="aim", rounds=0)


# ------------------------------------------------------------------ the generator


def dependent_codes(n: int, rng: np.random.Generator) -> tuple[np.ndarray, Domain]:
    """b copies a 90% of the time, c is independent noise, code 3 of a is never used."""
    a = rng.integers(0, 3, n)
    b = np.where(rng.random(n) < 0.9, a, rng.integers(0, 4, n))
    c = rng.integers(0, 2, n)
    return np.stack([a, b, c], axis=1), Domain(("a", "b", "c"), (4, 4, 2))


@pytest.fixture(scope="module")
def fitted() -> tuple[WorkloadGenerator, PrivacyContext, np.ndarray, Domain]:
    codes, domain = dependent_codes(20_000, np.random.default_rng(1))
    ctx = PrivacyContext.simulation(seed=3, noise=SeededNoise(3))  # the tests read the noisy fit
    gen = WorkloadGenerator(iters=300)
    gen.bind_workload(all_pairs_workload(domain.names, one_way_share=0.3))
    gen.fit(codes, domain, 2.0, ctx)
    return gen, ctx, codes, domain


def test_fit_spends_exactly_epsilon_through_the_context(fitted) -> None:
    _, ctx, _, domain = fitted
    assert ctx.epsilon_recorded() == pytest.approx(2.0, rel=1e-12)
    assert len(ctx.records) == len(domain) + 3  # three 1-ways and three pairs
    for record in ctx.records:
        assert record.mechanism == "discrete_laplace"
        assert record.sensitivity == ctx.histogram_sensitivity()
        assert record.purpose.startswith("workload marginal: ")


def test_domain_comes_from_the_spec_not_the_data(fitted) -> None:
    gen, _, codes, domain = fitted
    assert codes[:, 0].max() == 2  # the data never uses code 3 of 'a'
    assert gen.model_.domain == domain
    sizes = {col: table.n_codes for col, _, _, table in gen.model_.plan}
    assert sizes == {0: 4, 1: 4, 2: 2}  # every table has the spec's width


def test_sample_keeps_the_two_way_dependence(fitted) -> None:
    gen, _, codes, _ = fitted
    synth = gen.sample(20_000, np.random.default_rng(7))
    assert synth.shape == (20_000, 3)
    agree_real = np.mean(codes[:, 0] == codes[:, 1])
    agree_synth = np.mean(synth[:, 0] == synth[:, 1])
    assert agree_synth == pytest.approx(agree_real, abs=0.03)  # independence would give ~0.25
    assert np.mean(synth[:, 0] == 3) < 0.01


def test_sampling_is_reproducible_from_the_given_rng(fitted) -> None:
    gen = fitted[0]
    first = gen.sample(500, np.random.default_rng(11))
    again = gen.sample(500, np.random.default_rng(11))
    assert np.array_equal(first, again)


def test_aim_selects_with_the_exponential_mechanism_and_spends_exactly_epsilon() -> None:
    """Pure-ε AIM: 1-ways, then per round one noisy-max selection and one measurement."""
    codes, domain = dependent_codes(20_000, np.random.default_rng(1))
    # seeded noise: which pairs the noisy max selects, and the fit, are asserted below
    ctx = PrivacyContext.simulation(seed=5, noise=SeededNoise(5))
    gen = WorkloadGenerator(algorithm="aim", rounds=3, iters=200)
    workload = all_pairs_workload(domain.names, one_way_share=0.3)
    gen.bind_workload(workload)
    gen.fit(codes, domain, 2.0, ctx)
    assert ctx.epsilon_recorded() == pytest.approx(2.0, rel=1e-12)
    kinds = [r.mechanism for r in ctx.records]
    assert kinds == ["discrete_laplace"] * 3 + ["exponential", "discrete_laplace"] * 3
    selections = [r for r in ctx.records if r.mechanism == "exponential"]
    assert all(r.sensitivity == ctx.histogram_sensitivity() for r in selections)
    assert all(r.epsilon == pytest.approx(0.1 * 2.0 * 0.7 / 3) for r in selections)
    assert ("a", "b") in gen.selected_  # the only strongly dependent pair is found
    assert set(gen.selected_) <= {item.clique for item in workload.items}
    synth = gen.sample(20_000, np.random.default_rng(7))
    assert np.mean(synth[:, 0] == synth[:, 1]) == pytest.approx(
        np.mean(codes[:, 0] == codes[:, 1]), abs=0.03)
    assert np.mean(synth[:, 0] == 3) < 0.01  # the spec's code the data never uses


def test_codes_outside_the_spec_domain_are_refused() -> None:
    codes = np.array([[0, 0], [5, 1]])
    gen = WorkloadGenerator()
    with pytest.raises(ValueError, match="'a'"):
        gen.fit(codes, Domain(("a", "b"), (3, 2)), 1.0, PrivacyContext.simulation(seed=0))


def test_workload_columns_must_match_the_domain() -> None:
    gen = WorkloadGenerator()
    gen.bind_workload(all_pairs_workload(("a", "z")))
    ctx = PrivacyContext.simulation(seed=0)
    with pytest.raises(ValueError, match="differ"):
        gen.fit(np.zeros((4, 2), dtype=int), Domain(("a", "b"), (2, 2)), 1.0, ctx)
    assert ctx.records == []  # refused before any measurement


# ------------------------------------------------------------------ engine hook


def test_run_iteration_binds_the_spec_before_fit(example_doc) -> None:
    """The engine hands every generator the public spec through the family's bind_spec hook,
    before fit (a probe family registered for this test only)."""
    from workbench.engine import iteration
    from workbench.generators import GeneratorFamily, register, unregister

    calls: list[str] = []

    class Probe(GeneratorFamily):
        name = "probe"

        def bind_spec(self, spec, table=None) -> None:
            calls.append("bind")
            assert spec.generator.family == "probe"
            assert table is trial.table  # the Trial's codec, not a re-derived one

        def fit(self, codes, domain, epsilon, privacy):
            calls.append("fit")
            raise RuntimeError("stop here")

        def sample(self, n, rng):
            """Never reached: fit stops the iteration."""
            raise AssertionError("sample after a failed fit")

    register(Probe)
    try:
        example_doc["generator"] = {"family": "probe", "search_space": [{}]}
        spec = build_spec(example_doc)
        config = next(spec.configurations())
        codes = np.zeros((3, len(COLUMNS)), dtype=np.int64)
        trial = bind(spec, config)
        with pytest.raises(RuntimeError, match="stop here"):
            iteration.run_iteration(trial, None, PrivacyContext.simulation(seed=0),
                                    real_codes=codes)
    finally:
        unregister("probe")
    assert calls == ["bind", "fit"]


# ------------------------------------------------------------------ the lean example


def test_lean_example_is_the_paper_design_with_the_workload_generator(example_spec) -> None:
    from workbench.validation import load_spec

    examples = Path(__file__).resolve().parents[1] / "examples"
    lean = load_spec(examples / "israel_births_2014_lean.json")
    frozen = load_spec(examples / "israel_births_2014_lean.frozen.json", require_frozen=True)
    assert frozen.sha256 == lean.sha256
    assert lean.generator.family == "workload"
    paper = {c.id: (c.kind, c.threshold) for c in example_spec.criteria}
    assert {c.id: (c.kind, c.threshold) for c in lean.criteria} == paper
    assert [c.id for c in lean.criteria if c.once] == ["regression_coefficients"]
    assert all(len(t.alternatives) == 1 for t in lean.transformations)  # so `once` is allowed
    # A single attempt (T = 1) of ε₁ = 2 + 0.6939, plus the once-released regression (1.4).
    assert lean.selection.max_iterations == 1
    assert lean.epsilon_total == pytest.approx((2 + 0.6939) + 1.4)
    assert lean.epsilon_total <= 5
    weights = lean.criterion("regression_coefficients").params["statistic_weights"]
    assert weights["birth_weight*parity"] == 4.0
    assert lean.epsilon_total < example_spec.epsilon_total


def test_describe_shows_aim_rounds(example_doc) -> None:
    """An AIM workload is shown as candidates with the per-round ε, not a fixed allocation."""
    text = describe_spec(build_spec(_workload_doc(example_doc, algorithm=["aim"], rounds=[8])))
    assert "AIM candidates; after the 1-way marginals, 8 rounds of ε 0.375" in text  # 4·0.75/8
    assert "(ε 1 in all)" in text


# --- the compiled mirror descent (issue 15: speed, same estimator) ---------------------------
def _small_problem(noise: float) -> tuple:
    """Noisy 1- and 2-way marginals of a random 3-column table (public test data)."""
    from workbench.generators.mbi_model import NoisyMarginal

    rng = np.random.default_rng(8)
    domain = Domain(("a", "b", "c"), (2, 3, 4))
    joint = rng.dirichlet(np.ones(24)).reshape(2, 3, 4) * 5_000
    cliques = [("a",), ("b",), ("c",), ("a", "b"), ("b", "c")]
    measured = []
    for clique in cliques:
        axes = tuple(i for i, n in enumerate(domain.names) if n not in clique)
        counts = joint.sum(axis=axes) + noise * rng.standard_normal(
            [domain.sizes[domain.index(n)] for n in clique])
        measured.append(NoisyMarginal(clique, counts, max(noise, 1.0)))
    return domain, measured, 5_000.0


def test_compiled_descent_is_mbis_mirror_descent() -> None:
    import jax.numpy as jnp
    import mbi
    from mbi import estimation, marginal_loss
    from mbi.marginal_loss import maximal_subset

    from workbench.generators.mbi_descent import BLOCK, mirror_descent
    from workbench.generators.mbi_model import lipschitz

    domain, measured, total = _small_problem(noise=20.0)
    cliques = maximal_subset([m.clique for m in measured])
    ours, info = mirror_descent(domain, [(m.clique, m.counts, m.sigma) for m in measured],
                                cliques, lipschitz(domain, measured, cliques), total,
                                4 * BLOCK, rtol=0.0)
    loss = marginal_loss.from_linear_measurements(
        [mbi.LinearMeasurement(jnp.asarray(m.counts.ravel()), m.clique, m.sigma)
         for m in measured])
    loss = marginal_loss.MarginalLossFn(loss.cliques, loss.loss_fn,
                                        lipschitz(domain, measured, loss.cliques))
    theirs = estimation.mirror_descent(mbi.Domain(domain.names, domain.sizes), loss,
                                       known_total=total, iters=4 * BLOCK)
    assert info.steps == 4 * BLOCK and not info.converged
    for clique in cliques:
        np.testing.assert_allclose(np.asarray(ours.project(clique).datavector()),
                                   np.asarray(theirs.project(clique).datavector()), atol=1e-6)


def test_compiled_descent_stops_when_converged() -> None:
    from mbi.marginal_loss import maximal_subset

    from workbench.generators.mbi_descent import BLOCK, mirror_descent
    from workbench.generators.mbi_model import lipschitz

    domain, measured, total = _small_problem(noise=0.0)  # consistent: the loss can reach 0
    cliques = maximal_subset([m.clique for m in measured])
    model, info = mirror_descent(domain, [(m.clique, m.counts, m.sigma) for m in measured],
                                 cliques, lipschitz(domain, measured, cliques), total, 20_000)
    assert info.converged and info.steps < 20_000 and info.steps % BLOCK == 0
    fitted = np.asarray(model.project(("b", "c")).datavector(flatten=False))
    np.testing.assert_allclose(fitted, measured[4].counts, atol=1.0)
