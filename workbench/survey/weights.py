"""Post-stratification weights and their smooth upper bounds (Merrill §7.2, §7.4, §7.5).

A *set of bins* 𝒮 partitions the calibration cells; each bin S has a public population total
N̂(S). A record x of the sample D gets the weight (Def. 7.5.3)

    wt(x) = bwt(x) · N̂(S(x)) / Σ_{y ∈ S(x) ∩ D} bwt(y),

bwt being its base (design) weight, which depends on the design only. Neighbours here are
add/remove (the thesis' d(D, D′) = 1); bounded callers double what they need (see
:mod:`workbench.survey.raking`).

W₀(D) (Eq. 7.3) is the *max potential weight*: the largest weight of a record in D, of a
record G (base weight ``g_max``, the public upper bound) that could be added, or N̂ of an
empty bin. W_k(D) = max over D′ within k steps of W₀(D′). Within one bin with base weights
b₁ ≥ b₂ ≥ … ≥ b_c the maximum after j ≤ k deletions is reached by

* keeping b₁ and deleting the j largest others: N̂·b₁/(b₁ + Σ_{i > j+1} bᵢ), or
* adding G after deleting the j largest: N̂·g/(g + Σ_{i > j} bᵢ),

and N̂ once the bin can be emptied (j = c). With equal base weights this is
N̂/max(c − k, 1): the running example's "separate" bins on sample A give
W_k = 100000/(100 − k) (Example 7.2.2). SS_β(D) = max_k e^{−βk}·W_k(D) is a β-smooth
upper bound on the local sensitivity of a weighted count (Lemma 7.4.2).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def bin_weights(totals: Sequence[float], base_sums: Sequence[float]) -> np.ndarray:
    """Per-bin factor N̂(S)/Σ bwt in S (a record's weight is its bwt times this); ∞ if empty."""
    t = np.asarray(totals, dtype=np.float64)
    s = np.asarray(base_sums, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.where(s > 0, t / np.where(s > 0, s, 1.0), np.inf)


def _prepare(bwt: np.ndarray) -> np.ndarray:
    """suffix[j] = Σ_{i ≥ j} bᵢ of the base weights sorted descending (length c + 1)."""
    desc = np.sort(np.asarray(bwt, dtype=np.float64))[::-1]
    return np.concatenate([np.cumsum(desc[::-1])[::-1], [0.0]])


def _bin_potential(total: float, suffix: np.ndarray, k: int, g_max: float) -> float:
    """The largest potential weight in one bin after at most k add/remove steps."""
    c = suffix.size - 1
    if c == 0 or k >= c:
        return float(total)
    top = suffix[0] - suffix[1]
    j = min(k, c - 1)  # keep b₁, delete the j largest of the others
    keep = total * top / (top + suffix[j + 1])
    # Eq. 7.3 counts a potential added record in W₀ itself, so it costs no step
    add = total * g_max / (g_max + suffix[min(k, c)]) if g_max > 0 else 0.0
    return float(max(keep, add))


def _potential(totals: Sequence[float], suffixes: Sequence[np.ndarray], k: int,
               g_max: float) -> float:
    """W_k from prepared bins."""
    return max((_bin_potential(float(t), s, k, float(g_max)) for t, s in zip(totals, suffixes,
                                                                             strict=True)),
               default=0.0)


def potential_weights(totals: Sequence[float], bin_bwts: Sequence[np.ndarray], k: int,
                      g_max: float) -> float:
    """W_k(D): the max potential weight over every bin after at most k add/remove steps.

    >>> potential_weights([100000.0] * 2, [np.ones(1300), np.ones(100)], 3, 1.0)
    1030.9278350515465
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError("k must be a whole number >= 0")
    return _potential(totals, [_prepare(b) for b in bin_bwts], k, g_max)


def max_potential_weight(totals: Sequence[float], bin_bwts: Sequence[np.ndarray],
                         g_max: float) -> float:
    """W₀(D) (Eq. 7.3)."""
    return potential_weights(totals, bin_bwts, 0, g_max)


def smooth_sensitivity(totals: Sequence[float], bin_bwts: Sequence[np.ndarray], beta: float,
                       g_max: float) -> float:
    """SS_β(D) = max_k e^{−βk}·W_k(D); k beyond the largest bin adds nothing (W_k is flat), and
    the search stops once e^{−βk}·max N̂ (a bound on W_k: wt(x) ≤ N̂(S(x))) cannot win."""
    if not (isinstance(beta, int | float) and beta > 0 and math.isfinite(beta)):
        raise ValueError("beta must be a positive finite number")
    suffixes = [_prepare(b) for b in bin_bwts]
    k_max = max((s.size - 1 for s in suffixes), default=0)
    cap = max((float(t) for t in totals), default=0.0)  # every potential weight is ≤ max N̂
    best = 0.0
    for k in range(k_max + 1):
        if math.exp(-beta * k) * cap <= best:
            break  # no later k can beat it
        best = max(best, math.exp(-beta * k) * _potential(totals, suffixes, k, g_max))
    return best


def weighted_count(indicator: np.ndarray, bwt: np.ndarray, bin_of: np.ndarray,
                   totals: Sequence[float]) -> float:
    """Σ_x wt(x)·q(x): the post-stratified weighted count of records with ``indicator``."""
    bins = np.asarray(bin_of, dtype=np.int64)
    b = np.asarray(bwt, dtype=np.float64)
    sums = np.bincount(bins, weights=b, minlength=len(totals))
    factor = bin_weights(totals, sums)
    mask = np.asarray(indicator, dtype=bool)
    return float(np.sum(b[mask] * factor[bins[mask]]))
