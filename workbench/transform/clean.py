"""Cleaning raw data the way the spec says: raw constraints, then domain and missing policies."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd

from workbench.transform.column import ColumnSpec
from workbench.transform.raw import (
    apply_domain_policy,
    as_numbers,
    check_missing,
    non_numeric,
    out_of_domain,
)


class Spec(Protocol):
    """What cleaning reads of a spec (the spec model sits above this layer)."""

    @property
    def columns(self) -> Sequence[ColumnSpec]: ...

    @property
    def constraints(self) -> Any: ...


@dataclass(frozen=True)
class CleaningProfile:
    """Shares of rows affected by each rule and column. NOT private: for public data only."""

    n_rows: int
    removed_by_rule: dict[str, float]
    removed_total: float
    out_of_domain: dict[str, float]
    missing: dict[str, float]
    non_numeric: dict[str, float] | None = None


def rule_masks(frame: pd.DataFrame, spec: Spec) -> dict[str, np.ndarray]:
    """Rows each raw cleaning rule rejects (a text cell in a numeric column reads as missing)."""
    numbers = as_numbers(frame, spec.columns)
    return {
        r.name: np.asarray(r.predicate.evaluate_raw(numbers), dtype=bool)
        for r in spec.constraints.raw
    }


def clean(frame: pd.DataFrame, spec: Spec, tally: dict[str, int] | None = None,
          check: bool = True, domains: bool = True) -> pd.DataFrame:
    """The original dataset of the paper: raw rules removed, domains enforced, no missing values.

    ``tally`` receives the rows each raw rule removes, each row counted for the first rule (in
    spec order) that rejects it, so a row adds to at most one of these counts: CONFIDENTIAL
    counts, released only as the spec's ``cleaning_counts`` says. ``check=False`` leaves the
    missing policies (whose rates are over the whole table) to a caller cleaning in chunks.
    ``domains=False``: the caller applied the domain policies to ``frame`` already (a chunk in
    ``transform.stream``); removing rows changes no value, so a second pass would find nothing.
    """
    reject = np.zeros(len(frame), dtype=bool)
    for name, mask in rule_masks(frame, spec).items():
        if tally is not None:
            tally[name] = int((mask & ~reject).sum())
        reject |= mask
    kept = (frame.loc[~reject] if reject.any() else frame).reset_index(drop=True)
    if domains:
        kept = apply_domain_policy(kept, spec.columns)
    if check:
        check_missing(kept, spec.columns)
    return kept


def profile(frame: pd.DataFrame, spec: Spec) -> CleaningProfile:
    """Describe what cleaning would do to a PUBLIC table (shares are exact, not private)."""
    n = len(frame)
    masks = rule_masks(frame, spec)
    total = np.zeros(n, dtype=bool)
    for m in masks.values():
        total |= m
    def share(m):
        return float(m.mean()) if n else 0.0
    return CleaningProfile(
        n_rows=n,
        removed_by_rule={k: share(m) for k, m in masks.items()},
        removed_total=share(total),
        out_of_domain={c.name: share(out_of_domain(frame, c)) for c in spec.columns},
        missing={c.name: share(frame[c.name].isna().to_numpy()) for c in spec.columns},
        non_numeric={c.name: share(non_numeric(frame, c)) for c in spec.columns},
    )
