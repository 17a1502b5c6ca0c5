"""A missingness simulator for PUBLIC proxies: MCAR, MAR and MNAR masks, for what-if dry runs.

A registry usually has more holes than its public proxy; these masks let the dry run rehearse
it. Mechanisms (Mohapatra et al. §3):

* ``MCAR`` — each value of a column is missing with the same probability ``rate``;
* ``MAR`` — the probability depends on another, observed column (``depends_on``): rows whose
  ``depends_on`` value lies in the upper half (numbers) or is one of the first half of the
  column's sorted values (labels) are ``strength`` times likelier to lose the value, scaled so
  the expected rate is ``rate``;
* ``MNAR`` — the same rule applied to the column's own value.

Public data only: the masks use an explicitly seeded numpy Generator, never the confidential
path. ``parse_masks`` reads the CLI's ``--missingness`` strings
(``MCAR:0.2`` on every column, ``MCAR:0.2:age,sex``, ``MAR:0.3:workclass:age``,
``MNAR:0.1:capital_gain``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

MECHANISMS = ("MCAR", "MAR", "MNAR")


@dataclass(frozen=True)
class Mask:
    """One missingness rule: mechanism, target rate, columns, the column it depends on."""

    mechanism: str
    rate: float
    columns: tuple[str, ...] = ()
    depends_on: str | None = None
    strength: float = 3.0

    def __post_init__(self) -> None:
        if self.mechanism not in MECHANISMS:
            raise ValueError(f"missingness mechanism must be one of {MECHANISMS}")
        if not 0.0 <= self.rate < 1.0:
            raise ValueError("missingness rate must lie in [0, 1)")
        if self.mechanism == "MAR" and not self.depends_on:
            raise ValueError("a MAR mask needs the column it depends on")


def _high(series: pd.Series) -> np.ndarray:
    """Rows in the 'likelier' half of a column (upper half of numbers, first half of labels)."""
    numbers = pd.to_numeric(series, errors="coerce")
    if numbers.notna().mean() > 0.9:
        return (numbers > numbers.median()).to_numpy(dtype=bool, na_value=False)
    labels = sorted(series.dropna().astype(str).unique())
    first = set(labels[: max(1, len(labels) // 2)])
    return series.astype("string").isin(first).to_numpy(dtype=bool, na_value=False)


def _probabilities(frame: pd.DataFrame, column: str, mask: Mask) -> np.ndarray:
    """Per-row probability that ``column`` goes missing, with mean ``mask.rate``."""
    n = len(frame)
    if mask.mechanism == "MCAR":
        return np.full(n, mask.rate)
    driver = frame[mask.depends_on] if mask.mechanism == "MAR" else frame[column]
    high = _high(driver)
    weight = np.where(high, mask.strength, 1.0)
    return np.clip(mask.rate * weight / weight.mean(), 0.0, 1.0)


def apply_masks(frame: pd.DataFrame, masks: Sequence[Mask], seed: int = 0,
                exclude: Sequence[str] = ()) -> pd.DataFrame:
    """A copy of a PUBLIC frame with values set missing by each mask (seeded, reproducible).

    A mask without columns applies to every column except ``exclude`` (e.g. the class).

    >>> f = pd.DataFrame({"a": range(1000), "y": [0, 1] * 500})
    >>> out = apply_masks(f, [Mask("MCAR", 0.2)], seed=1, exclude=["y"])
    >>> round(float(out["a"].isna().mean()), 1), int(out["y"].isna().sum())
    (0.2, 0)
    """
    rng = np.random.default_rng(seed)
    out = frame.copy()
    for mask in masks:
        for name in (c for c in frame.columns if c not in exclude) if not mask.columns \
                else mask.columns:
            if name not in frame.columns:
                raise ValueError(f"missingness mask names unknown column {name!r}")
            hit = rng.random(len(frame)) < _probabilities(frame, name, mask)
            out[name] = out[name].mask(hit)
    return out


def parse_masks(texts: Sequence[str]) -> list[Mask]:
    """Masks from CLI strings MECH:RATE[:COLUMNS[:DEPENDS_ON]] (COLUMNS comma-separated).

    >>> parse_masks(["MAR:0.3:workclass:age"])[0].depends_on
    'age'
    """
    out = []
    for text in texts:
        parts = text.split(":")
        if len(parts) < 2:
            raise ValueError("a missingness mask reads MECH:RATE[:COLUMNS[:DEPENDS_ON]]")
        try:
            rate = float(parts[1])
        except ValueError:
            raise ValueError("a missingness rate must be a number") from None
        columns = tuple(c for c in parts[2].split(",") if c) if len(parts) > 2 else ()
        depends = parts[3] if len(parts) > 3 else None
        out.append(Mask(parts[0].upper(), rate, columns, depends))
    return out
