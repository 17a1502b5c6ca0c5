"""Measurement records and the noise-scale formulas: what every DP release leaves behind.

A :class:`MeasurementRecord` describes one call of a mechanism without its input or output
(purpose, mechanism, ε, Δ, scale, σ, bounds, stage, iteration, time); :class:`Noisy` pairs a
released value with its record. What records cost under parallel composition (McSherry 2009,
Thm 4: disjoint parts cost the max over parts of Σ ε in the part; the blocks are run by
:mod:`workbench.privacy.parallel`) is priced here, below everything that measures:
:func:`charged_epsilon` for a ledger, :class:`ParallelTracker` for the accountant.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

V = TypeVar("V")


def laplace_sigma(sensitivity: float, epsilon: float) -> float:
    """Std of ε-DP Laplace noise: scale b = Δ/ε and Var = 2b², so σ = √2·Δ/ε.

    >>> round(laplace_sigma(1.0, 0.5), 6)
    2.828427
    """
    return math.sqrt(2.0) * sensitivity / epsilon


def discrete_laplace_sigma(sensitivity: float, epsilon: float) -> float:
    """Std of ε-DP discrete Laplace noise, P(k) ∝ t^|k| with t = exp(−ε/Δ).

    Derivation: the noise is G₁ − G₂ for i.i.d. geometric G on {0, 1, …} with
    P(G = k) = (1 − t)·t^k and Var(G) = t/(1 − t)², so Var = 2t/(1 − t)².
    For large Δ/ε this tends to the continuous √2·Δ/ε.

    >>> round(discrete_laplace_sigma(1.0, 1.0), 6)
    1.356962
    """
    t = math.exp(-epsilon / sensitivity)
    return math.sqrt(2.0 * t) / -math.expm1(-epsilon / sensitivity)


def noisy_max_sigma(sensitivity: float, epsilon: float) -> float:
    """Std of the Exponential(β) noise behind OpenDP's ε-DP noisy max, β = 2Δ/ε (std = β).

    OpenDP runs permute-and-flip, which equals argmax of score + Exponential(β) in law; this
    is the per-score noise of that equivalent form (not Gumbel noise: that would be the
    textbook exponential mechanism, with std π·β/√6).

    >>> noisy_max_sigma(1.0, 0.5)
    4.0
    """
    return 2.0 * sensitivity / epsilon


def utc_now() -> str:
    """ISO-8601 UTC timestamp; one clock for all records so ledgers from enclaves compare."""
    return datetime.now(UTC).isoformat()


@dataclass(frozen=True)
class MeasurementRecord:
    """What was spent and how, never on what: the unit the accountant and the ledger keep."""

    purpose: str
    mechanism: str
    epsilon: float
    sensitivity: float
    scale: float
    sigma: float
    bounds: tuple[float, float] | None
    stage: str
    iteration: int | None
    timestamp: str
    #: Parallel composition (:mod:`workbench.privacy.parallel`): the group and the disjoint
    #: part of the data this measurement read; None outside a group.
    group: str | None = None
    part: str | None = None
    beta: float | None = None  # smooth-sensitivity releases: the bound's smoothness β
    gamma: float | None = None  # … and the generalized Cauchy exponent γ
    #: … the public grid's intervals over ``bounds`` and the ε set aside for the float lattice
    grid_cells: int | None = None
    lattice_allowance: float | None = None
    #: δ of an (ε, δ)-DP measurement (thresholded partition selection); 0 for pure ε-DP. The
    #: ledger line carries it as "delta" only when it is > 0, so pure-ε lines are unchanged.
    dp_delta: float = 0.0
    #: … and its public threshold τ: a label is released when its noisy count reaches τ
    threshold: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields (bounds as a list; an infinite σ as "inf") for ledger and report."""
        out: dict[str, Any] = {
            "purpose": self.purpose,
            "mechanism": self.mechanism,
            "epsilon": self.epsilon,
            "sensitivity": self.sensitivity,
            "scale": self.scale,
            "sigma": self.sigma if math.isfinite(self.sigma) else str(self.sigma),
            "bounds": None if self.bounds is None else list(self.bounds),
            "stage": self.stage,
            "iteration": self.iteration,
            "timestamp": self.timestamp,
        }
        if self.group is not None:
            out.update(group=self.group, part=self.part)
        if self.beta is not None:
            out.update(beta=self.beta, gamma=self.gamma)
        if self.grid_cells is not None:
            out.update(grid_cells=self.grid_cells, lattice_allowance=self.lattice_allowance)
        if self.dp_delta > 0:
            out["delta"] = self.dp_delta
        if self.threshold is not None:
            out["threshold"] = self.threshold
        return out


@dataclass(frozen=True)
class Noisy(Generic[V]):
    """A DP-released value with the record of how it was made; only these leave the layer."""

    value: V
    record: MeasurementRecord


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


def charged_delta(entries: Iterable[Mapping[str, Any]]) -> float:
    """δ of measurements (ledger lines or record dicts): basic composition of (ε, δ)-DP adds
    the δ of every measurement (pure-ε lines carry none).

    >>> charged_delta([{"epsilon": 0.5}, {"epsilon": 1, "delta": 1e-6}])
    1e-06
    """
    return math.fsum(float(e.get("delta", 0.0)) for e in entries)


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
