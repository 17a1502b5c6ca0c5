"""The ONE definition of a false pass, used by the co-design readouts, the spec review and reports.

A false pass is a release that passes a criterion it truly fails. Its probability is judged
at a fixed failing value that does not depend on any data: the true value sits
:data:`FALSE_PASS_MARGIN` (10%) above the threshold T (clipped like the DP value; for the
relative 1-way error every failing value collapses to λ, where P is the spec's p by
construction, Prop. 6). So P(false pass) = P(v_fail + Lap(Δ/ε) < T_eff), with T_eff the
threshold the engine compares with (min(T, T′) where the kind adjusts it).
"""

from __future__ import annotations

import math

from workbench.criteria import kinds
from workbench.spec.model import Criterion

#: How far above T the failing value of a false pass sits, as a share of T.
FALSE_PASS_MARGIN = 0.10

#: The one sentence every page shows next to a P(false pass).
FALSE_PASS_SENTENCE = (
    "P(false pass) is the chance that a release whose true value is 10% worse than the "
    "threshold still passes the noisy test (Laplace noise of scale Δ/ε); it does not depend "
    "on any data.")


def laplace_cdf(x: float, scale: float) -> float:
    """P(Lap(scale) ≤ x) = ½e^{x/b} for x < 0, 1 − ½e^{−x/b} otherwise.

    >>> laplace_cdf(0.0, 1.0), round(laplace_cdf(math.log(0.1), 1.0), 6)
    (0.5, 0.05)
    """
    if scale <= 0:
        return 1.0 if x >= 0 else 0.0
    if x < 0:
        return 0.5 * math.exp(x / scale)
    return 1.0 - 0.5 * math.exp(-x / scale)


def pass_probability(criterion: Criterion, value: float, scale: float, t_eff: float) -> float:
    """P(the engine's DP value is below T_eff) when the exact value is ``value``."""
    clip = kinds.get(criterion.kind).clip
    if clip is not None:
        if t_eff > clip[1]:
            return 1.0  # the DP value is clipped (to [0, 1] for shares), always below T_eff
        if t_eff <= clip[0]:
            return 0.0
    return laplace_cdf(t_eff - value, scale)


def failing_value(criterion: Criterion) -> float:
    """The true value a false pass is judged at: T·(1 + 10%), clipped as the kind clips.

    >>> from types import SimpleNamespace as N
    >>> failing_value(N(kind="conditional_mean", threshold=80.0))
    88.0
    """
    failing = criterion.threshold + FALSE_PASS_MARGIN * abs(criterion.threshold)
    return kinds.get(criterion.kind).failing_value(criterion, failing)


def false_pass_probability(criterion: Criterion, sensitivity: float,
                           t_eff: float | None = None) -> float | None:
    """P(false pass) of one criterion at its ε (None when it takes no noise).

    >>> from types import SimpleNamespace as N
    >>> c = N(kind="conditional_mean", threshold=80.0, epsilon=0.17)
    >>> round(false_pass_probability(c, 0.34), 4)  # b = 2: ½·e^(−8/2)
    0.0092
    """
    if criterion.epsilon <= 0 or sensitivity <= 0:
        return None
    threshold = criterion.threshold if t_eff is None else t_eff
    return pass_probability(criterion, failing_value(criterion),
                            sensitivity / criterion.epsilon, threshold)
