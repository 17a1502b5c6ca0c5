"""BinSemantics: which raw values each code of one binned column stands for."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class BinSemantics:
    """Raw values behind each code: inclusive [low, high] intervals, or sets of categories.

    ``integer=True`` says the raw column only holds whole numbers, which sharpens the
    three-valued answers (e.g. ``x == 1.5`` is false on every integer bin).

    >>> BinSemantics.numeric([-np.inf, 18], [17, np.inf]).n_codes
    2
    """

    low: np.ndarray | None = None
    high: np.ndarray | None = None
    categories: tuple[frozenset, ...] | None = None
    integer: bool = False

    def __post_init__(self) -> None:
        has_bounds = self.low is not None or self.high is not None
        if has_bounds == (self.categories is not None):
            raise ValueError(
                "BinSemantics: set either low and high (numeric column) "
                "or categories (categorical column), exactly one of the two"
            )
        if has_bounds:
            self._check_bounds()
        else:
            self._check_categories()

    def _check_bounds(self) -> None:
        """Store low/high as read-only float arrays of equal length with low <= high."""
        if self.low is None or self.high is None:
            raise ValueError("BinSemantics: numeric bins need both low and high")
        try:
            low = np.array(self.low, dtype=np.float64)
            high = np.array(self.high, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"BinSemantics: low and high must be numbers ({exc})") from None
        if low.ndim != 1 or low.shape != high.shape or low.size == 0:
            raise ValueError("BinSemantics: low and high must be 1-D, non-empty, of equal length")
        if np.isnan(low).any() or np.isnan(high).any():
            raise ValueError("BinSemantics: low and high must not be NaN")
        bad = np.flatnonzero((low > high) | (low == np.inf) | (high == -np.inf))
        if bad.size:
            reason = "have low > high or hold no finite value"
            raise ValueError(f"BinSemantics: codes {bad.tolist()} {reason}")
        if self.integer:
            empty = np.flatnonzero(np.ceil(low) > np.floor(high))
            if empty.size:
                raise ValueError(f"BinSemantics: codes {empty.tolist()} hold no integer")
        low.flags.writeable = False
        high.flags.writeable = False
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)
        object.__setattr__(self, "integer", bool(self.integer))

    def _check_categories(self) -> None:
        """Store categories as a non-empty tuple of non-empty frozensets."""
        assert self.categories is not None
        if isinstance(self.categories, str | bytes):
            raise ValueError("BinSemantics: categories must be a sequence of sets, not text")
        try:
            cats = tuple(frozenset(c) for c in self.categories)
        except TypeError as exc:
            raise ValueError(f"BinSemantics: categories must be sets of values ({exc})") from None
        if not cats:
            raise ValueError("BinSemantics: categories must list at least one code")
        empty = [i for i, c in enumerate(cats) if not c]
        if empty:
            raise ValueError(f"BinSemantics: codes {empty} stand for no category")
        if self.integer:
            raise ValueError("BinSemantics: integer=True only applies to numeric bins")
        object.__setattr__(self, "categories", cats)

    @classmethod
    def numeric(
        cls, low: Iterable[float], high: Iterable[float], integer: bool = False
    ) -> BinSemantics:
        """Numeric bins from inclusive bounds (use ±inf for open ends)."""
        return cls(low=np.asarray(list(low)), high=np.asarray(list(high)), integer=integer)

    @classmethod
    def categorical(cls, categories: Iterable[Iterable[Hashable]]) -> BinSemantics:
        """Categorical codes from the raw values each code stands for."""
        return cls(categories=tuple(frozenset(c) for c in categories))

    @property
    def is_categorical(self) -> bool:
        """Whether codes stand for sets of categories rather than intervals."""
        return self.categories is not None

    @property
    def n_codes(self) -> int:
        """Number of codes of the column."""
        if self.categories is not None:
            return len(self.categories)
        assert self.low is not None
        return int(self.low.size)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Inclusive bounds of the raw values, narrowed to whole numbers when integer."""
        if self.low is None or self.high is None:
            raise ValueError("BinSemantics: categorical bins have no bounds")
        if self.integer:
            return np.ceil(self.low), np.floor(self.high)
        return self.low, self.high
