"""The ``survey`` section's model: public margins, weighted counts, ε_w + ε₁ + ε₂ + ε₃ (Merrill
ch. 7; ε_w is the weight check before the loop)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: ε_w of the survey's weight check when ``survey.weight_check_epsilon`` is not written
#: (:mod:`workbench.survey.weight_check`).
DEFAULT_WEIGHT_CHECK_EPSILON = 0.01
#: |DP weight total / N − 1| above this refuses the run (``survey.weight_check_tolerance``).
DEFAULT_WEIGHT_CHECK_TOLERANCE = 0.2


@dataclass(frozen=True)
class SurveyMargin:
    """A public population margin: its columns, cell keys ('a|b' of release labels), totals,
    and the candidate sets of bins the DP binning choice picks from (name -> bins of cells)."""

    name: str
    columns: tuple[str, ...]
    cells: tuple[str, ...]
    totals: tuple[float, ...]
    binnings: Mapping[str, tuple[tuple[str, ...], ...]]


@dataclass(frozen=True)
class WeightedCount:
    """A weighted count released with smooth-sensitivity noise, post-stratified on a margin."""

    id: str
    margin: str
    column: str
    value: Any


@dataclass(frozen=True)
class Survey:
    """The ``survey`` section: weight, design, public margins, neighbours, ε_w + ε₁ + ε₂ + ε₃."""

    weight_column: str
    weight_bounds: tuple[float, float]
    design: str
    strata: tuple[str, ...]
    stratum_sizes: Mapping[str, float]
    margins: tuple[SurveyMargin, ...]
    structural_zeros: tuple[tuple[str, ...], ...]
    weighted_counts: tuple[WeightedCount, ...]
    epsilon_binning: float
    epsilon_table: float
    epsilon_counts: float
    gamma: float
    neighbour: str
    sampling_fraction: float | None = None
    margin_tolerance: float = 0.01
    #: ε_w of the DP weight total checked against every margin's N before the loop
    weight_check_epsilon: float = DEFAULT_WEIGHT_CHECK_EPSILON
    weight_check_tolerance: float = DEFAULT_WEIGHT_CHECK_TOLERANCE

    @property
    def epsilon(self) -> float:
        """ε_w + ε₁ + ε₂ + ε₃ (composed into ε_total by the one budget plan)."""
        return (self.weight_check_epsilon + self.epsilon_binning + self.epsilon_table
                + self.epsilon_counts)

    def margin(self, name: str) -> SurveyMargin:
        for m in self.margins:
            if m.name == name:
                return m
        raise KeyError(f"no survey margin {name!r}")
