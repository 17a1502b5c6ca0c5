"""Realism checks for proxy data: the paper's raw-data cleaning rules and marginal distances.

The nine rules are the row-removal rules of Hod & Canetti §4.8.1 (all inequalities strict).
They are restated here only to *measure* how realistic the proxy is (it must lose a share of
rows close to the real data); the engine's own constraint machinery lives elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

_Cols = Mapping[str, np.ndarray]

#: (name, predicate) pairs; a predicate marks the rows that the rule REMOVES.
CLEANING_RULES: tuple[tuple[str, Callable[[_Cols], np.ndarray]], ...] = (
    (
        "birth_weight < 500 or > 5500",
        lambda c: (c["birth_weight"] < 500) | (c["birth_weight"] > 5500),
    ),
    (
        "gestation_week < 22 or > 44",
        lambda c: (c["gestation_week"] < 22) | (c["gestation_week"] > 44),
    ),
    ("mother_age < 23 and parity > 6", lambda c: (c["mother_age"] < 23) & (c["parity"] > 6)),
    ("mother_age < 20 and parity > 3", lambda c: (c["mother_age"] < 20) & (c["parity"] > 3)),
    (
        "gestation_week < 26 and birth_weight > 1499",
        lambda c: (c["gestation_week"] < 26) & (c["birth_weight"] > 1499),
    ),
    (
        "gestation_week < 29 and birth_weight > 2999",
        lambda c: (c["gestation_week"] < 29) & (c["birth_weight"] > 2999),
    ),
    (
        "gestation_week < 34 and birth_weight > 3999",
        lambda c: (c["gestation_week"] < 34) & (c["birth_weight"] > 3999),
    ),
    (
        "birth_weight < 600 and gestation_week > 29",
        lambda c: (c["birth_weight"] < 600) & (c["gestation_week"] > 29),
    ),
    (
        "birth_weight < 700 and gestation_week > 32",
        lambda c: (c["birth_weight"] < 700) & (c["gestation_week"] > 32),
    ),
)


def _columns(df: pd.DataFrame) -> dict[str, np.ndarray]:
    """The integer columns the rules read, as numpy arrays."""
    names = ("mother_age", "parity", "gestation_week", "birth_weight")
    return {n: df[n].to_numpy(dtype=np.int64) for n in names}


def cleaning_rule_masks(df: pd.DataFrame) -> dict[str, np.ndarray]:
    """Boolean mask per rule of the rows it removes, so each rule can be compared on its own."""
    cols = _columns(df)
    return {name: np.asarray(rule(cols), dtype=bool) for name, rule in CLEANING_RULES}


def removed_shares(df: pd.DataFrame) -> dict[str, float]:
    """Share of rows removed by each rule and by all rules together (key ``"total"``)."""
    masks = cleaning_rule_masks(df)
    n = max(len(df), 1)
    shares = {name: float(m.sum()) / n for name, m in masks.items()}
    union = np.zeros(len(df), dtype=bool)
    for m in masks.values():
        union |= m
    shares["total"] = float(union.sum()) / n
    return shares
