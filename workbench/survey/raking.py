"""Iterative proportional fitting (raking) to public margins (Merrill §7.5.2): post-processing.

IPF runs on tables that are already DP (the noisy joint sample table) or public (a synthetic
release), with public targets, so it costs no ε.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

#: A margin: the axes of the joint table it sums over, and its public target table.
Margin = tuple[tuple[int, ...], np.ndarray]


def ipf(seed: np.ndarray, margins: Sequence[Margin], *, tol: float = 1e-10,
        max_iter: int = 1000, absolute: bool = False) -> np.ndarray:
    """Fit ``seed`` (≥ 0) to every margin by cyclic proportional scaling.

    Cells that are 0 in the seed stay 0 (structural zeros stay zero); a margin cell with a
    positive target but no positive seed cell cannot be met and is left at 0. It stops when
    every reachable margin cell is within ``tol`` of its target, relatively (``absolute``:
    every cell, in the table's units).

    >>> fit = ipf(np.ones((2, 2)), [((0,), np.array([30., 70.])), ((1,), np.array([40., 60.]))])
    >>> fit.round(6).tolist()
    [[12.0, 18.0], [28.0, 42.0]]
    """
    table = np.asarray(seed, dtype=np.float64).copy()
    if (table < 0).any():
        raise ValueError("ipf: the seed table must be non-negative")
    others = [tuple(a for a in range(table.ndim) if a not in axes) for axes, _ in margins]
    shapes = [[table.shape[a] if a in axes else 1 for a in range(table.ndim)]
              for axes, _ in margins]
    steps = [(lambda t, o=o: t.sum(axis=o), lambda f, s=s: f.reshape(s), target)
             for o, s, (_, target) in zip(others, shapes, margins, strict=True)]
    return _fit(table, steps, tol=tol, max_iter=max_iter, absolute=absolute)


def rake_rows(weights: np.ndarray, margins: Sequence[tuple[np.ndarray, np.ndarray]], *,
              sweeps: int) -> np.ndarray:
    """Row weights raked, ``sweeps`` times in turn, so that each margin's weighted SHARES hit
    its target (a margin: every row's cell, and the target shares of its cells); the IPF of
    :func:`ipf` on rows, for tables too large to hold jointly (a proxy's columns)."""
    cells = [(np.asarray(c), np.asarray(t, dtype=np.float64)) for c, t in margins]
    steps = [(lambda w, c=c, k=t.size: np.bincount(c, weights=w, minlength=k),
              lambda f, c=c: f[c], t) for c, t in cells]
    return _fit(np.asarray(weights, dtype=np.float64), steps, tol=0.0, max_iter=sweeps,
                absolute=False, shares=True)


def _fit(x: np.ndarray, steps: Sequence[tuple[Callable, Callable, np.ndarray]], *, tol: float,
         max_iter: int, absolute: bool, shares: bool = False) -> np.ndarray:
    """The one IPF loop: scale ``x`` margin by margin (sum, factors spread back, target) until
    the worst gap is under ``tol``."""
    for _ in range(max_iter):
        worst = 0.0
        for total, spread, target in steps:
            current = total(x)
            if shares:
                current = current / current.sum()
            factor = np.divide(target, current, out=np.zeros_like(current), where=current > 0)
            x = x * spread(factor)
            if absolute:
                worst = max(worst, float(np.abs(current - target).max(initial=0.0)))
                continue
            reachable = current > 0
            if reachable.any():
                gap = np.abs(current - target)[reachable] / np.maximum(target[reachable], 1e-300)
                worst = max(worst, float(gap.max()))
        if worst < tol:
            break
    return x


def rake_weights(cells: np.ndarray, initial: np.ndarray, margins: Sequence[Margin],
                 shape: tuple[int, ...]) -> np.ndarray:
    """Per-record weights: ``initial`` scaled per joint cell so the weighted margins hit targets.

    ``cells`` is an (n, d) matrix of each record's index on every axis of the joint table.
    """
    idx = np.ravel_multi_index(tuple(np.asarray(cells, dtype=np.int64).T), shape)
    w0 = np.asarray(initial, dtype=np.float64)
    seed = np.bincount(idx, weights=w0, minlength=int(np.prod(shape))).reshape(shape)
    fitted = ipf(seed, margins)
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(seed > 0, fitted / np.where(seed > 0, seed, 1), 0.0).ravel()
    return w0 * factor[idx]


def weighted_margin(cells: np.ndarray, weights: np.ndarray, axes: tuple[int, ...],
                    shape: tuple[int, ...]) -> np.ndarray:
    """The weighted totals of a set of records on one margin of the joint table."""
    sub = tuple(shape[a] for a in axes)
    cols = np.asarray(cells, dtype=np.int64)[:, list(axes)]
    idx = np.ravel_multi_index(tuple(cols.T), sub)
    return np.bincount(idx, weights=np.asarray(weights, dtype=np.float64),
                       minlength=int(np.prod(sub))).reshape(sub)
