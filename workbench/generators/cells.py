"""The data as the generators see it: codes checked against the public Domain, summarised as
distinct cells with multiplicities so every marginal costs O(#cells) rather than O(n)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench.transform import Domain

# Joint domains up to this many cells are summarised with one bincount (64 MB of int64).
_BINCOUNT_MAX_CELLS = 1 << 23


def check_epsilon(epsilon: float) -> float:
    """Reject a budget that no mechanism can spend, before any data is read."""
    eps = float(epsilon)
    if not math.isfinite(eps) or eps <= 0:
        raise ValueError(f"epsilon must be a positive finite number, got {epsilon!r}")
    return eps


def check_n(n: int) -> int:
    """Accept only a non-negative integer row count for sampling."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    return int(n)


def check_codes(codes: np.ndarray, domain: Domain) -> np.ndarray:
    """Return ``codes`` as int64 after checking them against the public domain only.

    The error names the offending column, never a data value, so it can leave the enclave.

    >>> check_codes(np.array([[0, 4]]), Domain(("a", "b"), (2, 5))).dtype
    dtype('int64')
    """
    arr = np.asarray(codes)
    d = len(domain)
    if arr.ndim != 2 or arr.shape[1] != d:
        raise ValueError(
            f"codes must be an (n, {d}) matrix with columns {domain.names}, got shape {arr.shape}"
        )
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"codes must be an integer matrix, got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    sizes = np.asarray(domain.sizes, dtype=np.int64)
    outside = ((arr < 0) | (arr >= sizes)).any(axis=0)
    if outside.any():
        j = int(np.flatnonzero(outside)[0])
        raise ValueError(
            f"column {domain.names[j]!r} has codes outside its domain [0, {domain.sizes[j]})"
        )
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
        codes = check_codes(codes, domain)
        n = codes.shape[0]
        total = domain.size()
        if len(domain) == 0 or n == 0:
            cells = np.zeros((0, len(domain)), dtype=np.int64)
            return cls(cells, np.zeros(0, dtype=np.int64), domain, n)
        if total < 2**62:
            flat = np.ravel_multi_index(tuple(codes.T), domain.sizes)
            if total <= _BINCOUNT_MAX_CELLS:
                full = np.bincount(flat, minlength=total)
                keys = np.flatnonzero(full)
                counts = full[keys]
            else:
                keys, counts = np.unique(flat, return_counts=True)
            cells = np.stack(np.unravel_index(keys, domain.sizes), axis=1).astype(np.int64)
        else:
            cells, counts = np.unique(codes, axis=0, return_counts=True)
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
