"""The private-selection forecast for a narrowed space, from pass rates measured on the proxy."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from workbench.privacy import expected_iterations, probability_bottom


@dataclass(frozen=True)
class SelectionForecast:
    """Expected iterations and P(⊥) when each iteration draws a configuration uniformly."""

    configurations: int
    p: float
    gamma: float
    max_iterations: int | None
    expected_iterations: float
    probability_bottom: float

    def summary(self) -> str:
        """One readable line for the CLI and notebooks."""
        cap = "∞" if self.max_iterations is None else str(self.max_iterations)
        expected = "∞ (never stops)" if math.isinf(self.expected_iterations) else (
            f"{self.expected_iterations:.1f}")
        return (f"{self.configurations} configuration(s), pass probability per iteration "
                f"p = {self.p:.3f}; with γ = {self.gamma:g}, T = {cap}: expected iterations "
                f"{expected}, P(⊥) = {self.probability_bottom:.3g}")


def forecast(pass_probabilities: Sequence[float], gamma: float,
             max_iterations: int | None) -> SelectionForecast:
    """p is the mean pass probability, since each iteration picks a configuration uniformly."""
    if not pass_probabilities:
        raise ValueError("no configurations to forecast: the narrowed space is empty")
    p = float(sum(pass_probabilities) / len(pass_probabilities))
    p = min(max(p, 0.0), 1.0)
    return SelectionForecast(
        configurations=len(pass_probabilities),
        p=p,
        gamma=float(gamma),
        max_iterations=max_iterations,
        expected_iterations=expected_iterations(p, gamma, max_iterations),
        probability_bottom=probability_bottom(p, gamma, max_iterations),
    )
