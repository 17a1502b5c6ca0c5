"""The ONE definition of a false pass, in words: the sentence every page shows beside it.

A false pass is a release that passes a criterion it truly fails. Its probability is judged
at a fixed failing value that does not depend on any data: the true value sits
:data:`FALSE_PASS_MARGIN` (10%) above the threshold T (clipped like the DP value; for the
relative 1-way error every failing value collapses to λ, where P is the spec's p by
construction, Prop. 6). The number itself is the criterion kind's
(``CriterionKind.false_pass_probability``: P(v_fail + Lap(Δ/ε) passes T_eff), with the kind's
own pass test and effective threshold), so every page asks the kind.
"""

from __future__ import annotations

from workbench.criteria.kinds.base import FALSE_PASS_MARGIN

#: The one sentence every page shows next to a P(false pass).
FALSE_PASS_SENTENCE = (
    "P(false pass) is the chance that a release whose true value is 10% worse than the "
    "threshold still passes the noisy test (Laplace noise of scale Δ/ε); it does not depend "
    "on any data.")

__all__ = ["FALSE_PASS_MARGIN", "FALSE_PASS_SENTENCE"]
