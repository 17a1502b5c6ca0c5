"""Bayesian models a posterior-draw generator plugs in: per-record log-likelihood, prior,
parameter transform and synthesiser, each on a public working scale.

A model sees :class:`ModelData`: the target on its **working scale** (fixed by the column's
public bounds, never by the data: rescaled to (0, 1) for beta models, standardised by the
bounds' midpoint and sixth of the range for the linear ones) and the integer cell of every
record's categorical predictors. The per-record log-likelihood is vectorised over records
and over a stack of parameter vectors (``theta`` of shape (k, p) → (k, n)), because the
sampler runs its chains side by side and the risk view evaluates many draws at once.

The unconstrained parameter θ is what the sampler moves; :meth:`BayesianModel.natural`
is the transform to the model's own parameters (shape, mean, precision, σ).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

#: Working-scale targets of beta models stay this far inside (0, 1): the density is finite.
SQUEEZE = 1e-6
_LOG_2PI = float(np.log(2 * np.pi))


@dataclass(frozen=True)
class ModelData:
    """The target on the working scale and each record's predictor cell (0 without predictors).

    ``cells`` index the rows of a design matrix with one row per predictor combination, so a
    linear predictor is computed once per cell and gathered per record.
    """

    y: np.ndarray
    cells: np.ndarray
    design: np.ndarray  # (cells, p_β) one-hot design: intercept, then levels after the first

    @property
    def n(self) -> int:
        return len(self.y)


def one_hot_design(sizes: tuple[int, ...]) -> np.ndarray:
    """Design rows of every predictor combination (row-major, like ``np.ravel_multi_index``):
    an intercept, then one indicator per level after the first of each predictor.

    >>> one_hot_design((2, 3)).tolist()
    [[1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 1.0], [1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 1.0]]
    """  # noqa: E501
    combos = np.stack(np.unravel_index(np.arange(int(np.prod(sizes, dtype=np.int64))), sizes),
                      axis=1) if sizes else np.zeros((1, 0), dtype=np.int64)
    cols = [np.ones(len(combos))]
    for j, size in enumerate(sizes):
        cols += [(combos[:, j] == level).astype(np.float64) for level in range(1, size)]
    return np.column_stack(cols)


class BayesianModel(ABC):
    """The plug-in interface; subclasses implement the four pieces on the working scale."""

    name = ""
    #: Whether the model reads predictor cells (regressions) or the target alone.
    regression = False

    @abstractmethod
    def n_params(self, data: ModelData) -> int:
        """Length of θ."""

    def initial(self, data: ModelData) -> np.ndarray:
        """A public starting point (the prior's centre: never a statistic of the data)."""
        return np.zeros(self.n_params(data))

    @abstractmethod
    def loglik(self, theta: np.ndarray, data: ModelData) -> np.ndarray:
        """log p(yᵢ | θ) for a stack of θ: (k, p) → (k, n)."""

    def log_prior(self, theta: np.ndarray) -> np.ndarray:
        """log prior of each θ in a stack (k, p) → (k,): independent N(0, 3²) on θ."""
        return -0.5 * np.sum((theta / 3.0) ** 2, axis=-1)

    @abstractmethod
    def natural(self, theta: np.ndarray, data: ModelData) -> dict[str, np.ndarray]:
        """The parameter transform: θ → the model's own parameters."""

    @abstractmethod
    def synthesise(self, theta: np.ndarray, cells: np.ndarray, data: ModelData,
                   uniforms: np.ndarray) -> np.ndarray:
        """Working-scale targets for records in ``cells`` given one θ, by inverse CDF of
        uniforms (post-processing of the released θ)."""


class BetaModel(BayesianModel):
    """y ~ Beta(a, b) with θ = (log a, log b) (the paper's simulation model)."""

    name = "beta"

    def n_params(self, data: ModelData) -> int:
        return 2

    def natural(self, theta: np.ndarray, data: ModelData) -> dict[str, np.ndarray]:
        t = np.atleast_2d(theta)
        return {"a": np.exp(t[:, 0]), "b": np.exp(t[:, 1])}

    def _ab(self, theta: np.ndarray, data: ModelData) -> tuple[np.ndarray, np.ndarray]:
        nat = self.natural(theta, data)
        return nat["a"][:, None], nat["b"][:, None]

    def loglik(self, theta: np.ndarray, data: ModelData) -> np.ndarray:
        a, b = self._ab(theta, data)
        y = np.clip(data.y, SQUEEZE, 1 - SQUEEZE)[None, :]
        return (a - 1) * np.log(y) + (b - 1) * np.log1p(-y) - special.betaln(a, b)

    def synthesise(self, theta: np.ndarray, cells: np.ndarray, data: ModelData,
                   uniforms: np.ndarray) -> np.ndarray:
        a, b = self._ab(np.atleast_2d(theta), data)
        return stats.beta.ppf(uniforms, a[0, 0], b[0, 0])


class BetaRegression(BetaModel):
    """y ~ Beta(μφ, (1 − μ)φ), logit μ = xβ (x: predictor cell dummies), θ = (β, log φ)."""

    name = "beta_regression"
    regression = True

    def n_params(self, data: ModelData) -> int:
        return data.design.shape[1] + 1

    def natural(self, theta: np.ndarray, data: ModelData) -> dict[str, np.ndarray]:
        t = np.atleast_2d(theta)
        mu = special.expit(t[:, :-1] @ data.design.T)  # (k, cells)
        return {"mu": mu, "phi": np.exp(t[:, -1])}

    def _ab(self, theta: np.ndarray, data: ModelData) -> tuple[np.ndarray, np.ndarray]:
        nat = self.natural(theta, data)
        mu = nat["mu"][:, data.cells]
        phi = nat["phi"][:, None]
        return mu * phi, (1 - mu) * phi

    def synthesise(self, theta: np.ndarray, cells: np.ndarray, data: ModelData,
                   uniforms: np.ndarray) -> np.ndarray:
        nat = self.natural(theta, data)
        mu, phi = nat["mu"][0, cells], nat["phi"][0]
        return stats.beta.ppf(uniforms, mu * phi, (1 - mu) * phi)


class NormalLinear(BayesianModel):
    """y ~ N(xβ, σ²) on the standardised scale, θ = (β, log σ)."""

    name = "normal_linear"
    regression = True
    #: Whether :mod:`.fast` computes its clamped total exactly (sorted cells, prefix sums).
    fast_clamped = True

    def n_params(self, data: ModelData) -> int:
        return data.design.shape[1] + 1

    def natural(self, theta: np.ndarray, data: ModelData) -> dict[str, np.ndarray]:
        t = np.atleast_2d(theta)
        return {"mean": t[:, :-1] @ data.design.T, "sigma": np.exp(t[:, -1])}

    def _response(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(modelled response, log-Jacobian per record) of the working-scale target."""
        return y, np.zeros_like(y)

    def loglik(self, theta: np.ndarray, data: ModelData) -> np.ndarray:
        t = np.atleast_2d(theta)
        z, log_jac = self._response(data.y)
        mean = (t[:, :-1] @ data.design.T)[:, data.cells]
        log_sigma = t[:, -1:]
        r = (z[None, :] - mean) * np.exp(-log_sigma)
        return -0.5 * r * r - log_sigma - 0.5 * _LOG_2PI + log_jac[None, :]

    def synthesise(self, theta: np.ndarray, cells: np.ndarray, data: ModelData,
                   uniforms: np.ndarray) -> np.ndarray:
        nat = self.natural(theta, data)
        return nat["mean"][0, cells] + nat["sigma"][0] * stats.norm.ppf(uniforms)


class LogNormalLinear(NormalLinear):
    """log y ~ N(xβ, σ²), y on the working scale shifted to be positive (y + 3, so the
    public lower bound maps near 0 and log y is defined); the Jacobian −log y is included."""

    name = "lognormal_linear"
    SHIFT = 3.0
    fast_clamped = False  # the per-record Jacobian breaks the per-cell sums

    def _response(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pos = np.maximum(y + self.SHIFT, SQUEEZE)
        return np.log(pos), -np.log(pos)

    def initial(self, data: ModelData) -> np.ndarray:
        start = np.zeros(self.n_params(data))
        start[0] = np.log(self.SHIFT)  # the bounds' midpoint, a public value
        return start

    def synthesise(self, theta: np.ndarray, cells: np.ndarray, data: ModelData,
                   uniforms: np.ndarray) -> np.ndarray:
        return np.exp(super().synthesise(theta, cells, data, uniforms)) - self.SHIFT


#: The shipped models by name (the family's ``model`` hyperparameter).
MODELS: dict[str, BayesianModel] = {
    m.name: m for m in (BetaModel(), BetaRegression(), NormalLinear(), LogNormalLinear())
}
