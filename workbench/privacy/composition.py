"""Composition arithmetic, pure and below everything that measures: basic and parallel.

* basic composition (:func:`compose`): earlier spend + once-statistics + the selection loop;
* parallel composition (McSherry 2009, Thm 4; :mod:`workbench.privacy.parallel` runs the
  blocks): measurements on disjoint parts cost max over parts of Σ ε in the part
  (:func:`charged_epsilon` prices a ledger, :class:`ParallelTracker` is the accountant's view);
* :func:`price_ledger`: what every run in a ledger spent.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.privacy.records import MeasurementRecord


def compose(selection: float, once: float = 0.0, prior: float = 0.0) -> float:
    """ε committed by basic composition: earlier spend + once-statistics + the selection loop."""
    return math.fsum((prior, once, selection))


def charged_epsilon(entries: Iterable[Mapping[str, Any]]) -> float:
    """ε of measurements (ledger lines or record dicts): Σ of ungrouped ε plus, per parallel
    group, max over its parts of Σ ε in the part.

    >>> charged_epsilon([{"epsilon": 0.5}, {"epsilon": 1, "group": "g", "part": "T"},
    ...                  {"epsilon": 1, "group": "g", "part": "P"}])
    1.5
    """
    plain: list[float] = []
    groups: dict[tuple[str, str, str], dict[str, list[float]]] = {}
    for e in entries:
        group = e.get("group")
        if group is None:
            plain.append(float(e["epsilon"]))
        else:  # a group is named within its stage and iteration
            key = (str(e.get("stage")), str(e.get("iteration")), str(group))
            groups.setdefault(key, {}).setdefault(str(e.get("part")), []).append(
                float(e["epsilon"]))
    maxima = [max(math.fsum(v) for v in parts.values()) for parts in groups.values()]
    return math.fsum(plain + maxima)


class ParallelTracker:
    """The accountant's view: how much more a grouped measurement costs (the max's increase)."""

    def __init__(self) -> None:
        self._sums: dict[tuple[str, int | None, str], dict[str, float]] = {}

    def increment(self, record: MeasurementRecord) -> float:
        """ε the accountant must charge for ``record`` (its ε if ungrouped), without keeping it."""
        if record.group is None:
            return record.epsilon
        parts = self._sums.get((record.stage, record.iteration, record.group), {})
        before = max(parts.values(), default=0.0)
        after = max(before, parts.get(str(record.part), 0.0) + record.epsilon)
        return after - before

    def add(self, record: MeasurementRecord) -> None:
        """Keep an accepted grouped record."""
        if record.group is not None:
            parts = self._sums.setdefault((record.stage, record.iteration, record.group), {})
            parts[str(record.part)] = parts.get(str(record.part), 0.0) + record.epsilon


def price_ledger(entries: Iterable[Mapping[str, Any]]) -> float:
    """ε spent by every run in a ledger: per run Σ once + (f·ε₁ + ε₀ if it made any loop line).

    A run with loop lines but no plan line cannot be priced (the realised loop spend is not a
    valid bound, since the stopping time depends on the data), so it raises ValueError.
    """
    once: dict[str, list[float]] = {}
    looped: set[str] = set()
    plans: dict[str, float] = {}
    for entry in entries:
        run = str(entry.get("run_id"))
        if entry.get("event") == "selection_plan":
            plans[run] = float(entry["epsilon_selection"])
        elif entry.get("event") == "measurement":
            if entry.get("stage") == "once":
                once.setdefault(run, []).append(float(entry["epsilon"]))
            else:
                looped.add(run)
    if looped - plans.keys():
        raise ValueError("ledger: loop measurements without a selection plan cannot be priced")
    runs = once.keys() | looped
    return math.fsum(compose(plans[r] if r in looped else 0.0, math.fsum(once.get(r, ())))
                     for r in runs)
