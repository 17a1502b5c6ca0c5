"""A continuous column released as a number: a public grid over the declared bounds, no bins.

``NumberCodec(lower, upper, resolution)`` maps a value to the nearest point of the grid
lower, lower + resolution, …, upper (the resolution is the precision the number is released
at: 1 g for a birth weight recorded in grams). Each grid point is its own code and its own
number, so the bin-to-number rule is the identity, constraints see exact values (an interval
of width zero), a faithfulness distance of k codes is k·resolution in the column's units, and
a release prints numbers, not bin labels. Everything is fixed by the spec's bounds and the
resolution; the data never move the grid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from workbench.transform.codecs import INVALID, MISSING, _label_index

#: Refuse grids whose code count would make the cell tables unreasonable.
MAX_POINTS = 200_000


def _fmt(x: float, decimals: int) -> str:
    """A grid value as the release prints it (no trailing zeros beyond the resolution)."""
    return str(round(x)) if decimals == 0 else f"{x:.{decimals}f}"


@dataclass(frozen=True)
class NumberCodec:
    """Values on the grid [lower, upper] at ``resolution``; code k stands for lower + k·res.

    >>> c = NumberCodec(200.0, 210.0, 5.0)
    >>> c.labels, c.encode([200, 203, 207.4, 210, 211]).tolist()
    (('200', '205', '210'), [0, 1, 1, 2, -1])
    >>> c.numbers().tolist()
    [200.0, 205.0, 210.0]
    """

    lower: float
    upper: float
    resolution: float
    labels: tuple[str, ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        lo, hi, res = float(self.lower), float(self.upper), float(self.resolution)
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError("bounds: a number column needs finite bounds, lower < upper")
        if not (math.isfinite(res) and res > 0):
            raise ValueError("resolution: must be a positive number")
        steps = (hi - lo) / res
        if abs(steps - round(steps)) > 1e-6 * max(1.0, steps):
            raise ValueError("resolution: must divide the bounds' range into whole steps")
        if round(steps) + 1 > MAX_POINTS:
            raise ValueError(f"resolution: the grid would have more than {MAX_POINTS} points")
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)
        object.__setattr__(self, "resolution", res)
        decimals = max(0, -math.floor(math.log10(res) + 1e-9)) if res < 1 else 0
        if res >= 1 and not (res.is_integer() and lo.is_integer()):
            decimals = 6
        labels = tuple(_fmt(v, decimals) for v in self.numbers())
        object.__setattr__(self, "labels", labels)

    @property
    def size(self) -> int:
        return round((self.upper - self.lower) / self.resolution) + 1

    def to_codes(self, x: np.ndarray) -> np.ndarray:
        """Nearest grid point of in-bound numbers (callers check the bounds first)."""
        k = np.rint((np.asarray(x, dtype=np.float64) - self.lower) / self.resolution)
        return np.clip(k, 0, self.size - 1).astype(np.int64)

    def encode(self, values: Any) -> np.ndarray:
        """Codes for raw values: INVALID outside the bounds or not a number, MISSING for NaN."""
        series = pd.Series(values, copy=False)
        missing = series.isna().to_numpy()
        x = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        bad = (np.isnan(x) & ~missing) | (x < self.lower) | (x > self.upper)
        codes = self.to_codes(np.where(np.isnan(x) | bad, self.lower, x))
        codes[bad] = INVALID
        codes[missing] = MISSING
        return codes

    def encode_labels(self, labels: Any) -> np.ndarray:
        """Codes for printed numbers (a release read back): exact grid labels, else by value."""
        idx = _label_index(self.labels, labels)
        if (idx < 0).any():
            by_value = self.encode(labels)
            on_grid = by_value >= 0
            x = pd.to_numeric(pd.Series(labels, copy=False), errors="coerce").to_numpy(
                dtype=np.float64, na_value=np.nan)
            exact = np.isclose(x, self.lower + by_value * self.resolution,
                               rtol=0, atol=1e-9 * max(1.0, self.resolution))
            idx = np.where(idx >= 0, idx, np.where(on_grid & exact, by_value, INVALID))
        return idx.astype(np.int64)

    def decode(self, codes: np.ndarray) -> np.ndarray:
        return np.asarray(self.labels, dtype=object)[np.asarray(codes)]

    def numbers(self) -> np.ndarray:
        """The grid: code k is the number lower + k·resolution."""
        return self.lower + self.resolution * np.arange(self.size, dtype=np.float64)

    def intervals(self) -> tuple[np.ndarray, np.ndarray]:
        """Each code is one exact value (constraints are decided, never 'depends')."""
        x = self.numbers()
        return x, x.copy()

    def categories(self) -> None:
        return None
