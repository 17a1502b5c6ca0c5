"""Plausible deniability (Bindschaedler, Shokri & Gunter, VLDB 2017): the randomized privacy
test and the per-record (ε, δ) of Theorem 1.

**Test 2 (randomized).** A candidate y made from a seed d is released only if
k′ ≥ k + L, with k′ the number of seed records d_a whose probability of producing y lies in
the seed's γ-band, and L fresh noise per candidate (Laplace(1/ε₀) in the paper).
k′ is a count (sensitivity 1 under replace-one: the replaced record leaves or joins the band)
and an integer, so L here is OpenDP's *discrete* Laplace with scale 1/ε₀ (the two-sided
geometric, P(L = j) ∝ e^{−ε₀|j|}): "k′ − L ≥ k" is post-processing of the ε₀-DP noisy count,
as with the continuous L, and its tail P(L ≤ −m) = e^{−ε₀m}/(1 + e^{−ε₀}) ≤ e^{−ε₀m} is the
bound Theorem 1's δ rests on. Discrete draws are also what makes 166k records affordable
(OpenDP's exact continuous sampler is an order of magnitude slower).

**Theorem 1.** For any integer 1 ≤ t < k, each released record is (ε, δ)-DP with
ε = ε₀ + ln(1 + γ/t) and δ = e^{−ε₀(k − t)}. The bound is *per released record*; the paper
gives no composition over the released dataset, so it is never reported as ε-DP and never
added to ε_total. A seed also enters every criterion evaluated on R, and the release is gated
on them, so the per-record figure stated is ε + Σε_criteria, with δ (issue 34; see
:meth:`~workbench.privacy.budget_plan.BudgetPlan.with_records`, ``gated``).

The test's noise is not charged to the pure-ε accountant: its cost is the per-record bound.
The ledger gets one ``plausible_deniability_test`` line per sampling plan
(:func:`log_test_plan`: k, γ, ε₀, the batch size and the cap, all public functions of n, k,
γ and the declared cap), never one per batch: how many batches ran, like how many candidates
passed, depends on the data and is not covered by any bound (issue 24: sizes computed from
the pass share so far inverted to the number that passed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from workbench.privacy import _checks

if TYPE_CHECKING:
    from workbench.privacy.context import PrivacyContext


@dataclass(frozen=True)
class RecordGuarantee:
    """Theorem 1's (ε, δ) for one released record at the integer t."""

    epsilon: float
    delta: float
    t: int


def theorem1(k: int, gamma: float, epsilon_0: float, t: int) -> RecordGuarantee:
    """ε = ε₀ + ln(1 + γ/t), δ = e^{−ε₀(k − t)} for an integer 1 ≤ t < k.

    >>> g = theorem1(50, 4, 1.0, 29)
    >>> round(g.epsilon, 4), f"{g.delta:.4g}"
    (1.1292, '7.583e-10')
    """
    k = _checks.positive_integer("k", k)
    t = _checks.positive_integer("t", t)
    if not t < k:
        raise ValueError(f"t must satisfy 1 <= t < k = {k}, got t = {t}")
    if not (isinstance(gamma, int | float) and gamma > 1):
        raise ValueError("gamma must be a number > 1")
    eps0 = _checks.positive_finite("epsilon_0", epsilon_0)
    return RecordGuarantee(eps0 + math.log1p(gamma / t), math.exp(-eps0 * (k - t)), t)


def smallest_epsilon(k: int, gamma: float, epsilon_0: float, delta_max: float
                     ) -> RecordGuarantee:
    """The t with the smallest ε whose δ stays ≤ ``delta_max``: ε falls and δ rises with t,
    so it is the largest such t (ValueError when even t = 1 breaks the ceiling).

    >>> smallest_epsilon(50, 4, 1.0, 2.0 ** -30).t
    29
    """
    if not (isinstance(delta_max, int | float) and 0 < delta_max < 1):
        raise ValueError("delta_max must be a number in (0, 1)")
    eps0 = _checks.positive_finite("epsilon_0", epsilon_0)
    # δ ≤ δ_max  ⇔  k − t ≥ ln(1/δ_max)/ε₀
    t = int(k - math.ceil(math.log(1.0 / delta_max) / eps0 - 1e-12))
    t = min(t, k - 1)
    while t >= 1 and theorem1(k, gamma, eps0, t).delta > delta_max:
        t -= 1
    if t < 1:
        raise ValueError(f"no t in 1..{k - 1} gives δ <= {delta_max:g} at k = {k}, "
                         f"ε₀ = {eps0:g}: raise k or ε₀, or the δ ceiling")
    return theorem1(k, gamma, eps0, t)


def log_test_plan(ctx: PrivacyContext, *, purpose: str, k: int, gamma: float,
                  epsilon_0: float, records: int, batch: int, cap: int) -> None:
    """The one ledger line of a sampling plan: public numbers fixed before any candidate is
    tested (never how many batches ran or how many candidates passed)."""
    ctx.log_event("plausible_deniability_test", purpose=_checks.purpose(purpose),
                  k=_checks.positive_integer("k", k), gamma=float(gamma),
                  epsilon_0=_checks.positive_finite("epsilon_0", epsilon_0),
                  records=int(records), batch=int(batch), candidates_max=int(cap),
                  iteration=ctx.iteration)


def privacy_test(ctx: PrivacyContext, plausible_counts: np.ndarray, *, k: int,
                 epsilon_0: float) -> np.ndarray:
    """Test 2 on a batch: True where k′ ≥ k + L, with fresh discrete Laplace(1/ε₀) noise L for
    every candidate, drawn by the context's noise source (OpenDP in a confidential run).
    Nothing is logged per batch (see :func:`log_test_plan`)."""
    counts = _checks.integers("plausible_counts", plausible_counts).ravel()
    k = _checks.positive_integer("k", k)
    eps0 = _checks.positive_finite("epsilon_0", epsilon_0)
    if counts.size == 0:
        return np.zeros(0, dtype=bool)
    thresholds = ctx.noise.discrete_laplace_vector(np.full(counts.size, k, dtype=np.int64),
                                                   1, eps0)
    return counts >= thresholds
