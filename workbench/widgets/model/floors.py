"""Feasibility floors as the co-design editors and the spec review word them (issue 15).

The numbers and the "infeasible at n" flag are :class:`workbench.dryrun.floors.FloorTable`'s
(an ideal generator: a bootstrap of the PUBLIC proxy at n through the synthetic rules and the
min_count projection, mean ± SD over a few draws); this module only says which parts of a
spec a floor reads (the lab's cache key) and how a floor reads beside its threshold.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from workbench.criteria import kinds
from workbench.criteria.kinds.base import ShareKind
from workbench.dryrun.floors import Floor
from workbench.specification import Spec

#: The flag's words, shown beside a threshold ≤ floor + SD.
INFEASIBLE = "infeasible at n"

#: The warning beside a criterion an independent-marginals release passes (issue 28).
UNPROTECTIVE = "does not protect utility"

#: Why, in a tooltip or note.
TRIVIAL_WHY = ("an independent-marginals release of the proxy at n (every column drawn on its "
               "own, no relation between columns) passes this criterion, so passing it says "
               "nothing about the relations the release should keep")

#: Draws the editors average (three bootstraps: ~0.7 s on the 166k proxy, cached by the lab).
FLOOR_DRAWS = 3

#: Top-level spec sections a floor never reads: the ideal generator has no hyperparameters
#: and no ε, and selection only decides how often one iterates.
_NOT_READ = ("metadata", "generator", "selection", "frozen")


def floor_inputs(document: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of a spec document a floor may depend on (the rest is left out of its cache
    key, so editing ε_gen or the selection does not recompute the floors)."""
    doc = {k: v for k, v in document.items() if k not in _NOT_READ}
    doc["budget"] = {k: v for k, v in dict(document.get("budget", {})).items()
                     if k != "epsilon_generator"}
    return doc


def is_share(kind: str) -> bool:
    """Whether a kind's value is a share of n in [0, 1]."""
    try:
        return isinstance(kinds.get(kind), ShareKind)
    except ValueError:
        return False


def floor_value(floor: Floor, *, share: bool = False) -> str:
    """The floor in its threshold's own unit, ± its SD: ``1.12 ± 0.036``; a share of n too
    (its threshold is a fraction such as 0.05, so the floor is one, never a percent).

    >>> floor_value(Floor("faithfulness", 0.05, 0.0399, 0.0006, 3), share=True)
    '0.0399 ± 0.0006'
    >>> floor_value(Floor("coef", 1.68, 1.12, 0.036, 3))
    '1.12 ± 0.036'
    """
    if math.isnan(floor.mean):
        return "unknown"
    sd = "?" if math.isnan(floor.sd) else f"{floor.sd:.2g}"
    return f"{floor.mean:.3g} ± {sd}"


def against(floor: Floor, threshold: float | None) -> str:
    """``against T′ = 1.68`` when the kind lowers the threshold the flag compares with."""
    if threshold is None or math.isclose(floor.threshold, threshold, rel_tol=1e-9):
        return ""
    return f"against T′ = {floor.threshold:.4g}"


def floor_words(floor: Floor, n: int, *, share: bool = False,
                threshold: float | None = None) -> str:
    """How a floor reads beside its threshold.

    >>> floor_words(Floor("faithfulness", 0.05, 0.0399, 0.0006, 3), 95_000, share=True)
    'floor 0.0399 ± 0.0006 at n = 95,000'
    >>> floor_words(Floor("coef", 1.68, 1.12, 0.036, 3), 95_000, threshold=2.0)
    'floor 1.12 ± 0.036 at n = 95,000 (against T′ = 1.68)'
    """
    text = f"floor {floor_value(floor, share=share)} at n = {n:,}"
    lowered = against(floor, threshold)
    return f"{text} ({lowered})" if lowered else text


def size_words(spec: Spec, n: int) -> str:
    """Where the floors' n comes from (the low end of ``schema.expected_n``, else the proxy)."""
    expected = spec.expected_n
    if expected is None:
        return (f"n = {n:,}: the proxy's size after cleaning (schema.expected_n is not set; "
                "set it to the registry's expected size)")
    if expected.is_range:
        return f"n = {n:,}: the low end of schema.expected_n ({expected.label()})"
    return f"n = {n:,}: schema.expected_n"


def trivial_value(floor: Floor) -> str:
    """The trivial generator's value beside the floor ("" when it was not computed).

    >>> trivial_value(Floor("m", 0.3, 0.01, 0.001, 3, trivial=0.02, trivial_passes=True))
    'independent-marginals release 0.02'
    """
    return "" if math.isnan(floor.trivial) else f"independent-marginals release {floor.trivial:.3g}"
