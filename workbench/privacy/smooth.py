"""Smooth sensitivity and its generalized Cauchy calibration (Nissim–Raskhodnikova–Smith 2007).

Why: some releases (kNN-imputed means, survey-weighted counts) have a huge global sensitivity
but a small *local* one on the data at hand. NRS release f(D) + (S(D)/α)·Z, where S is a
β-smooth upper bound on the local sensitivity and Z has an (α, β)-admissible density.

**Smooth sensitivity.** With A_k(D) = max local sensitivity over datasets within distance k of
D (under the run's neighbour relation), SS_β(D) = max_k e^{−βk}·A_k(D) is the smallest β-smooth
upper bound: LS(D) ≤ SS_β(D) ≤ e^β·SS_β(D′) for neighbours D, D′. Any bound built from
upper bounds U_k ≥ A_k with U_k(D) ≤ U_{k+1}(D′) for neighbours is β-smooth too (NRS Lemma
2.3/Definition 2.2; Merrill Def. 2.2.4), which is how the kNN bound 1 + L₁(D) is obtained.

**The noise.** Z has density h(z) = c/(1 + |z|^γ), γ > 1, c = γ·sin(π/γ)/(2π).
Releases take γ in :data:`workbench.privacy.lattice.GAMMA_RANGE` = [1.05, 16] only
(:func:`calibrate` refuses others): the float lattice's accuracy assumption RHO is verified
there, not near γ = 1.
NRS Lemma 2.6: if h is (α, β)-admissible — for every |Δ| ≤ α, |λ| ≤ β and set E,
  sliding   P[Z ∈ E] ≤ e^{ε/2}·P[Z ∈ E + Δ],
  dilation  P[Z ∈ E] ≤ e^{ε/2}·P[Z ∈ e^λ·E],
— and S is β-smooth, then f(D) + (S(D)/α)·Z is ε-DP (the shift of f is ≤ LS ≤ S, i.e. ≤ α
in units of the noise scale; the scale changes by a factor e^{±β}; ε/2 + ε/2 = ε).

Derivation of the constants for this h (one dimension), both pointwise on the density:
* sliding: |ln h(z) − ln h(z+Δ)| ≤ |Δ|·sup_u g(u), with
  g(u) = γ|u|^{γ−1}/(1 + |u|^γ) = |d ln(1+|u|^γ)/du|.
  g′ = 0 at |u|^γ = γ − 1, so sup g = L_γ := (γ − 1)^{(γ−1)/γ} (→ 1 as γ → 1; ≤ γ − 1 for γ ≥ 2;
  L₄ = 3^{3/4} ≈ 2.2795). Hence α = ε/(2·L_γ) for the ideal, real-valued release; the float
  release (:mod:`workbench.privacy.lattice`: clamped to a public range, snapped to a public
  grid, a uniform floor of probability 2^{-12}) costs up to ALLOWANCE ≈ 1.65e-4 more per
  coordinate, so :func:`calibrate` uses α = (ε/2 − d·ALLOWANCE − τ)/L_γ, τ < 1e-11 the
  rounding of the scale: the released value is then exactly ε-DP.
* dilation: P[Z ∈ e^λE] = ∫_E e^λ h(e^λ z) dz, and ln[h(z)/(e^λ h(e^λ z))] = −λ +
  ln[(1 + e^{λγ}|z|^γ)/(1 + |z|^γ)] lies between −λ and λ(γ − 1) (the ratio runs from 1 at
  z = 0 to e^{λγ} as |z| → ∞). Over λ ∈ [−β, β] the sup is β·max(1, γ − 1), so
  β = ε/(2·max(1, γ − 1)).
For d independent coordinates (a vector release, L1 shift): sliding adds up to L_γ·‖Δ‖₁, so α
is unchanged; dilation adds up over the d coordinates, so β = ε/(2·d·max(1, γ − 1)).

**The thesis's calibration is not this one.** Merrill (Cor. 2.2.5, 6.4.3) releases
f + (S/ln 2)·Z with γ = 1 + ε/(2 ln 2) for any ε > 0. By the derivation above that is valid
only when γ ≥ 2, i.e. ε ≥ 2 ln 2 (then β = ln 2 = ε/(2(γ−1)) and α ≈ ε/(2L_γ) ≥ ln 2). Below,
the scale change alone at z = 0 costs ln 2 > ε/2, and its worst-case privacy loss exceeds ε
(≈ 0.91 at ε = 0.5; ``tests/test_smooth.py`` computes it). We always use α, β above.

Moments: E|Z|^m < ∞ iff m < γ − 1; Var Z = sin(π/γ)/sin(3π/γ) for γ > 3 (= 1 at γ = 4), infinite
otherwise — hence the warning "no finite variance" when γ ≤ 3.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from workbench.privacy import _checks, lattice

DEFAULT_GAMMA = 4.0
_MAX_STEPS = 1_000_000  # a callable A_k is read at most this far


@dataclass(frozen=True)
class CauchyCalibration:
    """(α, β) for ε-DP with generalized Cauchy(γ) noise in ``dimension`` coordinates."""

    epsilon: float
    gamma: float
    dimension: int
    alpha: float  # noise scale = S(D)/α
    beta: float  # the smooth bound must be β′-smooth with β′ ≤ β

    @property
    def sigma_per_unit(self) -> float:
        """Std of the noise per unit of smooth sensitivity: sd(Z)/α (∞ when γ ≤ 3)."""
        return cauchy_std(self.gamma) / self.alpha


def sliding_constant(gamma: float) -> float:
    """L_γ = sup_u |d ln(1 + |u|^γ)/du| = (γ − 1)^{(γ−1)/γ}: the sliding Lipschitz constant."""
    g = _gamma(gamma)
    return (g - 1.0) ** ((g - 1.0) / g)


def calibrate(epsilon: float, gamma: float = DEFAULT_GAMMA, dimension: int = 1
              ) -> CauchyCalibration:
    """α = (ε/2 − d·a − τ)/L_γ and β = ε/(2·d·max(1, γ − 1)): the admissibility derived in the
    module doc, with the float lattice's allowance a and rounding slack τ set aside
    (:mod:`workbench.privacy.lattice`), so the snapped float release is exactly ε-DP."""
    eps = _checks.positive_finite("epsilon", epsilon)
    g = lattice.check_gamma(_gamma(gamma))  # the float lattice's proof holds only there
    d = _checks.positive_integer("dimension", dimension)
    sliding = eps / 2.0 - d * lattice.ALLOWANCE - lattice.rounding_slack(eps, g, d)
    if sliding <= eps / 4.0:
        raise ValueError(f"epsilon: a float-safe smooth release of {d} value(s) needs epsilon "
                         f"> {4.0 * d * lattice.ALLOWANCE:.3g} (the float lattice's allowance)")
    return CauchyCalibration(eps, g, d, sliding / sliding_constant(g),
                             eps / (2.0 * d * max(1.0, g - 1.0)))


def gamma_for_smoothness(epsilon: float, beta: float, dimension: int = 1,
                         cap: float = DEFAULT_GAMMA) -> float:
    """The largest γ ≤ ``cap`` whose calibration admits a β-smooth bound: 1 + ε/(2dβ).

    Refuses (ValueError, public numbers only) when no γ can: β > ε/(2d), i.e. ε < 2dβ.
    """
    eps = _checks.positive_finite("epsilon", epsilon)
    b = _checks.positive_finite("beta", beta)
    d = _checks.positive_integer("dimension", dimension)
    if eps < 2.0 * d * b * (1.0 - 1e-12):
        raise ValueError(
            f"epsilon: a {b:.4g}-smooth bound needs epsilon >= {2.0 * d * b:.4g} "
            "with generalized Cauchy noise")
    return max(lattice.GAMMA_RANGE[0], min(float(cap), 1.0 + eps / (2.0 * d * b)))


def smooth_sensitivity(local: Sequence[float] | np.ndarray | Callable[[int], float],
                       beta: float, *, global_bound: float | None = None) -> float:
    """SS_β = max_k e^{−βk}·A_k, A_k = max local sensitivity within distance k.

    ``local`` is either a finite vector A_0..A_K whose last entry bounds A_k for every k ≥ K
    (e.g. the global sensitivity, or the value at which A_k stops growing), or a callable
    k ↦ A_k with ``global_bound`` ≥ every A_k, read until e^{−βk}·global_bound cannot beat the
    running maximum. A_k is replaced by its running maximum (A_k is non-decreasing by
    definition, so this only repairs a caller's loose bound upward).
    """
    b = _checks.positive_finite("beta", beta)
    if callable(local):
        if global_bound is None:
            raise ValueError("global_bound: a callable A_k needs a bound on every A_k")
        cap = _checks.positive_finite("global_bound", global_bound)
        best, running, k = 0.0, 0.0, 0
        while k < _MAX_STEPS and math.exp(-b * k) * cap > best:
            running = max(running, _nonnegative(float(local(k))))
            best = max(best, math.exp(-b * k) * min(running, cap))
            k += 1
        return best
    arr = np.asarray(local, dtype=np.float64).ravel()
    if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError("local: local sensitivities must be a non-empty vector of finite "
                         "numbers >= 0")
    if global_bound is not None:
        arr = np.minimum(arr, _checks.positive_finite("global_bound", global_bound))
    running = np.maximum.accumulate(arr)
    return float(np.max(np.exp(-b * np.arange(arr.size)) * running))


def resolve_bound(cal: CauchyCalibration, given: object, beta: object,
                  local_sensitivity: object, global_bound: float | None) -> tuple[float, float]:
    """(S, the β it is smooth for) of a release: a given S with its β (which must not exceed
    the calibration's), or SS_β computed from local sensitivities A_k at the calibration's β."""
    if (given is None) == (local_sensitivity is None):
        raise ValueError("smooth_sensitivity: give either smooth_sensitivity (with beta) "
                         "or local_sensitivity")
    if local_sensitivity is not None:
        return (smooth_sensitivity(local_sensitivity, cal.beta,  # type: ignore[arg-type]
                                   global_bound=global_bound), cal.beta)
    bound = float(given)  # type: ignore[arg-type]
    if not (math.isfinite(bound) and bound >= 0):
        raise ValueError("smooth_sensitivity must be a finite number >= 0")
    used = _checks.positive_finite("beta", beta)
    if used > cal.beta * (1.0 + 1e-12):
        raise ValueError(
            f"beta: a {used:.4g}-smooth bound is too rough for epsilon = {cal.epsilon:.4g} "
            f"per step, gamma = {cal.gamma:.4g} (beta <= {cal.beta:.4g}); lower gamma or "
            "raise epsilon")
    return bound, used


def cauchy_std(gamma: float) -> float:
    """sd(Z) = √(sin(π/γ)/sin(3π/γ)) for γ > 3 (E z² = ∫z²h / ∫h by the Mellin integral), else ∞."""
    g = _gamma(gamma)
    if g <= 3.0:
        return math.inf
    return math.sqrt(math.sin(math.pi / g) / math.sin(3.0 * math.pi / g))


def cauchy_cdf(z: np.ndarray, gamma: float) -> np.ndarray:
    """P(Z ≤ z): ½ ± ½·I_{w/(1+w)}(1/γ, 1 − 1/γ), w = |z|^γ (for tests and audits)."""
    g = _gamma(gamma)
    arr = np.asarray(z, dtype=np.float64)
    w = np.abs(arr) ** g
    half = 0.5 * special.betainc(1.0 / g, 1.0 - 1.0 / g, w / (1.0 + w))
    return np.where(arr >= 0, 0.5 + half, 0.5 - half)


def _gamma(gamma: object) -> float:
    """γ must be finite and > 1: at γ ≤ 1 the density 1/(1 + |z|^γ) does not integrate."""
    g = _checks.positive_finite("gamma", gamma)
    if g <= 1.0:
        raise ValueError("gamma must be a finite number > 1")
    return g


def _nonnegative(x: float) -> float:
    """A local sensitivity: finite and ≥ 0."""
    if not (math.isfinite(x) and x >= 0):
        raise ValueError("local: local sensitivities must be finite numbers >= 0")
    return x
