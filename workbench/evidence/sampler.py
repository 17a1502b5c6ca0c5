"""Vectorised ancestral sampling of proxy rows from a facts file.

Each table of the ``sampling_plan`` is compiled once into a ragged array of cumulative counts
(one block per parent cell); a draw for all rows is then one ``searchsorted``. Randomness
comes from a numpy ``Generator``: acceptable here because the facts and the proxy are public;
nothing in this module may ever touch confidential data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.evidence.facts import load_facts, range_group_index, validate_facts
from workbench.evidence.us_natality import PROXY_COLUMNS


@dataclass(frozen=True)
class _Ragged:
    """Categorical distributions, one per cell, stored back to back as value runs.

    Every value is repeated as often as it was counted, so a draw is one uniform integer
    and one gather (O(1) per row, exactly proportional to the counts). The expanded array
    is as long as the source had rows, a few MB at most.
    """

    expanded: np.ndarray  # each cell's values, each repeated by its count, cell after cell
    start: np.ndarray  # position of each cell's first entry in ``expanded``
    total: np.ndarray  # count total of each cell

    @classmethod
    def from_cells(cls, values: Sequence[np.ndarray], counts: Sequence[np.ndarray]) -> _Ragged:
        """Concatenate per-cell (values, counts) blocks in cell order."""
        flat_counts = np.concatenate(counts).astype(np.int64) if counts else np.zeros(0, np.int64)
        if (flat_counts < 0).any():
            raise ValueError("facts: counts must be non-negative")
        total = np.asarray([int(np.sum(c)) for c in counts], dtype=np.int64)
        expanded = np.repeat(np.concatenate(values).astype(np.int64), flat_counts)
        return cls(expanded=expanded, start=np.cumsum(total) - total, total=total)

    def draw(self, cell: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One value per row from the distribution of that row's cell."""
        if len(self.total) == 1:  # a marginal: skip the per-row gathers
            return self.expanded[rng.integers(0, int(self.total[0]), size=len(cell))]
        total = self.total[cell]
        if len(cell) and total.min() <= 0:
            raise ValueError("proxy sampler reached a parent cell with no counts")
        return self.expanded[self.start[cell] + rng.integers(0, total)]


@dataclass(frozen=True)
class _Step:
    """One compiled table: how to find each row's parent cell, and what to draw there."""

    child: str
    parents: tuple[tuple[str, int, np.ndarray], ...]  # (column, offset, value -> group lookup)
    dims: tuple[int, ...]
    table: _Ragged
    refine: tuple[int, int, _Ragged] | None  # (bin width, first bin index, grams per bin)

    def cells(self, sampled: Mapping[str, np.ndarray], n: int) -> np.ndarray:
        """Row-major parent-cell index of every row."""
        if not self.parents:
            return np.zeros(n, dtype=np.int64)
        cell = np.zeros(n, dtype=np.int64)
        for (col, offset, lookup), dim in zip(self.parents, self.dims, strict=True):
            code = lookup[np.clip(sampled[col] - offset, 0, len(lookup) - 1)]
            cell = cell * dim + code
        return cell

    def draw(
        self, sampled: Mapping[str, np.ndarray], n: int, rng: np.random.Generator
    ) -> np.ndarray:
        """The child column for all rows, refined from bins to exact values when needed."""
        out = self.table.draw(self.cells(sampled, n), rng)
        if self.refine is not None:
            width, first_bin, grams = self.refine
            out = grams.draw(out // width - first_bin, rng)
        return out


def _category_codes(values: Sequence[Any], categories: Sequence[str]) -> np.ndarray:
    """Positions of text values in a column's categories."""
    lookup = {c: i for i, c in enumerate(categories)}
    return np.asarray([lookup[v] for v in values], dtype=np.int64)


def _compile_refinement(table: Mapping[str, Any], width: int) -> tuple[int, int, _Ragged]:
    """Split a 1-D marginal into one distribution per bin of ``width`` (bins ordered by value)."""
    (cell,) = table["cells"]
    values = np.asarray(cell["values"], dtype=np.int64)
    counts = np.asarray(cell["counts"], dtype=np.int64)
    bins = values // width
    first = int(bins.min())
    blocks = [np.flatnonzero(bins - first == b) for b in range(int(bins.max()) - first + 1)]
    ragged = _Ragged.from_cells([values[i] for i in blocks], [counts[i] for i in blocks])
    return width, first, ragged


class ProxySampler:
    """Facts compiled once for repeated fully vectorised draws of proxy rows."""

    def __init__(self, facts: Mapping[str, Any]) -> None:
        validate_facts(facts)
        self.columns: dict[str, Any] = dict(facts["columns"])
        self._steps: list[_Step] = []
        tables = facts["tables"]
        for name in facts["sampling_plan"]:
            self._steps.append(self._compile(tables[name], tables))

    def _categories(self, column: str) -> list[str] | None:
        """Categories of a text column, ``None`` for integer columns."""
        return self.columns[column].get("categories")

    def _compile(self, table: Mapping[str, Any], tables: Mapping[str, Any]) -> _Step:
        """Turn one JSON table into a sampling step."""
        child = table["child"]
        cats = self._categories(child)
        parents: list[tuple[str, int, np.ndarray]] = []
        dims: list[int] = []
        for col, spec in table["parents"].items():
            if "ranges" in spec:
                lo, hi = int(spec["ranges"][0][0]), int(spec["ranges"][-1][1])
                lookup = range_group_index(np.arange(lo, hi + 1), spec["ranges"])
                parents.append((col, lo, lookup))
                dims.append(len(spec["ranges"]))
            else:
                col_cats = self._categories(col) or []
                parents.append((col, 0, _category_codes(col_cats, spec["categories"])))
                dims.append(len(spec["categories"]))
        values = [
            _category_codes(c["values"], cats) if cats else np.asarray(c["values"], np.int64)
            for c in table["cells"]
        ]
        counts = [np.asarray(c["counts"], dtype=np.int64) for c in table["cells"]]
        refine = None
        if table.get("refine_with"):
            refine = _compile_refinement(tables[table["refine_with"]], int(table["bin_width"]))
            width, first, grams = refine
            bins = np.concatenate(values) // width - first
            if bins.min() < 0 or bins.max() >= len(grams.total) or grams.total[bins].min() <= 0:
                raise ValueError(f"facts: {table['refine_with']!r} does not cover every bin")
        return _Step(child, tuple(parents), tuple(dims), _Ragged.from_cells(values, counts), refine)

    def sample(self, n: int, rng: np.random.Generator) -> pd.DataFrame:
        """``n`` proxy rows drawn ancestrally, table after table of the sampling plan."""
        sampled: dict[str, np.ndarray] = {}
        for step in self._steps:
            sampled[step.child] = step.draw(sampled, n, rng)
        data: dict[str, Any] = {}
        for col in PROXY_COLUMNS:
            cats = self._categories(col)
            data[col] = np.asarray(cats, dtype=object)[sampled[col]] if cats else sampled[col]
        return pd.DataFrame(data, columns=list(PROXY_COLUMNS))


def _check_n(n: int) -> int:
    """A non-negative row count, rejecting bools and floats."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer):
        raise TypeError(f"n must be an int, got {type(n).__name__}")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    return int(n)


def sample_proxy(
    n: int,
    *,
    seed: int | None,
    facts: Mapping[str, Any] | str | Path | None = None,
) -> pd.DataFrame:
    """Draw ``n`` public proxy rows from the facts (bundled US 2019 facts by default).

    >>> df = sample_proxy(3, seed=1)
    >>> list(df.columns)
    ['birth_month', 'mother_age', 'parity', 'gestation_week', 'birth_sex', 'birth_weight']
    >>> len(df), df.equals(sample_proxy(3, seed=1))
    (3, True)
    """
    n = _check_n(n)
    if facts is None or isinstance(facts, str | Path):
        facts = load_facts(facts)
    return ProxySampler(facts).sample(n, np.random.default_rng(seed))
