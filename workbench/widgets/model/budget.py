"""Budget arithmetic of a draft: ε_total by the accountant's formula, locked-total rebalancing.

ε_total = 2·(ε_gen + Σ in-loop criterion ε) + ε₀ + Σ once-criterion ε (Thm. 3, §4.14.1),
computed by :class:`workbench.privacy.budget_plan.BudgetPlan`, the one budget plan. Each
ε therefore has a *weight* in the total: 2 inside the selection loop (1 for a single attempt,
``selection.max_iterations = 1``), 1 outside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.privacy import loop_factor
from workbench.privacy.budget_plan import BudgetPlan

GENERATOR_KEY = "generator"
GENERATOR_PATH = "budget.epsilon_generator"


@dataclass(frozen=True)
class BudgetItem:
    """One ε the planner can move: where it lives in the draft and its weight in ε_total."""

    key: str
    path: str
    epsilon: float
    weight: float
    label: str
    in_loop: bool = True


def _number(value: Any) -> float | None:
    """A finite float, or None for anything else (drafts may be invalid)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def budget_items(document: Mapping[str, Any]) -> list[BudgetItem]:
    """The generator's ε and every criterion ε > 0, with weights 2 (in the loop) or 1 (once)."""
    items: list[BudgetItem] = []
    loop = float(loop_factor(max_iterations(document)))
    eps_gen = _number(document.get("budget", {}).get("epsilon_generator"))
    if eps_gen is not None:
        items.append(BudgetItem(GENERATOR_KEY, GENERATOR_PATH, eps_gen, loop, "generator"))
    for i, crit in enumerate(document.get("criteria", [])):
        if not isinstance(crit, Mapping):
            continue
        eps = _number(crit.get("epsilon", 0.0))
        if eps is None or eps <= 0:
            continue
        once = bool(crit.get("once", False))
        cid = str(crit.get("id", f"criterion {i}"))
        items.append(BudgetItem(cid, f"criteria[{i}].epsilon", eps, 1.0 if once else loop,
                                f"{cid} (once)" if once else cid, not once))
    return items


def max_iterations(document: Mapping[str, Any]) -> int | None:
    """The selection cap T of a draft (None = no cap, also when malformed)."""
    value = document.get("selection", {}).get("max_iterations")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def epsilon_0(document: Mapping[str, Any]) -> float:
    """ε₀ of private selection (0 when absent or malformed)."""
    value = _number(document.get("selection", {}).get("epsilon_0", 0.0))
    return value if value is not None and value >= 0 else 0.0


def epsilon_total(document: Mapping[str, Any]) -> float | None:
    """ε_total of a draft by the one budget plan; None if the ε's are not usable numbers.

    >>> doc = {"budget": {"epsilon_generator": 4}, "criteria": [{"id": "a", "epsilon": 0.99}]}
    >>> round(epsilon_total(doc), 12)
    9.98
    """
    plan = BudgetPlan.of_document(document)
    return None if plan is None else plan.epsilon_total


def segments(document: Mapping[str, Any]) -> list[tuple[str, float]]:
    """What each part contributes to ε_total (weight × ε, then ε₀), for the stacked bar."""
    out = [(f"{it.weight:g}×{it.label}" if it.weight != 1 else it.label, it.weight * it.epsilon)
           for it in budget_items(document)]
    e0 = epsilon_0(document)
    if e0 > 0:
        out.append(("ε₀", e0))
    return out


def rebalance(
    items: Sequence[BudgetItem], key: str, value: float, total: float, eps0: float = 0.0
) -> dict[str, float]:
    """New ε per path so that ``key`` gets ``value`` and ε_total stays ``total``.

    The other items are scaled by one common factor f (proportional rebalancing):
    w_k·value + f·Σ_{j≠k} w_j·ε_j + ε₀ = total. Raises ValueError when no f > 0 exists.

    >>> items = [BudgetItem("g", "g", 4.0, 2.0, "g"), BudgetItem("c", "c", 1.0, 2.0, "c")]
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
    out = {it.path: it.epsilon * factor for it in others}
    out[target.path] = float(value)
    return out


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
