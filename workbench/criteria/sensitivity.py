"""Global sensitivities of the acceptance criteria, as pure functions of public quantities.

Every bound here is for **replace-one** neighbours R ~ R' (same public size n, one record
replaced), the paper's relation (§4.4.2), with the release candidate S public and fixed.
Arguments are n, public bounds, spec parameters and counts of S — never anything of R.
Each function states the query, derives the bound in a few lines and cites the paper;
``tests/test_criteria.py`` checks the bounds by brute force and by neighbour audits.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def _n(n: int) -> int:
    """A public record count n ≥ 1; a bound over n records needs n to divide by."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ValueError("n must be an integer >= 1")
    return int(n)


def _interval(low: float, high: float) -> tuple[float, float]:
    """Finite public bounds L < U; a sensitivity over [L, U] is meaningless otherwise."""
    lo, hi = float(low), float(high)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError("bounds must be finite numbers with L < U")
    return lo, hi


def one_over_n(n: int) -> float:
    """Δ = 1/n for a maximum or mean of per-record shares that one record moves by ≤ 1/n.

    Covers criterion 1 (max k-way marginal error / n: a replaced record leaves one cell and
    enters one, so each |q(R) − q(S)|/n moves by ≤ 1/n; Prop. 3 for the max), faithfulness
    1 − β_max (Prop. 10), the max ECDF gap (each F_R(x) moves by ≤ 1/n) and the k-way total
    variation ½Σ|p_R − p_S| (two cells move by 1/n each, times ½; a mean or max of such
    marginals keeps 1/n).

    >>> one_over_n(165_915) < 0.001
    True
    """
    return 1.0 / _n(n)


def relative_one_way(s_min: int, lam: float, smoothing: float = 1.0) -> float:
    """Δ ≤ max{1/(s_min + c), λ − 1/(1/λ + 1/(s_min + c))} for the clipped relative 1-way error.

    Query (Props. 4–5): max over 1-way cells of max(clip(r̂/ŝ), clip(ŝ/r̂)) with r̂ = r + c,
    ŝ = s + c and clip to [1, λ]. A replaced record moves each count r by ≤ 1, so per cell:
    r̂/ŝ moves by ≤ 1/ŝ ≤ 1/(s_min + c); ŝ/r̂ can only move while one of ŝ/r̂, ŝ/(r̂ + 1) is
    inside [1, λ], and the largest jump is from λ down to ŝ/(ŝ/λ + 1) = 1/(1/λ + 1/ŝ), worst
    at the smallest ŝ. Prop. 3 takes the max over cells. s_min is the smallest 1-way count in
    the public S (0 if S misses a value, which makes the bound large but still valid).

    >>> round(relative_one_way(50, 2.0), 4)
    0.0755
    """
    if isinstance(s_min, bool) or int(s_min) != s_min or s_min < 0:
        raise ValueError("s_min must be a whole number >= 0")
    lam, c = float(lam), float(smoothing)
    if not (math.isfinite(lam) and lam > 1):
        raise ValueError("lambda must be a finite number > 1")
    if not (math.isfinite(c) and c > 0):
        raise ValueError("smoothing must be a finite number > 0")
    s_hat = float(s_min) + c
    return max(1.0 / s_hat, lam - 1.0 / (1.0 / lam + 1.0 / s_hat))


def false_pass_threshold(lam: float, p: float, sensitivity: float, epsilon: float) -> float:
    """T′ = λ + η·ln(2p), η = Δ/ε: a value clipped at λ passes with probability p (Prop. 6).

    P[λ + Lap(η) ≤ T′] = ½·exp((T′ − λ)/η) = p  ⇔  T′ = λ + η·ln(2p), for p ≤ ½.

    >>> round(false_pass_threshold(2.0, 0.05, relative_one_way(50, 2.0), 0.3), 2)
    1.42
    """
    lam, p = float(lam), float(p)
    if not 0 < p <= 0.5:
        raise ValueError("false_pass_probability must lie in (0, 0.5]")
    eta = float(sensitivity) / float(epsilon)
    if not (math.isfinite(eta) and eta > 0):
        raise ValueError("sensitivity and epsilon must be finite and > 0")
    return lam + eta * math.log(2.0 * p)


def resize_size(count_s: int, n: int, slack: float) -> int:
    """Public resize parameter m̂ = max{1, ⌊q_{b←v}(S) − n·T_abs⌋} (§4.5.3).

    If S passes criterion 1 with threshold T_abs, every marginal count of R is within n·T_abs
    of S's, so m̂ is a lower bound on the group's size in R; rounding down keeps it one.

    >>> resize_size(8631, 165_915, 0.01)
    6971
    """
    n = _n(n)
    slack = float(slack)
    if not (math.isfinite(slack) and 0 <= slack < 1):
        raise ValueError("resize slack must be a number in [0, 1)")
    if isinstance(count_s, bool) or int(count_s) != count_s or count_s < 0:
        raise ValueError("count_s must be a whole number >= 0")
    return max(1, math.floor(int(count_s) - n * slack + 1e-9))


def resized_mean(low: float, high: float, m: int) -> float:
    """Δ = (U − L)/m for the resized mean of Alg. 2 with public size m (Prop. 7).

    For any fixed randomness the m averaged values (sampled, all, or padded with w ∈ [L, U])
    differ between neighbours in at most one value, which moves by ≤ U − L; random
    subsampling keeps ε-DP (Prop. 8).

    >>> round(resized_mean(1400, 4600, 6972), 3)
    0.459
    """
    lo, hi = _interval(low, high)
    if isinstance(m, bool) or int(m) != m or m < 1:
        raise ValueError("m must be a whole number >= 1")
    return (hi - lo) / int(m)


def conditional_mean(low: float, high: float, sizes: Iterable[int]) -> float:
    """Δ = (U − L)/min m̂ over the groups (b, v): the max of resized means (Props. 3, 7).

    >>> conditional_mean(1, 11, [100, 40, 1000])
    0.25
    """
    sizes = [int(m) for m in sizes]
    if not sizes:
        raise ValueError("at least one group is needed")
    return max(resized_mean(low, high, m) for m in sizes)


def regression_mae(low: float, high: float, n: int) -> float:
    """Δ = 2(U − L)/n for |MAE_R(w_R) − MAE_R(w_S)| with public w's and clipped predictions.

    Prop. 9: only the replaced record's two terms change; for each,
    ||y − [w_R·x]| − |y − [w_S·x]|| ≤ |[w_R·x] − [w_S·x]| ≤ U − L (predictions clipped to
    [L, U]); one term leaves and one enters, so 2(U − L)/n. The released implementation had
    half this value by mistake (§4.14.2).

    >>> round(regression_mae(1400, 4600, 165_915), 4)
    0.0386
    """
    lo, hi = _interval(low, high)
    return 2.0 * (hi - lo) / _n(n)


def sufficient_statistics(ranges: Iterable[float]) -> float:
    """L1 Δ of Σ_records φ(x) for a per-record statistic vector φ whose entry e lies in a
    public interval of width ρ_e: replacing one record changes entry e by ≤ ρ_e, so Δ = Σ ρ_e.

    >>> sufficient_statistics([1.0, 0.5, 0.0])
    1.5
    """
    rho = np.asarray(list(ranges), dtype=np.float64)
    if rho.size == 0 or not np.all(np.isfinite(rho)) or (rho < 0).any():
        raise ValueError("ranges must be finite and >= 0")
    return float(rho.sum())



#: Most per-record vectors :func:`l1_diameter` scans (its worst case is this many squared).
MAX_DIAMETER_POINTS = 16_384


def l1_diameter(points: np.ndarray, leaf: int = 12) -> float:
    """Exact L1 Δ of Σ_records φ(x) when φ(x) ranges over the rows of ``points`` (public).

    Replacing record x by x′ moves the sum by φ(x′) − φ(x), so the replace-one L1 sensitivity
    is the set's L1 diameter max ‖φ(x) − φ(x′)‖₁: at most :func:`sufficient_statistics` of
    the per-entry widths (which takes every entry's extremes at once, though they may need
    different records), and attained by a pair of rows. Branch and bound, exact: a few
    farthest-point hops give a pair (a lower bound); the rows are split into boxes of at most
    ``leaf`` rows (median cuts of the widest entry), and two boxes can hold no pair farther
    apart than Σ_e max(hi_e − lo′_e, hi′_e − lo_e); box pairs are scanned row by row in
    decreasing order of that bound until it cannot beat the best pair so far. The boxes only
    decide the order and what is skipped, never the value: the result is a pairwise distance.

    >>> l1_diameter(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))
    2.0
    """
    return l1_diameter_pair(points, leaf)[0]


def l1_diameter_pair(points: np.ndarray, leaf: int = 12) -> tuple[float, int, int]:
    """:func:`l1_diameter` and a pair of rows (i, j) that attains it (public)."""
    pts = np.asarray(points, dtype=np.float64)
    if pts.ndim != 2 or pts.shape[0] == 0 or not np.all(np.isfinite(pts)):
        raise ValueError("points must be a non-empty finite (k, d) matrix")
    if pts.shape[0] > MAX_DIAMETER_POINTS:
        raise ValueError(f"more than {MAX_DIAMETER_POINTS} points: use the per-entry bound")
    best, pair = _farthest_hops(pts)
    boxes = _boxes(pts, np.arange(pts.shape[0]), max(int(leaf), 1))
    size = max(b.size for b in boxes)  # pad by repeating a row: the maximum stays the same
    rows = np.stack([np.resize(b, size) for b in boxes])
    padded = pts[rows]
    lo, hi = padded.min(axis=1), padded.max(axis=1)
    pairs, bounds = [], []
    for i in range(len(boxes)):  # box i against boxes i.. (one row of bounds at a time)
        ub = np.maximum(hi[i] - lo[i:], hi[i:] - lo[i]).sum(axis=1)
        keep = np.flatnonzero(ub > best)
        pairs.append(np.column_stack([np.full(keep.size, i), keep + i]))
        bounds.append(ub[keep])
    order = np.argsort(-np.concatenate(bounds), kind="stable")
    ranked, ub_ranked = np.concatenate(pairs)[order], np.concatenate(bounds)[order]
    batch = max(1, 4096 // size)
    for s in range(0, ranked.shape[0], batch):
        if ub_ranked[s] <= best:
            break
        ia, ib = ranked[s : s + batch, 0], ranked[s : s + batch, 1]
        dist = np.abs(padded[ia][:, :, None, :] - padded[ib][:, None, :, :]).sum(axis=-1)
        k = int(np.argmax(dist))
        if dist.flat[k] > best:
            q, a, b = np.unravel_index(k, dist.shape)
            best, pair = float(dist.flat[k]), (int(rows[ia[q], a]), int(rows[ib[q], b]))
    return best, *pair


def _farthest_hops(pts: np.ndarray, hops: int = 6) -> tuple[float, tuple[int, int]]:
    """A pairwise distance near the diameter: hop to the farthest row from the row with the
    widest per-entry reach, a few times (a lower bound that lets most box pairs be skipped)."""
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    i = int(np.argmax(np.maximum(pts - lo, hi - pts).sum(axis=1)))
    best, pair = 0.0, (i, i)
    for _ in range(hops):
        dist = np.abs(pts - pts[i]).sum(axis=1)
        j = int(np.argmax(dist))
        if dist[j] > best:
            best, pair = float(dist[j]), (i, j)
        i = j
    return best, pair


def _boxes(pts: np.ndarray, rows: np.ndarray, leaf: int) -> list[np.ndarray]:
    """Split ``rows`` at the median of their widest entry until each part has ≤ ``leaf``."""
    out, stack = [], [rows]
    while stack:
        part = stack.pop()
        span = np.ptp(pts[part], axis=0)
        if part.size <= leaf or span.max() == 0:
            out.append(part)
            continue
        order = part[np.argsort(pts[part, int(np.argmax(span))], kind="stable")]
        stack.extend((order[: part.size // 2], order[part.size // 2 :]))
    return out
