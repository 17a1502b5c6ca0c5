"""``transformations``: per column, its alternatives (identity, bins, groups, number) and coarse
bins. ``number`` releases an integer or continuous column as a number on the grid of its
declared bounds at ``resolution`` (:class:`~workbench.transform.number.NumberCodec`): no bins.

Each alternative becomes a codec built from public parameters only; a closed binning must
cover the column's declared bounds, and a coarse binning must be a coarsening of every
alternative (so group-bys are the same whatever alternative a configuration picks).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from workbench.specification.errors import join_path
from workbench.specification.model import Alternative, ColumnTransform
from workbench.transform import (
    BinsCodec,
    ColumnSpec,
    GroupsCodec,
    IdentityCodec,
    NumberCodec,
    coarse_lookup,
)
from workbench.transform.missing import with_missing
from workbench.validation.sections.context import BuildContext

FIELD = "transformations"
#: Column types each alternative kind applies to, and the fields it does not take.
APPLIES = {"identity": {"categorical", "ordinal"}, "groups": {"categorical", "ordinal"},
           "bins": {"integer", "continuous", "ordinal"}, "number": {"integer", "continuous"}}
_BIN_FIELDS = {"edges", "open_below", "open_above", "labels", "clip"}
NOT_TAKEN = {"identity": _BIN_FIELDS | {"groups", "resolution"},
             "groups": _BIN_FIELDS | {"resolution"},
             "bins": {"groups", "resolution"},
             "number": _BIN_FIELDS | {"groups"}}


def build(ctx: BuildContext) -> tuple[ColumnTransform, ...]:
    """Every column's alternatives as codecs, in schema order."""
    section = ctx.doc["transformations"]["columns"]
    for name in section:
        if name not in ctx.columns:
            ctx.unknown_column(f"transformations.columns.{name}", name)
    out = []
    for col in ctx.columns.values():
        path = f"transformations.columns.{col.name}"
        if col.name not in section:
            ctx.problem("transformations.columns", f"column {col.name!r} has no transformation")
            continue
        entry = section[col.name]
        alts = []
        names: set[str] = set()
        for j, raw in enumerate(entry["alternatives"]):
            apath = f"{path}.alternatives[{j}]"
            if raw["name"] in names:
                ctx.problem(join_path(apath, "name"), f"duplicate alternative name {raw['name']!r}")
            names.add(raw["name"])
            codec = _codec(ctx, col, raw, apath)
            if codec is not None:
                alts.append(Alternative(raw["name"], raw["kind"], with_missing(codec, col)))
        coarse = None
        if "coarse" in entry:
            coarse = _coarse(ctx, entry["coarse"], alts, f"{path}.coarse")
        out.append(ColumnTransform(col.name, tuple(alts), coarse))
    return tuple(out)


def _problem_from(ctx: BuildContext, path: str, exc: ValueError) -> None:
    """A codec's ValueError 'field: message' as a problem at that field."""
    field, _, msg = str(exc).partition(": ")
    ctx.problem(join_path(path, field) if msg else path, msg or str(exc))


def _codec(ctx: BuildContext, col: ColumnSpec, raw: Mapping[str, Any], path: str) -> Any:
    """One alternative's codec, or None after recording why it cannot be built."""
    kind = raw["kind"]
    if col.type not in APPLIES[kind]:
        ctx.problem(join_path(path, "kind"), f"'{kind}' does not apply to a {col.type} column")
        return None
    extra = NOT_TAKEN[kind] & set(raw)
    if extra:
        ctx.problem(path, f"fields {sorted(extra)} do not apply to kind '{kind}'")
    try:
        if kind == "identity":
            return IdentityCodec(tuple(col.domain or ()))
        if kind == "groups":
            return _groups(ctx, col, raw, path)
        if kind == "number":
            return _number(ctx, col, raw, path)
        if col.type == "ordinal" and not col.numeric:
            ctx.problem(join_path(path, "kind"), "'bins' needs numeric values")
            return None
        if "edges" not in raw:
            ctx.problem(path, "'bins' needs 'edges'")
            return None
        codec = BinsCodec(
            tuple(raw["edges"]),
            integer=col.type != "continuous",
            open_below=raw.get("open_below", True),
            open_above=raw.get("open_above", True),
            labels=tuple(raw.get("labels", ())),
            clip=tuple(raw["clip"]) if "clip" in raw else None,  # type: ignore[arg-type]
        )
    except ValueError as exc:
        _problem_from(ctx, path, exc)
        return None
    _check_cover(ctx, col, codec, path)
    return codec


def _number(ctx: BuildContext, col: ColumnSpec, raw: Mapping[str, Any],
            path: str) -> NumberCodec | None:
    """A number codec on the declared bounds (whole steps for an integer column)."""
    if col.bounds is None:
        return None  # the column section already reported the missing bounds
    resolution = float(raw.get("resolution", 1.0))
    if col.type == "integer" and not resolution.is_integer():
        ctx.problem(join_path(path, "resolution"), "an integer column needs a whole resolution")
        return None
    return NumberCodec(col.bounds[0], col.bounds[1], resolution)


def _groups(ctx: BuildContext, col: ColumnSpec, raw: Mapping[str, Any],
            path: str) -> GroupsCodec | None:
    """A groups codec: every domain value in exactly the listed groups."""
    groups = raw.get("groups")
    if not groups:
        ctx.problem(path, "'groups' needs a 'groups' mapping of label -> values")
        return None
    domain = {json.dumps(v) for v in col.domain or ()}
    members = [json.dumps(m) for ms in groups.values() for m in ms]
    for m in members:
        if m not in domain:
            ctx.problem(join_path(path, "groups"), f"value {m} is not in the column's domain")
    if domain - set(members):
        ctx.problem(join_path(path, "groups"), "every domain value must belong to a group")
    return GroupsCodec(tuple((k, tuple(v)) for k, v in groups.items()))


def _check_cover(ctx: BuildContext, col: ColumnSpec, codec: BinsCodec, path: str) -> None:
    """Closed ends must cover the declared bounds, or valid values would have no bin."""
    if col.type == "ordinal":
        lo, hi = float(min(col.domain or [0])), float(max(col.domain or [0]))
    elif col.bounds is not None:
        lo, hi = col.bounds
    else:
        return
    if codec.clip is not None:
        lo, hi = max(lo, codec.clip[0]), min(hi, codec.clip[1])
    if not codec.open_below and codec.edges[0] > lo:
        ctx.problem(
            join_path(path, "edges"),
            f"first edge {codec.edges[0]:g} is above the lowest allowed value {lo:g} "
            "and the binning is closed below",
        )
    top_ok = codec.edges[-1] > hi  # bins are [a, b): the top value needs an edge above it
    if not codec.open_above and not top_ok:
        ctx.problem(
            join_path(path, "edges"),
            f"last edge {codec.edges[-1]:g} does not exceed the highest allowed value "
            f"{hi:g} and the binning is closed above",
        )


def _coarse(ctx: BuildContext, raw: Mapping[str, Any], alts: list[Alternative],
            path: str) -> BinsCodec | None:
    """The coarse binning of group-bys, checked to coarsen every alternative."""
    try:
        coarse = BinsCodec(
            tuple(raw["edges"]),
            integer=False,
            open_below=raw.get("open_below", True),
            open_above=raw.get("open_above", True),
            labels=tuple(raw.get("labels", ())),
        )
    except ValueError as exc:
        _problem_from(ctx, path, exc)
        return None
    for alt in alts:
        try:
            coarse_lookup(getattr(alt.codec, "base", alt.codec), coarse)
        except ValueError as exc:
            ctx.problem(path, f"alternative {alt.name!r}: {exc}")
    return coarse
