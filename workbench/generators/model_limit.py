"""The declared model-size limit and the junction tree's tables, from public sizes alone.

Read by the size guard (:mod:`workbench.generators.model_size`, from the spec) and by the
workload's structure rounds (:mod:`workbench.generators.structure_selection`, at fit time):
both must measure a model the same way, and neither may import the other's callers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.specification import Spec

Clique = tuple[str, ...]

#: float64 tables the mirror-descent fit holds at once per model cell (potentials, beliefs, the
#: gradient and the line search's previous step: :mod:`workbench.generators.model_size`).
COPIES = 4
#: Default limit on the model's cells: at 2e7 a fit of 3,000 mirror-descent steps takes a few
#: minutes on one core and 2e7 × 8 B × 4 copies = 640 MB, so two runs fit on a 2-core, 4 GB
#: machine; the issue's stuck designs were at 1e8 cells and beyond. Every shipped example is
#: below it, the largest (PrivBayes without expected_n) by 3 times (tests/test_model_size.py).
DEFAULT_CELLS = 20_000_000
#: Default limit on the model's memory, 2 GiB (the cells limit binds first at COPIES = 4).
DEFAULT_BYTES = 2 * 1024**3


@dataclass(frozen=True)
class ModelLimit:
    """The declared limit (``generator.model_limit``: ``cells`` and/or ``bytes``)."""

    cells: int = DEFAULT_CELLS
    bytes: int = DEFAULT_BYTES

    @classmethod
    def of(cls, spec: Spec) -> ModelLimit:
        """The spec's limit, defaults for what it does not declare."""
        raw = spec.document.get("generator", {}).get("model_limit") or {}
        return cls(int(raw.get("cells", DEFAULT_CELLS)), int(raw.get("bytes", DEFAULT_BYTES)))



def cap_cells(limit: ModelLimit) -> int:
    """The most cells a model may have under both halves of the limit."""
    return int(min(limit.cells, limit.bytes // (8 * COPIES)))



def junction_tables(sizes: Mapping[str, int],
                    cliques: Sequence[Clique]) -> list[tuple[Clique, int]]:
    """The maximal cliques of the junction tree over ``cliques`` and their cells, largest first.

    mbi's own construction (``mbi.junction_tree.greedy_order``, then triangulation): eliminate
    the column whose closed neighbourhood has the fewest cells (first in column order on a
    tie), join its neighbours, and keep each {column} ∪ neighbours; the maximal ones are the
    junction tree's tables. Written on the graph here so that the estimate neither imports
    JAX nor waits on a 79-column schema (tests compare it with mbi's
    ``hypothetical_model_size``).
    """
    names = list(sizes)
    near: dict[str, set[str]] = {n: set() for n in names}
    for q in cliques:
        for a in q:
            near[a].update(b for b in q if b != a)
    formed: list[frozenset[str]] = []
    left = list(names)
    while left:
        column = min(left, key=lambda a: math.prod(int(sizes[b]) for b in near[a] | {a}))
        around = near.pop(column)
        formed.append(frozenset(around | {column}))
        for a in around:
            near[a].discard(column)
            near[a].update(around - {a})
        left.remove(column)
    maximal = {t for t in formed if not any(t < u for u in formed)}
    order = {n: i for i, n in enumerate(names)}
    tables = [(tuple(sorted(t, key=order.__getitem__)), math.prod(int(sizes[c]) for c in t))
              for t in maximal]
    return sorted(tables, key=lambda t: (-t[1], [order[c] for c in t[0]]))
