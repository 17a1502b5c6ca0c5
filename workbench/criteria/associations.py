"""Exposure–outcome tables for the association criterion kinds (issue 36).

A **level set** names the values of a column that count as "yes" (exposed, or the outcome
present): a list of domain values (``["yes"]``, ``[1, 2]``) or, for a numeric column, one
cut ``{"below": x}`` / ``{"at_least": x}`` (e.g. birth weight below 2500 g). Under a
configuration's codec each code is then 1 (yes), 0 (no) or −1 (left out: the missing code of an
``allow`` or ``category`` column — rows with a missing exposure, group or outcome are excluded
from every table here). A code that holds values on both sides (a bin straddling the cut, a
group mixing listed and unlisted values) is refused, naming the column, because its rows
cannot be counted on either side.

Everything reads the public codecs and the code matrices (or their paired cells); the tables
are confidential until the kind hands them to the privacy layer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.specification.params import is_number
from workbench.transform.missing import MissingCodec

if TYPE_CHECKING:
    from workbench.criteria.kinds.checks import CheckContext
    from workbench.transform import TableCodec
    from workbench.transform.cells import PairedCells

#: Default c added to every cell before a ratio (Haldane–Anscombe): finite logs for empty cells.
SMOOTHING = 0.5
CUTS = ("below", "at_least")


def yes_codes(table: TableCodec, column: str, levels: Any) -> np.ndarray:
    """Per code of ``column``: 1 (in the level set), 0 (not), −1 (missing: left out)."""
    codec = table.codec(column)
    size = codec.size
    out = np.zeros(size, dtype=np.int64)
    base_size = size
    if isinstance(codec, MissingCodec):
        out[codec.missing_code] = -1
        base_size = codec.missing_code
    if isinstance(levels, Mapping):
        (cut, x), = levels.items()
        bounds = codec.intervals()
        if bounds is None:
            raise ValueError(f"column {column!r}: a cut '{cut}' needs a numeric column")
        lo, hi = bounds
        for code in range(base_size):
            below = hi[code] < x
            if not below and lo[code] < x:
                raise ValueError(f"column {column!r}: a bin of this configuration holds values "
                                 f"on both sides of {x:g}; put {x:g} at a bin edge")
            out[code] = int(below) if cut == "below" else int(not below)
        return out
    wanted = {str(v) for v in levels}
    cats = codec.categories()
    if cats is None:  # numeric identity or bins: compare the inclusive intervals
        lo, hi = codec.intervals()
        numbers = {float(v) for v in levels if is_number(v)}
        for code in range(base_size):
            inside = lo[code] == hi[code] and float(lo[code]) in numbers
            if not inside and any(lo[code] <= v <= hi[code] for v in numbers):
                raise ValueError(f"column {column!r}: a bin of this configuration mixes listed "
                                 "and unlisted values; list whole bins or use an identity "
                                 "transformation")
            out[code] = int(inside)
        return out
    for code in range(base_size):
        members = {str(v) for v in cats[code]}
        hit = members & wanted
        if hit and hit != members:
            raise ValueError(f"column {column!r}: a group of this configuration mixes listed "
                             "and unlisted values; list whole groups")
        out[code] = int(bool(hit))
    return out


def cell_flags(pc: PairedCells, table: TableCodec, column: str, levels: Any) -> np.ndarray:
    """The 1/0/−1 flag of every paired cell for ``column``'s level set."""
    return yes_codes(table, column, levels)[pc.column(column)]


def two_by_two(pc: PairedCells, table: TableCodec, params: Mapping[str, Any]
               ) -> tuple[np.ndarray, np.ndarray]:
    """(R's, S's) exposure × outcome counts, shape (2, 2): [exposed yes/no, outcome yes/no],
    row 0 the exposed, column 0 the outcome present; rows with either missing left out."""
    e = cell_flags(pc, table, str(params["exposure"]), params["exposed"])
    o = cell_flags(pc, table, str(params["outcome"]), params["positive"])
    keep = (e >= 0) & (o >= 0)
    keys = (1 - e[keep]) * 2 + (1 - o[keep])
    return tuple(np.bincount(keys, weights=pc.counts(w)[keep], minlength=4).reshape(2, 2)
                 for w in ("real", "synth"))  # type: ignore[return-value]


def group_keys(pc: PairedCells, table: TableCodec, groups: Sequence[str], outcome: str,
               positive: Any) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """(kept cells' mask, their flat group index, the groups' sizes): a group is a combination
    of ``groups``' codes; cells with a missing group or outcome value are not kept."""
    o = cell_flags(pc, table, outcome, positive)
    keep = o >= 0
    for g in groups:
        codec = table.codec(g)
        if isinstance(codec, MissingCodec):
            keep &= pc.column(g) != codec.missing_code
    sizes = [table.codec(g).size for g in groups]
    flat = np.ravel_multi_index(tuple(pc.column(g) for g in groups), sizes)
    return keep, flat, sizes


def group_table(pc: PairedCells, table: TableCodec, groups: Sequence[str], outcome: str,
                positive: Any, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R's, S's) counts by group × outcome [yes, no], shape (len(keys), 2), over the PUBLIC
    group ``keys`` (flat indices into ``groups``' codes, sorted: from the domain or from S,
    never from R); rows with a missing value, or in another group, are left out."""
    o = cell_flags(pc, table, outcome, positive)
    keep, flat, _ = group_keys(pc, table, groups, outcome, positive)
    keys = np.asarray(keys, dtype=np.int64)
    pos = np.searchsorted(keys, flat)
    found = pos < len(keys)
    found[found] = keys[pos[found]] == flat[found]
    keep &= found
    index = pos[keep] * 2 + (1 - o[keep])
    size = 2 * len(keys)
    return tuple(np.bincount(index, weights=pc.counts(w)[keep], minlength=size).reshape(-1, 2)
                 for w in ("real", "synth"))  # type: ignore[return-value]


def domain_keys(table: TableCodec, groups: Sequence[str]) -> np.ndarray:
    """Every combination of ``groups``' codes but the missing ones (public: the codecs)."""
    sizes = [table.codec(g).size for g in groups]
    grid = np.indices(sizes).reshape(len(sizes), -1)
    ok = np.ones(grid.shape[1], dtype=bool)
    for j, g in enumerate(groups):
        codec = table.codec(g)
        if isinstance(codec, MissingCodec):
            ok &= grid[j] != codec.missing_code
    return np.ravel_multi_index(tuple(grid[:, ok]), sizes)


def rare_keys(pc: PairedCells, table: TableCodec, groups: Sequence[str], outcome: str,
              positive: Any, max_size: int) -> np.ndarray:
    """The cells (combinations of ``groups``) that hold 1..``max_size`` rows of S with the
    outcome known: chosen from the public candidate S alone, so R's table over them has fixed
    cells."""
    keep, flat, sizes = group_keys(pc, table, groups, outcome, positive)
    s = np.bincount(flat[keep], weights=pc.counts("synth")[keep], minlength=math.prod(sizes))
    return np.flatnonzero((s >= 1) & (s <= max_size))


def rates(t: np.ndarray, c: float) -> np.ndarray:
    """Outcome rate per row of a (k, 2) [yes, no] table, negative (noisy) counts clipped to 0
    and ``c`` added to both sides: (yes + c)/(yes + no + 2c), a rate in (0, 1) for c > 0."""
    m = np.clip(np.asarray(t, dtype=np.float64), 0.0, None)
    total = m.sum(axis=1) + 2 * c
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (m[:, 0] + c) / total
    return np.where(total > 0, out, 0.0)


def measure(t: np.ndarray, kind: str, c: float) -> float:
    """log RR, log OR or RD of a 2×2 [exposed, unexposed] × [yes, no] table (smoothed by c)."""
    m = np.clip(np.asarray(t, dtype=np.float64), 0.0, None) + c
    if kind == "odds_ratio":
        if min(m.ravel()) <= 0:
            return 0.0
        return math.log(m[0, 0] * m[1, 1] / (m[0, 1] * m[1, 0]))
    r = rates(t, c)
    if kind == "risk_difference":
        return float(r[0] - r[1])
    if min(r) <= 0:
        return 0.0
    return math.log(r[0] / r[1])


def check_levels(ctx: CheckContext, path: str, column: Any, levels: Any) -> None:
    """A level set is a non-empty list of the column's domain values, or one numeric cut."""
    if column not in ctx.columns:
        return  # the column's own check names it
    col = ctx.columns[column]
    if isinstance(levels, Mapping):
        if len(levels) != 1 or next(iter(levels)) not in CUTS:
            ctx.problem(path, "a cut is one of {'below': x} or {'at_least': x}")
        elif not col.numeric:
            ctx.problem(path, f"column {column!r} is not numeric: list its values instead")
        elif not is_number(next(iter(levels.values()))):
            ctx.problem(path, "the cut must be a number")
        return
    if not isinstance(levels, list) or not levels:
        ctx.problem(path, "must be a non-empty list of the column's values, or a cut "
                    "{'below': x} / {'at_least': x}")
        return
    if col.domain is not None:
        known = {str(v) for v in col.domain}
        for j, v in enumerate(levels):
            if str(v) not in known:
                ctx.problem(f"{path}[{j}]", f"{v!r} is not in the domain of {column!r}")
        if known and {str(v) for v in levels} >= known:
            ctx.problem(path, f"lists every value of {column!r}: nothing would be left as 'no'")


def check_column(ctx: CheckContext, path: str, column: Any) -> bool:
    """A known column (its missing values, if any, are left out of the table)."""
    if column not in ctx.columns:
        ctx.unknown_column(path, column)
        return False
    return True


#: The kinds whose params declare an exposure–outcome pair.
PAIR_KINDS = ("relative_risk", "odds_ratio", "risk_difference")


def check_declared_pairs(ctx: CheckContext, pairs: Sequence[Mapping[str, Any]]) -> None:
    """``metadata.associations``: known, distinct columns and valid level sets."""
    for i, pair in enumerate(pairs):
        path = f"metadata.associations[{i}]"
        exposure, outcome = pair.get("exposure"), pair.get("outcome")
        if check_column(ctx, f"{path}.exposure", exposure):
            check_levels(ctx, f"{path}.exposed", exposure, pair.get("exposed"))
        if check_column(ctx, f"{path}.outcome", outcome):
            check_levels(ctx, f"{path}.positive", outcome, pair.get("positive"))
        if exposure == outcome:
            ctx.problem(f"{path}.outcome", "the exposure and the outcome must be different "
                        "columns")


def declared_pairs(spec: Any) -> list[dict[str, Any]]:
    """Every exposure–outcome pair the spec declares: ``metadata.associations`` and the
    params of its relative-risk, odds-ratio and risk-difference criteria (one per
    (exposure, outcome) pair of columns, the first declaration wins), each with ``source``."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    found = [(dict(p), "metadata.associations") for p in spec.metadata.associations]
    found += [({k: c.params[k] for k in ("exposure", "exposed", "outcome", "positive")},
               f"criterion {c.id}") for c in spec.criteria if c.kind in PAIR_KINDS]
    for pair, source in found:
        key = (str(pair["exposure"]), str(pair["outcome"]))
        out.setdefault(key, {**pair, "source": source})
    return list(out.values())


def association_columns(spec: Any) -> list[tuple[str, str]]:
    """The column pairs of every declared association (``declared_pairs`` and each
    rate-by-group criterion's group × outcome), each unordered pair once: the 2-way tables a
    pilot measures by default, since a proxy without them holds these columns independent."""
    found = [(str(p["exposure"]), str(p["outcome"])) for p in declared_pairs(spec)]
    found += [(str(c.params["group"]), str(c.params["outcome"])) for c in spec.criteria
              if c.kind == "rate_by_group"]
    out: list[tuple[str, str]] = []
    for a, b in found:
        if a != b and (a, b) not in out and (b, a) not in out:
            out.append((a, b))
    return out


__all__ = [
    "CUTS",
    "PAIR_KINDS",
    "SMOOTHING",
    "association_columns",
    "cell_flags",
    "check_column",
    "check_declared_pairs",
    "check_levels",
    "declared_pairs",
    "domain_keys",
    "group_keys",
    "group_table",
    "measure",
    "rare_keys",
    "rates",
    "two_by_two",
    "yes_codes",
]
