"""P(all criteria pass) and what private selection makes of it: the one forecast module.

p by a dry run (:func:`forecast`: the mean over configurations of their all-pass rates, each
iteration draws one uniformly; :func:`wilson_interval`; the record :func:`forecast_record`),
or by the model (:func:`all_pass`: per candidate Π P(pass), averaged; the co-design quick
samples and the design assistant). P(a release) of a p is ``BudgetPlan.probability_release``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.privacy import expected_iterations, probability_bottom
from workbench.specification.forecast import RecordedForecast


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


@dataclass(frozen=True)
class AllPass:
    """The model's P(every criterion passes) over candidates: mean, lowest, highest."""

    probability: float
    low: float
    high: float
    samples: int
    #: criteria without a P(pass) of their own (left out of the product)
    left_out: tuple[str, ...] = ()


def all_pass(per_candidate: Sequence[Mapping[str, float | None]]) -> AllPass | None:
    """Per candidate Π P(pass) over its criteria (None: no P(pass), left out and named),
    averaged over the candidates, with the range (None without candidates).

    >>> all_pass([{"a": 0.5, "b": 0.8}, {"a": 1.0, "b": None}])
    AllPass(probability=0.7, low=0.4, high=1.0, samples=2, left_out=('b',))
    """
    products = [math.prod(p for p in one.values() if p is not None) for one in per_candidate]
    if not products:
        return None
    left_out = {k for one in per_candidate for k, p in one.items() if p is None}
    return AllPass(sum(products) / len(products), min(products), max(products),
                   len(products), tuple(sorted(left_out)))


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


def wilson_interval(passes: int, trials: int, z: float = 1.959964) -> tuple[float, float]:
    """The 95% Wilson score interval of a pass rate (sound at 0 and 1, unlike ±2 SE).

    >>> [round(x, 3) for x in wilson_interval(8, 10)]
    [0.49, 0.943]
    """
    if trials <= 0:
        return (0.0, 1.0)
    p = passes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (
        1 + z * z / trials)
    return (max(0.0, centre - half), min(1.0, centre + half))


def forecast_record(document: Mapping[str, Any], p: float, passes: int, trials: int, *,
                    repetitions: int, min_pass: float, n: int | None = None,
                    n_max: int | None = None, proxy: str | None = None, seed: int | None = None,
                    noise: str | None = None,
                    scenarios: Mapping[str, float] | None = None) -> dict[str, Any]:
    """``selection.forecast`` of a dry run of exactly ``document`` (its configurations set):
    p, the interval, what it was rehearsed at and on, and the design it belongs to
    (``spec.document.forecast_hash``, which ``workbench run`` and ``verify`` check)."""
    from workbench.specification.document import forecast_hash

    low, high = wilson_interval(passes, trials)
    values = tuple((k, round(float(v), 6)) for k, v in (scenarios or {}).items())
    return RecordedForecast(
        p=round(float(p), 6), repetitions=int(repetitions), min_pass=float(min_pass),
        n=n, proxy=proxy, n_max=n_max, spec_sha256=forecast_hash(document),
        interval=(round(low, 6), round(high, 6)), seed=seed, noise=noise,
        low=min(v for _, v in values) if values else None,
        high=max(v for _, v in values) if values else None, scenarios=values).to_document()
