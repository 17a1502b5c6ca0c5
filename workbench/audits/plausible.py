"""Audits of plausible deniability (``privacy.plausible``, ``generators.plausible_deniability``):
Test 2 as an ε₀-DP test of the plausible-seed count, and Theorem 1's per-record (ε, δ).

Design: two binary columns, n = 20 records, the family's default splits (D_T 5, D_P 5, D_S 10
records, drawn by the context's seeded permutation), ω = 1 (the last column of the network's
order is resampled, the first copied from the seed), k = 10, t = 5, γ = 1.5, ε₀ = 1.
D is twenty copies of (0, 0); D′ replaces one record that the permutation puts in D_S by
(1, 1). With the same context seed D_T and D_P are the same records, so the model is the same
on both: what changes is one seed, the neighbour Theorem 1 is about.

* **Test 2** (``privacy_test``): a candidate y = (0, ·) has k′ = 10 plausible seeds under D
  (``PrefixIndex.plausible_counts``: every seed agrees with it on the copied column) and 9
  under D′. It passes iff k′ ≥ k + L, L discrete Laplace(1/ε₀), so P(pass) is
  P(L ≤ 0) = 1/(1 + e^{−ε₀}) vs P(L ≤ −1) = e^{−ε₀}/(1 + e^{−ε₀}): a ratio of exactly e^{ε₀}
  (and the same for failing). Audited on the events pass and fail: consistent with ε₀ at the
  test's scale, flagged at half of it.
* **Theorem 1** (the family's ``sample``, one candidate at a time: ``max_attempts`` 1 makes
  ``sample(1)`` a single draw of seed, ω, candidate and test, releasing y or ⊥ on a shortfall).
  Claimed per record: ε = ε₀ + ln(1 + γ/t) = 1.262, δ = e^{−ε₀(k−t)} = 0.0067. An (ε, δ)
  audit: the lower bound on ε for an event E is ln((P̲_D(E) − δ)/P̄_D′(E)) with Clopper–
  Pearson bounds P̲, P̄ (if P_D(E) ≤ e^ε·P_D′(E) + δ then this is ≤ ε). The exact loss here is
  ε₀ + ln(10/9) = 1.105: with a fixed ω every plausible seed makes y with the same
  probability, so the seed factor is k′/(k′ − 1), below Theorem 1's 1 + γ/t (its worst case
  over t < k′ and over seeds anywhere in the γ-band). The test's ε₀ part is tight, so half
  its noise scale (loss 2ε₀ + ln(10/9) = 2.105) is flagged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from workbench.audits.harness import CONFIDENCE, ScaledNoise, seeded_source
from workbench.generators import make_generator
from workbench.generators.family import GeneratorShortfall
from workbench.generators.plausible_deniability import PlausibleDeniability, split_indices
from workbench.generators.plausible_deniability.model import PrefixIndex
from workbench.privacy import PrivacyContext
from workbench.privacy.audit import AuditResult, Threshold, audit_events
from workbench.privacy.plausible import privacy_test, theorem1
from workbench.transform import Domain

K, T, GAMMA, EPSILON_0 = 10, 5, 1.5, 1.0
N = 20
FIT_SEED = 7
DOMAIN = Domain(("a", "b"), (2, 2))
#: ⊥: the candidate failed Test 2 (the single attempt released nothing)
BOTTOM = -1


@lru_cache(maxsize=1)
def datasets() -> tuple[np.ndarray, np.ndarray]:
    """D (twenty (0, 0)) and D′: the first record the fit's permutation puts in D_S → (1, 1)."""
    d = np.zeros((N, 2), dtype=np.int64)
    d_prime = d.copy()
    d_prime[int(_seed_rows()[0])] = (1, 1)
    return d, d_prime


def _generator() -> PlausibleDeniability:
    """The audited configuration (ω = 1, k, t, γ, ε₀ above; one candidate per sample)."""
    return make_generator("plausible_deniability", omega_min=1, omega_max=1, k=K, t=T,
                          gamma=GAMMA, epsilon_0=EPSILON_0, max_attempts=1)


def fitted(which: int, factor: float = 1.0, seed: int = 0) -> PlausibleDeniability:
    """The family fitted on D (0) or D′ (1): the same context seed, so the same D_T, D_P and
    model; noise (the model's and Test 2's) from a seeded source at ``factor`` × its scale."""
    ctx = PrivacyContext.simulation(FIT_SEED, noise=ScaledNoise(seeded_source(seed), factor))
    return _generator().fit(datasets()[which], DOMAIN, 1.0, ctx)


def plausible_counts() -> tuple[int, int]:
    """k′ of the candidate (0, 0) at ω = 1 under D and under D′ (from the fitted seed index)."""
    out = []
    for which in (0, 1):
        index = PrefixIndex(datasets()[which][_seed_rows()], fitted(which).order_,
                            DOMAIN.sizes)
        candidate = np.zeros((1, 2), dtype=np.int64)
        out.append(int(index.plausible_counts(candidate, np.ones(1, np.int64))[0]))
    return out[0], out[1]


def _seed_rows() -> np.ndarray:
    """The rows of D_S under the fit's permutation."""
    f_t, f_p = PlausibleDeniability.shares({})
    return split_indices(N, f_t, f_p, PrivacyContext.simulation(FIT_SEED).rng)[2]


def test2_audit(factor: float = 1.0, *, trials: int = 20_000, seed: int = 0,
                confidence: float = CONFIDENCE) -> AuditResult:
    """Test 2 on k′ (D) and k′ (D′), ``trials`` candidates each, at ``factor`` × 1/ε₀."""
    samples = []
    for k, count in enumerate(plausible_counts()):
        ctx = PrivacyContext.simulation(0, noise=ScaledNoise(seeded_source(2 * seed + k),
                                                             factor))
        passed = privacy_test(ctx, np.full(trials, count, dtype=np.int64), k=K,
                              epsilon_0=EPSILON_0)
        samples.append(passed.astype(np.float64))
    events = [Threshold(1.0, ">="), Threshold(0.0, "<=")]
    return audit_events(samples[0], samples[1], events, EPSILON_0, confidence=confidence)


def released(generator: PlausibleDeniability, trials: int, seed: int) -> np.ndarray:
    """``trials`` single attempts through ``sample(1)``: the released cell's code, or ⊥."""
    rng = np.random.default_rng([seed, 0x7064])
    out = np.empty(trials, dtype=np.int64)
    for i in range(trials):
        try:
            row = generator.sample(1, rng)[0]
        except GeneratorShortfall:
            out[i] = BOTTOM
            continue
        out[i] = int(np.ravel_multi_index(tuple(row), DOMAIN.sizes))
    return out


@dataclass(frozen=True)
class RecordAudit:
    """Theorem 1's claim for one record and the (ε, δ) audit of the released cell."""

    epsilon: float
    delta: float
    exact: float
    result: AuditResult

    @property
    def epsilon_lower_bound(self) -> float:
        """max over events and directions of ln((P̲(E) − δ)/P̄′(E)) (0 if none is positive)."""
        r = self.result
        best = 0.0
        for lo_hi, other in ((r.interval_d, r.interval_d_prime),
                             (r.interval_d_prime, r.interval_d)):
            for (lo, _), (_, hi) in zip(lo_hi, other, strict=True):
                if lo - self.delta > 0 and hi > 0:
                    best = max(best, math.log((lo - self.delta) / hi))
        return best

    @property
    def violates(self) -> bool:
        """The data refute (ε, δ) for this record at the audit's confidence."""
        return self.epsilon_lower_bound > self.epsilon


def exact_record_loss(factor: float = 1.0) -> float:
    """ε₀/factor + ln(k/(k − 1)): the pass-probability ratio of y = (0, ·) from D to D′."""
    return EPSILON_0 / factor + math.log(K / (K - 1))


def theorem1_audit(factor: float = 1.0, *, trials: int = 20_000, seed: int = 0,
                   confidence: float = CONFIDENCE) -> RecordAudit:
    """The released cell (or ⊥) on D and D′ against Theorem 1's (ε, δ) at (k, γ, ε₀, t)."""
    bound = theorem1(K, GAMMA, EPSILON_0, T)
    samples = [released(fitted(which, factor, seed), trials, 2 * seed + which)
               for which in (0, 1)]
    events = [Threshold(float(c), "==") for c in range(BOTTOM, int(np.prod(DOMAIN.sizes)))]
    result = audit_events(samples[0], samples[1], events, bound.epsilon, confidence=confidence)
    return RecordAudit(bound.epsilon, bound.delta, exact_record_loss(factor), result)
