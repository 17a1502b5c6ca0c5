"""β_max: the largest share of S rows matched one-to-one to real rows within cost α, exactly.

Rows are categorical, so both datasets are multisets of distinct cells. A maximum-cardinality
matching between rows equals a maximum flow on the cell graph (source → real cell, capacity
its count; real cell → synthetic cell when the cost rule allows, capacity ∞; synthetic cell →
sink, capacity its count): split any integral flow into unit paths and each path is one row
pair, and conversely (integrality theorem). The cell graph has at most #cells × #offsets
edges, however many rows there are; the reference implementation of the paper matched row by
row and took minutes to an hour on 166k rows (§4.5.5).
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np
from scipy.sparse import csr_array
from scipy.sparse.csgraph import connected_components, maximum_bipartite_matching, maximum_flow

from workbench.faithfulness.cost import FaithfulnessCost

_KEY_LIMIT = 2**62
#: Cells × offsets handled per vectorised step when enumerating neighbours.
_CHUNK = 1 << 22
#: Edges per max-flow call: whole components are packed into batches of about this size.
_BATCH_EDGES = 5_000


def _radix(sizes: np.ndarray) -> tuple[np.ndarray, int]:
    """Mixed-radix strides (last column fastest) and the product of the sizes."""
    strides = np.ones(len(sizes), dtype=np.int64)
    total = 1
    for j in range(len(sizes) - 1, -1, -1):
        strides[j] = total
        total *= int(sizes[j])
    return strides, total


def _combine(codes: np.ndarray, columns: list[int], strides: np.ndarray) -> np.ndarray:
    """Σ codes[:, j] · stride_j column by column (integer matmul has no fast path in numpy)."""
    out = np.zeros(codes.shape[0], dtype=np.int64)
    for j, stride in zip(columns, strides, strict=True):
        out += codes[:, j] * stride
    return out


def _keys(
    real: np.ndarray, synth: np.ndarray, cost: FaithfulnessCost
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """One int64 key per row: exact-column group first, then the distance codes in radix form.

    Returns the keys of both datasets, the strides of the distance columns inside a key, and
    the product of the distance columns' sizes (the span of one exact group).
    """
    sizes = np.asarray(cost.sizes, dtype=np.int64)
    exact, dist = list(cost.exact_columns), list(cost.distance_columns)
    d_strides, d_span = _radix(sizes[dist])
    e_strides, e_span = _radix(sizes[exact])
    if e_span * d_span < _KEY_LIMIT:
        g_real, g_synth = _combine(real, exact, e_strides), _combine(synth, exact, e_strides)
    else:
        both = np.concatenate([real[:, exact], synth[:, exact]])
        _, inverse = np.unique(both, axis=0, return_inverse=True)
        inverse = inverse.ravel().astype(np.int64)
        if (int(inverse.max(initial=0)) + 1) * d_span >= _KEY_LIMIT:
            raise ValueError("faithfulness: the distance columns' joint domain is too large")
        g_real, g_synth = inverse[: len(real)], inverse[len(real) :]
    k_real = g_real * d_span + _combine(real, dist, d_strides)
    k_synth = g_synth * d_span + _combine(synth, dist, d_strides)
    return k_real, k_synth, d_strides, d_span


def cell_edges(
    real_keys: np.ndarray,
    synth_keys: np.ndarray,
    cost: FaithfulnessCost,
    strides: np.ndarray,
    span: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (i, j) of sorted distinct real keys i and synthetic keys j the rule connects."""
    sizes = np.asarray(cost.sizes, dtype=np.int64)[list(cost.distance_columns)]
    within = real_keys % span
    codes = (within[:, None] // strides[None, :]) % sizes[None, :]
    locked_any = [m.any() for m in cost.locked]
    rows_out, cols_out = [], []
    step = max(1, _CHUNK // max(1, len(real_keys)))
    for start in range(0, len(cost.offsets), step):
        block = cost.offsets[start : start + step]  # (k, |D|)
        moved = codes[None, :, :] + block[:, None, :]  # (k, a, |D|)
        ok = ((moved >= 0) & (moved < sizes)).all(axis=2)
        for c, mask in enumerate(cost.locked):
            if locked_any[c]:
                changes = block[:, c] != 0
                safe = ~mask[codes[:, c]][None, :] & ~mask[np.clip(moved[:, :, c], 0, sizes[c] - 1)]
                ok &= ~changes[:, None] | safe
        target = real_keys[None, :] + (block @ strides)[:, None]
        pos = np.searchsorted(synth_keys, target)
        pos_c = np.minimum(pos, len(synth_keys) - 1)
        hit = ok & (pos < len(synth_keys)) & (synth_keys[pos_c] == target)
        _, r_idx = np.nonzero(hit)
        rows_out.append(r_idx)
        cols_out.append(pos_c[hit])
    if not rows_out:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(rows_out), np.concatenate(cols_out)


class CellGraph(NamedTuple):
    """Distinct cells of R and S (sorted keys, counts) and the rule's edges between them."""

    real_keys: np.ndarray
    real_counts: np.ndarray
    synth_keys: np.ndarray
    synth_counts: np.ndarray
    rows: np.ndarray
    cols: np.ndarray

    @property
    def row_pairs(self) -> int:
        """Edges the row-level graph would hold: Σ over cell edges of count_r · count_s."""
        return int((self.real_counts[self.rows] * self.synth_counts[self.cols]).sum())


def cell_graph(
    real_codes: np.ndarray, synth_codes: np.ndarray, cost: FaithfulnessCost
) -> CellGraph:
    """Distinct cells with counts on both sides, and the rule's edges between them."""
    real = cost.check_codes(real_codes, "real codes")
    synth = cost.check_codes(synth_codes, "synthetic codes")
    k_real, k_synth, strides, span = _keys(real, synth, cost)
    u_real, c_real = np.unique(k_real, return_counts=True)
    u_synth, c_synth = np.unique(k_synth, return_counts=True)
    if len(u_real) == 0 or len(u_synth) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return CellGraph(u_real, c_real, u_synth, c_synth, empty, empty)
    rows, cols = cell_edges(u_real, u_synth, cost, strides, span)
    return CellGraph(u_real, c_real, u_synth, c_synth, rows, cols)


def _flow(rows: np.ndarray, cols: np.ndarray, c_real: np.ndarray, c_synth: np.ndarray) -> int:
    """Max flow source → real cells → synthetic cells → sink on the given cell edges."""
    r_used, r_idx = np.unique(rows, return_inverse=True)
    s_used, s_idx = np.unique(cols, return_inverse=True)
    a, b = len(r_used), len(s_used)
    sink = a + b + 1
    src = np.concatenate([np.zeros(a, np.int64), 1 + r_idx, 1 + a + np.arange(b)])
    dst = np.concatenate([1 + np.arange(a), 1 + a + s_idx, np.full(b, sink, np.int64)])
    cap = np.concatenate([c_real[r_used], np.minimum(c_real[rows], c_synth[cols]), c_synth[s_used]])
    graph = csr_array((cap.astype(np.int32), (src, dst)), shape=(sink + 1, sink + 1))
    return int(maximum_flow(graph, 0, sink, method="dinic").flow_value)


def _batches(
    rows: np.ndarray, cols: np.ndarray, a: int, b: int
) -> tuple[np.ndarray, np.ndarray, list[slice]]:
    """Edges ordered by connected component, and slices cutting them into whole components.

    Components share no vertex, so their flows add up; solving ~_BATCH_EDGES edges at a time
    keeps each Dinic phase from rescanning parts of the graph that are already done.
    """
    adjacency = csr_array(
        (np.ones(len(rows), dtype=np.int8), (rows, a + cols)), shape=(a + b, a + b)
    )
    _, label = connected_components(adjacency, directed=False)
    comp = label[rows]
    order = np.argsort(comp, kind="stable")
    rows, cols, comp = rows[order], cols[order], comp[order]
    first = np.flatnonzero(np.r_[True, comp[1:] != comp[:-1]])
    start_of_edge = first[np.cumsum(np.r_[True, comp[1:] != comp[:-1]]) - 1]
    batch = start_of_edge // _BATCH_EDGES
    cuts = np.r_[0, np.flatnonzero(batch[1:] != batch[:-1]) + 1, len(rows)]
    return rows, cols, [slice(int(x), int(y)) for x, y in itertools.pairwise(cuts.tolist())]


def max_matching(real_codes: np.ndarray, synth_codes: np.ndarray, cost: FaithfulnessCost) -> int:
    """Size of a maximum matching of rows with c(r, s) ≤ α, by max flow on distinct cells.

    Exact for any row counts; S and R may differ in size. Edges real cell → synthetic cell get
    capacity min(count_r, count_s), which never binds more than ∞ would. Connected components
    of the cell graph are solved separately (a batch of small ones per solver call).
    """
    return _matched(cell_graph(real_codes, synth_codes, cost))


def _matched(graph: CellGraph) -> int:
    """The maximum flow of a cell graph, component batch by component batch."""
    u_real, c_real, u_synth, c_synth, rows, cols = graph
    if rows.size == 0:
        return 0
    if max(int(c_real.max()), int(c_synth.max())) > np.iinfo(np.int32).max:
        raise ValueError("faithfulness: a cell count exceeds the flow solver's integer range")
    total = 0
    rows, cols, parts = _batches(rows, cols, len(u_real), len(u_synth))
    for part in parts:
        total += _flow(rows[part], cols[part], c_real, c_synth)
    return total


def _summed(keys: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct keys of the cells a dataset occupies and its rows on each: what
    ``np.unique(row_keys, return_counts=True)`` gives on the rows themselves."""
    held = counts > 0
    unique, inverse = np.unique(keys[held], return_inverse=True)
    summed = np.bincount(inverse.ravel(), weights=counts[held], minlength=len(unique))
    return unique, np.rint(summed).astype(np.int64)


def beta_max_cells(cells: np.ndarray, real_counts: np.ndarray, synth_counts: np.ndarray,
                   cost: FaithfulnessCost) -> float:
    """``beta_max`` from R's and S's counts on their distinct cells (``PairedCells``): the
    same cell graph, so the same matching, without the n rows (issue 38, registry scale)."""
    real_counts = np.asarray(real_counts, dtype=np.int64)
    synth_counts = np.asarray(synth_counts, dtype=np.int64)
    n = int(synth_counts.sum())
    if int(real_counts.sum()) != n:
        raise ValueError("faithfulness: R and S must have the same number of rows")
    if n == 0:
        raise ValueError("faithfulness: β_max is undefined for empty datasets")
    arr = cost.check_codes(cells, "cells")
    keys, _, strides, span = _keys(arr, arr, cost)
    u_real, c_real = _summed(keys, real_counts)
    u_synth, c_synth = _summed(keys, synth_counts)
    if len(u_real) == 0 or len(u_synth) == 0:
        return 0.0
    rows, cols = cell_edges(u_real, u_synth, cost, strides, span)
    return _matched(CellGraph(u_real, c_real, u_synth, c_synth, rows, cols)) / n


def beta_max(real_codes: np.ndarray, synth_codes: np.ndarray, cost: FaithfulnessCost) -> float:
    """β_max(R, S) = max matching / n (Def. 5); the faithfulness error is 1 − β_max."""
    n = np.asarray(synth_codes).shape[0]
    if np.asarray(real_codes).shape[0] != n:
        raise ValueError("faithfulness: R and S must have the same number of rows")
    if n == 0:
        raise ValueError("faithfulness: β_max is undefined for empty datasets")
    return max_matching(real_codes, synth_codes, cost) / n


def sensitivity(n: int) -> float:
    """Global sensitivity of 1 − β_max under replace-one on R with S fixed: 1/n (Prop. 10).

    R₁ and R₂ share n − 1 rows. Take a maximum matching of R₂ with S and delete the pair of
    the row R₂ has and R₁ lacks (if that row is matched): what is left matches only shared
    rows, so it is a matching of R₁ with S and opt(R₁) ≥ opt(R₂) − 1. By symmetry the optimal
    sizes differ by at most one row, so β_max = opt / n, and 1 − β_max, move by at most 1/n.
    S must be public and fixed (it is the post-processed release candidate).
    """
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError("faithfulness: n must be a positive integer")
    return 1.0 / int(n)


def row_edges(real_codes: np.ndarray, synth_codes: np.ndarray, cost: FaithfulnessCost) -> csr_array:
    """Row-level bipartite graph (real rows × synthetic rows) of the cost rule; large on purpose."""
    real = cost.check_codes(real_codes, "real codes")
    synth = cost.check_codes(synth_codes, "synthetic codes")
    k_real, k_synth, strides, span = _keys(real, synth, cost)
    u_real, inv_real = np.unique(k_real, return_inverse=True)
    u_synth, inv_synth = np.unique(k_synth, return_inverse=True)
    shape = (len(real), len(synth))
    if len(u_real) == 0 or len(u_synth) == 0:
        return csr_array(shape, dtype=np.int8)
    rows, cols = cell_edges(u_real, u_synth, cost, strides, span)
    # rows of each real cell and of each synthetic cell, grouped by cell
    r_order = np.argsort(inv_real.ravel(), kind="stable")
    r_start = np.searchsorted(inv_real.ravel()[r_order], np.arange(len(u_real) + 1))
    s_order = np.argsort(inv_synth.ravel(), kind="stable")
    s_start = np.searchsorted(inv_synth.ravel()[s_order], np.arange(len(u_synth) + 1))
    r_n = np.diff(r_start)[rows]
    s_n = np.diff(s_start)[cols]
    pairs = r_n * s_n
    total = int(pairs.sum())
    edge_of = np.repeat(np.arange(len(rows)), pairs)
    offset = np.arange(total) - np.repeat(np.cumsum(pairs) - pairs, pairs)
    i = r_order[r_start[rows][edge_of] + offset // s_n[edge_of]]
    j = s_order[s_start[cols][edge_of] + offset % s_n[edge_of]]
    return csr_array((np.ones(total, dtype=np.int8), (i, j)), shape=shape)


def max_matching_per_row(
    real_codes: np.ndarray, synth_codes: np.ndarray, cost: FaithfulnessCost
) -> int:
    """Reference: Hopcroft–Karp on the row graph; exact but O(rows²) memory in dense data."""
    graph = row_edges(real_codes, synth_codes, cost)
    if graph.nnz == 0:
        return 0
    match = maximum_bipartite_matching(graph, perm_type="column")
    return int((match >= 0).sum())
