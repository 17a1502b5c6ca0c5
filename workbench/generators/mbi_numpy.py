"""Marginals of a fitted ``mbi`` model by variable elimination in numpy (post-processing only).

``MarkovRandomField.project`` answers a clique outside the model's junction-tree cliques with
``mbi``'s JAX variable elimination, op by op: every factor shape compiles its own kernels. The
sampling plan asks one such marginal per column, so on a wide schema (NHANES, 36 columns) a
fresh process spent 80 of 140 s compiling them. The same sums in numpy (log space, greedy
elimination order: the variable whose neighbourhood has the fewest cells first) need no
compilation and agree with ``mbi``'s to rounding (``tests/test_workload.py``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

Clique = tuple[str, ...]
Factor = tuple[Clique, np.ndarray]


def log_factors(model: object) -> tuple[list[Factor], dict[str, int]]:
    """The model's log potentials as numpy arrays, and every attribute's size."""
    potentials = model.potentials  # type: ignore[attr-defined]
    factors = [(tuple(f.domain.attributes), np.asarray(f.values, dtype=np.float64))
               for f in potentials.arrays.values()]
    domain = model.domain  # type: ignore[attr-defined]
    return factors, dict(zip(domain.attributes, domain.shape, strict=True))


def _aligned(factor: Factor, order: Clique) -> np.ndarray:
    """The factor's array with axes in ``order`` (size-1 axes for attributes it lacks)."""
    clique, values = factor
    present = [a for a in order if a in clique]
    moved = np.transpose(values, [clique.index(a) for a in present])
    return moved.reshape([values.shape[clique.index(a)] if a in clique else 1 for a in order])


def _combine(factors: Sequence[Factor], order: Clique) -> np.ndarray:
    """Σ of log factors broadcast over ``order``."""
    total = np.zeros([1] * len(order))
    for factor in factors:
        total = total + _aligned(factor, order)
    return total


def _logsumexp(values: np.ndarray, axis: int) -> np.ndarray:
    """log Σ exp along one axis, stable (−inf rows stay −inf)."""
    top = np.max(values, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    return np.squeeze(top, axis) + np.log(np.sum(np.exp(values - top), axis=axis))


def _cells(factors: Sequence[Factor], sizes: Mapping[str, int], a: str) -> int:
    """Cells of the product of the factors holding ``a`` (the greedy order's cost)."""
    return math.prod(sizes[b] for b in {b for f in factors if a in f[0] for b in f[0]})


def marginal(factors: Sequence[Factor], sizes: Mapping[str, int], clique: Clique,
             total: float) -> np.ndarray:
    """The model's count table over ``clique`` (axes in clique order), summing to ``total``."""
    work = list(factors)
    eliminate = {a for f in work for a in f[0]} - set(clique)
    while eliminate:
        z = min(sorted(eliminate), key=lambda a, fs=tuple(work): _cells(fs, sizes, a))
        touching = [f for f in work if z in f[0]]
        order = tuple(dict.fromkeys(a for f in touching for a in f[0]))
        summed = _logsumexp(_combine(touching, order), order.index(z))
        work = [f for f in work if z not in f[0]] + [(tuple(a for a in order if a != z), summed)]
        eliminate.discard(z)
    logs = _combine(work, clique)
    logs = np.broadcast_to(logs, [sizes[a] for a in clique])
    shifted = np.exp(logs - np.max(logs))
    return shifted * (float(total) / shifted.sum())


__all__ = ["log_factors", "marginal"]
