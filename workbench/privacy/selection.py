"""Private selection with a known threshold (Liu & Talwar, STOC 2019, Alg. 1; paper Alg. 1, Thm. 3).

Repeat an iteration until it succeeds; after each failure stop with probability γ and output ⊥;
never run more than T iterations. If one iteration is ε₁-DP the whole procedure is
(2ε₁ + ε₀)-DP when

* γ ∈ (0, 1] and T ≥ max{(1/γ)·ln(2/ε₀), 1 + 1/(eγ)} with ε₀ ∈ (0, 1]   (capped loop), or
* T = ∞ (``None``) and ε₀ = 0, for any γ ∈ [0, 1] (the uncapped loop; the paper's release used
  γ = 0, and OpenDP's ``make_select_private_candidate`` is this case with a 2ε map).

γ = 0 with a finite T is rejected: the cap would be reached only when every iteration failed,
so whether ⊥ is output would depend on the data with no randomisation to hide it.

**Single attempt (T = 1).** One iteration, then the candidate or ⊥: the output is a function of
one ε₁-DP iteration, so it costs ε₁ by post-processing, not 2ε₁ (γ is irrelevant; ε₀ must be
0). When the public dry run forecasts a high pass probability p this is the cheaper design: a
failed attempt spends ε₁ and releases nothing, and repeating it until success costs ε₁/p in
expectation (a geometric number of attempts, basic composition, each one recorded in the
dataset's budget store under ``--spend-again``), below 2ε₁ whenever p > ½. That holds because
the statistics computed once outside the loop (ε_once) are kept in the budget store and reused
by every retry of the same spec on the same dataset, so they are charged once, ever: the whole
expected cost until a release is ε_once + ε₁/p (``BudgetPlan.expected_epsilon_until_release``).
Recomputing them on every attempt would cost (ε_once + ε₁)/p.

Why not OpenDP's ``make_select_private_candidate``: it needs the iteration as an OpenDP
``Measurement`` releasing ``(score, candidate)``; ours is arbitrary Python (transform, fit a
generator, sample, evaluate criteria) whose privacy is accounted by our own accountant, so it
could only be wrapped with ``make_user_measurement``, i.e. an unverified privacy claim. It also
has no iteration cap T and no hook to tell the ledger which iteration a measurement belongs
to. The loop (:mod:`workbench.privacy.loop`, above the context) is a few lines; its coin
comes from the context (``secrets``-backed ``random.SystemRandom`` in confidential mode, a
seeded generator in simulation). This module is the loop's pure arithmetic.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

from workbench.privacy import _checks


def _check_max_iterations(max_iterations: object) -> int | None:
    """Return T as an int ≥ 1, or None for no cap."""
    if max_iterations is None:
        return None
    if isinstance(max_iterations, bool) or not isinstance(max_iterations, Integral):
        raise ValueError("max_iterations must be an integer ≥ 1 or None (no cap)")
    if int(max_iterations) < 1:
        raise ValueError("max_iterations must be an integer ≥ 1 or None (no cap)")
    return int(max_iterations)


def minimum_iterations(gamma: float, epsilon_0: float) -> int:
    """Smallest cap T allowed by Thm. 3: ⌈max{(1/γ)·ln(2/ε₀), 1 + 1/(eγ)}⌉ for γ > 0, ε₀ ∈ (0, 1].

    >>> minimum_iterations(0.1, 0.5)
    14
    """
    g = _checks.probability("gamma", gamma)
    if g == 0.0:
        raise ValueError("gamma must be > 0 for a finite max_iterations")
    e0 = _check_epsilon_0_capped(epsilon_0)
    return math.ceil(max(math.log(2.0 / e0) / g, 1.0 + 1.0 / (math.e * g)) - 1e-12)


def smallest_epsilon_0(gamma: float, max_iterations: int) -> float:
    """Smallest ε₀ that a cap T pays for: T ≥ (1/γ)·ln(2/ε₀) ⇔ ε₀ ≥ 2·exp(−γT).

    Raises ValueError if no ε₀ ∈ (0, 1] works (T < ln 2/γ or T < 1 + 1/(eγ)).

    >>> round(smallest_epsilon_0(0.2, 10), 4)
    0.2707
    """
    g = _checks.probability("gamma", gamma)
    t = _check_max_iterations(max_iterations)
    if g == 0.0 or t is None:
        raise ValueError("gamma must be > 0 and max_iterations finite for a cap to cost ε₀")
    e0 = 2.0 * math.exp(-g * t)
    check_selection_parameters(g, t, min(e0, 1.0))
    return e0


def _check_epsilon_0_capped(epsilon_0: object) -> float:
    """ε₀ of a capped loop must lie in (0, 1] (Thm. 3's range)."""
    if isinstance(epsilon_0, bool) or not isinstance(epsilon_0, Real):
        raise ValueError("epsilon_0 must be a number in (0, 1] when max_iterations is finite")
    e0 = float(epsilon_0)
    if not 0.0 < e0 <= 1.0:
        raise ValueError("epsilon_0 must be a number in (0, 1] when max_iterations is finite")
    return e0


def loop_factor(max_iterations: int | None) -> int:
    """How many times ε₁ the loop costs: 1 for a single attempt (T = 1), else 2 (Thm. 3).

    >>> loop_factor(1), loop_factor(None), loop_factor(20)
    (1, 2, 2)
    """
    return 1 if max_iterations == 1 else 2


def check_selection_parameters(gamma: float, max_iterations: int | None, epsilon_0: float) -> None:
    """Raise ValueError naming the parameter unless (γ, T, ε₀) satisfy Thm. 3 (see module doc)."""
    g = _checks.probability("gamma", gamma)
    t = _check_max_iterations(max_iterations)
    if t is None or t == 1:
        if isinstance(epsilon_0, bool) or not isinstance(epsilon_0, Real) or epsilon_0 != 0:
            why = "is 1 (a single attempt costs ε₁)" if t else "is None (uncapped, 2ε₁)"
            raise ValueError(f"epsilon_0 must be 0 when max_iterations {why}")
        return
    if g == 0.0:
        raise ValueError(
            "max_iterations must be None when gamma = 0: with no random stop, reaching the cap "
            "would reveal that every iteration failed (⊥ becomes data-dependent)"
        )
    e0 = _check_epsilon_0_capped(epsilon_0)
    need = max(math.log(2.0 / e0) / g, 1.0 + 1.0 / (math.e * g))
    if t < need - 1e-9:
        raise ValueError(
            f"max_iterations must be ≥ max{{(1/γ)·ln(2/ε₀), 1 + 1/(eγ)}} = {need:.4g} "
            f"for gamma = {g:g} and epsilon_0 = {e0:g} (Liu & Talwar, Thm. 3)"
        )


def selection_epsilon(
    epsilon_per_iteration: float, epsilon_0: float = 0.0, max_iterations: int | None = None
) -> float:
    """ε of the whole selection loop: 2ε₁ + ε₀ (Thm. 3), or ε₁ for a single attempt (T = 1).

    >>> selection_epsilon(4.99)
    9.98
    >>> selection_epsilon(4.99, 0.0, max_iterations=1)
    4.99
    """
    e1 = _checks.positive_finite("epsilon_per_iteration", epsilon_per_iteration)
    if isinstance(epsilon_0, bool) or not isinstance(epsilon_0, Real):
        raise ValueError("epsilon_0 must be a number in [0, 1]")
    if not 0.0 <= float(epsilon_0) <= 1.0:
        raise ValueError("epsilon_0 must be a number in [0, 1]")
    return loop_factor(max_iterations) * e1 + float(epsilon_0)


def _log_r(p: float, gamma: float) -> float:
    """log r with r = (1 − p)(1 − γ), the chance an iteration neither succeeds nor stops."""
    return math.log1p(-p) + math.log1p(-gamma) if p < 1.0 and gamma < 1.0 else -math.inf


def _one_minus_r_power(p: float, gamma: float, max_iterations: int | None) -> float:
    """1 − r^T computed without cancellation (r^∞ = 0 when r < 1)."""
    log_r = _log_r(p, gamma)
    if max_iterations is None:
        return 0.0 if log_r == 0.0 else 1.0
    return -math.expm1(max_iterations * log_r)


def expected_iterations(p: float, gamma: float, max_iterations: int | None) -> float:
    """E[iterations] = Σ_{k=1..T} r^(k−1) = (1 − r^T)/(1 − r), r = (1 − p)(1 − γ).

    Edge cases: r = 1 (p = 0 and γ = 0) gives T, or ∞ when T is None (the loop never ends);
    T = None with r < 1 gives 1/(1 − r), e.g. 1/p for γ = 0.

    >>> expected_iterations(0.2, 0.0, None)
    5.0
    """
    p = _checks.probability("p", p)
    g = _checks.probability("gamma", gamma)
    t = _check_max_iterations(max_iterations)
    one_minus_r = p + g - p * g
    if one_minus_r == 0.0:
        return math.inf if t is None else float(t)
    return _one_minus_r_power(p, g, t) / one_minus_r


def probability_success(p: float, gamma: float, max_iterations: int | None) -> float:
    """P(a candidate is output) = p·(1 − r^T)/(1 − r); 0 when p = 0, 1 when γ = 0, T = ∞, p > 0."""
    p = _checks.probability("p", p)
    g = _checks.probability("gamma", gamma)
    t = _check_max_iterations(max_iterations)
    if p == 0.0:
        return 0.0
    return min(1.0, p * _one_minus_r_power(p, g, t) / (p + g - p * g))


def probability_bottom(p: float, gamma: float, max_iterations: int | None) -> float:
    """P(the loop halts with ⊥) = 1 − p·(1 − r^T)/(1 − r).

    Edge case: with p = 0, γ = 0 and T = ∞ the loop never halts, so it never outputs ⊥ and
    this returns 0.0 (``expected_iterations`` returns ∞ to flag it). Otherwise the loop halts
    with probability 1 and P(⊥) = 1 − P(success).

    >>> round(probability_bottom(0.1, 0.2, 10), 6)
    0.656228
    """
    p = _checks.probability("p", p)
    g = _checks.probability("gamma", gamma)
    t = _check_max_iterations(max_iterations)
    if p == 0.0 and g == 0.0 and t is None:
        return 0.0
    return max(0.0, 1.0 - probability_success(p, g, t))
