"""The faithfulness cost rule in bin space: which synthetic cell may stand for which real cell.

Hod & Canetti §3.5.1 and §4.5.5: a release row ``s`` may be matched to a real row ``r`` when
c(s, r) ≤ α. The spec expresses c without code (``FaithfulnessRule``):

* ``exact`` columns must carry the same code;
* ``distance`` columns contribute w_j · |code_r − code_s| (bin indices, so "one bin up or
  down" is distance 1), and the weighted L1 sum must be ≤ α;
* ``tolerance`` columns (released as numbers) contribute α·|x_r − x_s|/t_j in the column's
  units: a gap of t_j alone uses up α (a weight α·resolution/t_j per grid step);
* ``must_match`` exceptions: a bin of a distance column that holds the exceptional raw value
  strictly inside it (not on either edge) must match exactly, in both directions.

The exception is a rule on **bins, not raw values**: R is the transformed data and S is
generated in bin space, so neither side keeps the raw value, and the paper's wording is "if
the value 37 ... falls within a bin and not at its edges, that bin must be an exact match"
(§4.5.5, footnote). With mother_age bins 35–39 the bin 35–39 is locked (every row in it,
whatever its raw age, can only meet rows of 35–39, and rows of 30–34 or 40–42 cannot move
into it); with 35–36 / 37–39 the value 37 is an edge, and with single years the bin {37} is
its own edge, so nothing is locked — exactly "only relevant for one binning alternative".

Because the rule only looks at code differences, the neighbours of a cell are the cell plus
the finitely many integer offset vectors δ over the distance columns with Σ w_j|δ_j| ≤ α,
which is what makes the matching work on distinct cells instead of all row pairs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from workbench.specification.model import FaithfulnessRule, Spec
    from workbench.specification.space import Configuration
    from workbench.transform import TableCodec

#: Relative slack on α so that decimal weights (0.1 · 3 vs 0.3) compare as the stakeholder meant.
ALPHA_TOLERANCE = 1e-9
#: Refuse rules whose neighbourhood is so large that the cell graph would not be sparse.
MAX_OFFSETS = 100_000


def _locked_codes(intervals: tuple[np.ndarray, np.ndarray] | None, value: float) -> np.ndarray:
    """Bins holding ``value`` strictly inside their inclusive bounds (never at an edge)."""
    if intervals is None:
        return np.zeros(0, dtype=bool)
    low, high = (np.asarray(a, dtype=np.float64) for a in intervals)
    return (low < value) & (value < high)


def _offsets(weights: np.ndarray, bounds: np.ndarray, alpha: float) -> np.ndarray:
    """Every integer vector δ with |δ_j| ≤ bounds_j and Σ w_j|δ_j| ≤ α (+ tolerance)."""
    limit = alpha + ALPHA_TOLERANCE * max(1.0, alpha)
    vectors = np.zeros((1, 0), dtype=np.int64)
    costs = np.zeros(1, dtype=np.float64)
    for w, b in zip(weights, bounds, strict=True):
        steps = np.arange(-int(b), int(b) + 1, dtype=np.int64)
        new_costs = costs[:, None] + w * np.abs(steps)[None, :]
        keep = new_costs <= limit
        if int(keep.sum()) > MAX_OFFSETS:
            raise ValueError(
                f"faithfulness rule allows more than {MAX_OFFSETS} neighbour offsets; "
                "raise the distance weights or lower alpha"
            )
        rows, cols = np.nonzero(keep)
        vectors = np.column_stack([vectors[rows], steps[cols]])
        costs = new_costs[rows, cols]
    return vectors


@dataclass(frozen=True, eq=False)
class FaithfulnessCost:
    """The cost rule bound to one configuration's code matrix, so matching needs no spec lookups.

    ``distance_columns`` index the code matrix; ``offsets`` holds one row per allowed
    difference vector over them (the zero vector included); ``locked[k]`` marks the codes of
    distance column k that must match exactly.
    """

    names: tuple[str, ...]
    sizes: tuple[int, ...]
    distance_columns: tuple[int, ...]
    weights: np.ndarray
    alpha: float
    locked: tuple[np.ndarray, ...]
    offsets: np.ndarray

    @classmethod
    def build(
        cls,
        names: tuple[str, ...],
        sizes: tuple[int, ...],
        distance: Mapping[str, float],
        alpha: float,
        locked: Mapping[str, np.ndarray] | None = None,
    ) -> FaithfulnessCost:
        """Bind weights and locked bins to column positions; every other column is exact."""
        names, sizes = tuple(names), tuple(int(s) for s in sizes)
        if len(names) != len(sizes):
            raise ValueError("faithfulness: names and sizes differ in length")
        alpha = float(alpha)
        if not math.isfinite(alpha) or alpha < 0:
            raise ValueError("faithfulness: alpha must be a finite number >= 0")
        unknown = [c for c in distance if c not in names]
        if unknown:
            raise ValueError(f"faithfulness: distance columns {unknown} are not in the table")
        cols = tuple(names.index(c) for c in distance)
        weights = np.array([float(distance[names[j]]) for j in cols], dtype=np.float64)
        if (~np.isfinite(weights) | (weights <= 0)).any():
            raise ValueError("faithfulness: distance weights must be finite and > 0")
        locked = dict(locked or {})
        stray = [c for c in locked if c not in distance]
        if stray:
            raise ValueError(f"faithfulness: must-match columns {stray} are not distance columns")
        masks = []
        for j in cols:
            mask = np.asarray(locked.get(names[j], np.zeros(sizes[j], dtype=bool)), dtype=bool)
            if mask.shape != (sizes[j],):
                raise ValueError(
                    f"faithfulness: locked mask of column {names[j]!r} needs {sizes[j]} entries"
                )
            masks.append(mask)
        bounds = np.array(
            [
                min(math.floor(alpha / w * (1 + ALPHA_TOLERANCE)), sizes[j] - 1)
                for w, j in zip(weights, cols, strict=True)
            ],
            dtype=np.int64,
        )
        offsets = _offsets(weights, bounds, alpha)
        return cls(names, sizes, cols, weights, alpha, tuple(masks), offsets)

    @classmethod
    def from_rule(cls, rule: FaithfulnessRule, table: TableCodec) -> FaithfulnessCost:
        """Bind a spec's rule to a configuration's codecs (bins decide what is locked)."""
        locked: dict[str, np.ndarray] = {}
        for column, value in rule.must_match:
            codec = table.codec(column)
            mask = _locked_codes(codec.intervals(), float(value))
            if mask.size == 0:
                mask = np.zeros(codec.size, dtype=bool)
            locked[column] = locked.get(column, np.zeros(codec.size, dtype=bool)) | mask
        domain = table.domain
        distance = dict(rule.distance)
        for column, units in dict(rule.tolerance).items():
            # a gap of ``units`` costs α: per grid step of the number codec, α·resolution/units
            distance[column] = rule.alpha * float(table.codec(column).resolution) / units
        return cls.build(domain.names, domain.sizes, distance, rule.alpha, locked)

    @classmethod
    def from_spec(cls, spec: Spec, config: Configuration) -> FaithfulnessCost:
        """The spec's faithfulness rule under one configuration's transformation."""
        return cls.from_rule(spec.faithfulness, spec.table_codec(config))

    @property
    def exact_columns(self) -> tuple[int, ...]:
        """Positions of the columns that must be equal."""
        return tuple(j for j in range(len(self.names)) if j not in self.distance_columns)

    def locked_labels(self, table: TableCodec) -> dict[str, list[str]]:
        """Which bins the must-match exceptions lock, by label, for the report."""
        out: dict[str, list[str]] = {}
        for j, mask in zip(self.distance_columns, self.locked, strict=True):
            if mask.any():
                labels = table.codec(self.names[j]).labels
                out[self.names[j]] = [labels[i] for i in np.flatnonzero(mask)]
        return out

    def check_codes(self, codes: np.ndarray, what: str) -> np.ndarray:
        """An (n, d) int64 code matrix within the domain; the error names a column, not a value."""
        arr = np.asarray(codes)
        d = len(self.names)
        if arr.ndim != 2 or arr.shape[1] != d:
            raise ValueError(f"{what}: expected an (n, {d}) code matrix with columns {self.names}")
        if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"{what}: codes must be integers")
        arr = arr.astype(np.int64, copy=False)
        if arr.shape[0]:
            outside = ((arr < 0) | (arr >= np.asarray(self.sizes))).any(axis=0)
            if outside.any():
                j = int(np.flatnonzero(outside)[0])
                raise ValueError(f"{what}: column {self.names[j]!r} has codes outside its domain")
        return arr
