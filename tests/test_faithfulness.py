"""Faithfulness β_max: the cell-level max flow must equal row-level maximum matching exactly."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import csr_array
from scipy.sparse.csgraph import maximum_bipartite_matching

from workbench.faithfulness import (
    FaithfulnessCost,
    beta_max,
    cell_graph,
    matching,
    max_matching,
    max_matching_per_row,
    row_edges,
    sensitivity,
)


def _reference_edges(
    real: np.ndarray,
    synth: np.ndarray,
    exact: list[int],
    weights: dict[int, float],
    alpha: float,
    locked: dict[int, np.ndarray],
) -> np.ndarray:
    """All-pairs rule, written out independently of the library's offsets and keys."""
    ok = np.ones((len(real), len(synth)), dtype=bool)
    total = np.zeros((len(real), len(synth)))
    for j in exact:
        ok &= real[:, j][:, None] == synth[:, j][None, :]
    for j, w in weights.items():
        a, b = real[:, j][:, None], synth[:, j][None, :]
        total += w * np.abs(a - b)
        if j in locked:
            ok &= (a == b) | ~(locked[j][a] | locked[j][b])
    return ok & (total <= alpha + 1e-9)


def _reference_matching(adjacency: np.ndarray) -> int:
    if adjacency.size == 0 or not adjacency.any():
        return 0
    match = maximum_bipartite_matching(csr_array(adjacency.astype(np.int8)), perm_type="column")
    return int((match >= 0).sum())


def _random_instance(rng: np.random.Generator):
    d = int(rng.integers(1, 5))
    sizes = tuple(int(s) for s in rng.integers(1, 6, size=d))
    names = tuple(f"c{j}" for j in range(d))
    n_dist = int(rng.integers(0, d + 1))
    dist_cols = sorted(rng.choice(d, size=n_dist, replace=False).tolist())
    weights = {j: float(rng.choice([0.5, 1.0, 1.0, 2.0])) for j in dist_cols}
    alpha = float(rng.choice([0.0, 1.0, 1.0, 1.5, 2.0]))
    locked = {}
    for j in dist_cols:
        if rng.random() < 0.5:
            locked[j] = rng.random(sizes[j]) < 0.4
    cost = FaithfulnessCost.build(
        names,
        sizes,
        {names[j]: w for j, w in weights.items()},
        alpha,
        {names[j]: m for j, m in locked.items()},
    )
    n_real = int(rng.integers(0, 26))
    n_synth = n_real if rng.random() < 0.7 else int(rng.integers(0, 26))
    # draw from a few cells so cells repeat, as in real categorical data
    pool = np.column_stack([rng.integers(0, s, size=6) for s in sizes])
    real = pool[rng.integers(0, 6, size=n_real)]
    synth_pool = np.where(rng.random(pool.shape) < 0.3, (pool + 1) % np.array(sizes), pool)
    synth = synth_pool[rng.integers(0, 6, size=n_synth)]
    exact = [j for j in range(d) if j not in weights]
    ref = _reference_matching(_reference_edges(real, synth, exact, weights, alpha, locked))
    return cost, real, synth, ref


@pytest.mark.parametrize("batch_edges", [5_000, 3])
def test_flow_equals_row_matching_on_300_random_instances(monkeypatch, batch_edges) -> None:
    # batch_edges=3 splits every instance's components over several solver calls
    monkeypatch.setattr(matching, "_BATCH_EDGES", batch_edges)
    rng = np.random.default_rng(20240501)
    with_locks = 0
    for _ in range(300):
        cost, real, synth, ref = _random_instance(rng)
        with_locks += any(m.any() for m in cost.locked)
        assert max_matching(real, synth, cost) == ref
        assert max_matching_per_row(real, synth, cost) == ref
    assert with_locks >= 50  # the must-match exception was exercised


def test_many_components_over_many_batches(monkeypatch) -> None:
    monkeypatch.setattr(matching, "_BATCH_EDGES", 400)
    rng = np.random.default_rng(8)
    sizes = (6, 5, 9, 9)
    cost = FaithfulnessCost.build(tuple("abcd"), sizes, {"c": 1.0, "d": 1.0}, 1.0)
    real = np.column_stack([rng.integers(0, s, 4000) for s in sizes])
    synth = np.column_stack([rng.binomial(s - 1, 0.4, 4000) for s in sizes])
    graph = cell_graph(real, synth, cost)
    assert len(graph.rows) > 2 * matching._BATCH_EDGES  # several solver calls
    assert max_matching(real, synth, cost) == max_matching_per_row(real, synth, cost)


def compatible(cost, real: np.ndarray, synth: np.ndarray) -> np.ndarray:
    """Whether c(r, s) ≤ α for broadcast row pairs, evaluated directly (the reference rule)."""
    from workbench.faithfulness.cost import ALPHA_TOLERANCE

    ok = np.ones(np.broadcast_shapes(real.shape, synth.shape)[:-1], dtype=bool)
    for j in cost.exact_columns:
        ok &= real[..., j] == synth[..., j]
    total = np.zeros(ok.shape, dtype=np.float64)
    for k, j in enumerate(cost.distance_columns):
        a, b = real[..., j], synth[..., j]
        total = total + cost.weights[k] * np.abs(a - b)
        if cost.locked[k].any():
            ok &= (a == b) | ~(cost.locked[k][a] | cost.locked[k][b])
    return ok & (total <= cost.alpha + ALPHA_TOLERANCE * max(1.0, cost.alpha))


def test_row_graph_matches_the_direct_rule() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        cost, real, synth, _ = _random_instance(rng)
        graph = row_edges(real, synth, cost).toarray().astype(bool)
        direct = compatible(cost, real[:, None, :], synth[None, :, :])
        np.testing.assert_array_equal(graph, direct.reshape(graph.shape))


def test_paper_rule_has_seven_unit_offsets(example_spec) -> None:
    config = next(example_spec.configurations())
    cost = FaithfulnessCost.from_spec(example_spec, config)
    offsets = {tuple(o) for o in cost.offsets.tolist()}
    assert len(offsets) == 7
    assert (0, 0, 0) in offsets
    assert all(sum(abs(x) for x in o) <= 1 for o in offsets)
    assert [cost.names[j] for j in cost.exact_columns] == ["birth_month", "parity", "birth_sex"]


def _config(spec, mother_age: str):
    for c in spec.configurations():
        if c.transform_of("mother_age") == mother_age:
            return c
    raise AssertionError(mother_age)


@pytest.mark.parametrize(
    ("alternative", "locked"),
    [("ten_bins_35_39", ["35-39"]), ("ten_bins_35_36_37_39", []), ("single_years", [])],
)
def test_37_locks_only_a_bin_that_holds_it_inside(example_spec, alternative, locked) -> None:
    config = _config(example_spec, alternative)
    table = example_spec.table_codec(config)
    cost = FaithfulnessCost.from_spec(example_spec, config)
    assert cost.locked_labels(table).get("mother_age", []) == locked


def test_locked_bin_matches_only_itself(example_spec) -> None:
    config = _config(example_spec, "ten_bins_35_39")
    table = example_spec.table_codec(config)
    cost = FaithfulnessCost.from_spec(example_spec, config)
    age = table.codec("mother_age")
    b35, b30, b40 = (int(age.encode([v])[0]) for v in (37, 32, 41))
    base = table.encode(
        __import__("pandas").DataFrame(
            {
                "birth_month": [3],
                "mother_age": [37],
                "parity": [1],
                "gestation_week": [39],
                "birth_sex": ["F"],
                "birth_weight": [3200],
            }
        )
    )
    j = table.names.index("mother_age")
    other = base.copy()
    for neighbour in (b30, b40):
        other[0, j] = neighbour
        assert max_matching(base, other, cost) == 0  # 35-39 vs 30-34 / 40-42: locked
        assert max_matching(other, base, cost) == 0  # and in the other direction
    assert max_matching(base, base, cost) == 1
    # the same one-bin move is fine in a column without an exception
    w = table.names.index("birth_weight")
    heavier = base.copy()
    heavier[0, w] += 1
    assert max_matching(base, heavier, cost) == 1
    # and 30-34 vs 25-29 is an ordinary one-bin move
    lo, lower = base.copy(), base.copy()
    lo[0, j], lower[0, j] = b30, b30 - 1
    assert max_matching(lo, lower, cost) == 1
    assert b35 != b30


def test_unlocked_alternative_allows_the_adjacent_bin(example_spec) -> None:
    config = _config(example_spec, "ten_bins_35_36_37_39")
    cost = FaithfulnessCost.from_spec(example_spec, config)
    table = example_spec.table_codec(config)
    j = table.names.index("mother_age")
    row = np.zeros((1, len(table.names)), dtype=np.int64)
    row[0, j] = int(table.codec("mother_age").encode([37])[0])
    moved = row.copy()
    moved[0, j] -= 1  # 35-36
    assert max_matching(row, moved, cost) == 1


def test_counts_are_capacities_not_rows() -> None:
    cost = FaithfulnessCost.build(("a", "b"), (3, 4), {"b": 1.0}, 1.0)
    real = np.array([[0, 0]] * 5 + [[1, 3]] * 2)
    synth = np.array([[0, 1]] * 3 + [[0, 3]] * 2 + [[1, 3]] * 2)
    # five real (0,0) rows can only use the three (0,1) rows; (0,3) is two bins away
    assert max_matching(real, synth, cost) == 5
    assert beta_max(real, synth, cost) == pytest.approx(5 / 7)


def test_identical_data_is_fully_faithful() -> None:
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 4, size=(500, 3))
    cost = FaithfulnessCost.build(("a", "b", "c"), (4, 4, 4), {"c": 1.0}, 0.0)
    assert beta_max(codes, codes[::-1], cost) == 1.0


def test_huge_exact_domain_uses_grouped_keys() -> None:
    rng = np.random.default_rng(1)
    names = tuple(f"c{j}" for j in range(24))
    sizes = (7,) * 24  # 7**24 > 2**62 cells
    cost = FaithfulnessCost.build(names, sizes, {"c0": 1.0}, 1.0)
    base = rng.integers(0, 7, size=(4, 24))
    real = base[rng.integers(0, 4, size=40)]
    synth = base[rng.integers(0, 4, size=40)].copy()
    synth[::3, 0] = np.clip(synth[::3, 0] + 1, 0, 6)
    assert max_matching(real, synth, cost) == max_matching_per_row(real, synth, cost)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), row=st.integers(0, 24))
def test_replacing_one_real_row_moves_beta_by_at_most_one_over_n(seed: int, row: int) -> None:
    rng = np.random.default_rng(seed)
    sizes = (3, 4, 4)
    cost = FaithfulnessCost.build(("a", "b", "c"), sizes, {"b": 1.0, "c": 1.0}, 1.0)
    n = 25
    real = np.column_stack([rng.integers(0, s, n) for s in sizes])
    synth = np.column_stack([rng.integers(0, s, n) for s in sizes])
    other = real.copy()
    other[row] = [rng.integers(0, s) for s in sizes]
    change = abs(beta_max(real, synth, cost) - beta_max(other, synth, cost))
    assert change <= sensitivity(n) + 1e-12


def test_sensitivity_is_one_over_n() -> None:
    assert sensitivity(165_915) == 1 / 165_915
    with pytest.raises(ValueError):
        sensitivity(0)


def test_errors_name_columns_not_values() -> None:
    cost = FaithfulnessCost.build(("age", "sex"), (5, 2), {"age": 1.0}, 1.0)
    bad = np.array([[4, 0], [987654, 1]])
    with pytest.raises(ValueError, match="'age'") as info:
        max_matching(bad, bad, cost)
    assert "987654" not in str(info.value)
    with pytest.raises(ValueError, match="same number of rows"):
        beta_max(np.zeros((2, 2), int), np.zeros((3, 2), int), cost)


def test_rule_validation() -> None:
    with pytest.raises(ValueError, match="weights"):
        FaithfulnessCost.build(("a",), (3,), {"a": 0.0}, 1.0)
    with pytest.raises(ValueError, match="not distance columns"):
        FaithfulnessCost.build(("a", "b"), (3, 3), {"a": 1.0}, 1.0, {"b": np.zeros(3, bool)})
    with pytest.raises(ValueError, match="offsets"):
        FaithfulnessCost.build(tuple("abcdefgh"), (200,) * 8, dict.fromkeys("abcdefgh", 0.01), 1.0)
