"""One posterior draw under a mechanism: build the (clamped, weighted) log posterior, run the
sampler, and keep what the release needs (θ) apart from what only a public fit may show
(diagnostics, censored counts, the local ε of a pseudo-posterior)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from workbench.generators.bayesian import mechanisms as mech
from workbench.generators.bayesian.models import BayesianModel, ModelData
from workbench.generators.bayesian.sampler import Chains, metropolis

if TYPE_CHECKING:
    from workbench.privacy.noise import SamplerStream

#: Draws of the plain posterior used for each record's risk Lᵢ.
RISK_DRAWS = 200


@dataclass(frozen=True)
class PosteriorFit:
    """The released θ, plus confidential-side facts (kept in the fitted object only)."""

    theta: np.ndarray
    chains: Chains
    mechanism: str
    interval: tuple[float, float] | None
    censored: int
    weights: np.ndarray | None
    local_epsilon: float | None


def log_posterior(model: BayesianModel, data: ModelData, weights: np.ndarray | None,
                  interval: tuple[float, float] | None):
    """θ stack → Σᵢ clamp(αᵢ·log p(yᵢ | θ)) + log prior; a NaN term rejects the θ."""
    if weights is None and getattr(model, "fast_clamped", False):
        from workbench.generators.bayesian.fast import SortedCells, clamped_total

        cells = SortedCells.build(data)
        ends = interval or (-np.inf, np.inf)

        def fast(theta: np.ndarray) -> np.ndarray:
            total = clamped_total(theta, data, ends, cells) + model.log_prior(theta)
            return np.where(np.isnan(total), -np.inf, total)
        return fast

    def density(theta: np.ndarray) -> np.ndarray:
        terms = model.loglik(theta, data)
        if weights is not None:
            terms = np.where(weights[None, :] > 0, terms * weights[None, :], 0.0)
        if interval is not None:
            terms = np.clip(terms, *interval)
        total = terms.sum(axis=1) + model.log_prior(theta)
        return np.where(np.isnan(total), -np.inf, total)
    return density


def _run(model: BayesianModel, data: ModelData, weights: np.ndarray | None,
         interval: tuple[float, float] | None, stream: SamplerStream, iterations: int,
         burn_in: int) -> Chains:
    """The chains of one posterior; a clamped one is warm-started from its unclamped twin
    (:func:`.sampler.warm_start`: the start only shortens the burn-in)."""
    guide = log_posterior(model, data, weights, None) if interval is not None else None
    return metropolis(log_posterior(model, data, weights, interval), model.initial(data),
                      stream, iterations=iterations, burn_in=burn_in, guide=guide)


def risk_terms(model: BayesianModel, data: ModelData, chains: Chains) -> np.ndarray:
    """Per-record terms at up to RISK_DRAWS kept draws (draws, n)."""
    flat = chains.draws.reshape(-1, chains.draws.shape[-1])
    pick = flat[np.linspace(0, len(flat) - 1, min(RISK_DRAWS, len(flat))).astype(int)]
    return np.concatenate([model.loglik(pick[i:i + 20], data) for i in range(0, len(pick), 20)])


def draw(model: BayesianModel, data: ModelData, mechanism: str, epsilon: float,
         neighbour: str, stream: SamplerStream, *, iterations: int, burn_in: int,
         weight_function: Mapping[str, Sequence[float]] | None = None,
         count_censored: bool = True) -> PosteriorFit:
    """One draw of θ under ``mechanism`` at ``epsilon`` (see :mod:`.mechanisms`)."""
    if mechanism not in mech.MECHANISMS:
        raise ValueError(f"mechanism: unknown {mechanism!r}; known: {list(mech.MECHANISMS)}")
    weights = None
    local = None
    interval = None
    if mechanism in mech.STRICT:
        interval = mech.clamp_interval(epsilon, neighbour)
        if mechanism == "censor_w":
            if weight_function is None:
                raise ValueError("censor_w needs a public weight_function")
            weights = mech.apply_weight_function(weight_function, data.y)
    else:
        plain = _run(model, data, None, None, stream, iterations, burn_in)
        weights = mech.risk_weights(mech.risk(risk_terms(model, data, plain)))
        if mechanism == "weighted_eps":
            weights = mech.epsilon_weights(risk_terms(model, data, plain), weights, epsilon)
    chains = _run(model, data, weights, interval, stream, iterations, burn_in)
    theta = chains.release
    censored = 0
    if interval is not None and count_censored:
        terms = risk_terms(model, data, chains)
        censored = mech.censored_count(terms if weights is None else terms * weights, interval)
    if mechanism in mech.ASYMPTOTIC:
        local = mech.local_epsilon(risk_terms(model, data, chains), weights)
    return PosteriorFit(theta, chains, mechanism, interval, censored, weights, local)
