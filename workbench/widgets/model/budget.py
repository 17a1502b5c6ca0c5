"""Budget arithmetic of the planner: the bar's parts, locked-total rebalancing, nice ε steps.

What a draft implies (ε_gen wherever declared, the items, the plan, the parts of ε_total) is
:mod:`workbench.specification.derived`'s, for drafts and frozen specs alike.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from workbench.specification.derived import BudgetItem, budget_parts


def segments(document: Mapping[str, Any]) -> list[tuple[str, float]]:
    """What each part contributes to ε_total (weight × ε), for the stacked bar: they sum to
    the plan's ε_total (parts that add nothing are left out)."""
    return [(f"{p.weight:g}×{p.label}" if p.weight != 1 else p.label, p.weight * p.epsilon)
            for p in budget_parts(document) if p.epsilon > 0]


def rebalance(
    items: Sequence[BudgetItem], key: str, value: float, total: float, eps0: float = 0.0
) -> dict[str, float]:
    """New ε per declared path so that ``key`` gets ``value`` and ε_total stays ``total``.

    The other items are scaled by one common factor f (proportional rebalancing):
    w_k·value + f·Σ_{j≠k} w_j·ε_j + ε₀ = total. Raises ValueError when no f > 0 exists.

    >>> items = [BudgetItem("g", "g", 4.0, 2.0, declared=(("g", 4.0),)),
    ...          BudgetItem("c", "c", 1.0, 2.0, declared=(("c", 1.0),))]
    >>> rebalance(items, "c", 2.0, 10.0)
    {'g': 3.0, 'c': 2.0}
    """
    target = next((it for it in items if it.key == key), None)
    if target is None:
        raise ValueError(f"no budget item {key!r}")
    if not (math.isfinite(value) and value > 0):
        raise ValueError("ε must be a finite number > 0")
    others = [it for it in items if it.key != key]
    spread = math.fsum(it.weight * it.epsilon for it in others)
    rest = total - eps0 - target.weight * value
    if not others or spread <= 0:
        raise ValueError("nothing else to rebalance: unlock the total to change this ε")
    if rest <= 0:
        limit = (total - eps0) / target.weight
        raise ValueError(
            f"ε_total is locked at {total:g}: {target.label} must stay below {limit:.4g}"
        )
    factor = rest / spread
    out: dict[str, float] = {}
    for it in others:
        out |= it.assign(it.epsilon * factor)
    return out | target.assign(value)


def nice_epsilon(value: float, previous: float | None = None) -> float:
    """ε on a grid of two significant digits; a step that rounds back moves one grid point.

    A log slider's arrow key multiplies ε by 10^0.01 (4 → 4.09, 3.8 → 3.89045): snapping
    keeps the spec readable, and the step in the direction of motion keeps 1.0 from sticking.

    >>> nice_epsilon(3.89045), nice_epsilon(4.093, 4.0), nice_epsilon(1.023, 1.0)
    (3.9, 4.1, 1.1)
    >>> nice_epsilon(0.977, 1.0), nice_epsilon(0.17)
    (0.98, 0.17)
    """
    if not math.isfinite(value) or value <= 0:
        return value
    unit = 10.0 ** (math.floor(math.log10(value)) - 1)
    snapped = round(round(value / unit) * unit, 12)
    if previous is not None and math.isclose(snapped, previous, rel_tol=1e-9):
        if value > previous:
            snapped = round(snapped + unit, 12)
        elif value < previous:
            below = 10.0 ** (math.floor(math.log10(previous * (1 - 1e-9))) - 1)
            snapped = round(snapped - below, 12)
    return snapped
