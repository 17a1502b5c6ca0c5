"""Criterion 1 of Hod & Canetti (Table 2), exactly: the largest k-way marginal error between the
transformed original data R and the release candidate S, over every non-empty column subset.

    E(R, S) = max over subsets A ≠ ∅ (|A| ≤ max_way) and cells c of dom(A) of
              |count_R(A = c) − count_S(A = c)| / n,       n = |R| = |S| (public).

Both datasets are reduced once to the signed difference count_R − count_S per joint cell (one
bincount each on the combined codes); rows are never visited again. When the joint domain is
small it is a dense d-dim table and each marginal is one axis-sum of a parent marginal; otherwise
only the distinct cells where R and S differ are kept and each marginal is one bincount of their
differences on the subset's combined codes: O(n + 2^d·#cells), never O(2^d·n).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from workbench.transform import Domain
from workbench.transform.cells import check_codes

# A combined-code table is summed with a dense bincount when its domain has at most
# max(_DENSE_MIN_CELLS, 4 · items) cells, capped at _BINCOUNT_MAX_CELLS; else via np.unique.
_DENSE_MIN_CELLS = 1 << 20
_BINCOUNT_MAX_CELLS = 1 << 24
# ravel_multi_index works in int64; larger joint domains are grouped row-wise.
_RAVEL_MAX_CELLS = 1 << 62


def max_marginal_error_sensitivity(n: int) -> float:
    """Global sensitivity of ``max_marginal_error`` in R for fixed public S and n: Δ = 1/n.

    Replace-one neighbours R ~ R' (same n): the replaced row leaves one cell and enters another
    of each marginal, so every count_R(A = c) moves by at most 1 and every term
    |count_R − count_S|/n by at most 1/n. A maximum of queries has sensitivity at most the
    largest of theirs (Hod & Canetti, Prop. 3), hence Δ = 1/n (Table 2, criterion 1).

    >>> max_marginal_error_sensitivity(4)
    0.25
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ValueError("n must be an integer >= 1")
    return 1.0 / int(n)


def max_marginal_error(
    real: np.ndarray, synth: np.ndarray, domain: Domain, *, max_way: int | None = None,
    n: int | None = None,
) -> float:
    """The exact (non-DP) criterion-1 value: largest |count_R − count_S|/n over all marginals.

    ``max_way`` limits the subsets to at most that many columns (all d by default); ``n``:
    the public divisor when R and S differ in size (n_policy dp: n̂ = |S|).

    >>> dom = Domain(("a", "b"), (2, 2))
    >>> max_marginal_error(np.array([[0, 0], [1, 1]]), np.array([[0, 1], [1, 0]]), dom)
    0.5
    """
    errors = marginal_errors_by_subset(real, synth, domain, max_way=max_way, n=n)
    return max(errors.values())


def marginal_errors_by_subset(
    real: np.ndarray, synth: np.ndarray, domain: Domain, *, max_way: int | None = None,
    n: int | None = None,
) -> dict[tuple[str, ...], float]:
    """Per column subset, max over its cells of |count_R − count_S|/n; for diagnosing criterion 1.

    ``n``: a public divisor (n_policy dp: n̂ = |S|); R may then have another size.

    Keys are column-name tuples in domain order, by size then lexicographic position.

    >>> dom = Domain(("a", "b"), (2, 3))
    >>> real, synth = np.array([[0, 2], [1, 2]]), np.array([[0, 2], [0, 1]])
    >>> errs = marginal_errors_by_subset(real, synth, dom)
    >>> errs[("a",)], errs[("b",)], errs[("a", "b")]
    (0.5, 0.5, 0.5)
    """
    d = len(domain)
    if d == 0:
        raise ValueError("domain has no columns, so there is no marginal to compare")
    ways = d if max_way is None else _check_max_way(max_way, d)
    r = check_codes(real, domain, argument="real")
    s = check_codes(synth, domain, argument="synth")
    if n is None:
        n = r.shape[0]
        if s.shape[0] != n:
            raise ValueError(
                "real and synth must have the same number of rows (one public n divides both)"
            )
    elif s.shape[0] != n:
        raise ValueError("the public divisor n must be the release's number of rows")
    if n == 0 or r.shape[0] == 0:
        raise ValueError("real and synth have no rows; the error per record is undefined")
    table = _difference_table(r, s, domain.sizes)
    if table is not None:
        worst = _dense_worst(table, ways)
    else:
        cells, diff = _difference_cells(r, s, domain.sizes)
        worst = _sparse_worst(cells, diff, np.asarray(domain.sizes, dtype=np.int64), ways)
    return {
        tuple(domain.names[j] for j in subset): worst[subset] / n
        for k in range(1, ways + 1)
        for subset in itertools.combinations(range(d), k)
    }


def marginal_errors_from_cells(
    cells: np.ndarray, real: np.ndarray, synth: np.ndarray, domain: Domain, *,
    max_way: int | None = None, n: int,
) -> dict[tuple[str, ...], float]:
    """``marginal_errors_by_subset`` from R's and S's counts on their distinct cells
    (:class:`~workbench.transform.cells.PairedCells`): the same integers, so the same floats,
    without reading the n rows again (issue 38: no n-row temporaries at 4,000,000 rows)."""
    d = len(domain)
    if d == 0:
        raise ValueError("domain has no columns, so there is no marginal to compare")
    ways = d if max_way is None else _check_max_way(max_way, d)
    real = np.asarray(real, dtype=np.int64)
    synth = np.asarray(synth, dtype=np.int64)
    if n == 0 or int(real.sum()) == 0:
        raise ValueError("real and synth have no rows; the error per record is undefined")
    diff = real - synth
    sizes = tuple(int(s) for s in domain.sizes)
    total = math.prod(sizes)
    if _dense(total, int(real.sum()) + int(synth.sum())):  # the row path's choice, same rows
        flat = np.ravel_multi_index(tuple(np.asarray(cells).T), sizes)
        table = np.rint(np.bincount(flat, weights=diff, minlength=total)).astype(np.int64)
        worst = _dense_worst(table.reshape(sizes), ways)
    else:
        keep = diff != 0
        worst = _sparse_worst(np.asarray(cells)[keep], diff[keep],
                              np.asarray(sizes, dtype=np.int64), ways)
    return {
        tuple(domain.names[j] for j in subset): worst[subset] / n
        for k in range(1, ways + 1)
        for subset in itertools.combinations(range(d), k)
    }


def _check_max_way(max_way: int, d: int) -> int:
    """Accept an integer 1 ≤ max_way ≤ d (public parameter, so its value may be shown)."""
    if isinstance(max_way, bool) or not isinstance(max_way, int | np.integer):
        raise ValueError(f"max_way must be an integer, got {type(max_way).__name__}")
    if not 1 <= max_way <= d:
        raise ValueError(f"max_way must lie in [1, {d}] for this domain, got {max_way}")
    return int(max_way)


def _dense(total: int, items: int) -> bool:
    """Whether a bincount over ``total`` cells is cheaper than sorting ``items`` keys."""
    return total <= min(_BINCOUNT_MAX_CELLS, max(_DENSE_MIN_CELLS, 4 * items))


def _difference_table(
    real: np.ndarray, synth: np.ndarray, sizes: tuple[int, ...]
) -> np.ndarray | None:
    """count_R − count_S on the whole joint domain as a d-dim array, or None when too large."""
    total = math.prod(sizes)
    if not _dense(total, real.shape[0] + synth.shape[0]):
        return None
    diff = np.bincount(np.ravel_multi_index(tuple(real.T), sizes), minlength=total)
    diff -= np.bincount(np.ravel_multi_index(tuple(synth.T), sizes), minlength=total)
    return diff.reshape(sizes)


def _dense_worst(table: np.ndarray, ways: int) -> dict[tuple[int, ...], int]:
    """Max |difference| per subset, each marginal summed out of a one-column-larger parent.

    Levels go from the full joint down to 1-way; a subset's parent adds its smallest missing
    column, so each marginal costs one pass over the smallest table that contains it.
    """
    d, sizes = table.ndim, table.shape
    full = tuple(range(d))
    worst = {full: int(np.abs(table).max())} if d <= ways else {}
    level = {full: table}
    for k in range(d - 1, 0, -1):
        below: dict[tuple[int, ...], np.ndarray] = {}
        for subset in itertools.combinations(range(d), k):
            extra = min((j for j in range(d) if j not in subset), key=lambda j: sizes[j])
            parent = tuple(sorted((*subset, extra)))
            below[subset] = level[parent].sum(axis=parent.index(extra))
            if k <= ways:
                worst[subset] = int(np.abs(below[subset]).max())
        level = below
    return worst


def _difference_cells(
    real: np.ndarray, synth: np.ndarray, sizes: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """Distinct joint cells where the counts differ, and count_R − count_S on each of them."""
    total = math.prod(sizes)
    both = np.concatenate([real, synth])
    sign = np.repeat(np.array([1, -1], dtype=np.int64), [real.shape[0], synth.shape[0]])
    if total < _RAVEL_MAX_CELLS:
        flat = np.ravel_multi_index(tuple(both.T), sizes)
        keys, inverse = np.unique(flat, return_inverse=True)
        cells = np.stack(np.unravel_index(keys, sizes), axis=1).astype(np.int64, copy=False)
    else:
        cells, inverse = np.unique(both, axis=0, return_inverse=True)
    diff = np.rint(np.bincount(inverse.ravel(), weights=sign, minlength=cells.shape[0]))
    keep = diff != 0
    return cells[keep], diff[keep].astype(np.int64)


def _sparse_worst(
    cells: np.ndarray, diff: np.ndarray, sizes: np.ndarray, ways: int
) -> dict[tuple[int, ...], int]:
    """Max |difference| per subset from the differing joint cells, one group-sum per subset."""
    d = cells.shape[1]
    worst: dict[tuple[int, ...], int] = {}
    for k in range(1, ways + 1):
        for subset in itertools.combinations(range(d), k):
            if diff.size == 0:
                worst[subset] = 0
                continue
            summed = _group_sum(cells[:, subset], sizes[list(subset)], diff)
            worst[subset] = int(np.rint(np.abs(summed).max()))
    return worst


def _group_sum(cells: np.ndarray, sizes: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Sum ``weights`` over the distinct rows of ``cells`` (a sub-marginal), order irrelevant."""
    total = math.prod(int(s) for s in sizes)
    if total < _RAVEL_MAX_CELLS:
        flat = np.ravel_multi_index(tuple(cells.T), tuple(int(s) for s in sizes))
        if not _dense(total, cells.shape[0]):
            _, flat = np.unique(flat, return_inverse=True)
    else:
        _, flat = np.unique(cells, axis=0, return_inverse=True)
    return np.bincount(flat.ravel(), weights=weights)
