"""Written-down sensitivities: each function states the query, the relation and the bound.

Two neighbour relations are supported (the spec's ``budget.neighbour``):

* ``replace_one``: D and D' have the same size n and differ in one record (the paper's choice;
  n is then public, so denominators may use it);
* ``add_remove``: D' is D with one record added or removed.

Every bound is checked empirically on neighbouring datasets in ``tests/test_privacy.py``.
"""

from __future__ import annotations

import math

from workbench.privacy import _checks


def histogram(neighbour: str) -> int:
    """L1 sensitivity of a vector of cell counts (each record sits in one cell).

    Replacing a record moves one unit between two cells (Δ = 2); adding or removing one changes
    one cell by 1 (Δ = 1).

    >>> histogram("replace_one"), histogram("add_remove")
    (2, 1)
    """
    return 2 if _checks.neighbour(neighbour) == "replace_one" else 1


def count(neighbour: str) -> int:
    """Sensitivity of a single count (records satisfying a predicate): 1 under both relations.

    >>> count("replace_one")
    1
    """
    _checks.neighbour(neighbour)
    return 1


def weighted_term(w_low: float, w_high: float, low: float, high: float,
                  neighbour: str) -> float:
    """Sensitivity of Σ w·clip(y, L, U) with every weight w in the public [w_L, w_U].

    One record contributes w·y, which lies between the smallest and the largest of the four
    corners w_{L,U}·{L, U}. Replacing a record swaps one such term for another (Δ = max − min
    corner); adding or removing one adds or drops a term (Δ = max |corner|). A weighted count
    is the case y ∈ [0, 1]: Δ = w_U either way.

    >>> weighted_term(10, 50, 0, 1, "replace_one"), weighted_term(10, 50, -1, 2, "add_remove")
    (50.0, 100.0)
    """
    wl = _checks.positive_finite("w_low", w_low)
    wh = _checks.positive_finite("w_high", w_high)
    lo, hi = _checks.bounds((low, high)) or (0.0, 0.0)
    if wl > wh:
        raise ValueError("weight bounds must satisfy w_low <= w_high")
    corners = [wl * lo, wl * hi, wh * lo, wh * hi]
    if _checks.neighbour(neighbour) == "replace_one":
        return max(corners) - min(corners)
    return max(abs(c) for c in corners)


def entropy(n: int) -> float:
    """Sensitivity of the empirical Shannon entropy (bits) of n records, replace-one (n public):
    Δ_H ≤ (1/n)·[2 + 1/ln 2 + 2·log₂ n] (Bindschaedler, Shokri & Gunter 2017, structure
    learning of the plausible-deniability synthesizer).

    Derivation: H = log₂ n − (1/n)·Σ_c f(c) with f(c) = c·log₂ c over the cell counts c.
    Replacing a record moves one unit from a cell a to a cell b, so
    n·|ΔH| = |[f(c_a) − f(c_a − 1)] − [f(c_b + 1) − f(c_b)]|. Each bracket is
    g(c) = f(c) − f(c − 1) = log₂ c + (c − 1)·log₂(c/(c − 1)) for 1 ≤ c ≤ n, and
    0 ≤ g(c) ≤ log₂ n + 1/ln 2 (as (c − 1)·ln(c/(c − 1)) ≤ 1), so n·|ΔH| ≤ log₂ n + 1/ln 2,
    which the paper's bound, used here, dominates. The same holds for the joint entropy of
    several columns (the entropy of the distribution over their product domain).
    ``tests/test_plausible.py`` brute-forces every replace-one neighbour of small domains.

    >>> round(entropy(1000), 6)
    0.023374
    """
    n = _checks.positive_integer("n", n)
    return (2.0 + 1.0 / math.log(2.0) + 2.0 * math.log2(n)) / n


def partition_distance(neighbour: str) -> tuple[int, int, int]:
    """(L0, L1, L∞) distance of a label → count map (each record adds 1 to at most one label),
    the input distance of OpenDP's thresholded partition selection (``L01InfDistance``).

    Adding or removing a record changes one label's count by 1: (1, 1, 1). Replacing a record
    takes 1 from its old label and gives 1 to its new one: two labels move, each by 1, so
    (2, 2, 1) — a replaced record is an add and a remove, so L0 and L1 double, L∞ does not.
    Labels the spec declares, and missing cells, are left out of the map by a public rule,
    which can only shrink the distance.

    >>> partition_distance("replace_one"), partition_distance("add_remove")
    ((2, 2, 1), (1, 1, 1))
    """
    return (2, 2, 1) if _checks.neighbour(neighbour) == "replace_one" else (1, 1, 1)
