"""Face-privacy projection (Hod & Canetti §4.6, Algorithm 3 with Remark 1's top-up).

Post-processing of the synthetic sample only: no record of R is read, so no budget is spent.
Given a multiset D of n records and min_count m, for each k < m the algorithm draws
⌊k·n_k/m⌋ of the n_k records that occur exactly k times, raises each to m copies and drops
the other records of that class; records occurring m or more times are kept. That moves
m·⌊k·n_k/m⌋ rows where k·n_k were, so m ∤ k·n_k leaves a shortfall r_k = k·n_k mod m < m.

Remark 1 says to duplicate |D| − |D'| records of D'. We choose the copies so that as many of
Proposition 11's statements as possible survive: class k's shortfall goes to class k's raised
records (one extra copy each, at random), which keeps statement (5), the row total of each
class, and never touches records that occurred ≥ m times (statements 2 and 3). Classes with no
raised record at all (k·n_k < m) pool their rows: if the pool holds at least m rows, ⌊rows/m⌋
of its records are raised the same way; a smaller pool goes to the raised records of other
classes, or, when there are none, to records drawn in proportion to their output counts (the
only case that changes a record that occurred ≥ m times, and it adds fewer than m rows).
"""

from __future__ import annotations

import numpy as np

from workbench.transform.cells import unique_rows


def _check_min_count(min_count: int) -> int:
    """min_count as a positive int; a bool or float is refused."""
    if isinstance(min_count, bool) or not isinstance(min_count, int | np.integer):
        raise ValueError("min_count must be an integer")
    if min_count < 1:
        raise ValueError("min_count must be >= 1")
    return int(min_count)


def _spread(total: int, targets: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``total`` extra copies over ``targets``, as evenly as possible, in random order."""
    extra = np.zeros(len(targets), dtype=np.int64)
    if total == 0 or len(targets) == 0:
        return extra
    full, rest = divmod(total, len(targets))
    extra += full
    extra[rng.choice(len(targets), size=rest, replace=False)] += 1
    return extra


def _proportional(total: int, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``total`` extra copies to rows drawn uniformly from the multiset ``counts``."""
    rows = rng.integers(0, int(counts.sum()), size=total)
    owner = np.searchsorted(np.cumsum(counts), rows, side="right")
    return np.bincount(owner, minlength=len(counts)).astype(np.int64)


def project_counts(counts: np.ndarray, min_count: int, rng: np.random.Generator) -> np.ndarray:
    """New count per distinct record: 0 or ≥ m each, same total (Alg. 3 plus Remark 1).

    >>> out = project_counts(np.array([5, 2, 2, 1, 1]), 2, np.random.default_rng(0))
    >>> out[:3].tolist(), sorted(out[3:].tolist())
    ([5, 2, 2], [0, 2])
    """
    m = _check_min_count(min_count)
    counts = np.asarray(counts)
    if counts.ndim != 1 or not np.issubdtype(counts.dtype, np.integer) or (counts < 0).any():
        raise ValueError("counts must be a 1-D array of non-negative integers")
    counts = counts.astype(np.int64)
    n = int(counts.sum())
    out = np.where(counts >= m, counts, 0)
    if m == 1 or n == 0:
        return out
    if n < m:
        raise ValueError("cannot give every record min_count copies: fewer rows than min_count")
    raised_any = np.zeros(len(counts), dtype=bool)
    orphans = np.zeros(len(counts), dtype=bool)
    for k in range(1, m):
        members = np.flatnonzero(counts == k)
        chosen = rng.choice(members, size=(k * len(members)) // m, replace=False)
        shortfall = k * len(members) - m * len(chosen)
        out[chosen] = m + _spread(shortfall, chosen, rng)
        raised_any[chosen] = True
        if len(chosen) == 0:
            orphans[members] = True
    orphan_rows = int(counts[orphans].sum())
    if orphan_rows >= m:
        pool = np.flatnonzero(orphans)
        chosen = rng.choice(pool, size=orphan_rows // m, replace=False)
        out[chosen] = m + _spread(orphan_rows - m * len(chosen), chosen, rng)
    elif orphan_rows and raised_any.any():
        raised = np.flatnonzero(raised_any)
        out[raised] += _spread(orphan_rows, raised, rng)
    elif orphan_rows:
        out += _proportional(orphan_rows, out, rng)
    return out


def distinct_rows(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct rows of a code matrix, their counts, and each row's cell index."""
    arr = np.asarray(codes)
    if arr.ndim != 2 or arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError("codes must be a 2-D integer matrix")
    arr = arr.astype(np.int64, copy=False)
    if arr.shape[0] == 0:
        return arr[:0], np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if (arr < 0).any():
        raise ValueError("codes must be non-negative")
    sizes = arr.max(axis=0) + 1  # S is public post-processing output, so its range may be read
    if float(np.prod(sizes.astype(np.float64))) < 2.0**62:
        strides = np.cumprod(np.concatenate([[1], sizes[::-1][:-1]]))[::-1].astype(np.int64)
        _, first, inverse, counts = np.unique(
            arr @ strides, return_index=True, return_inverse=True, return_counts=True
        )
        return arr[first], counts.astype(np.int64), inverse.ravel().astype(np.int64)
    cells, inverse, counts = unique_rows(arr, sizes)  # np.unique(axis=0)'s, faster
    return cells, counts, inverse


def distinct_cells(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``distinct_rows`` without the row-to-cell index: the same cells in the same order and
    their counts, from one sorted copy of the rows' cell numbers (no argsort, no inverse: at
    4,000,000 rows those were 3 × 32 MB more at the projection's peak, issue 38)."""
    arr = np.asarray(codes)
    if arr.ndim != 2 or arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError("codes must be a 2-D integer matrix")
    if arr.shape[0] == 0 or (arr < 0).any():
        cells, counts, _ = distinct_rows(arr)  # its own refusal of negative codes
        return cells, counts
    sizes = arr.max(axis=0).astype(np.int64) + 1  # S is public post-processing output
    if float(np.prod(sizes.astype(np.float64))) >= 2.0**62:
        cells, counts, _ = distinct_rows(arr)
        return cells, counts
    keys = np.zeros(arr.shape[0], dtype=np.int64)
    for j, size in enumerate(sizes):  # row-major cell number, as distinct_rows' ``arr @ strides``
        keys *= size
        keys += arr[:, j]
    keys.sort()
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    counts = np.diff(np.append(starts, keys.size)).astype(np.int64)
    unique = keys[starts]
    del keys
    cells = np.empty((unique.size, arr.shape[1]), dtype=np.int64)
    for j in range(arr.shape[1] - 1, -1, -1):
        unique, cells[:, j] = np.divmod(unique, sizes[j])
    return cells, counts


def project_min_count(codes: np.ndarray, min_count: int, rng: np.random.Generator, *,
                      in_place: bool = False) -> np.ndarray:
    """Exactly n rows where every distinct row occurs 0 or ≥ min_count times, shuffled.

    ``in_place``: write the rows into ``codes`` (a writeable sample its caller owns and drops)
    instead of a new n × d matrix: at 4,000,000 rows that copy was the run's peak (issue 38).
    """
    arr = np.asarray(codes)
    cells, counts = distinct_cells(arr)
    new = project_counts(counts, min_count, rng)
    # the rows np.repeat(cells, new, axis=0)[rng.permutation(n)] without that n × d
    # intermediate: the repeated cell numbers are shuffled in place, which applies the very
    # swaps (the same draws) that permutation(n) applies to arange(n)
    order = np.repeat(np.arange(len(cells), dtype=np.int64), new)
    rng.shuffle(order)
    if not in_place or not arr.flags.writeable or arr.shape[0] != order.size:
        return cells[order].astype(arr.dtype, copy=False)
    for j in range(arr.shape[1]):  # one column-sized temporary at a time
        arr[:, j] = cells[order, j]
    return arr
