"""The refusal of a model over its limit, with a smaller workload to propose (issue 36):
which columns to drop from the criterion behind the widest table, or which to bin coarser."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.generators.model_size import (
    COPIES,
    Clique,
    ModelLimit,
    ModelSize,
    _sizes,
    junction_tables,
    model_size,
)

if TYPE_CHECKING:
    from workbench.specification import Spec

def _coarser(size: ModelSize, sizes: dict[str, int]) -> str:
    """The widest columns of the widest table, the ones coarser bins help most."""
    clique, _ = size.largest
    widest = sorted(clique, key=lambda c: -sizes.get(c, 0))[:3]
    return ", ".join(f"{c} ({sizes[c]} codes)" for c in widest if c in sizes)


def _cells(items: dict[Clique, tuple[str, ...]], sizes: dict[str, int]) -> int:
    """Cells of the junction tree of these cliques."""
    return sum(c for _, c in junction_tables(sizes, list(items)))


def _drops(items: dict[Clique, tuple[str, ...]], criterion: str, clique: Clique,
           sizes: dict[str, int], limit: ModelLimit) -> tuple[list[str], int]:
    """Drop the widest columns of the widest table from ``criterion``'s cliques, one at a
    time (most codes first, then most cliques), until the model is within the limit: one
    junction tree per drop, so a 25-column proposal takes about a second."""
    def weight(column: str) -> tuple[int, int, str]:
        linked = sum(column in q for q, s in items.items() if criterion in s and len(q) > 1)
        return (-sizes.get(column, 0), -linked, column)

    dropped: list[str] = []
    current = dict(items)
    cells = _cells(current, sizes)
    for column in sorted(clique, key=weight):
        if cells <= limit.cells and cells * 8 * COPIES <= limit.bytes:
            break
        trial = {q: s for q, s in current.items()
                 if not (column in q and criterion in s and len(q) > 1)}
        if trial == current:
            continue
        dropped.append(column)
        current, cells = trial, _cells(trial, sizes)
    return dropped, cells


def advice(spec: Spec, size: ModelSize, limit: ModelLimit) -> str:
    """What to change (the module doc); the words end with a full stop."""
    config = size.configuration
    sizes = _sizes(spec, config) if config is not None else {}
    coarser = _coarser(size, sizes)
    clique, _ = size.largest
    if size.family == "privbayes":
        return (f"Declare schema.expected_n (with θ, PrivBayes's tables are then bounded by "
                f"n·ε/(d·θ)), or set a smaller degree or max_cells, or coarser bins (widest: "
                f"{coarser}).")
    if size.family != "workload" or not size.sources:
        return (f"Use fewer columns or coarser bins (widest: {coarser}), or a generator "
                "setting with smaller tables (privbayes: a smaller degree or max_cells).")
    behind: dict[str, int] = {}
    for q, srcs in size.sources.items():
        if len(q) > 1 and set(q) <= set(clique):
            for s in srcs:
                behind[s] = behind.get(s, 0) + len(q)
    if not behind:
        return f"Use coarser bins for {coarser}."
    criterion = max(behind, key=lambda s: (behind[s], s))
    dropped, cells = _drops(dict(size.sources), criterion, clique, sizes, limit)
    named = ", ".join(sorted(behind))
    text = (f"The widest table comes from criteria {named}; criterion {criterion!r} links "
            "the most columns in it.")
    order = list(sizes)
    kept = [c for c in clique if c not in dropped]
    dropped = sorted(dropped, key=order.index)
    if dropped and cells <= limit.cells:
        text += (f" A smaller workload: let {criterion!r} link only {', '.join(kept)} "
                 f"(drop {', '.join(dropped)} from it; with a kind over every column, name "
                 f"the columns with one that takes a list; the model would be {cells:,} "
                 "cells),")
    else:
        text += f" Split criterion {criterion!r} into narrower ones,"
    return text + f" or use coarser bins for {coarser}."


def size_refusal(spec: Spec, size: ModelSize | None = None) -> str | None:
    """Why the spec's model is too large to fit (naming the table, the criteria behind it and
    a smaller workload), or None when it is within ``generator.model_limit``."""
    size = size or model_size(spec)
    limit = ModelLimit.of(spec)
    if not size.over(limit):
        return None
    return (f"generator.model_limit: the model is too large to fit; {size.words(limit)}. "
            f"{advice(spec, size, limit)} Nothing was fitted or spent; raise "
            "generator.model_limit only on a machine with the memory for it")


class ModelTooLarge(ValueError):
    """A design whose model is above ``generator.model_limit`` (refused before any fit)."""


def check_model_size(spec: Spec) -> ModelSize:
    """The spec's model size; ModelTooLarge (a ValueError, exit 2) above its limit."""
    size = model_size(spec)
    problem = size_refusal(spec, size)
    if problem:
        raise ModelTooLarge(problem)
    return size
