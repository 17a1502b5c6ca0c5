"""Deterministic 1-nearest-neighbour hot-deck imputation and its donee-change bound (Merrill ch. 6).

Why: a mean over a subgroup whose target has holes is biased if the holes are dropped; imputing
each hole from a similar complete record fixes that, but one donor may feed many donees, so
the global sensitivity is useless. Merrill releases the imputed statistic with smooth
sensitivity. Everything here is a deterministic function of the coded table; noise is added by
the caller through the privacy layer.

**Imputation (deterministic, Def. 6.3.1, §6.5.2).** Features are the configuration's codes,
coarsened as the spec's bins are: a numeric codec contributes its code index (bins: distance in
bins), any other codec one indicator per code (two different categories are at squared
distance 2). The distance is squared Euclidean. A record whose target is missing (its code has
no number) is a *donee*; its donor is taken among the complete records whose feature class is
nearest to its own (the *pool*, all classes at the minimal distance): the one with the
smallest row number above the donee's, wrapping to the smallest. With no complete record at
all, the public fill value (the target's lower bound) is imputed.

**Donee changes.** L₁(D) = the most donees whose donor changes when one record is added or
removed (Def. 6.3.4; the four cases of §6.5.2). We use, for the donees x of the subgroup with
nearest complete distance d_x (∞ when there is none),

    N(D) = max over every point v of the feature domain of #{x : dist(x, v) ≤ d_x},   N̂ = max(1, N)

* removing a complete record y changes only y's donees (the chain skips y), all at distance
  d_x from y's class: counted at v = y's class;
* adding a complete record at v changes only donees with dist(x, v) ≤ d_x: counted at v;
* adding or removing an incomplete record changes one donee (itself).
So L₁ ≤ N̂ (case 4 of §6.5.2 — a new location — is covered exactly by the max over v).
N̂ is ln 2-smooth: N̂(D) ≤ 2·N̂(D′) for add/remove neighbours. Adding or removing an incomplete
record moves N by ≤ 1. Adding a complete record at w only shrinks the sets, and a donee that
leaves the set of v* now has w as nearest, so it lies in the set of w: N(D) ≤ N(D′)(v*) +
N(D′)(w) ≤ 2N(D′); removing one is the same inequality read backwards. When the feature
domain has more than ``MAX_DOMAIN_POINTS`` points, N̂ = max(1, #subgroup donees), also
ln 2-smooth (it moves by ≤ 1) and ≥ N.

**The mean (Thm 6.4.5(1)).** With a public (or noisy) subgroup size s, Y ∈ [a, b] and the
subgroup not defined by the imputed target, q_s(D) = Σ_{x ∈ subgroup} Y_D(x)/s moves under one
addition or removal t by at most (|Y(t)| + #changed donees·(b − a))/s, so

    S(D) = (B + N̂(D)·(b − a))/s,   B = max(|a|, |b|)

is an upper bound on the local sensitivity and S(D) ≤ 2·S(D′): a ln 2-smooth upper bound
(NRS Def. 2.1) under add/remove. The replace-one relation of the workbench is two such steps;
the release is calibrated per step at ε/2 (group privacy, ``steps=2`` of
:meth:`~workbench.privacy.PrivacyContext.smooth_cauchy`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MAX_DOMAIN_POINTS = 20_000  # feature-domain points enumerated for N; beyond: the donee count
_CHUNK = 2_000


@dataclass(frozen=True)
class Features:
    """The public embedding of the feature columns' codes (one row per code, per column)."""

    embeddings: tuple[np.ndarray, ...]  # column j: (size_j, width_j)

    @classmethod
    def of_codecs(cls, numbers: Sequence[np.ndarray | None], sizes: Sequence[int]) -> Features:
        """Numeric columns (``numbers`` given, all finite): the code index; others: indicators."""
        out = []
        for nums, size in zip(numbers, sizes, strict=True):
            if nums is not None and np.all(np.isfinite(nums)):
                out.append(np.arange(size, dtype=np.float64)[:, None])
            else:
                out.append(np.eye(size, dtype=np.float64))
        return cls(tuple(out))

    def embed(self, codes: np.ndarray) -> np.ndarray:
        """(n, width) embedding of (n, k) feature codes."""
        arr = np.asarray(codes, dtype=np.int64)
        return np.hstack([e[arr[:, j]] for j, e in enumerate(self.embeddings)])

    @property
    def domain_size(self) -> int:
        """Number of points of the feature domain."""
        return int(np.prod([e.shape[0] for e in self.embeddings], dtype=np.int64))

    def domain_points(self) -> np.ndarray:
        """Every code combination of the feature domain, embedded (domain_size, width)."""
        grid = itertools.product(*(range(e.shape[0]) for e in self.embeddings))
        return self.embed(np.array(list(grid), dtype=np.int64).reshape(-1, len(self.embeddings)))


def _sqdist(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances between the rows of a and of b."""
    d = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * a @ b.T
    return np.maximum(np.rint(d * 1e9) / 1e9, 0.0)  # exact on the integer lattice


@dataclass(frozen=True)
class Imputation:
    """The imputed target of every record and the subgroup's donee-change bound N̂."""

    values: np.ndarray  # every record's target, observed or imputed
    donor: np.ndarray  # donor row per record (−1: observed, or no complete record)
    donee_bound: int  # N̂ ≥ L₁ restricted to the subgroup, ln 2-smooth


def impute(features: Features, feature_codes: np.ndarray, target: np.ndarray,
           subgroup: np.ndarray, fill: float) -> Imputation:
    """1-NN hot deck of ``target`` (NaN = missing) and N̂ over the ``subgroup`` donees."""
    y = np.asarray(target, dtype=np.float64)
    x = features.embed(feature_codes)
    missing = np.isnan(y)
    rows = np.arange(y.size)
    values, donor = y.copy(), np.full(y.size, -1, dtype=np.int64)
    classes, cls = np.unique(x, axis=0, return_inverse=True)
    cls = cls.ravel()
    complete_classes = np.unique(cls[~missing])
    nearest = np.full(classes.shape[0], np.inf)
    if complete_classes.size:
        dist = _sqdist(classes, classes[complete_classes])
        nearest = dist.min(axis=1)
        for u in np.unique(cls[missing]):
            pool_classes = complete_classes[dist[u] == nearest[u]]
            pool = rows[~missing & np.isin(cls, pool_classes)]  # sorted row numbers
            donees = rows[missing & (cls == u)]
            pos = np.searchsorted(pool, donees, side="right")
            donor[donees] = pool[np.where(pos < pool.size, pos, 0)]
        values[missing] = y[donor[missing]]
    else:
        values[missing] = fill
    return Imputation(values, donor, _donee_bound(features, classes, cls, nearest,
                                                  missing & np.asarray(subgroup, dtype=bool)))


def _donee_bound(features: Features, classes: np.ndarray, cls: np.ndarray,
                 nearest: np.ndarray, donees: np.ndarray) -> int:
    """N̂ = max(1, max_v #{donee x : dist(x, v) ≤ d_x}) (see the module docstring)."""
    count = int(donees.sum())
    if count == 0:
        return 1
    if features.domain_size > MAX_DOMAIN_POINTS or not np.isfinite(nearest[cls[donees]]).all():
        return max(1, count)
    which, mult = np.unique(cls[donees], return_counts=True)
    points = features.domain_points()
    best = 0
    for start in range(0, points.shape[0], _CHUNK):
        d = _sqdist(classes[which], points[start:start + _CHUNK])
        inside = d <= nearest[which][:, None]
        best = max(best, int((mult[:, None] * inside).sum(axis=0).max()))
    return max(1, best)


def smooth_bound(donee_bound: int, low: float, high: float, size: float) -> float:
    """S = (max(|a|, |b|) + N̂·(b − a))/s: the ln 2-smooth bound of the subgroup mean."""
    return (max(abs(low), abs(high)) + donee_bound * (high - low)) / max(float(size), 1.0)
