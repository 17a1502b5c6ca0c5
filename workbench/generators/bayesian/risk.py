"""The per-record risk view on public proxy data: each record's Lᵢ = maxₛ |log p(xᵢ | θₛ)|
over draws of the plain posterior, and which records a censored mechanism would clamp at
each ε. Only for public data: every figure here is exact."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.generators.bayesian import mechanisms as mech
from workbench.generators.bayesian.models import BayesianModel, ModelData
from workbench.generators.bayesian.posterior import _run, risk_terms
from workbench.privacy.noise import SamplerStream


@dataclass(frozen=True)
class RiskView:
    """Lᵢ per record, and per ε the mask of records outside the clamp at some draw."""

    risks: np.ndarray
    censored: dict[float, np.ndarray]
    weights: np.ndarray

    def counts(self) -> dict[float, int]:
        """How many records each ε would censor."""
        return {eps: int(mask.sum()) for eps, mask in self.censored.items()}

    def table(self) -> str:
        """Plain text: the risk quantiles and the censored count per ε."""
        q = np.quantile(self.risks[np.isfinite(self.risks)], [0.5, 0.9, 0.99, 1.0])
        lines = [f"n = {len(self.risks)}; risk L quantiles 50/90/99/100%: "
                 + ", ".join(f"{v:.3g}" for v in q)]
        lines += [f"  ε = {eps:g}: {c} records censored" for eps, c in self.counts().items()]
        return "\n".join(lines)


def risk_view(model: BayesianModel, data: ModelData, epsilons: Sequence[float],
              neighbour: str, seed: int = 0, *, iterations: int = 1500,
              burn_in: int = 1500) -> RiskView:
    """Fit the plain posterior on public data and report each record's risk."""
    plain = _run(model, data, None, None, SamplerStream(seed), iterations, burn_in)
    terms = risk_terms(model, data, plain)
    masks = {}
    for eps in epsilons:
        lo, hi = mech.clamp_interval(float(eps), neighbour)
        masks[float(eps)] = ((terms < lo) | (terms > hi)).any(axis=0)
    risks = mech.risk(terms)
    return RiskView(risks, masks, mech.risk_weights(risks))
