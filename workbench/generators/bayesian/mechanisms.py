"""The posterior mechanisms of Hu, Williams & Savitsky: clamped (censored) likelihoods whose
exact posterior draw is ε-DP (released from MCMC, so labelled "ε-DP for an exact posterior
draw; released from MCMC", see :mod:`.family`), and risk-weighted pseudo-posteriors whose ε is
computed on the data.

* ``censor_uw`` — every record's log-likelihood term clamped to an interval, one draw.
  Under add/remove neighbours a record's term enters or leaves: clamp to [−ε/2, ε/2], so
  Δ = ε/2. Under replace-one one term is swapped for another, so the exponent moves by up to
  the interval's **width**: clamp to [−ε/4, ε/4] (width ε/2), again Δ = ε/2. Either way one
  exact draw is 2Δ = ε-DP (:mod:`workbench.generators.bayesian.sampler`).
* ``censor_w`` — the terms are first multiplied by weights αᵢ = f(xᵢ) from a function f
  fitted on public or proxy data (``weight_function``: knots and α on the target's working
  scale), then clamped the same way: f is fixed before the data are seen, so the proof holds.
* ``weighted`` — αᵢ = 1 − (Lᵢ − min L)/(max L − min L) from each record's risk
  Lᵢ = maxₛ |log p(xᵢ | θₛ)| over draws of the plain posterior **of the data itself**; the
  local bound ε_x = 2·maxᵢ,ₛ |αᵢ·log p(xᵢ | θₛ)| is a statistic of the data: asymptotic DP,
  "aDP, not a guarantee".
* ``weighted_eps`` — as ``weighted``, then records whose weighted risk exceeds ε/2 get weight
  0 and the pseudo-posterior is refitted (still aDP).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

STRICT = ("censor_uw", "censor_w")
ASYMPTOTIC = ("weighted", "weighted_eps")
MECHANISMS = STRICT + ASYMPTOTIC


def clamp_interval(epsilon: float, neighbour: str) -> tuple[float, float]:
    """The interval every term is clamped to so that one posterior draw is ε-DP.

    >>> clamp_interval(5.0, "add_remove"), clamp_interval(5.0, "replace_one")
    ((-2.5, 2.5), (-1.25, 1.25))
    """
    if neighbour == "add_remove":
        return (-epsilon / 2, epsilon / 2)
    if neighbour == "replace_one":
        return (-epsilon / 4, epsilon / 4)
    raise ValueError(f"neighbour: unknown relation {neighbour!r}")


def loglik_sensitivity(interval: tuple[float, float], neighbour: str) -> float:
    """Δ of the clamped total log-likelihood: the interval's width under replace-one (one
    term swapped for another), the largest |end| under add/remove (one term added).

    >>> loglik_sensitivity((-1.25, 1.25), "replace_one"), loglik_sensitivity((-2.5, 2.5), "add_remove")
    (2.5, 2.5)
    """  # noqa: E501
    lo, hi = interval
    return hi - lo if neighbour == "replace_one" else max(abs(lo), abs(hi))


def censored_count(terms: np.ndarray, interval: tuple[float, float]) -> int:
    """How many records have their term censored: outside the clamp interval at one or more
    of the draws (``terms``: (draws, n), or (n,) for one θ) — the paper's Table 1 count."""
    outside = (terms < interval[0]) | (terms > interval[1])
    return int(np.count_nonzero(np.atleast_2d(outside).any(axis=0)))


def risk(terms: np.ndarray) -> np.ndarray:
    """Lᵢ = maxₛ |log p(xᵢ | θₛ)| over a stack of draws' terms (draws, n); ∞ stays ∞."""
    return np.max(np.abs(terms), axis=0)


def risk_weights(risks: np.ndarray, c1: float = 1.0, c2: float = 0.0) -> np.ndarray:
    """αᵢ = c₁·(1 − (Lᵢ − min L)/(max L − min L)) + c₂ clipped to [0, 1]; 0 where Lᵢ is ∞.

    >>> risk_weights(np.array([1.0, 2.0, 3.0, np.inf])).tolist()
    [1.0, 0.5, 0.0, 0.0]
    """
    finite = np.isfinite(risks)
    out = np.zeros(len(risks))
    if finite.any():
        lo, hi = risks[finite].min(), risks[finite].max()
        span = hi - lo if hi > lo else 1.0
        out[finite] = np.clip(c1 * (1 - (risks[finite] - lo) / span) + c2, 0.0, 1.0)
    return out


def local_epsilon(terms: np.ndarray, weights: np.ndarray) -> float:
    """ε_x = 2·maxᵢ,ₛ |αᵢ·log p(xᵢ | θₛ)| — computed on the data: a figure, not a guarantee."""
    weighted = np.abs(np.where(weights[None, :] > 0, terms * weights[None, :], 0.0))
    return float(2.0 * np.max(weighted))


def epsilon_weights(terms: np.ndarray, weights: np.ndarray, epsilon: float) -> np.ndarray:
    """Weighted-ε: weight 0 for records whose weighted risk exceeds ε/2."""
    worst = np.max(np.abs(np.where(weights[None, :] > 0, terms * weights[None, :], 0.0)),
                   axis=0)
    return np.where(worst > epsilon / 2, 0.0, weights)


def check_weight_function(value: Any) -> str | None:
    """A weight function is {"knots": increasing numbers, "alpha": values in [0, 1]}."""
    if value is None:
        return None
    if not isinstance(value, Mapping) or set(value) != {"knots", "alpha"}:
        return "must be an object with 'knots' and 'alpha'"
    knots, alpha = value["knots"], value["alpha"]
    if not (isinstance(knots, Sequence) and isinstance(alpha, Sequence)
            and len(knots) == len(alpha) >= 2):
        return "'knots' and 'alpha' must be lists of the same length (at least 2)"
    if any(not isinstance(v, int | float) for v in [*knots, *alpha]):
        return "'knots' and 'alpha' must hold numbers"
    if any(b <= a for a, b in itertools.pairwise(knots)):
        return "'knots' must be strictly increasing"
    if any(not 0 <= a <= 1 for a in alpha):
        return "'alpha' values must lie in [0, 1]"
    return None


def apply_weight_function(function: Mapping[str, Sequence[float]], y: np.ndarray
                          ) -> np.ndarray:
    """αᵢ = f(yᵢ), linear between the public knots, constant beyond them."""
    return np.interp(y, np.asarray(function["knots"], float), np.asarray(function["alpha"], float))


def fit_weight_function(y: np.ndarray, weights: np.ndarray, knots: int = 21
                        ) -> dict[str, list[float]]:
    """Fit f on public or proxy data: the mean weight in each of ``knots`` equal-width bins
    of the working scale's observed range, at the bin centres (monotone in nothing, just a
    smoothed lookup). Only ever call this on public data: its output goes into the spec."""
    lo, hi = float(np.min(y)), float(np.max(y))
    edges = np.linspace(lo, hi, knots + 1)
    idx = np.clip(np.searchsorted(edges, y, side="right") - 1, 0, knots - 1)
    sums = np.bincount(idx, weights=weights, minlength=knots)
    counts = np.bincount(idx, minlength=knots)
    centres = (edges[:-1] + edges[1:]) / 2
    have = counts > 0
    alpha = np.interp(centres, centres[have], sums[have] / counts[have])
    return {"knots": [round(float(v), 6) for v in centres],
            "alpha": [round(float(np.clip(v, 0, 1)), 4) for v in alpha]}
