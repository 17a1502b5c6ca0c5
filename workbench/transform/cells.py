"""Code matrices as counts on their distinct cells, so every marginal, group table and criterion
costs O(#cells), not O(n).

Both the generators (one dataset: :class:`CellCounts`) and the criteria (R and S together:
:class:`PairedCells`) start here, from codes checked against the PUBLIC domain only
(:func:`check_codes`); the data are reduced once (one bincount, or one sort for huge domains) to
their distinct rows with a count per dataset.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench.transform.domain import Domain

# Joint domains up to this many cells (and at most _DENSE_PER_ROW per row for two datasets)
# use a dense bincount (64 MB of int64).
_DENSE_MAX_CELLS = 1 << 23
_DENSE_PER_ROW = 8
# ravel_multi_index works in int64; larger joint domains are grouped row-wise.
_RAVEL_MAX_CELLS = 1 << 62


def unique_rows(rows: np.ndarray, sizes: tuple[int, ...] | np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(rows, axis=0, return_inverse=True, return_counts=True)``, the same cells in
    the same (lexicographic) order, for code rows in ``[0, sizes)`` of a joint domain too large
    for one int64 cell number: each row is packed into a few int64 words (mixed radix, first
    column most significant, so their order is the rows' order) and sorted on those. NumPy's
    row-wise unique sorts a 36-column row as one record (3.3 s at 200,000 rows; this: ~0.1 s).

    >>> cells, inverse, counts = unique_rows(np.array([[1, 2], [0, 5], [1, 2]]), (2, 6))
    >>> cells.tolist(), inverse.tolist(), counts.tolist()
    ([[0, 5], [1, 2]], [1, 0, 1], [1, 2])
    """
    rows = np.asarray(rows, dtype=np.int64)
    n = rows.shape[0]
    words: list[np.ndarray] = []
    word, span = np.zeros(n, dtype=np.int64), 1
    for j, size in enumerate(int(s) for s in sizes):
        if span * size >= _RAVEL_MAX_CELLS:
            words.append(word)
            word, span = np.zeros(n, dtype=np.int64), 1
        word = word * size + rows[:, j]
        span *= size
    words.append(word)
    order = np.lexsort(words[::-1])  # lexsort's last key is its primary one
    ranked = np.stack([w[order] for w in words], axis=1)
    new = np.ones(n, dtype=bool)
    new[1:] = np.any(ranked[1:] != ranked[:-1], axis=1)
    group = np.cumsum(new) - 1
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = group
    starts = np.flatnonzero(new)
    counts = np.diff(np.append(starts, n)).astype(np.int64)
    return rows[order[starts]], inverse, counts


def check_codes(codes: np.ndarray, domain: Domain, *, argument: str = "codes",
                allow_empty: bool = True, widen: bool = True) -> np.ndarray:
    """Codes as an int64 (n, d) matrix inside the public domain (``widen=False``: unsigned
    narrow codes stay as they are, for the callers here that only index and ravel them).

    The error names the argument and the column, never a data value, so it can leave the
    enclave.

    >>> check_codes(np.array([[0, 4]]), Domain(("a", "b"), (2, 5))).dtype
    dtype('int64')
    """
    arr = np.asarray(codes)
    d = len(domain)
    if arr.ndim != 2 or arr.shape[1] != d:
        raise ValueError(f"{argument} must be an (n, {d}) code matrix with columns "
                         f"{domain.names}, got shape {arr.shape}")
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{argument} must be an integer code matrix, got dtype {arr.dtype}")
    if widen or not np.issubdtype(arr.dtype, np.unsignedinteger):
        arr = arr.astype(np.int64, copy=False)
    if arr.shape[0] == 0:
        if allow_empty:
            return arr
        raise ValueError(f"{argument} has no rows")
    outside = (arr.min(axis=0) < 0) | (arr.max(axis=0) >= np.asarray(domain.sizes))
    if outside.any():
        j = int(np.flatnonzero(outside)[0])
        raise ValueError(f"{argument}: column {domain.names[j]!r} has codes outside its domain "
                         f"[0, {domain.sizes[j]})")
    return arr


@dataclass(frozen=True)
class CellCounts:
    """Distinct rows of the code matrix and how often each occurs; marginals are bincounts on it.

    >>> data = CellCounts.from_codes(np.array([[0, 1], [0, 1], [1, 0]]), Domain(("a", "b"), (2, 3)))
    >>> data.marginal(("b",)).tolist()
    [1, 2, 0]
    """

    cells: np.ndarray
    counts: np.ndarray
    domain: Domain
    n: int

    @classmethod
    def from_codes(cls, codes: np.ndarray, domain: Domain) -> CellCounts:
        """Summarise validated codes once, so later marginals never loop over the n rows."""
        codes = check_codes(codes, domain, widen=False)
        n = codes.shape[0]
        total = domain.size()
        if len(domain) == 0 or n == 0:
            cells = np.zeros((0, len(domain)), dtype=np.int64)
            return cls(cells, np.zeros(0, dtype=np.int64), domain, n)
        if total < _RAVEL_MAX_CELLS:
            flat = np.ravel_multi_index(tuple(codes.T), domain.sizes)
            if total <= _DENSE_MAX_CELLS:
                full = np.bincount(flat, minlength=total)
                keys = np.flatnonzero(full)
                counts = full[keys]
            else:
                keys, counts = np.unique(flat, return_counts=True)
            cells = np.stack(np.unravel_index(keys, domain.sizes), axis=1).astype(np.int64)
        else:
            cells, _, counts = unique_rows(codes, domain.sizes)
        return cls(cells, counts.astype(np.int64), domain, n)

    def marginal(self, names: tuple[str, ...] | list[str]) -> np.ndarray:
        """Exact counts over ``names``; axes in the order given, shape from the domain only."""
        names = tuple(names)
        shape = self.domain.project(names).sizes
        if not names:
            return np.array(self.n, dtype=np.int64)
        cols = [self.domain.index(c) for c in names]
        size = int(np.prod(shape, dtype=np.int64))
        if self.cells.shape[0] == 0:
            return np.zeros(shape, dtype=np.int64)
        flat = np.ravel_multi_index(tuple(self.cells[:, cols].T), shape)
        summed = np.bincount(flat, weights=self.counts, minlength=size)
        return np.rint(summed).astype(np.int64).reshape(shape)


@dataclass(frozen=True)
class PairedCells:
    """The union of R's and S's distinct rows with each dataset's count on every one of them.

    >>> dom = Domain(("a", "b"), (2, 3))
    >>> pc = PairedCells.from_codes(np.array([[0, 1], [0, 1]]), np.array([[0, 1], [1, 2]]), dom)
    >>> pc.marginal(("b",), "real").tolist(), pc.marginal(("b",), "synth").tolist()
    ([0, 2, 0], [0, 1, 1])
    """

    cells: np.ndarray
    real: np.ndarray
    synth: np.ndarray
    domain: Domain
    n: int

    @classmethod
    def from_codes(cls, real: np.ndarray, synth: np.ndarray, domain: Domain, *,
                   n: int | None = None) -> PairedCells:
        """Summarise both datasets once on their combined codes (one public n for both;
        ``n``: the public n̂ = |S| of an ``n_policy: dp`` run, when R's size is not public)."""
        r = check_codes(real, domain, argument="real codes", allow_empty=False, widen=False)
        s = check_codes(synth, domain, argument="synthetic codes", allow_empty=False,
                        widen=False)
        if n is None and r.shape[0] != s.shape[0]:
            raise ValueError("real and synthetic codes must have the same number of rows")
        if n is not None and s.shape[0] != n:
            raise ValueError("the public n must be the synthetic codes' number of rows")
        nr = r.shape[0]
        n = nr if n is None else int(n)
        total = domain.size()
        if total <= min(_DENSE_MAX_CELLS, _DENSE_PER_ROW * 2 * n):
            fr = np.bincount(np.ravel_multi_index(tuple(r.T), domain.sizes), minlength=total)
            fs = np.bincount(np.ravel_multi_index(tuple(s.T), domain.sizes), minlength=total)
            keys = np.flatnonzero(fr + fs)
            cells = np.stack(np.unravel_index(keys, domain.sizes), axis=1)
            return cls(cells.astype(np.int64), fr[keys], fs[keys], domain, n)
        both = np.concatenate([r, s])
        if total < _RAVEL_MAX_CELLS:
            keys, inverse = np.unique(
                np.ravel_multi_index(tuple(both.T), domain.sizes), return_inverse=True
            )
            cells = np.stack(np.unravel_index(keys, domain.sizes), axis=1).astype(np.int64)
        else:
            cells, inverse, _ = unique_rows(both, domain.sizes)
        inverse = inverse.ravel()
        k = cells.shape[0]
        fr = np.bincount(inverse[:nr], minlength=k)
        fs = np.bincount(inverse[nr:], minlength=k)
        return cls(cells, fr.astype(np.int64), fs.astype(np.int64), domain, n)

    def counts(self, which: str) -> np.ndarray:
        """Counts per cell of 'real' (R) or 'synth' (S)."""
        if which == "real":
            return self.real
        if which == "synth":
            return self.synth
        raise ValueError("which must be 'real' or 'synth'")

    def column(self, name: str) -> np.ndarray:
        """The code of column ``name`` in every cell."""
        return self.cells[:, self.domain.index(name)]

    def marginal(self, names: tuple[str, ...] | list[str], which: str) -> np.ndarray:
        """Exact counts over ``names`` (axes in the order given), shape from the domain only."""
        names = tuple(names)
        shape = self.domain.project(names).sizes
        size = math.prod(shape)
        cols = [self.domain.index(c) for c in names]
        flat = np.ravel_multi_index(tuple(self.cells[:, cols].T), shape)
        summed = np.bincount(flat, weights=self.counts(which), minlength=size)
        return np.rint(summed).astype(np.int64).reshape(shape)

    def table(self, keys: np.ndarray, size: int, which: str) -> np.ndarray:
        """Counts by a per-cell key in [0, size), e.g. a coarse group × target code index."""
        summed = np.bincount(keys, weights=self.counts(which), minlength=size)
        return np.rint(summed).astype(np.int64)


def distinct_cells(codes: np.ndarray, domain: Domain) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of one code matrix and their counts (for statistics of R alone)."""
    counts = CellCounts.from_codes(
        check_codes(codes, domain, argument="real codes", allow_empty=False), domain)
    return counts.cells, counts.counts
