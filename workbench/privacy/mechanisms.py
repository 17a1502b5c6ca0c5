"""The three noise primitives, all drawn by OpenDP (which samples from the OS CSPRNG).

They are the confidential run's noise, reached only through
:class:`workbench.privacy.noise.OpenDPNoise`, the source every CONFIDENTIAL
:class:`PrivacyContext` is bound to. Each function builds an OpenDP measurement calibrated to
(Δ, ε), checks with OpenDP's own privacy map that the measurement really is ε-DP at distance
Δ, and only then invokes it.
Nothing here is seedable: numpy's generators are never used for noise.

* ``laplace_vector``: continuous Laplace, scale b = Δ/ε on an L1-sensitivity-Δ float vector.
* ``discrete_laplace_vector``: discrete Laplace (two-sided geometric), scale b = Δ/ε on an
  L1-sensitivity-Δ integer vector (counts).
* ``noisy_max_index``: OpenDP's ``make_noisy_max`` at scale β = 2Δ/ε on scores whose L∞
  sensitivity is Δ. Under ``max_divergence`` OpenDP 0.16 runs permute-and-flip (McKenna &
  Sheldon 2020): candidates in a uniformly random order, candidate i accepted with
  probability exp(−(max − sᵢ)/β), the same law as argmax of sᵢ + Exponential(β). It is ε-DP
  like the exponential mechanism and never worse in expected score, but its selection
  probabilities are not ∝ exp(ε·score/(2Δ)). (Gumbel noise, i.e. the textbook exponential
  mechanism, is only offered under zCDP, whose map cannot certify pure ε.)
* ``laplace_threshold``: OpenDP's ``make_laplace_threshold`` (Rogers 2023): discrete Laplace
  at scale b = L1/ε on every count of a label → count map with unknown keys, and only the
  labels whose noisy count reaches a threshold τ are released. (ε, δ)-DP at input distance
  (L0, L1, L∞): ε = L1/b, and δ is the chance that a label held by at most L∞ records passes
  τ, over L0 labels; :func:`partition_threshold` finds the smallest τ whose δ fits.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import opendp.prelude as dp


@lru_cache(maxsize=1)
def _opendp() -> Any:
    """OpenDP's prelude with 'contrib' enabled, imported on the first draw (it pulls in
    scikit-learn through its extras: about a second that commands drawing no noise skip)."""
    import opendp.prelude as prelude

    prelude.enable_features("contrib")
    return prelude

_SLACK = 1e-9  # OpenDP's maps round up in float arithmetic; allow this relative excess


def _checked(measurement: dp.Measurement, d_in: float | int, epsilon: float) -> float:
    """Return OpenDP's ε for distance d_in; refuse if it exceeds the requested ε."""
    achieved = float(measurement.map(d_in))
    if achieved > epsilon * (1.0 + _SLACK):
        raise RuntimeError("privacy map exceeds the requested epsilon; noise not drawn")
    return max(achieved, epsilon)


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """b = Δ/ε for ε-DP with L1 sensitivity Δ (Dwork et al. 2006)."""
    return sensitivity / epsilon


def laplace_cdf(x: float, scale: float) -> float:
    """P(Lap(b) ≤ x) = ½e^{x/b} for x < 0, 1 − ½e^{−x/b} otherwise; a step at 0 when b = 0.

    The ONE Laplace CDF: every pass probability and false-pass probability is computed with it
    (through the criterion kinds' pass decisions).

    >>> laplace_cdf(0.0, 1.0), round(laplace_cdf(math.log(0.1), 1.0), 6)
    (0.5, 0.05)
    """
    if scale <= 0:
        return 1.0 if x >= 0 else 0.0
    if x < 0:
        return 0.5 * math.exp(x / scale)
    return 1.0 - 0.5 * math.exp(-x / scale)


def noisy_max_scale(sensitivity: float, epsilon: float) -> float:
    """β = 2Δ/ε: OpenDP's noisy-max scale for ε-DP at L∞ sensitivity Δ.

    Under ``max_divergence`` OpenDP's map is ε = range distance/β and the range distance of
    scores at L∞ distance Δ is 2Δ (one score up by Δ, another down by Δ), hence β = 2Δ/ε.
    """
    return 2.0 * sensitivity / epsilon


def laplace_vector(values: np.ndarray, sensitivity: float, epsilon: float) -> np.ndarray:
    """Add continuous Laplace(Δ/ε) to every entry; the whole vector has L1 sensitivity Δ."""
    dp = _opendp()
    flat = np.ascontiguousarray(values, dtype=np.float64).ravel()
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    meas = dp.m.make_laplace(
        domain, dp.l1_distance(T=float), scale=laplace_scale(sensitivity, epsilon)
    )
    _checked(meas, float(sensitivity), epsilon)
    return np.asarray(meas(flat.tolist()), dtype=np.float64).reshape(np.shape(values))


def discrete_laplace_vector(values: np.ndarray, sensitivity: int, epsilon: float) -> np.ndarray:
    """Add discrete Laplace(Δ/ε) to every integer entry; the vector has L1 sensitivity Δ."""
    dp = _opendp()
    flat = np.ascontiguousarray(values, dtype=np.int64).ravel()
    domain = dp.vector_domain(dp.atom_domain(T=int))
    meas = dp.m.make_laplace(
        domain, dp.l1_distance(T=int), scale=laplace_scale(sensitivity, epsilon)
    )
    _checked(meas, int(sensitivity), epsilon)
    return np.asarray(meas(flat.tolist()), dtype=np.int64).reshape(np.shape(values))


def noisy_max_index(scores: np.ndarray, sensitivity: float, epsilon: float) -> int:
    """ε-DP argmax: report-noisy-max with Exponential(2Δ/ε) noise, i.e. permute-and-flip."""
    dp = _opendp()
    flat = np.ascontiguousarray(scores, dtype=np.float64).ravel()
    if flat.size == 1:
        return 0
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=int(flat.size))
    meas = dp.m.make_noisy_max(
        domain,
        dp.linf_distance(T=float),
        dp.max_divergence(),
        scale=noisy_max_scale(sensitivity, epsilon),
    )
    _checked(meas, float(sensitivity), epsilon)
    index = int(meas(flat.tolist()))
    if not 0 <= index < flat.size or math.isnan(flat[index]):
        raise RuntimeError("noisy max returned an invalid index")
    return index


def _threshold_measurement(scale: float, threshold: int) -> Any:
    """OpenDP's thresholded partition selection over str labels with i64 counts."""
    dp = _opendp()
    domain = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=dp.i64))
    metric = dp.l01inf_distance(dp.absolute_distance(T=dp.i64))
    return dp.m.make_laplace_threshold(domain, metric, scale=scale, threshold=threshold)


def partition_threshold(distance: tuple[int, int, int], epsilon: float, delta: float
                        ) -> tuple[float, int]:
    """(b, τ) of an (ε, δ)-DP thresholded selection at ``distance`` = (L0, L1, L∞): b = L1/ε
    and the smallest integer τ ≥ L∞ + 1 whose δ, by OpenDP's own privacy map, is ≤ ``delta``.

    Public: only ε, δ and the distance enter (never the data). δ falls as τ grows, so a
    doubling search then a bisection on τ; the first guess is L∞ + b·ln(L0/(2δ)), the
    continuous-Laplace tail.
    """
    l0, l1, linf = distance
    scale = l1 / epsilon

    def fits(tau: int) -> bool:
        eps, dlt = _threshold_measurement(scale, tau).map((l0, l1, linf))
        return float(eps) <= epsilon * (1.0 + _SLACK) and float(dlt) <= delta

    lo = linf  # τ = L∞ never fits: a label of L∞ records passes half the time
    hi = max(linf + 1, math.ceil(linf + scale * math.log(max(l0, 1) / (2.0 * delta))))
    while not fits(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    return scale, hi


def laplace_threshold(counts: dict[str, int], scale: float, threshold: int,
                      distance: tuple[int, int, int], epsilon: float, delta: float
                      ) -> dict[str, int]:
    """The labels whose count + discrete Laplace(b) reaches τ, with those noisy counts;
    OpenDP's map is checked to give at most (ε, δ) at ``distance`` before drawing."""
    meas = _threshold_measurement(scale, threshold)
    eps, dlt = meas.map(distance)
    if float(eps) > epsilon * (1.0 + _SLACK) or float(dlt) > delta * (1.0 + _SLACK):
        raise RuntimeError("privacy map exceeds the requested (epsilon, delta); noise not drawn")
    released = meas({str(k): int(v) for k, v in counts.items()})
    return {str(k): int(v) for k, v in released.items()}
