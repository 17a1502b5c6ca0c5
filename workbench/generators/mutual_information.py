"""The PrivBayes structure score: mutual information of a (parents × child) count table, in bits,
and its global sensitivity for the exponential mechanism."""

from __future__ import annotations

import math

import numpy as np


def mutual_information(table: np.ndarray) -> float:
    """I(X; Π) in bits of the empirical law behind a (parent configs × child codes) count table.

    >>> mutual_information(np.array([[5, 0], [0, 5]]))
    1.0
    >>> mutual_information(np.array([[1, 1], [1, 1]]))
    0.0
    """
    joint = np.asarray(table, dtype=np.float64)
    total = joint.sum()
    if total <= 0:
        return 0.0
    p = joint / total
    rows = p.sum(axis=1, keepdims=True)
    cols = p.sum(axis=0, keepdims=True)
    mask = p > 0
    expected = (rows * cols)[mask]
    return float(max(0.0, np.sum(p[mask] * np.log2(p[mask] / expected))))


def _binary_entropy(lam: float) -> float:
    """h(λ) in bits."""
    return -lam * math.log2(lam) - (1 - lam) * math.log2(1 - lam)


def mutual_information_sensitivity(
    n: int, child_size: int, parent_size: int, neighbour: str
) -> float:
    """Global sensitivity of I(X; Π) (bits) on datasets of public size n, so EM noise is calibrated.

    replace_one (Zhang et al., PrivBayes, SIGMOD 2014, Lemma 1; TODS 2017 same lemma):
      if X or Π is binary:  Δ = (1/n)·log2 n + ((n−1)/n)·log2(n/(n−1))
      otherwise:            Δ = (2/n)·log2((n+1)/2) + ((n−1)/n)·log2((n+1)/(n−1)).
    If X or Π has a single code, I ≡ 0 and Δ = 0.

    add_remove (derived here; the lemma assumes fixed n). Let D' = D + t, |D| = m, λ = 1/(m+1),
    so the empirical law is p' = (1−λ)·p + λ·δ_t for X, Π and (X, Π) alike. Concavity of H
    gives H(p') ≥ (1−λ)H(p); the mixture bound gives H(p') ≤ (1−λ)H(p) + h(λ). With
    I = H(X) + H(Π) − H(X, Π):  I' − I ≤ 2h(λ) − λI ≤ 2h(λ)  and
    I − I' ≤ h(λ) + λI ≤ h(λ) + λ·log2 min(|X|, |Π|).  For public n the worst neighbour has
    λ = 1/n (h rises on (0, ½]), hence Δ = max(2h(1/n), h(1/n) + log2(min(|X|, |Π|))/n).
    (Note h(1/n) is exactly the binary replace-one bound above.)

    >>> round(mutual_information_sensitivity(1000, 12, 10, "replace_one"), 6)
    0.020817
    >>> round(mutual_information_sensitivity(1000, 2, 10, "replace_one"), 6)
    0.011408
    """
    if n < 2:
        raise ValueError(f"mutual-information sensitivity needs n >= 2 records, got n={n}")
    if child_size < 2 or parent_size < 2:
        return 0.0
    h = _binary_entropy(1.0 / n)
    if neighbour == "replace_one":
        if child_size == 2 or parent_size == 2:
            return h
        return (2 / n) * math.log2((n + 1) / 2) + ((n - 1) / n) * math.log2((n + 1) / (n - 1))
    if neighbour == "add_remove":
        return max(2 * h, h + math.log2(min(child_size, parent_size)) / n)
    raise ValueError(f"unknown neighbour relation {neighbour!r}")
