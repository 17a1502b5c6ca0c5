"""End-to-end audit of private selection (Liu & Talwar, Thm. 3) with a toy generator.

Data: four binary records; D has no 1s, D′ replaces one record by a 1. Each iteration fits
:class:`ToyCountGenerator` — the count of 1s released with discrete Laplace (Δ = 1 under
replace-one, ε₁) — samples a candidate of m = 4 records holding the clipped noisy count of 1s,
and accepts it when it is homogeneous (all 0s or all 1s), a decision on DP output only. The
loop's output is the candidate's count of 1s (0 or m) or ⊥. This is the classic worst case
for Thm. 3's factor 2: "all 1s" is e^{ε₁} likelier on D′ while success as a whole is e^{ε₁}
likelier on D, so conditioning on success (the uncapped loop) nearly doubles the loss.

Per iteration, with t = e^{−ε₁} and c the count (0 on D, 1 on D′), discrete Laplace gives
P(c + L ≥ m) = t^{m−c}/(1 + t) and P(c + L ≤ 0) = t^{c}/(1 + t) (for c ∈ {0, 1}), from which
:func:`exact_loss` computes the exact max log-ratio of the output law for each variant:

* ``single``: T = 1, claimed ε₁ — output = one iteration's (post-processed) result;
* ``uncapped``: γ = 0, T = ∞, claimed 2ε₁;
* ``capped``: γ = 0.1, ε₀ = 0.1, T = the theorem's minimum (30), claimed 2ε₁ + ε₀.

Trials run the real :func:`workbench.privacy.private_selection` in SIMULATION contexts with
seeded noise (the iteration is above the primitives; the coin is the context's seeded coin).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from workbench.audits.harness import CONFIDENCE, ScaledNoise
from workbench.privacy import (
    PrivacyContext,
    minimum_iterations,
    private_selection,
    sensitivity,
)
from workbench.privacy.audit import AuditResult, Threshold, audit_events
from workbench.privacy.budget_plan import BudgetPlan
from workbench.privacy.noise import SeededNoise
from workbench.transform import Domain

EPSILON_1 = 0.5
CANDIDATE_SIZE = 4
BOTTOM = -1  # the output code of ⊥
LOOP_TRIALS = 4_000
DOMAIN = Domain(("v",), (2,))
DATASETS = (np.zeros((4, 1), dtype=np.int64), np.array([[1], [0], [0], [0]], dtype=np.int64))


class ToyCountGenerator:
    """The smallest DP generator: a noisy count of 1s, sampled back as a table of 0s and 1s."""

    def fit(self, codes: np.ndarray, domain: Domain, epsilon: float, privacy: PrivacyContext
            ) -> ToyCountGenerator:
        """Release the count of 1s in the one column with discrete Laplace (Δ = 1)."""
        count = int(np.count_nonzero(np.asarray(codes)[:, 0] == 1))
        delta = sensitivity.count(privacy.neighbour)
        self.count_ = int(privacy.discrete_laplace(
            [count], sensitivity=delta, epsilon=epsilon, purpose="toy count of 1s").value[0])
        return self

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n records with the clipped noisy count of 1s (post-processing only)."""
        k = min(max(self.count_, 0), n)
        return np.array([[1]] * k + [[0]] * (n - k), dtype=np.int64)


@dataclass(frozen=True)
class LoopVariant:
    """One selection setting and the ε Thm. 3 (or post-processing, for T = 1) claims."""

    name: str
    gamma: float
    max_iterations: int | None
    epsilon_0: float

    @property
    def claimed(self) -> float:
        """ε₁ for T = 1, 2ε₁ + ε₀ otherwise."""
        plan = BudgetPlan(EPSILON_1, gamma=self.gamma, max_iterations=self.max_iterations,
                          epsilon_0=self.epsilon_0)
        return plan.epsilon_total


VARIANTS = (
    LoopVariant("single", 0.0, 1, 0.0),
    LoopVariant("uncapped", 0.0, None, 0.0),
    LoopVariant("capped", 0.1, minimum_iterations(0.1, 0.1), 0.1),
)


def _step(data: np.ndarray, ctx: PrivacyContext) -> Callable[[int], tuple[bool, int]]:
    """One iteration: fit, sample a candidate, accept it when homogeneous."""

    def step(iteration: int) -> tuple[bool, int]:
        candidate = ToyCountGenerator().fit(data, DOMAIN, EPSILON_1, ctx).sample(
            CANDIDATE_SIZE, ctx.rng)
        ones = int(candidate.sum())
        return ones in (0, CANDIDATE_SIZE), ones

    return step


def run_loop(variant: LoopVariant, which: int, trials: int, *, factor: float = 1.0,
             seed: int = 0) -> np.ndarray:
    """``trials`` outputs (count of 1s, or BOTTOM) of the whole loop on D (0) or D′ (1)."""
    noise = ScaledNoise(SeededNoise(np.random.default_rng([seed, which])), factor)
    ctx = PrivacyContext.simulation(seed * 2 + which, noise=noise)
    out = np.empty(trials, dtype=np.int64)
    for i in range(trials):
        result = private_selection(_step(DATASETS[which], ctx), gamma=variant.gamma,
                                   max_iterations=variant.max_iterations, ctx=ctx,
                                   epsilon_0=variant.epsilon_0)
        out[i] = result.output if result.succeeded else BOTTOM
        ctx.records.clear()  # keep memory flat; nothing is accounted in this simulation
    return out


def output_law(variant: LoopVariant, count: int, epsilon: float) -> dict[int, float]:
    """Exact P(output) of the loop when each iteration's noise has ε-scale ``epsilon``."""
    t = math.exp(-epsilon)
    p_all = t ** (CANDIDATE_SIZE - count) / (1 + t)
    p_none = t ** count / (1 + t)
    r = (1 - p_all - p_none) * (1 - variant.gamma)  # fail and go on
    if variant.max_iterations is None:
        reach = 1 / (1 - r)
    else:
        reach = (1 - r ** variant.max_iterations) / (1 - r)
    law = {CANDIDATE_SIZE: p_all * reach, 0: p_none * reach}
    law[BOTTOM] = max(0.0, 1.0 - law[CANDIDATE_SIZE] - law[0])
    return law


def exact_loss(variant: LoopVariant, factor: float = 1.0) -> float:
    """max over outputs of |ln P_D(o)/P_D′(o)| with noise at ``factor`` × the scale."""
    eps = EPSILON_1 / factor
    d, dp = output_law(variant, 0, eps), output_law(variant, 1, eps)
    return max(abs(math.log(d[o] / dp[o])) for o in d if d[o] > 0 and dp[o] > 0)


@dataclass(frozen=True)
class LoopAudit:
    """One variant audited at the documented scale and at half of it."""

    variant: LoopVariant
    at_delta: AuditResult
    at_half: AuditResult


def audit_loop(variant: LoopVariant, *, trials: int = LOOP_TRIALS, seed: int = 0,
               confidence: float = CONFIDENCE) -> LoopAudit:
    """Audit the loop's output law on D vs D′ against the claimed ε, at Δ and at Δ/2."""
    events = [Threshold(float(o), "==") for o in (CANDIDATE_SIZE, 0, BOTTOM)]
    results = []
    for k, factor in enumerate((1.0, 0.5)):
        samples = [run_loop(variant, w, trials, factor=factor, seed=seed * 2 + k) for w in (0, 1)]
        results.append(audit_events(samples[0], samples[1], events, variant.claimed,
                                    confidence=confidence))
    return LoopAudit(variant, results[0], results[1])
