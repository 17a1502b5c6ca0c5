"""Adaptive Metropolis–Hastings in numpy, two chains side by side, with diagnostics.

**The draw is the mechanism.** A posterior-draw generator releases one parameter vector θ
drawn from π(θ | x) ∝ exp(Σᵢ cᵢ(θ))·p(θ), where cᵢ is record i's (clamped, weighted)
log-likelihood term. If every term lies in an interval of width w, one neighbouring record
moves the exponent by at most Δ (w under replace-one; the largest |cᵢ| under add/remove), and
an exact draw is the exponential mechanism with utility Σᵢ cᵢ: ε = 2Δ (Hu, Williams &
Savitsky; McSherry & Talwar). Nothing else of the chain leaves the fit: the synthetic records
are post-processing of that one θ. So the sampler's randomness is privacy noise and comes
from the context's noise seam (``PrivacyContext.posterior_draw`` hands a ``SamplerStream``,
CSPRNG-seeded in a confidential run, after the draw is charged).

**What would break it**, and what this module does instead:

* releasing more than one draw (means, intervals, several chains' states): each draw costs
  ε, so only the last state of chain 1 is returned as the release;
* a seed an adversary can know or replay: confidential streams are seeded from ``secrets``;
* a start or a proposal that stays tied to the data: the start and the proposals may depend
  on the data (they are the mode, the curvature there and the burn-in's draws), but only the
  burn-in sees them move. The chains start near the best of two L-BFGS runs on the clamped
  log posterior (deterministic: no randomness, so nothing here is noise): one from the
  model's public start, one from the mode of the *unclamped* posterior (the ``guide``; a
  clamped likelihood is flat far from its mode, so an optimiser started there can stop on a
  prior-dominated plateau: the < 28-week cell of the 10k natality sample did). Every kernel
  is adapted only during burn-in and frozen after it, and each frozen kernel is π-invariant
  (a symmetric random walk with the Metropolis ratio, or an independence proposal with the
  Hastings ratio), so the kept part is a homogeneous Markov chain whose stationary law is
  exactly π, whatever the start and whatever the burn-in chose;
* an unconverged chain: the proof covers an exact posterior draw, so the output is only as
  private as the chain is close to π — which is why the release is labelled "ε-DP for an
  exact posterior draw; released from MCMC (R̂, ESS of a re-run on the released records in
  the bundle)", never strict ε-DP (``strict: false`` in guarantee.json), and a
  spec must opt in (``budget.allow_mcmc_draw``; issue 24). Burn-in and length are fixed in the
  spec and checked on public proxy data (R̂ < 1.01 over the two chains, ESS, acceptance; see
  ``benchmarks/bayesian_birth_weight.py``) and, in every bundle, on the released records (the
  family's ``release_diagnostics``); the diagnostics of a confidential fit stay in the enclave
  ledger, because they are statistics of the data, and a poor R̂ there cannot trigger a
  rerun (that choice would itself depend on the data);
* an unbounded term (no clamp): Δ is then infinite (the paper's "unweighted" posterior).

**Burn-in.** One iteration is the public cycle :data:`CYCLE` of kernels.
``burn_in`` iterations adapt: the "global" covariance is Haario et al.'s empirical covariance
of the pooled chains (second half of the history so far, every 50 iterations), each random
walk scaled by 2.38²/p with its own Robbins–Monro step size aiming at 23% acceptance (the
"jump" kernel keeps its fixed width); the "independent" kernel proposes from a multivariate t
(:data:`T_DOF` degrees of freedom) centred on the pooled draws' mean with their covariance as
its scale: the burn-in's Laplace-like summary, heavy-tailed so that it covers the posterior.
It moves a chain between separated regions in one step (a chain left on a plateau or in a
minor bump proposes the main mode, where the Hastings ratio accepts at once, provided the
burn-in's draws reached it: hence the guided start) and makes successive draws nearly
independent (ESS several times the random walks'). After burn-in
every kernel is frozen; the ``iterations`` after it are kept for the diagnostics, and the
released θ is chain 1's state after the last one. The counts are fixed public
hyperparameters (spec), never chosen from the confidential run's R̂: there is no
run-until-converged rule, so the work done says nothing about the data. Robustness across
data slices and seeds is checked on public data by ``benchmarks/bayesian_convergence.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from workbench.privacy.noise import SamplerStream

LogDensity = Callable[[np.ndarray], np.ndarray]  # (k, p) -> (k,)
#: Target acceptance rate of the adaptive random walk (Roberts, Gelman & Gilks).
TARGET_ACCEPTANCE = 0.234
#: One iteration is a fixed, public cycle of Metropolis–Hastings kernels, each π-invariant,
#: so the cycle is too: "global" proposes a random walk from the pooled chains' covariance
#: (adapted in burn-in), "local" from the clamped target's curvature at its mode (the tight,
#: well-identified directions), "jump" from the global covariance JUMP_SCALE times wider,
#: "independent" a multivariate t from the burn-in's summary, whatever the current state. A
#: clamped likelihood is flat and rippled far from its mode, so a sparse cell's coefficient
#: has separated bumps that small steps alone cross too rarely (the chains then sit in
#: different bumps: R̂ ≫ 1).
CYCLE = ("global", "local", "global", "jump", "independent")
JUMP_SCALE = 6.0
#: The kernels whose step size the burn-in tunes (the others keep a fixed shape).
ADAPTED = ("global", "local")
#: Degrees of freedom of the independence kernel's multivariate t.
T_DOF = 4
#: Chains run side by side (R̂ needs at least two).
CHAINS = 2


@dataclass(frozen=True)
class Chains:
    """The kept draws (chains, iterations, p), acceptance and the one released draw."""

    draws: np.ndarray
    acceptance: float
    release: np.ndarray

    @property
    def rhat(self) -> np.ndarray:
        """Split-R̂ per parameter (Gelman et al., 4 half-chains from 2 chains)."""
        return split_rhat(self.draws)

    @property
    def ess(self) -> np.ndarray:
        """Effective sample size per parameter, over every chain."""
        return effective_sample_size(self.draws)

    def diagnostics(self) -> dict[str, float]:
        """Acceptance, worst R̂ and smallest ESS (public only when the data are public)."""
        return {"acceptance": round(self.acceptance, 4), "rhat_max": float(self.rhat.max()),
                "ess_min": float(self.ess.min()), "chains": int(self.draws.shape[0]),
                "kept": int(self.draws.shape[1])}


def split_rhat(draws: np.ndarray) -> np.ndarray:
    """Split-R̂ of (chains, iterations, p) draws.

    >>> x = np.linspace(0, 1, 400).reshape(2, 200, 1) % 0.1
    >>> bool(split_rhat(x)[0] < 1.05)
    True
    """
    _c, n, _p = draws.shape
    half = n // 2
    parts = np.concatenate([draws[:, :half], draws[:, half:2 * half]], axis=0)
    m = parts.shape[1]
    means = parts.mean(axis=1)
    within = parts.var(axis=1, ddof=1).mean(axis=0)
    between = m * means.var(axis=0, ddof=1)
    var_plus = (m - 1) / m * within + between / m
    return np.sqrt(var_plus / np.maximum(within, 1e-300))


def effective_sample_size(draws: np.ndarray) -> np.ndarray:
    """ESS per parameter from the chains' pooled autocorrelation (Geyer's initial positive
    sequence of paired autocorrelations)."""
    c, n, p = draws.shape
    x = draws - draws.mean(axis=1, keepdims=True)
    size = 1 << (2 * n - 1).bit_length()
    f = np.fft.rfft(x, n=size, axis=1)
    acov = np.fft.irfft(f * np.conj(f), n=size, axis=1)[:, :n].mean(axis=0) / n  # (n, p)
    rho = acov / np.maximum(acov[:1], 1e-300)
    out = np.empty(p)
    for j in range(p):
        pairs = rho[: n - n % 2, j].reshape(-1, 2).sum(axis=1)
        stop = np.argmax(pairs < 0) if (pairs < 0).any() else len(pairs)
        tau = -1.0 + 2.0 * pairs[:stop].sum()
        out[j] = c * n / max(tau, 1e-12)
    return out


def _optimise(log_density: LogDensity, start: np.ndarray) -> Any:
    """scipy's L-BFGS result for the maximum of the log density from ``start``."""
    from scipy import optimize

    def objective(theta: np.ndarray) -> float:
        value = float(log_density(theta[None, :])[0])
        return -value if np.isfinite(value) else 1e300

    return optimize.minimize(objective, start, method="L-BFGS-B")


def warm_start(log_density: LogDensity, start: np.ndarray, guide: LogDensity | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """(mode, curvature-based covariance) of the log density: the better of L-BFGS from
    ``start`` and L-BFGS from the ``guide``'s mode (a smooth surrogate such as the unclamped
    posterior, whose mode lies in the main basin where the clamped target may be flat at
    ``start``). Deterministic: no randomness, so nothing here is noise."""
    result = _optimise(log_density, start)
    if guide is not None:
        other = _optimise(log_density, _optimise(guide, start).x)
        if other.fun < result.fun:
            result = other
    cov = np.asarray(result.hess_inv.todense()) if hasattr(result.hess_inv, "todense") \
        else np.eye(len(start))
    hessian = _hessian(log_density, result.x, np.sqrt(np.clip(np.diag(cov), 1e-12, 1.0)))
    w, v = np.linalg.eigh(-(hessian + hessian.T) / 2)
    if np.all(w > 0):
        cov = (v / w) @ v.T
    cov = (cov + cov.T) / 2
    w, v = np.linalg.eigh(cov)
    cov = (v * np.clip(w, 1e-10, 1.0)) @ v.T
    return result.x, cov


def _hessian(log_density: LogDensity, x: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Central finite-difference Hessian at x with steps of half the given scales."""
    p = len(x)
    h = 0.5 * scale
    steps = [np.zeros(p)] + [s * h[j] * np.eye(p)[j] for j in range(p) for s in (1, -1)]
    pairs = [(i, j, si, sj) for i in range(p) for j in range(i + 1, p)
             for si in (1, -1) for sj in (1, -1)]
    steps += [si * h[i] * np.eye(p)[i] + sj * h[j] * np.eye(p)[j] for i, j, si, sj in pairs]
    f = log_density(x[None, :] + np.array(steps))
    f0 = f[0]
    out = np.empty((p, p))
    for j in range(p):
        out[j, j] = (f[1 + 2 * j] - 2 * f0 + f[2 + 2 * j]) / h[j] ** 2
    k = 1 + 2 * p
    for i in range(p):
        for j in range(i + 1, p):
            fpp, fpm, fmp, fmm = f[k:k + 4]
            out[i, j] = out[j, i] = (fpp - fpm - fmp + fmm) / (4 * h[i] * h[j])
            k += 4
    return out


def metropolis(log_density: LogDensity, start: np.ndarray, stream: SamplerStream, *,
               iterations: int, burn_in: int, chains: int = CHAINS,
               guide: LogDensity | None = None) -> Chains:
    """Run ``chains`` adaptive random-walk Metropolis chains from around the mode.

    ``log_density`` takes a stack of θ (chains, p) and returns their log posterior (−inf
    outside the support). Starts are the :func:`warm_start` mode (``guide``: its second
    start's surrogate) plus stream noise drawn at twice the curvature's scale (overdispersed,
    so R̂ can show a chain that has not mixed).
    """
    p = len(start)
    mode, curvature = warm_start(log_density, start, guide)
    base = 2.38**2 / p
    chol = {"local": np.linalg.cholesky(curvature * base)}
    chol["global"] = chol["jump"] = chol["local"]
    log_scale = {"local": 0.0, "global": 0.0, "jump": float(np.log(JUMP_SCALE))}
    centre, chol["independent"] = mode, np.linalg.cholesky(curvature)
    theta = mode[None, :] + 2.0 * stream.increments((chains, p)) @ chol["independent"].T
    logp = log_density(theta)
    history: list[np.ndarray] = []
    kept = np.empty((chains, iterations, p))
    accepted = 0
    for t in range(burn_in + iterations):
        for k, kind in enumerate(CYCLE):
            if kind == "independent":
                proposal = _t_draw(stream, centre, chol[kind], chains)
                correction = _t_log(theta, centre, chol[kind]) - _t_log(proposal, centre,
                                                                         chol[kind])
            else:
                proposal = theta + np.exp(log_scale[kind]) * stream.increments((chains, p)) \
                    @ chol[kind].T
                correction = 0.0
            logq = log_density(proposal)
            ok = np.log(stream.uniform(chains)) < logq - logp + correction
            theta = np.where(ok[:, None], proposal, theta)
            logp = np.where(ok, logq, logp)
            if t < burn_in and kind in ADAPTED:
                rate = 1.0 / np.sqrt(t * len(CYCLE) + k + 1.0)
                log_scale[kind] += (ok.mean() - TARGET_ACCEPTANCE) * rate
            elif t >= burn_in:
                accepted += int(ok.sum())
        if t < burn_in:
            history.append(theta.copy())
            if t >= 100 and t % 50 == 0:
                pooled = np.concatenate(history[len(history) // 2:])
                cov = np.cov(pooled, rowvar=False).reshape(p, p) + 1e-8 * np.eye(p)
                centre, chol["independent"] = pooled.mean(axis=0), np.linalg.cholesky(cov)
                chol["global"] = chol["jump"] = chol["independent"] * np.sqrt(base)
        else:
            kept[:, t - burn_in] = theta
    steps = chains * max(iterations, 1) * len(CYCLE)
    return Chains(kept, accepted / steps, theta[0].copy())


def _t_draw(stream: SamplerStream, centre: np.ndarray, chol: np.ndarray, k: int) -> np.ndarray:
    """k draws of the multivariate t (T_DOF degrees of freedom, scale chol·cholᵀ)."""
    z = stream.increments((k, len(centre))) @ chol.T
    w = np.sum(stream.increments((k, T_DOF)) ** 2, axis=1) / T_DOF
    return centre + z / np.sqrt(w)[:, None]


def _t_log(x: np.ndarray, centre: np.ndarray, chol: np.ndarray) -> np.ndarray:
    """Log density of that t at a stack of θ, up to a constant (it cancels in the ratio)."""
    d = np.linalg.solve(chol, (x - centre).T)
    return -0.5 * (T_DOF + len(centre)) * np.log1p(np.sum(d * d, axis=0) / T_DOF)
