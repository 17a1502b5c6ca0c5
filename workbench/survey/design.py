"""Sampling designs (public): SRS without replacement and stratified SRS, with base weights.

Used to *simulate* a survey on a proxy population (Merrill ch. 4) and to state the design of
a real one. The base weight of a record is the inverse of its inclusion probability, N_h/n_h;
drawing uses the simulation's seeded Generator (``choice``/``permutation``: sampling, not
noise) and never touches confidential data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Design:
    """SRS without replacement (no strata) or stratified SRS with per-stratum rates."""

    fraction: float
    strata: tuple[str, ...] = ()
    rates: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 0 < self.fraction <= 1:
            raise ValueError("design.fraction must lie in (0, 1]")
        bad = [k for k, r in self.rates.items() if not 0 < r <= 1]
        if bad:
            raise ValueError(f"design.rates: stratum {bad[0]!r} needs a rate in (0, 1]")

    @property
    def name(self) -> str:
        """'SRS 1%' or 'stratified by a, b'."""
        if not self.strata:
            return f"SRS {100 * self.fraction:g}%"
        return f"stratified by {', '.join(self.strata)}"

    def fpc(self, population: int) -> float:
        """Finite-population correction 1 − n/N of the overall fraction."""
        return 1.0 - round(self.fraction * population) / population

    def draw(self, population: pd.DataFrame, rng: np.random.Generator
             ) -> tuple[np.ndarray, np.ndarray]:
        """Row indices of one sample and their base weights N_h/n_h."""
        if not self.strata:
            groups = {(): np.arange(len(population))}
        else:
            keys = population[list(self.strata)].astype(str).agg("|".join, axis=1)
            groups = {k: np.flatnonzero(keys.to_numpy() == k) for k in keys.unique()}
        rows, weights = [], []
        for key, members in groups.items():
            rate = self.rates.get(str(key), self.fraction) if self.strata else self.fraction
            n_h = max(1, round(rate * members.size))
            rows.append(rng.choice(members, size=n_h, replace=False))
            weights.append(np.full(n_h, members.size / n_h))
        return np.concatenate(rows), np.concatenate(weights)


def crossover_epsilon_proportion(n: int, p: float, fpc: float = 1.0) -> float:
    """ε* = √(2/(n·p(1−p)·fpc)): above it, Laplace noise on a proportion (SD √2/(nε)) is
    smaller than its sampling SD √(p(1−p)·fpc/n) (Merrill ch. 4).

    >>> round(crossover_epsilon_proportion(2000, 0.5, 0.99), 4)
    0.0636
    """
    if n < 1 or not 0 < p < 1 or not 0 < fpc <= 1:
        raise ValueError("crossover needs n >= 1, 0 < p < 1 and 0 < fpc <= 1")
    return math.sqrt(2.0 / (n * p * (1 - p) * fpc))


def crossover_epsilon(sensitivity: float, sampling_sd: float) -> float:
    """The general crossover: Laplace SD √2·Δ/ε equals the sampling SD at ε* = √2·Δ/SD."""
    if sensitivity <= 0 or sampling_sd <= 0:
        raise ValueError("crossover needs a positive sensitivity and sampling SD")
    return math.sqrt(2.0) * sensitivity / sampling_sd
