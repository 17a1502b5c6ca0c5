"""Generators: budget accounting, domain discipline, PrivBayes structure and fidelity, sampling,
the registry, the score sensitivity, and an empirical DP audit of one noisy marginal."""

from __future__ import annotations

import math
import re
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.generators import (
    IndependentMarginals,
    PerturbedHistogram,
    PrivBayes,
    make_generator,
)
from workbench.generators.conditional import ConditionalTable
from workbench.generators.mutual_information import (
    mutual_information,
    mutual_information_sensitivity,
)
from workbench.generators.privbayes import candidate_parent_sets
from workbench.privacy import PrivacyContext
from workbench.privacy.noise import OpenDPNoise, SeededNoise
from workbench.transform import Domain
from workbench.transform.cells import CellCounts

GENERATORS_DIR = Path(__file__).resolve().parents[1] / "workbench" / "generators"

CONFIGS = [
    ("privbayes", {"degree": 2, "epsilon_split": 0.25}),
    ("privbayes", {"degree": 3, "epsilon_split": 0.5}),
    ("privbayes", {"theta": 4, "epsilon_split": 0.7}),
    ("independent", {}),
    ("perturbed_histogram", {"columns": ("a", "b")}),
    ("perturbed_histogram", {}),
]
CONFIG_IDS = [f"{f}-{'-'.join(f'{k}={v}' for k, v in h.items())}" for f, h in CONFIGS]


def dependent_data(n: int = 4000, seed: int = 0) -> tuple[np.ndarray, Domain]:
    """Six columns: b = a, f depends on a and c, the rest independent."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 6, n)
    c = rng.integers(0, 4, n)
    f = (a + c) % 5
    codes = np.stack([a, a.copy(), c, rng.integers(0, 3, n), rng.integers(0, 2, n), f], axis=1)
    return codes, Domain(("a", "b", "c", "d", "e", "f"), (6, 6, 4, 3, 2, 5))


def fit(family: str, hyper: dict, codes, domain, epsilon: float, seed: int = 1, **ctx_kw):
    """Fit in a simulation context whose noise is seeded too (``noise=`` overrides): the
    behaviour tests below assert on noisy fits, and OpenDP's noise cannot be seeded."""
    ctx_kw.setdefault("noise", SeededNoise(seed))
    ctx = PrivacyContext.simulation(seed=seed, **ctx_kw)
    model = make_generator(family, **hyper).fit(codes, domain, epsilon, ctx)
    return model, ctx


def record_epsilons(ctx) -> list[float]:
    return [float(r.epsilon) for r in ctx.records]


# ---------------------------------------------------------------- budget and noise scale


@pytest.mark.parametrize(("family", "hyper"), CONFIGS, ids=CONFIG_IDS)
@pytest.mark.parametrize("epsilon", [0.3, 4.0])
def test_fit_spends_exactly_epsilon(family: str, hyper: dict, epsilon: float) -> None:
    codes, domain = dependent_data()
    _, ctx = fit(family, hyper, codes, domain, epsilon)
    assert math.isclose(sum(record_epsilons(ctx)), epsilon, rel_tol=1e-12)


def test_privbayes_budget_split_and_marginal_scale() -> None:
    codes, domain = dependent_data()
    eps, split, d = 2.0, 0.25, len(domain)
    model, ctx = fit("privbayes", {"degree": 2, "epsilon_split": split}, codes, domain, eps)
    delta = ctx.histogram_sensitivity()
    eps2 = (1 - split) * eps
    marginals = [r for r in ctx.records if "marginal" in r.purpose]
    structure = [r for r in ctx.records if "structure" in r.purpose]
    assert len(marginals) == d and len(structure) == d - 1
    for r in marginals:
        assert math.isclose(r.epsilon, eps2 / d)
        assert r.sensitivity == delta
        assert math.isclose(r.sensitivity / r.epsilon, d * delta / eps2)  # per-cell scale
    for r in structure:
        assert math.isclose(r.epsilon, split * eps / (d - 1))
    assert math.isclose(model.marginal_noise_scale_, d * delta / eps2)


def test_privbayes_structure_uses_lemma_sensitivity() -> None:
    codes, domain = dependent_data(n=3000)
    no_binary = Domain(domain.names, (6, 6, 4, 3, 3, 5))  # column e: codes {0, 1} of 3
    _, ctx = fit("privbayes", {"degree": 2}, codes, no_binary, 1.0)
    structure = [r for r in ctx.records if "structure" in r.purpose]
    expected = mutual_information_sensitivity(3000, 6, 6, "replace_one")
    assert all(math.isclose(r.sensitivity, expected) for r in structure)
    binary = Domain(("p", "q", "r"), (2, 2, 2))
    _, ctx = fit("privbayes", {"degree": 2}, codes[:, [0, 2, 4]] % 2, binary, 1.0)
    structure = [r for r in ctx.records if "structure" in r.purpose]
    expected = mutual_information_sensitivity(3000, 2, 2, "replace_one")
    assert len(structure) == 2 and all(math.isclose(r.sensitivity, expected) for r in structure)


def test_perturbed_histogram_split_is_even_over_releases() -> None:
    codes, domain = dependent_data()
    model, ctx = fit("perturbed_histogram", {"columns": ("a", "b", "c")}, codes, domain, 3.0)
    eps = record_epsilons(ctx)
    assert len(eps) == 1 + 3 and all(math.isclose(e, 3.0 / 4) for e in eps)
    assert model.joint_.shape == (6, 6, 4)


# ---------------------------------------------------------------- domain discipline


@pytest.mark.parametrize(("family", "hyper"), CONFIGS, ids=CONFIG_IDS)
def test_domain_comes_from_domain_not_data(family: str, hyper: dict) -> None:
    codes, domain = dependent_data(n=500)
    codes[:, 3] = codes[:, 3] % 2  # column d only uses codes {0, 1}
    wide = Domain(domain.names, (6, 6, 4, 5, 2, 5))  # ... but its domain has 5 codes
    seen: set[int] = set()
    for seed in range(5):
        model, ctx = fit(family, hyper, codes, wide, 0.05, seed=seed)
        if isinstance(model, PrivBayes):
            for child, parents in model.network_:
                assert model.conditionals_[child].shape == wide.project((*parents, child)).sizes
            assert model.conditionals_["d"].shape[-1] == 5
        elif isinstance(model, IndependentMarginals):
            assert model.marginals_["d"].shape == (5,)
        elif "d" in model.joint_columns_:
            assert model.joint_.shape == wide.project(model.joint_columns_).sizes
        else:
            assert model.marginals_["d"].shape == (5,)
        synth = model.sample(5_000, ctx.rng)
        assert synth[:, 3].max() < 5
        seen |= set(np.unique(synth[:, 3]).tolist())
    # at this tiny ε noise gives the unused codes mass, so they must be reachable
    assert seen > {0, 1}


@pytest.mark.parametrize(("family", "hyper"), CONFIGS, ids=CONFIG_IDS)
@pytest.mark.parametrize("bad", [7, -1])
def test_codes_outside_domain_raise_naming_column(family: str, hyper: dict, bad: int) -> None:
    codes, domain = dependent_data(n=200)
    codes[17, 3] = bad
    ctx = PrivacyContext.simulation(seed=0)
    with pytest.raises(ValueError, match=r"column 'd'") as info:
        make_generator(family, **hyper).fit(codes, domain, 1.0, ctx)
    assert str(bad) not in str(info.value)
    assert record_epsilons(ctx) == []  # nothing was measured before the check


def test_codes_must_be_integer_matrix_of_domain_width() -> None:
    codes, domain = dependent_data(n=50)
    ctx = PrivacyContext.simulation(seed=0)
    with pytest.raises(ValueError, match="matrix"):
        PrivBayes(degree=2).fit(codes[:, :4], domain, 1.0, ctx)
    with pytest.raises(ValueError, match="integer"):
        PrivBayes(degree=2).fit(codes.astype(float), domain, 1.0, ctx)


def test_cell_counts_marginal_shape_from_domain() -> None:
    data = CellCounts.from_codes(np.array([[0, 1], [0, 1]]), Domain(("x", "y"), (4, 3)))
    assert data.marginal(("y", "x")).shape == (3, 4)
    assert data.marginal(("y", "x"))[1, 0] == 2 and data.marginal(("y", "x")).sum() == 2


# ---------------------------------------------------------------- PrivBayes behaviour


@pytest.mark.parametrize("hyper", [{"degree": 2}, {"degree": 1}, {"theta": 2}])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_privbayes_large_epsilon_recovers_dependency(hyper: dict, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 6000
    a = rng.integers(0, 5, n)
    codes = np.stack([a, a.copy(), rng.integers(0, 4, n)], axis=1)
    domain = Domain(("a", "b", "c"), (5, 5, 4))
    model, ctx = fit("privbayes", hyper, codes, domain, 1e6, seed=seed)
    synth = model.sample(n, ctx.rng)
    assert np.mean(synth[:, 0] == synth[:, 1]) > 0.99
    for j, size in enumerate(domain.sizes):
        real = np.bincount(codes[:, j], minlength=size) / n
        fake = np.bincount(synth[:, j], minlength=size) / n
        assert np.abs(real - fake).max() < 0.03


def test_privbayes_small_epsilon_loses_dependency() -> None:
    """Control for the test above: the dependency is learnt, not built in."""
    rng = np.random.default_rng(0)
    a = rng.integers(0, 5, 300)
    codes = np.stack([a, a.copy(), rng.integers(0, 4, 300)], axis=1)
    model, ctx = fit("privbayes", {"degree": 2}, codes, Domain(("a", "b", "c"), (5, 5, 4)), 0.01)
    synth = model.sample(5000, ctx.rng)
    assert np.mean(synth[:, 0] == synth[:, 1]) < 0.9


@pytest.mark.parametrize("degree", [1, 2, 3, 4])
def test_degree_flavour_caps_parents(degree: int) -> None:
    codes, domain = dependent_data()
    model, _ = fit("privbayes", {"degree": degree}, codes, domain, 1e3)
    counts = [len(parents) for _, parents in model.network_]
    assert max(counts) == degree
    assert counts == [min(i, degree) for i in range(len(domain))]  # the paper's C(S, k) sets


def test_theta_flavour_uses_fewer_parents_at_smaller_budget() -> None:
    codes, domain = dependent_data(n=20_000)
    parents = {}
    for eps in (0.05, 1.0, 50.0):
        model, _ = fit("privbayes", {"theta": 4}, codes, domain, eps)
        parents[eps] = max(len(p) for _, p in model.network_)
        for child, pi in model.network_:
            if pi:  # every non-empty table keeps the θ-usefulness bound
                assert domain.size((*pi, child)) <= model.cell_bound_
    assert parents[0.05] < parents[1.0] < parents[50.0]
    model, ctx = fit("privbayes", {"theta": 4}, codes, domain, 1.0)
    n, d, eps2, delta = 20_000, len(domain), 1.0 * 0.5, ctx.histogram_sensitivity()
    assert math.isclose(model.cell_bound_, n * eps2 / (d * delta * 4))


def test_candidate_parent_sets_are_maximal_and_within_bounds() -> None:
    sizes = [3, 4, 5, 2, 6]
    chosen = [0, 1, 2, 3]
    sets = candidate_parent_sets(chosen, 2, sizes, max_parents=9, max_cells=60, limit=100)
    admissible = [
        pi
        for r in range(len(chosen) + 1)
        for pi in combinations(chosen, r)
        if 2 * math.prod(sizes[c] for c in pi) <= 60
    ]
    maximal = [pi for pi in admissible if not any(set(pi) < set(q) for q in admissible)]
    assert sorted(sets) == sorted(maximal)


def test_first_node_is_drawn_from_the_seeded_rng() -> None:
    # Noise comes from OpenDP and is never seedable; only the free first-node draw and the
    # post-DP sampling use the context's numpy Generator, so those follow the seed.
    codes, domain = dependent_data()
    first = {
        seed: {
            fit("privbayes", {"degree": 2}, codes, domain, 1.0, seed=seed,
                noise=OpenDPNoise())[0].network_[0][0]
            for _ in range(2)
        }
        for seed in range(12)
    }
    assert all(len(v) == 1 for v in first.values())
    assert len(set().union(*first.values())) > 1


def test_first_node_is_uniform_over_columns_and_free() -> None:
    """GreedyBayes's first node ignores the data (b = a makes a and b the informative pair)."""
    rng = np.random.default_rng(0)
    a = rng.integers(0, 4, 60)
    codes = np.stack([a, a.copy(), rng.integers(0, 3, 60)], axis=1)
    domain = Domain(("a", "b", "c"), (4, 4, 3))
    firsts = []
    for seed in range(150):
        model, ctx = fit("privbayes", {"degree": 1}, codes, domain, 1.0, seed=seed)
        firsts.append(model.network_[0][0])
        structure = [r for r in ctx.records if "structure" in r.purpose]
        assert len(structure) == len(domain) - 1  # the first node costs nothing
    counts = [firsts.count(name) for name in domain.names]
    assert all(25 <= c <= 75 for c in counts), counts  # expected 50 each, sd ≈ 5.8


@pytest.mark.parametrize(("family", "hyper"), CONFIGS, ids=CONFIG_IDS)
def test_sampling_is_reproducible_by_seed(family: str, hyper: dict) -> None:
    codes, domain = dependent_data(n=800)
    model, _ = fit(family, hyper, codes, domain, 1.0, seed=11)
    s1, s2, s3 = (model.sample(300, np.random.default_rng(s)) for s in (11, 11, 12))
    assert np.array_equal(s1, s2)
    assert not np.array_equal(s1, s3)


@pytest.mark.parametrize(("family", "hyper"), CONFIGS, ids=CONFIG_IDS)
@pytest.mark.parametrize("n", [0, 1, 777])
def test_sample_returns_n_rows_in_domain(family: str, hyper: dict, n: int) -> None:
    codes, domain = dependent_data(n=600)
    model, ctx = fit(family, hyper, codes, domain, 0.5)
    synth = model.sample(n, ctx.rng)
    assert synth.shape == (n, len(domain)) and synth.dtype == np.int64
    assert (synth >= 0).all() and (synth < np.array(domain.sizes)).all()


@pytest.mark.parametrize(("family", "hyper"), CONFIGS, ids=CONFIG_IDS)
def test_sample_before_fit_raises(family: str, hyper: dict) -> None:
    with pytest.raises(RuntimeError, match="fit"):
        make_generator(family, **hyper).sample(3, np.random.default_rng(0))


def test_baselines_large_epsilon_match_their_targets() -> None:
    codes, domain = dependent_data(n=8000)
    model, ctx = fit("independent", {}, codes, domain, 1e6)
    synth = model.sample(8000, ctx.rng)
    for j, size in enumerate(domain.sizes):
        diff = np.bincount(synth[:, j], minlength=size) - np.bincount(codes[:, j], minlength=size)
        assert np.abs(diff).max() / 8000 < 0.03
    assert np.mean(synth[:, 0] == synth[:, 1]) < 0.3  # independence: b = a is lost
    model, ctx = fit("perturbed_histogram", {"columns": ("a", "b")}, codes, domain, 1e6)
    synth = model.sample(8000, ctx.rng)
    assert np.mean(synth[:, 0] == synth[:, 1]) > 0.99  # the joint keeps it


# ---------------------------------------------------------------- conditional tables


def test_conditional_table_sampling_follows_probabilities() -> None:
    counts = np.array([[0, 5, 0, 15], [-3, 0, 0, 0], [2, 2, 0, 0]])
    table = ConditionalTable.from_noisy_counts(counts)
    assert np.allclose(table.probs[1], 0.25)  # no mass: uniform fallback
    rng = np.random.default_rng(0)
    config = np.repeat(np.arange(3), 40_000)
    drawn = table.sample(config, rng)
    for row in range(3):
        freq = np.bincount(drawn[config == row], minlength=4) / 40_000
        assert np.abs(freq - table.probs[row]).max() < 0.01
        assert (freq[table.probs[row] == 0] == 0).all()


# ---------------------------------------------------------------- registry and hygiene


def test_registry_rejects_unknown_family_and_hyperparameter() -> None:
    with pytest.raises(ValueError, match="'mwem'"):
        make_generator("mwem")
    with pytest.raises(ValueError, match="'k'"):
        make_generator("privbayes", k=2)
    with pytest.raises(ValueError, match="exactly one"):
        make_generator("privbayes", degree=2, theta=4)
    with pytest.raises(ValueError, match="exactly one"):
        make_generator("privbayes")
    with pytest.raises(ValueError, match="epsilon_split"):
        make_generator("privbayes", degree=2, epsilon_split=1.0)
    with pytest.raises(ValueError, match="degree"):
        make_generator("privbayes", degree=0)
    assert isinstance(make_generator("perturbed_histogram", columns=("a",)), PerturbedHistogram)


def test_perturbed_histogram_rejects_unknown_column() -> None:
    codes, domain = dependent_data(n=50)
    with pytest.raises(ValueError, match="'zz'"):
        PerturbedHistogram(columns=("a", "zz")).fit(
            codes, domain, 1.0, PrivacyContext.simulation(seed=0)
        )


def test_generators_make_no_noise_of_their_own() -> None:
    forbidden = re.compile(
        r"\b(?:np|numpy)\.random\.(?!Generator\b)\w+"  # any numpy.random call but the type
        r"|default_rng|import random\b|from random\b"
        r"|\.(?:laplace|normal|gumbel|geometric|exponential)\("  # noise drawn from an rng
    )
    offenders = []
    for path in sorted(GENERATORS_DIR.glob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = forbidden.search(line)
            # the PrivacyContext's own mechanisms (``privacy.laplace(``) are the allowed way
            if match and not re.search(r"\bprivacy\.(?:exponential|laplace)\(", line):
                offenders.append(f"{path.name}:{number}: {line.strip()}")
    assert offenders == []


# ---------------------------------------------------------------- score sensitivity


def paper_bound(n: int, binary: bool) -> float:
    if binary:
        return math.log2(n) / n + (n - 1) / n * math.log2(n / (n - 1))
    return 2 / n * math.log2((n + 1) / 2) + (n - 1) / n * math.log2((n + 1) / (n - 1))


def test_mutual_information_sensitivity_is_the_papers_lemma() -> None:
    for n in (10, 1000, 165_915):
        assert mutual_information_sensitivity(n, 12, 10, "replace_one") == pytest.approx(
            paper_bound(n, binary=False)
        )
        assert mutual_information_sensitivity(n, 2, 10, "replace_one") == pytest.approx(
            paper_bound(n, binary=True)
        )
        assert mutual_information_sensitivity(n, 12, 2, "replace_one") == pytest.approx(
            paper_bound(n, binary=True)
        )
        assert mutual_information_sensitivity(n, 1, 10, "replace_one") == 0.0


def table_of(pairs: list[tuple[int, int]], kp: int, kx: int) -> np.ndarray:
    t = np.zeros((kp, kx))
    for p, x in pairs:
        t[p, x] += 1
    return t


@settings(max_examples=300, deadline=None)
@given(
    kp=st.integers(2, 4),
    kx=st.integers(2, 4),
    data=st.data(),
)
def test_mutual_information_sensitivity_bounds_neighbours(kp: int, kx: int, data) -> None:
    cell = st.tuples(st.integers(0, kp - 1), st.integers(0, kx - 1))
    rows = data.draw(st.lists(cell, min_size=3, max_size=14))
    n = len(rows)
    base = mutual_information(table_of(rows, kp, kx))
    i = data.draw(st.integers(0, n - 1))
    other = data.draw(cell)
    replaced = [*rows[:i], other, *rows[i + 1 :]]
    gap = abs(mutual_information(table_of(replaced, kp, kx)) - base)
    assert gap <= mutual_information_sensitivity(n, kx, kp, "replace_one") + 1e-12
    removed = rows[:i] + rows[i + 1 :]
    added = [*rows, other]
    bound = mutual_information_sensitivity(n, kx, kp, "add_remove") + 1e-12
    assert abs(mutual_information(table_of(removed, kp, kx)) - base) <= bound
    assert abs(mutual_information(table_of(added, kp, kx)) - base) <= bound


def test_norm_sub_keeps_the_total_and_removes_the_clipping_bias() -> None:
    from workbench.generators.conditional import norm_sub

    rng = np.random.default_rng(5)
    true = np.zeros(400)
    true[:4] = [5000, 3000, 1500, 100]  # a rare value among many empty cells
    noisy = true + rng.laplace(0, 5, size=(200, true.size))
    fixed = np.array([norm_sub(row) for row in noisy])
    assert (fixed >= 0).all()
    assert np.allclose(fixed.sum(axis=1), noisy.sum(axis=1))
    clipped = np.clip(noisy, 0, None)
    # clipping moves mass into the 396 empty cells; Norm-Sub leaves them nearly empty
    assert clipped[:, 4:].sum(axis=1).mean() > 500
    assert fixed[:, 4:].sum(axis=1).mean() < clipped[:, 4:].sum(axis=1).mean() / 10
    assert norm_sub(np.array([-3.0, 1.0])).tolist() == [0.0, 0.0]
