"""Structure learning of the plausible-deniability synthesizer: noisy-entropy CFS on D_T.

Every column is first mapped to public buckets (``bucket_maps``: at most ``buckets`` contiguous
code ranges, from the spec's domain sizes alone). The entropies H(X_i) and H(X_i, X_j) of the
bucketed columns are released once, as one Laplace vector through ``privacy``: each entropy
moves by at most Δ_H(n_T) (:func:`workbench.privacy.sensitivity.entropy`), so the vector of
N_H = m + m(m − 1)/2 entropies has L1 sensitivity N_H·Δ_H. The rest is post-processing:
the correlation is the symmetrical uncertainty SU = 2 − 2·H(i, j)/(H(i) + H(j)), clamped to
[0, 1]; parents are chosen greedily by the CFS merit
Σ_{j∈P} corr(i, j) / √(|P| + Σ_{j≠k∈P} corr(j, k)), among columns already placed (so the
graph is acyclic by construction), while Π_{j∈P} buckets_j ≤ ``maxcost``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from workbench.privacy import sensitivity

if TYPE_CHECKING:
    from workbench.privacy import PrivacyContext


def bucket_maps(sizes: Sequence[int], buckets: int) -> list[np.ndarray]:
    """Per column, code → bucket: min(d, buckets) contiguous ranges of codes (public).

    >>> [m.tolist() for m in bucket_maps([3, 6], 2)]
    [[0, 0, 1], [0, 0, 0, 1, 1, 1]]
    """
    out = []
    for d in sizes:
        b = min(int(d), int(buckets))
        out.append((np.arange(d, dtype=np.int64) * b) // int(d))
    return out


def entropy_bits(counts: np.ndarray) -> float:
    """Shannon entropy (bits) of the empirical distribution given by ``counts``.

    >>> entropy_bits(np.array([2, 2]))
    1.0
    """
    c = np.asarray(counts, dtype=np.float64).ravel()
    c = c[c > 0]
    n = c.sum()
    return 0.0 if n <= 0 else float(math.log2(n) - (c * np.log2(c)).sum() / n)


def exact_entropies(bucketed: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """[H(X_0), …, H(X_{m−1}), then H(X_i, X_j) for i < j] of bucketed codes (confidential)."""
    m = bucketed.shape[1]
    out = [entropy_bits(np.bincount(bucketed[:, i], minlength=sizes[i])) for i in range(m)]
    for i in range(m):
        for j in range(i + 1, m):
            joint = bucketed[:, i] * sizes[j] + bucketed[:, j]
            out.append(entropy_bits(np.bincount(joint, minlength=sizes[i] * sizes[j])))
    return np.asarray(out, dtype=np.float64)


def correlations(entropies: np.ndarray, m: int) -> np.ndarray:
    """Symmetrical uncertainty from (noisy) entropies, clamped to [0, 1]; post-processing."""
    single = entropies[:m]
    corr = np.zeros((m, m))
    pos = m
    for i in range(m):
        for j in range(i + 1, m):
            denom = single[i] + single[j]
            su = 2.0 - 2.0 * entropies[pos] / denom if denom > 0 else 0.0
            corr[i, j] = corr[j, i] = min(max(su, 0.0), 1.0)
            pos += 1
    return corr


def merit(corr: np.ndarray, child: int, parents: Sequence[int]) -> float:
    """CFS merit of ``parents`` for ``child``.

    >>> c = np.array([[0, .5, .5], [.5, 0, 1.], [.5, 1., 0]])
    >>> round(merit(c, 0, [1]), 4), round(merit(c, 0, [1, 2]), 4)
    (0.5, 0.5)
    """
    if not parents:
        return 0.0
    top = sum(corr[child, j] for j in parents)
    inter = sum(corr[j, k] for j in parents for k in parents if j != k)
    return float(top / math.sqrt(len(parents) + inter))


def best_parents(corr: np.ndarray, child: int, placed: Sequence[int], costs: Sequence[int],
                 maxcost: float) -> tuple[tuple[int, ...], float]:
    """Greedy forward selection among ``placed`` while the merit grows and the cost fits."""
    chosen: list[int] = []
    best = 0.0
    cost = 1
    while True:
        options = [(merit(corr, child, [*chosen, j]), -j) for j in placed
                   if j not in chosen and cost * costs[j] <= maxcost]
        if not options:
            break
        value, neg = max(options)
        if value <= best + 1e-12:
            break
        chosen.append(-neg)
        best, cost = value, cost * costs[-neg]
    return tuple(chosen), best


def learn_structure(corr: np.ndarray, costs: Sequence[int], maxcost: float
                    ) -> list[tuple[int, tuple[int, ...]]]:
    """(column, parents) in a topological order: each step places the column whose best parent
    set among the placed columns has the highest merit (the first: the most correlated one)."""
    m = corr.shape[0]
    remaining = list(range(m))
    first = max(remaining, key=lambda i: (float(corr[i].sum()), -i))
    network = [(first, ())]
    remaining.remove(first)
    while remaining:
        placed = [c for c, _ in network]
        scored = [(best_parents(corr, i, placed, costs, maxcost), i) for i in remaining]
        (parents, _), pick = max(scored, key=lambda s: (s[0][1], -s[1]))
        network.append((pick, parents))
        remaining.remove(pick)
    return network


def bucketed(codes: np.ndarray, maps: Sequence[np.ndarray]) -> tuple[np.ndarray, list[int]]:
    """``codes`` mapped to their public buckets, and the bucket counts per column."""
    m = codes.shape[1]
    out = np.column_stack([maps[j][codes[:, j]] for j in range(m)]) if m else codes
    return out, [int(mp.max()) + 1 for mp in maps]


def noisy_structure(codes: np.ndarray, sizes: Sequence[int], maps: Sequence[np.ndarray],
                    maxcost: float, epsilon: float, privacy: PrivacyContext
                    ) -> list[tuple[int, tuple[int, ...]]]:
    """The network learnt from D_T's ``codes`` with ε through ``privacy`` (one Laplace vector)."""
    m = codes.shape[1]
    if m == 1:
        return [(0, ())]
    buckets, bsizes = bucketed(codes, maps)
    exact = exact_entropies(buckets, bsizes)
    delta = exact.size * sensitivity.entropy(max(int(codes.shape[0]), 1))
    noisy = privacy.laplace(exact, sensitivity=delta, epsilon=epsilon,
                            purpose="plausible deniability structure: noisy entropies (D_T)"
                            ).value
    return learn_structure(correlations(noisy, m), bsizes, maxcost)


def public_structure(codes: np.ndarray, maps: Sequence[np.ndarray], maxcost: float
                     ) -> list[tuple[int, tuple[int, ...]]]:
    """The same CFS search on the exact entropies of a PUBLIC proxy's ``codes`` (``structure:
    public``): no noise, no ε, no record of R — the network is a function of public data.

    >>> proxy = np.array([[0, 0, 1], [1, 1, 0], [0, 0, 1], [1, 1, 1]])
    >>> public_structure(proxy, bucket_maps([2, 2, 2], 2), 4)
    [(0, ()), (1, (0,)), (2, (0,))]
    """
    m = codes.shape[1]
    if m == 1:
        return [(0, ())]
    buckets, bsizes = bucketed(codes, maps)
    return learn_structure(correlations(exact_entropies(buckets, bsizes), m), bsizes, maxcost)
