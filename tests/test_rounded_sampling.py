"""Rounded ancestral sampling: every conditional's counts are n_g·p rounded, unbiased."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.generators import WorkloadGenerator, make_generator
from workbench.generators.conditional import ConditionalTable, rounded_draw
from workbench.generators.workload import all_pairs_workload
from workbench.privacy import PrivacyContext
from workbench.privacy.noise import SeededNoise
from workbench.transform import Domain


def group_counts(config: np.ndarray, codes: np.ndarray, groups: int, k: int) -> np.ndarray:
    out = np.zeros((groups, k))
    np.add.at(out, (config, codes), 1)
    return out


def test_every_group_count_is_its_expectation_rounded_up_or_down() -> None:
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(7), size=40)
    probs[5] = 0.0  # an empty parent row: the table makes it uniform
    table = ConditionalTable.from_noisy_counts(probs)
    config = rng.integers(0, 40, size=3_000)
    n_g = np.bincount(config, minlength=40)
    for _ in range(20):
        counts = group_counts(config, rounded_draw(table, config, 40, rng), 40, 7)
        expected = n_g[:, None] * table.probs
        assert np.all(counts.sum(axis=1) == n_g)
        assert np.all(np.abs(counts - expected) < 1.0)


def test_rounding_is_unbiased() -> None:
    rng = np.random.default_rng(1)
    table = ConditionalTable(rng.dirichlet(np.ones(5), size=3))
    config = np.repeat(np.arange(3), [7, 11, 2])
    total = sum(group_counts(config, rounded_draw(table, config, 3, rng), 3, 5)
                for _ in range(4_000))
    expected = np.bincount(config)[:, None] * table.probs
    assert np.abs(total / 4_000 - expected).max() < 0.05  # MC error ≈ 0.5/√4000 ≈ 0.008


def test_rows_are_shuffled_within_their_group() -> None:
    table = ConditionalTable(np.array([[0.5, 0.5]]))
    codes = rounded_draw(table, np.zeros(1_000, dtype=np.int64), 1, np.random.default_rng(2))
    assert np.bincount(codes).tolist() == [500, 500]
    assert 0 < np.sum(codes[:500]) < 500  # not all zeros first


@pytest.fixture(scope="module")
def fitted_pair() -> tuple[WorkloadGenerator, np.ndarray]:
    rng = np.random.default_rng(3)
    a = rng.integers(0, 6, 30_000)
    b = np.where(rng.random(30_000) < 0.8, a, rng.integers(0, 6, 30_000))
    codes = np.stack([a, b], axis=1)
    gen = WorkloadGenerator(iters=300, sampling="rounded")
    gen.bind_workload(all_pairs_workload(("a", "b"), one_way_share=0.2))
    # seeded noise: the comparison below is made on this noisy fit
    gen.fit(codes, Domain(("a", "b"), (6, 6)), 4.0,
            PrivacyContext.simulation(seed=4, noise=SeededNoise(4)))
    return gen, codes


def test_rounded_samples_sit_closer_to_the_model_than_iid_ones(fitted_pair) -> None:
    """The fitted model's 2-way table is the target; rounding leaves ≤ 1 row off per cell of
    the root's 1-way and far less than i.i.d. sampling's √(n·p) elsewhere."""
    gen, _ = fitted_pair
    root, _, _, table = gen.model_.plan[0]
    n = 30_000
    rounded = gen.sample(n, np.random.default_rng(5))
    gen.sampling = "iid"
    try:
        iid = gen.sample(n, np.random.default_rng(5))
    finally:
        gen.sampling = "rounded"
    expected_root = n * table.probs[0]
    assert np.abs(np.bincount(rounded[:, root], minlength=6) - expected_root).max() < 1.0
    joint = [np.histogram2d(s[:, 0], s[:, 1], bins=6, range=[[0, 6], [0, 6]])[0]
             for s in (rounded, iid)]
    ideal = n * _model_joint(gen)
    err_rounded, err_iid = (np.abs(j - ideal).sum() for j in joint)
    assert err_rounded < 0.25 * err_iid


def _model_joint(gen: WorkloadGenerator) -> np.ndarray:
    """The model's joint P(a, b) from its sampling plan (root, then child | root)."""
    (c0, _, _, t0), (_c1, _, _, t1) = gen.model_.plan
    joint = t0.probs[0][:, None] * t1.probs
    return joint if c0 == 0 else joint.T


def test_sampling_must_be_iid_or_rounded() -> None:
    with pytest.raises(ValueError, match="sampling"):
        make_generator("workload", sampling="systematic")


def test_privbayes_takes_the_same_sampling_option() -> None:
    rng = np.random.default_rng(6)
    a = rng.integers(0, 4, 20_000)
    codes = np.stack([a, (a + (rng.random(20_000) < 0.1)) % 4], axis=1)
    gen = make_generator("privbayes", degree=1, sampling="rounded")
    gen.fit(codes, Domain(("a", "b"), (4, 4)), 2.0,
            PrivacyContext.simulation(seed=7, noise=SeededNoise(7)))
    root, _, _, table = gen._plan[0]
    synth = gen.sample(9_999, np.random.default_rng(8))
    assert np.abs(np.bincount(synth[:, root], minlength=4) - 9_999 * table.probs[0]).max() < 1.0
