"""A column's public description (the spec's schema entry), which this layer reads by."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ColumnSpec:
    """A column's public description: type, declared domain or bounds, and policies."""

    name: str
    type: str
    domain: tuple[Any, ...] | None
    bounds: tuple[float, float] | None
    missing: str
    out_of_domain: str
    description: str = ""
    #: label of the missing code (``category``: a value of its own; ``allow``: the release's
    #: spelling of a kept missing value)
    missing_label: str = ""
    #: public upper bound on the column's missing share (``allow``/``category``); the
    #: partial-observation sensitivities use it as the lower bound on complete rows
    max_missing_rate: float | None = None
    #: the data file's header name, when it is not a valid spec name (e.g. 'native-country')
    source: str | None = None
    #: A declared MCAR missingness rate φ (public; only for the amplification accountant's
    #: secondary figure — nothing is charged at it). None when not declared.
    mcar_rate: float | None = None

    @property
    def numeric(self) -> bool:
        """Whether values can be compared with numbers."""
        if self.type in {"integer", "continuous"}:
            return True
        if self.type == "ordinal" and self.domain is not None:
            return all(isinstance(v, int | float) and not isinstance(v, bool) for v in self.domain)
        return False
