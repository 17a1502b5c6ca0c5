"""The registry's own published 1-way tables, as a forecast's anchor (issue 26).

A statistics office publishes, every year, 1-way tables of its registry (births by mother's
age, by birth order, by birth weight group, …). They are public, and they are the registry's
own year: a proxy re-weighted to them (raked) differs from the registry only in how the
columns depend on one another, not in its rare 1-way cells, which are what moved a design's
forecast on a proxy of another population (issue 26: relative 1-way error 1.33 on the proxy,
1.82 on the registry). :mod:`workbench.dryrun.robust` rehearses on the raked proxy and on
shifts within the tables' own rounding.

File form (JSON), shares or counts::

    {"source": "CBS Statistical Abstract 2015, table 3.12", "step": 0.001,
     "columns": {"mother_age": [0.021, 0.052, …], …}}
    {"source": "CBS Statistical Abstract 2015, table 3.12",
     "counts": {"mother_age": [3460, 8571, …], …}}

``columns`` gives each column's shares in the design's cells (``trial.cells.design_codec``: the
transforms of the spec's first configuration, in the order ``workbench describe`` lists them);
``step`` is the rounding of the published shares (0.001: one decimal of a percentage).
``counts`` gives the births per cell, as an office publishes them: exact, so ``step`` is 0 and
the 1-way distributions are known. That matters for rare cells: rounded to 0.1 points, a cell of
24 births in 95,000 (0.025%) is published as 0 and a forecast raked to it has none (issue 26's
transfer check: 0.00 forecast against 0.30 on the thinned stand-in). Columns that are not given
keep the proxy's own 1-way distribution.

This form is a subset of the FACTS list form (``docs/facts.md``), read into its ``Fact``
objects; a list-form file is read as it is (its ``shares`` facts in the design's cells, its
other facts kept for the kinds of evidence, :class:`workbench.evidence.core.EvidenceKind`).
Nothing here reads confidential data: the tables are public by construction, and a file that
does not fit the spec fails naming the column.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.evidence.fact_list import LIST_FORMAT, Axis, Fact, parse_facts
from workbench.evidence.facts import read_json
from workbench.specification import Spec
from workbench.transform import TableCodec
from workbench.trial.cells import design_codec


@dataclass(frozen=True)
class PublishedTables:
    """Published 1-way shares per column (the design's cells), their rounding and source, and
    any published cross-tables (shares, exact) per pair of columns."""

    shares: Mapping[str, tuple[float, ...]]
    step: float
    source: str
    pairs: Mapping[tuple[str, str], np.ndarray] = field(default_factory=dict)
    #: every fact read, in the FACTS list form's objects (the tables above among them)
    facts: tuple[Fact, ...] = ()

    def tolerance(self, column: str) -> float:
        """The total variation the rounding allows: each share is off by at most step/2."""
        return len(self.shares[column]) * self.step / 4

    def target(self, column: str) -> np.ndarray:
        """The column's published shares, renormalised (rounded shares need not sum to 1)."""
        p = np.asarray(self.shares[column], dtype=float)
        return p / p.sum()


def published_tables(spec: Spec, document: Mapping[str, Any], *,
                     where: str = "published tables") -> PublishedTables:
    """Check ``document`` (the list form, or its subset the tables form) against ``spec`` and
    wrap its facts; every problem names the column, pair or fact."""
    if not isinstance(document, Mapping):
        raise ValueError(f"{where}: must be a JSON object")
    labels = _design_labels(spec)
    if document.get("format") == LIST_FORMAT:
        facts = parse_facts(document)
        source = str(document.get("title") or document.get("about", ""))
    else:
        facts = _tables_as_facts(document, labels, where)
        source = str(document.get("source", ""))
    shares: dict[str, tuple[float, ...]] = {}
    pairs: dict[tuple[str, str], np.ndarray] = {}
    step = 0.0
    for fact in facts:
        if fact.kind != "shares":
            continue
        for axis in fact.axes:
            if tuple(str(v) for v in axis.values or ()) != labels.get(axis.column):
                raise ValueError(f"{where}: {fact.where}: a forecast's anchor needs the "
                                 f"design's cells of {axis.column!r}, as `workbench describe` "
                                 f"lists them ({list(labels.get(axis.column, ()))})")
        if len(fact.axes) == 1:
            shares[fact.axes[0].column] = fact.shares
            step = max(step, fact.share_rounding)
        elif len(fact.axes) == 2:
            a, b = (axis.column for axis in fact.axes)
            pairs[(a, b)] = np.reshape(fact.shares, (fact.axes[0].size, fact.axes[1].size))
        else:
            raise ValueError(f"{where}: {fact.where}: a forecast's anchor takes 1-way and 2-way "
                             "tables")
    _check_pair_margins(pairs, shares, step, where)
    return PublishedTables(shares, step, source, pairs, tuple(facts))


def design_table(spec: Spec) -> TableCodec:
    """The design's cells, the one codec published tables are given in and the evidence's
    scenarios move (``trial.cells.design_codec``: which one, and why one is enough)."""
    return design_codec(spec)


def _design_labels(spec: Spec) -> dict[str, tuple[str, ...]]:
    """Each column's cells in the design (:func:`design_table`), by their labels."""
    table = design_table(spec)
    out = {}
    for name, size in zip(spec.column_names, table.domain.sizes, strict=True):
        labels = getattr(table.codec(name), "labels", None)
        out[name] = tuple(str(x) for x in (labels if labels else range(size)))
    return out


def _tables_as_facts(document: Mapping[str, Any], labels: Mapping[str, tuple[str, ...]],
                     where: str) -> list[Fact]:
    """The tables form's columns and pairs as the list form's ``shares`` facts, checked."""
    if "counts" in document:
        document = _shares_of_counts(document, where)
    if not isinstance(document.get("columns"), Mapping):
        raise ValueError(f"{where}: needs an object 'columns' (column → shares) or 'counts' "
                         "(column → counts)")
    step = document.get("step", 0.001)
    if not isinstance(step, (int, float)) or not 0 <= step < 0.1:
        raise ValueError(f"{where}: 'step' (the shares' rounding) must be a number in [0, 0.1)")
    sizes = {name: len(cells) for name, cells in labels.items()}
    source = str(document.get("source", ""))
    facts = []
    for column, values in document["columns"].items():
        if column not in sizes:
            raise ValueError(f"{where}: column {column!r} is not in the spec "
                             f"(columns: {', '.join(sizes)})")
        if not isinstance(values, list) or len(values) != sizes[column]:
            raise ValueError(f"{where}: column {column!r} needs {sizes[column]} shares, one per "
                             "cell of the spec's first configuration")
        if not all(isinstance(v, (int, float)) and math.isfinite(v) and v >= 0 for v in values):
            raise ValueError(f"{where}: column {column!r}: every share must be a number ≥ 0")
        if abs(sum(values) - 1) > max(len(values) * step / 2, 1e-6):
            raise ValueError(f"{where}: column {column!r}: the shares sum to {sum(values):.4f}, "
                             f"not 1 within the rounding step {step:g}")
        total = math.fsum(values)
        facts.append(Fact(len(facts), "shares", source, float(step), column,
                          (Axis(column, labels[column]),), tuple(v / total for v in values),
                          float(step)))
    if not facts:
        raise ValueError(f"{where}: 'columns' is empty")
    for (a, b), table in _pairs(document.get("pairs", {}), sizes, where).items():
        facts.append(Fact(len(facts), "shares", source, 0.0, f"{a}|{b}",
                          (Axis(a, labels[a]), Axis(b, labels[b])),
                          tuple(float(x) for x in table.ravel())))
    return facts


def _check_pair_margins(pairs: Mapping[tuple[str, str], np.ndarray],
                        shares: Mapping[str, tuple[float, ...]], step: float,
                        where: str) -> None:
    """A cross-table's margins must be the 1-way tables published beside it (within their
    rounding): raking to tables that disagree cannot meet both."""
    for (a, b), table in pairs.items():
        for column, margin in ((a, table.sum(axis=1)), (b, table.sum(axis=0))):
            if column not in shares:
                continue
            one_way = np.asarray(shares[column], dtype=float)
            tv = 0.5 * float(np.abs(margin - one_way / one_way.sum()).sum())
            if tv > max(len(one_way) * step / 4, 1e-6):
                raise ValueError(f"{where}: pair '{a}|{b}': its margin of {column!r} differs "
                                 f"from the 1-way table of {column!r} (total variation "
                                 f"{tv:.4g})")


def _pairs(document: Any, sizes: Mapping[str, int],
           where: str) -> dict[tuple[str, str], np.ndarray]:
    """Published cross-tables ("a|b" → counts, rows a's cells), as exact shares; a table that
    does not fit names its pair."""
    if not isinstance(document, Mapping):
        raise ValueError(f"{where}: 'pairs' must be an object (\"a|b\" → counts)")
    out = {}
    for key, rows in document.items():
        names = str(key).split("|")
        if len(names) != 2 or names[0] == names[1] or any(n not in sizes for n in names):
            raise ValueError(f"{where}: pair {key!r} must be two different columns of the "
                             f"spec as \"a|b\" (columns: {', '.join(sizes)})")
        a, b = names
        if (not isinstance(rows, list) or len(rows) != sizes[a]
                or not all(isinstance(r, list) and len(r) == sizes[b] for r in rows)):
            raise ValueError(f"{where}: pair {key!r} needs {sizes[a]} rows of {sizes[b]} "
                             f"counts ({a}'s cells × {b}'s cells)")
        _check_counts([v for r in rows for v in r], f"pair {key!r}", where)
        table = np.asarray(rows, dtype=float)
        out[(a, b)] = table / table.sum()
    return out


def _check_counts(values: Any, label: str, where: str) -> None:
    """Published counts: a list of whole numbers ≥ 0, not all 0 (the error names ``label``)."""
    if not isinstance(values, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
        raise ValueError(f"{where}: {label}: every count must be a whole number ≥ 0")
    if sum(values) == 0:
        raise ValueError(f"{where}: {label}: the counts are all 0")


def _shares_of_counts(document: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The shares form of a counts document (exact: step 0); a count that is not a whole
    number ≥ 0, or a column without births, names its column."""
    counts = document["counts"]
    if not isinstance(counts, Mapping) or "columns" in document:
        raise ValueError(f"{where}: 'counts' must be an object (column → counts), given "
                         "instead of 'columns'")
    columns = {}
    for column, values in counts.items():
        _check_counts(values, f"column {column!r}", where)
        total = sum(values)
        columns[column] = [v / total for v in values]
    return {**{k: v for k, v in document.items() if k != "counts"}, "columns": columns,
            "step": 0.0}


def read_published_tables(spec: Spec, path: str | os.PathLike[str]) -> PublishedTables:
    """The published aggregates in the JSON file ``path`` (module docstring), checked."""
    document, _ = read_json(path, "published tables")
    return published_tables(spec, document, where=f"published tables {os.fspath(path)!r}")
