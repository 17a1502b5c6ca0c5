"""The FACTS file: published aggregates (shares, tables, missing rates, means), each with its
source and its stated rounding — the input of ``workbench proxy build`` (``docs/facts.md``).

Two forms are read:

* the **list form** (``format: workbench.facts``): a list of facts, each a 1-way or k-way
  table of shares (or counts) over a column's values or bins, a missing rate, a mean, or an
  out-of-domain count (a DP pilot's, informational). ``proxy build`` fits the maximum-entropy
  distribution consistent with them (:mod:`workbench.evidence.maxent`);
* the **table form** (``format: workbench.proxy.facts``, the shipped US 2019 facts): exact
  counts of a child column per parent groups, in an ancestral plan. Its tables are nested
  along the plan, so their maximum-entropy distribution is the product of the plan's
  conditionals, which :class:`~workbench.evidence.sampler.ProxySampler` draws exactly.

Shapes are checked here, without a spec; :mod:`workbench.evidence.maxent` checks the facts
against the spec's columns. Every message names the fact (``facts[3] (age_bands)``).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.evidence.facts import FACTS_FORMAT as TABLE_FORMAT
from workbench.evidence.facts import FactsError, read_json, validate_facts

LIST_FORMAT = "workbench.facts"
LIST_VERSION = 1
KINDS = ("shares", "missing_rate", "mean", "out_of_domain")


@dataclass(frozen=True)
class Axis:
    """One column of a table fact: its listed ``values`` (categories), or ``bins`` (inclusive
    integer ranges, or half-open [lo, hi) ranges of a continuous column, the last closed)."""

    column: str
    values: tuple[Any, ...] | None = None
    bins: tuple[tuple[float, float], ...] | None = None

    @property
    def size(self) -> int:
        return len(self.values if self.values is not None else self.bins or ())

    def labels(self) -> list[str]:
        """Readable group names (``17-24`` for a bin)."""
        if self.values is not None:
            return [str(v) for v in self.values]
        return [f"{_num(lo)}-{_num(hi)}" for lo, hi in self.bins or ()]


@dataclass(frozen=True)
class Fact:
    """One published aggregate, its rounding (in the unit of its numbers) and source."""

    index: int
    kind: str
    source: str
    rounding: float
    id: str = ""
    axes: tuple[Axis, ...] = ()
    #: shares of every cell (row-major over the axes), normalised to sum to 1
    shares: tuple[float, ...] = ()
    #: rounding in share units (counts: rounding / total)
    share_rounding: float = 0.0
    #: a missing rate, a mean, or an out-of-domain count
    value: float | None = None
    column: str = ""
    #: how a DP value was made (a pilot's: mechanism, ε, Δ, σ); None for a published value
    noise: Mapping[str, Any] | None = None

    @property
    def name(self) -> str:
        """How messages and the fit report call the fact."""
        what = self.id or self.kind
        cols = ", ".join(a.column for a in self.axes) or self.column
        return f"{what} [{cols}]"

    @property
    def where(self) -> str:
        return f"facts[{self.index}]" + (f" ({self.id})" if self.id else "")


@dataclass(frozen=True)
class FactFile:
    """A loaded FACTS file: its form, document, facts (list form) and SHA-256."""

    path: Path
    form: str  # "list" or "tables"
    document: Mapping[str, Any]
    facts: tuple[Fact, ...]
    sha256: str

    @property
    def title(self) -> str:
        return str(self.document.get("title") or self.document.get("about", ""))[:120]


def _num(x: float) -> str:
    """A bin edge without a trailing '.0'."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def load_fact_file(path: str | Path) -> FactFile:
    """Read a FACTS file in either form; a bad file fails naming the fact and the field."""
    target = Path(path)
    doc, digest = read_json(target)
    if doc.get("format") == TABLE_FORMAT:
        try:
            validate_facts(doc)
        except (ValueError, KeyError, TypeError) as exc:
            raise FactsError(f"FACTS (table form): {exc}") from None
        return FactFile(target, "tables", doc, table_form_facts(doc), digest)
    return FactFile(target, "list", doc, parse_facts(doc), digest)


def table_form_facts(doc: Mapping[str, Any]) -> tuple[Fact, ...]:
    """The table form's tables as list-form ``shares`` facts (exact counts: rounding 0), the
    parents' groups and the child's values (bins of ``bin_width``) as axes, the child last."""
    out = []
    for i, (name, table) in enumerate(doc["tables"].items()):
        groups = {p: [tuple(g) if isinstance(g, list) else g for g in g_spec.get("ranges", [])]
                  or list(g_spec["categories"]) for p, g_spec in table["parents"].items()}
        values = sorted({v for cell in table["cells"] for v in cell["values"]})
        width = table.get("bin_width")
        axes = tuple(Axis(p, bins=tuple(g)) if "ranges" in table["parents"][p]
                     else Axis(p, values=tuple(g)) for p, g in groups.items())
        axes += (Axis(table["child"], bins=tuple((v, v + width - 1) for v in values))
                 if width else Axis(table["child"], values=tuple(values)),)
        where = {v: k for k, v in enumerate(values)}
        counts = [0.0] * math.prod(a.size for a in axes)
        for cell in table["cells"]:
            at = 0
            for p, g in groups.items():
                given = cell["given"][p]
                at = at * len(g) + g.index(tuple(given) if isinstance(given, list) else given)
            for v, c in zip(cell["values"], cell["counts"], strict=True):
                counts[at * len(values) + where[v]] += c
        total = math.fsum(counts)
        out.append(Fact(i, "shares", str(doc.get("about", "")), 0.0, name, axes,
                        tuple(c / total for c in counts)))
    return tuple(out)


def parse_facts(doc: Mapping[str, Any]) -> tuple[Fact, ...]:
    """The list form's facts, each checked for shape (no spec needed)."""
    if doc.get("format") != LIST_FORMAT:
        raise FactsError(f"FACTS: format must be {LIST_FORMAT!r} (or the table form "
                         f"{TABLE_FORMAT!r}), got {doc.get('format')!r}")
    if doc.get("format_version") != LIST_VERSION:
        raise FactsError(f"FACTS: unsupported format_version {doc.get('format_version')!r}")
    items = doc.get("facts")
    if not isinstance(items, list) or not items:
        raise FactsError("FACTS: 'facts' must be a non-empty list")
    facts = [_fact(i, item) for i, item in enumerate(items)]
    ids = [f.id for f in facts if f.id]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise FactsError(f"FACTS: fact ids must be unique, repeated: {dup}")
    return tuple(facts)


def _fact(i: int, item: Any) -> Fact:
    """One fact of the list form."""
    where = f"facts[{i}]"
    if not isinstance(item, dict):
        raise FactsError(f"{where}: must be an object")
    if item.get("id"):
        where += f" ({item['id']})"
    kind = item.get("kind")
    if kind not in KINDS:
        raise FactsError(f"{where}.kind: must be one of {list(KINDS)}, got {kind!r}")
    source = item.get("source")
    if not isinstance(source, str) or not source.strip():
        raise FactsError(f"{where}.source: every fact names its source (a table, a URL, a "
                         "DP pilot)")
    rounding = _positive(item.get("rounding"), f"{where}.rounding")
    base = {"index": i, "kind": kind, "source": source, "rounding": rounding,
            "id": str(item.get("id", "")), "noise": item.get("noise")}
    if kind == "shares":
        axes = _axes(item.get("axes"), where)
        values, unit = _cells(item, axes, where)
        total = math.fsum(values)
        if total <= 0:
            raise FactsError(f"{where}: its {unit} add up to {total:g}; nothing to fit")
        if unit == "shares" and abs(total - 1.0) > 0.5 * rounding * len(values) + 1e-9:
            raise FactsError(f"{where}.shares: add up to {total:.6g}, not 1 within their "
                             f"rounding ({rounding:g} each)")
        return Fact(**base, axes=axes, shares=tuple(v / total for v in values),
                    share_rounding=rounding if unit == "shares" else rounding / total)
    column = item.get("column")
    if not isinstance(column, str) or not column:
        raise FactsError(f"{where}.column: name the column")
    key = "count" if kind == "out_of_domain" else "value"
    value = item.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise FactsError(f"{where}.{key}: must be a number")
    if kind == "missing_rate" and not 0 <= value < 1:
        raise FactsError(f"{where}.value: a missing rate lies in [0, 1)")
    if kind == "out_of_domain" and value < 0:
        raise FactsError(f"{where}.count: must be >= 0")
    return Fact(**base, column=column, value=float(value), share_rounding=rounding)


def _positive(x: Any, where: str) -> float:
    """The stated rounding: a finite number > 0 (0.001 for shares in tenths of a percent)."""
    if isinstance(x, bool) or not isinstance(x, int | float) or not (math.isfinite(x) and x > 0):
        raise FactsError(f"{where}: state the rounding of the published numbers (> 0, e.g. "
                         "0.001 for shares given to 0.1%)")
    return float(x)


def _axes(raw: Any, where: str) -> tuple[Axis, ...]:
    """The axes of a table fact: a column each, with its values or its bins."""
    if not isinstance(raw, list) or not raw:
        raise FactsError(f"{where}.axes: a list of one axis per column")
    out = []
    for k, ax in enumerate(raw):
        at = f"{where}.axes[{k}]"
        if not isinstance(ax, dict) or not isinstance(ax.get("column"), str):
            raise FactsError(f"{at}: an object with a 'column'")
        if ("values" in ax) == ("bins" in ax):
            raise FactsError(f"{at}: give either 'values' or 'bins'")
        if "values" in ax:
            vals = ax["values"]
            if not isinstance(vals, list) or not vals or len({json.dumps(v) for v in vals}) \
                    != len(vals):
                raise FactsError(f"{at}.values: a non-empty list of distinct values")
            out.append(Axis(ax["column"], values=tuple(vals)))
        else:
            out.append(Axis(ax["column"], bins=_bins(ax["bins"], f"{at}.bins")))
    names = [a.column for a in out]
    if len(set(names)) != len(names):
        raise FactsError(f"{where}.axes: a column appears twice")
    return tuple(out)


def _bins(raw: Any, where: str) -> tuple[tuple[float, float], ...]:
    """Bins [lo, hi], increasing and not overlapping."""
    if not isinstance(raw, list) or not raw:
        raise FactsError(f"{where}: a non-empty list of [low, high] pairs")
    bins = []
    for b in raw:
        ok = (isinstance(b, list) and len(b) == 2
              and all(isinstance(x, int | float) and not isinstance(x, bool) for x in b))
        if not ok or not b[0] <= b[1]:
            raise FactsError(f"{where}: each bin is [low, high] with low <= high, got {b!r}")
        bins.append((float(b[0]), float(b[1])))
    for (_, hi), (lo, _) in itertools.pairwise(bins):
        if lo < hi:
            raise FactsError(f"{where}: bins must increase without overlapping")
    return tuple(bins)


def _cells(item: Mapping[str, Any], axes: Sequence[Axis], where: str) -> tuple[list[float], str]:
    """The table's numbers flattened row-major, checked against the axes' sizes."""
    unit = "shares" if "shares" in item else "counts" if "counts" in item else None
    if unit is None:
        raise FactsError(f"{where}: give 'shares' or 'counts'")
    flat: list[float] = []

    def walk(node: Any, depth: int, at: str) -> None:
        size = axes[depth].size
        if not isinstance(node, list) or len(node) != size:
            raise FactsError(f"{at}: expected a list of {size} (axis {axes[depth].column!r})")
        for j, x in enumerate(node):
            if depth + 1 < len(axes):
                walk(x, depth + 1, f"{at}[{j}]")
            elif (isinstance(x, bool) or not isinstance(x, int | float)
                  or not (math.isfinite(x) and x >= 0)):
                raise FactsError(f"{at}[{j}]: must be a number >= 0")
            else:
                flat.append(float(x))

    walk(item[unit], 0, f"{where}.{unit}")
    return flat, unit
