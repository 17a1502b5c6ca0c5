"""Issue 38 (memory at registry scale): the leaner steps give byte-identical seeded outputs.

The sampling plan's marginals come from variable elimination in numpy (``mbi_numpy``) instead
of mbi's eager op-by-op JAX one; the sampler builds parent configurations in place instead of
copying the parent columns; the projection counts distinct cells from one sorted key array.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from workbench.generators import conditional, mbi_model, mbi_numpy
from workbench.generators.mbi_model import NoisyMarginal, estimate, model_marginal, sampling_plan
from workbench.postprocess import projection
from workbench.postprocess.projection import distinct_cells, distinct_rows, project_min_count
from workbench.transform import Domain

pytest.importorskip("mbi")


@pytest.fixture(scope="module")
def fitted() -> tuple[Domain, object]:
    """A model over 4 columns with every pair measured: its junction tree is one 4-way clique,
    so the plan's 3- and 4-way marginals need variable elimination (public test data)."""
    rng = np.random.default_rng(38)
    domain = Domain(("a", "b", "c", "d"), (3, 4, 2, 5))
    joint = rng.dirichlet(np.full(120, 0.3)).reshape(domain.sizes) * 20_000
    measured = []
    for clique in [(n,) for n in domain.names] + list(itertools.combinations(domain.names, 2)):
        axes = tuple(i for i, n in enumerate(domain.names) if n not in clique)
        noisy = joint.sum(axis=axes) + 15.0 * rng.standard_normal(joint.sum(axis=axes).shape)
        measured.append(NoisyMarginal(clique, noisy, 15.0))
    return domain, estimate(domain, measured, 20_000.0, 300)


def _eager_plan(domain: Domain, model: object, monkeypatch) -> mbi_model.GraphicalModel:
    """The plan as it was built before: every marginal through mbi's eager ``project``."""
    with monkeypatch.context() as patch:
        patch.setattr(mbi_numpy, "marginal",
                      lambda factors, sizes, clique, total: model_marginal(model, clique))
        return sampling_plan(domain, model)


def test_numpy_elimination_gives_the_eager_marginals(fitted) -> None:
    """Each plan clique's table equals mbi's eager one up to float rounding."""
    domain, model = fitted
    factors, sizes = mbi_numpy.log_factors(model)
    names = domain.names
    for k in range(1, len(names) + 1):
        clique = names[:k]
        eager = model_marginal(model, clique)
        table = mbi_numpy.marginal(factors, sizes, clique, float(model.total))
        assert table.shape == eager.shape == tuple(domain.sizes[:k])
        np.testing.assert_allclose(table, eager, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("sampling", ["iid", "rounded"])
def test_seeded_rows_are_byte_identical_to_the_eager_plan(fitted, monkeypatch,
                                                          sampling: str) -> None:
    """The same seed draws byte-identical rows from the numpy plan and the eager one."""
    domain, model = fitted
    new = sampling_plan(domain, model).sample(50_000, np.random.default_rng(5), sampling)
    old = _eager_plan(domain, model, monkeypatch).sample(50_000, np.random.default_rng(5),
                                                         sampling)
    assert new.dtype == old.dtype and new.tobytes() == old.tobytes()
    assert len({tuple(r) for r in new[:2000]}) > 20  # a real sample, not a constant table


def test_parent_configurations_are_ravel_multi_index() -> None:
    """The in-place index is np.ravel_multi_index of the parent columns, in the plan's order."""
    rng = np.random.default_rng(1)
    sizes = (7, 3, 5, 2)
    rows = np.stack([rng.integers(0, s, 10_000) for s in sizes], axis=1)
    for parents in [(0,), (2, 0), (3, 1, 0, 2)]:
        psizes = tuple(sizes[p] for p in parents)
        expected = np.ravel_multi_index(tuple(rows[:, list(parents)].T), psizes)
        assert np.array_equal(conditional.parent_configurations(rows, parents, psizes), expected)
    assert np.array_equal(conditional.parent_configurations(rows, (), ()), np.zeros(10_000))


@pytest.mark.parametrize("sampling", ["iid", "rounded"])
def test_sampler_rows_are_byte_identical_to_the_copying_one(fitted, monkeypatch,
                                                            sampling: str) -> None:
    """The seeded rows equal those of the sampler that copied ``rows[:, parents]``."""
    domain, model = fitted
    plan = sampling_plan(domain, model)
    new = plan.sample(40_000, np.random.default_rng(9), sampling)
    monkeypatch.setattr(conditional, "parent_configurations", lambda rows, parents, sizes: (
        np.ravel_multi_index(tuple(rows[:, list(parents)].T), sizes) if parents
        else np.zeros(rows.shape[0], dtype=np.int64)))
    old = plan.sample(40_000, np.random.default_rng(9), sampling)
    assert new.tobytes() == old.tobytes()


@pytest.mark.parametrize("highs", [(4, 3, 2), (12, 9, 5, 6, 2, 32), (1, 1), (2**40, 2**40, 9)])
def test_distinct_cells_are_distinct_rows(highs) -> None:
    """Same cells, same order, same counts as distinct_rows (also past the 2^62 key limit)."""
    rng = np.random.default_rng(len(highs))
    codes = np.stack([rng.integers(0, h, 20_000) for h in highs], axis=1)
    cells, counts, _ = distinct_rows(codes)
    got_cells, got_counts = distinct_cells(codes)
    assert got_cells.dtype == cells.dtype and np.array_equal(got_cells, cells)
    assert np.array_equal(got_counts, counts) and got_counts.sum() == len(codes)
    empty_cells, empty_counts = distinct_cells(codes[:0])
    assert empty_cells.shape == (0, len(highs)) and empty_counts.size == 0
    with pytest.raises(ValueError, match="non-negative"):
        distinct_cells(codes - 1)


def test_projection_is_byte_identical_to_the_distinct_rows_one(monkeypatch) -> None:
    """project_min_count draws the same seeded rows as when it counted with distinct_rows."""
    rng = np.random.default_rng(3)
    codes = np.stack([rng.integers(0, h, 60_000) for h in (12, 9, 5, 6, 2, 32)], axis=1)
    new = project_min_count(codes, 5, np.random.default_rng(11))
    monkeypatch.setattr(projection, "distinct_cells",
                        lambda arr: distinct_rows(arr)[:2])
    old = project_min_count(codes, 5, np.random.default_rng(11))
    assert new.dtype == old.dtype and new.tobytes() == old.tobytes()
    _, counts = distinct_cells(new)
    assert counts.min() >= 5  # the projection did its job


def test_projection_in_place_is_the_permutation_one() -> None:
    """In place or not, the seeded rows are those of ``np.repeat(cells, new)[permutation]``
    (the draws before the buffer was reused), and in place they land in the sample itself."""
    rng = np.random.default_rng(4)
    codes = np.stack([rng.integers(0, h, 50_000) for h in (12, 9, 5, 6, 2, 32)], axis=1)
    cells, counts = distinct_cells(codes)
    draws = np.random.default_rng(21)
    new = projection.project_counts(counts, 5, draws)
    old = np.repeat(cells, new, axis=0)[draws.permutation(int(new.sum()))]
    copied = project_min_count(codes, 5, np.random.default_rng(21))
    sample = codes.copy()
    in_place = project_min_count(sample, 5, np.random.default_rng(21), in_place=True)
    assert copied.tobytes() == old.tobytes() == in_place.tobytes()
    assert in_place is sample and not np.array_equal(sample, codes)
    frozen = codes.copy()
    frozen.flags.writeable = False  # a read-only sample is copied, not written
    assert project_min_count(frozen, 5, np.random.default_rng(21), in_place=True).tobytes() \
        == old.tobytes()
    assert np.array_equal(frozen, codes)


class _Distinct:
    """Rows whose first column breaks 'a > 2' (code 3) with probability ``bad``; every row
    differs in column b, so a reordering or a lost row would show."""

    def __init__(self, bad: float, readonly: bool = False) -> None:
        self.bad, self.readonly = bad, readonly

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        out = np.stack([rng.integers(0, 3, n), rng.integers(0, 2**40, n)], axis=1)
        out[rng.random(n) < self.bad, 0] = 3
        if self.readonly:
            out.flags.writeable = False
        return out


def _old_sample_valid(generator, n, rng, rules, semantics, max_rounds):
    """sample_valid as it was: each round's kept rows copied, the rounds concatenated."""
    from workbench.postprocess import reject_counts
    from workbench.postprocess.rejection import MIN_BATCH_CAP, _Tally

    kept, tally, cap = [], _Tally(), max(10 * n, MIN_BATCH_CAP)
    while tally.valid < n and tally.rounds < max_rounds:
        draw = tally.next_draw(n - tally.valid, cap)
        batch = generator.sample(draw, rng)
        reject, _ = reject_counts(batch, rules, semantics, "keep")
        good = batch[~reject] if reject.any() else batch
        kept.append(good)
        tally.drawn, tally.valid, tally.rounds = tally.drawn + draw, tally.valid + len(good), \
            tally.rounds + 1
    return np.concatenate(kept)[:n]


@pytest.mark.parametrize("bad, readonly", [(0.0, False), (0.3, False), (0.7, False),
                                           (0.3, True)])
def test_sample_valid_is_byte_identical_to_the_concatenating_one(bad, readonly) -> None:
    """Rows compacted in place and rounds written into one buffer: the same seeded rows as
    copying and concatenating (one round, several rounds, a read-only batch)."""
    from workbench.constraints import BinSemantics, parse
    from workbench.postprocess import sample_valid

    semantics = {"a": BinSemantics.numeric([0, 1, 2, 3], [0, 1, 2, 3], integer=True),
                 "b": BinSemantics.numeric([0], [0], integer=True)}
    rules = [parse("a > 2")]
    new = sample_valid(_Distinct(bad, readonly), 30_000, np.random.default_rng(4), rules,
                       semantics, 10)
    old = _old_sample_valid(_Distinct(bad, readonly), 30_000, np.random.default_rng(4), rules,
                            semantics, 10)
    assert new.shape == (30_000, 2) and (new[:, 0] != 3).all()
    assert new.dtype == old.dtype and new.tobytes() == old.tobytes()


def test_conditional_draw_in_place_is_byte_identical() -> None:
    """ConditionalTable.sample with its sums in place draws the codes of the old formula."""
    from workbench.generators.conditional import ConditionalTable

    rng = np.random.default_rng(6)
    probs = rng.dirichlet(np.full(7, 0.4), size=40)
    probs[3] = 0.0
    probs[3, 2] = 1.0  # a row with a single code (its last non-zero code clips the draw)
    table = ConditionalTable(probs)
    config = rng.integers(0, 40, 200_000)
    new = table.sample(config, np.random.default_rng(2))
    u = np.random.default_rng(2).random(config.shape[0])
    old = np.minimum(np.searchsorted(table._shifted, config + u, side="right") - config * 7,
                     table._last[config])
    assert new.dtype == old.dtype and new.tobytes() == old.tobytes()
    assert (new[config == 3] == 2).all() and len(np.unique(new)) == 7
