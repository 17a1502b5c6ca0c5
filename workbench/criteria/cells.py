"""R and S as counts on their shared distinct cells, so every criterion costs O(#cells), not O(n).

Both datasets are categorical code matrices over the same public domain. They are reduced once
(one bincount, or one sort for huge domains) to the union of their distinct rows with a count
per dataset; marginals, group tables, regression statistics and ECDFs are bincounts on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench.transform import Domain

# Joint domains up to this many cells (and at most _DENSE_PER_ROW per row) use a dense bincount.
_DENSE_MAX_CELLS = 1 << 23
_DENSE_PER_ROW = 8
# ravel_multi_index works in int64; larger joint domains are grouped row-wise.
_RAVEL_MAX_CELLS = 1 << 62


def check_codes(argument: str, codes: np.ndarray, domain: Domain, *,
                allow_empty: bool = False) -> np.ndarray:
    """Codes as an int64 (n, d) matrix inside the public domain; errors name the column only."""
    arr = np.asarray(codes)
    d = len(domain)
    if arr.ndim != 2 or arr.shape[1] != d:
        raise ValueError(f"{argument} must be an (n, {d}) code matrix with columns {domain.names}")
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{argument} must be an integer code matrix")
    arr = arr.astype(np.int64, copy=False)
    if arr.shape[0] == 0:
        if allow_empty:
            return arr
        raise ValueError(f"{argument} has no rows")
    outside = (arr.min(axis=0) < 0) | (arr.max(axis=0) >= np.asarray(domain.sizes))
    if outside.any():
        name = domain.names[int(np.flatnonzero(outside)[0])]
        raise ValueError(f"{argument}: column {name!r} has codes outside its domain")
    return arr


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
    def from_codes(cls, real: np.ndarray, synth: np.ndarray, domain: Domain) -> PairedCells:
        """Summarise both datasets once on their combined codes (one public n for both)."""
        r = check_codes("real codes", real, domain)
        s = check_codes("synthetic codes", synth, domain)
        if r.shape[0] != s.shape[0]:
            raise ValueError("real and synthetic codes must have the same number of rows")
        n = r.shape[0]
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
            cells, inverse = np.unique(both, axis=0, return_inverse=True)
        inverse = inverse.ravel()
        k = cells.shape[0]
        fr = np.bincount(inverse[:n], minlength=k)
        fs = np.bincount(inverse[n:], minlength=k)
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
    arr = check_codes("real codes", codes, domain)
    total = domain.size()
    if total < _RAVEL_MAX_CELLS:
        flat = np.ravel_multi_index(tuple(arr.T), domain.sizes)
        keys, counts = np.unique(flat, return_counts=True)
        cells = np.stack(np.unravel_index(keys, domain.sizes), axis=1).astype(np.int64)
    else:
        cells, counts = np.unique(arr, axis=0, return_counts=True)
    return cells, counts.astype(np.int64)
