"""Why a single attempt ended in ⊥: its failing criteria, for the curator (issue 24).

**T = 1.** A single attempt is not private selection: its one iteration is charged ε₁ in full
(loop factor 1, :class:`~workbench.privacy.budget_plan.BudgetPlan`), so every DP value it
released — each criterion's noisy value, already compared with its public threshold — is
covered by that ε₁ whether or not the candidate passed. The curator may learn them: the
enclave ledger keeps them (one ``single_attempt_diagnosis`` line per failing criterion; never
in a bundle, and a ⊥ run publishes none) and ``workbench run`` prints them. A failure before
the criteria (sampling against the synthetic rules, or a generator's shortfall) is said in its
own public words.

**T > 1.** Liu & Talwar's theorem (paper Thm. 3) covers only the selected output — the
released candidate or ⊥ — at the price of the loop factor; the values of rejected iterations
are not covered (each iteration's ε₁ is paid once, through that factor, for the selected one).
So for a loop nothing of the kind is printed or written beyond the enclave ledger's
measurement records, which hold parameters, never values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.engine.iteration import Candidate
    from workbench.privacy import PrivacyContext
    from workbench.specification import Spec


def single_attempt_diagnosis(spec: Spec, candidates: Sequence[Candidate],
                             ctx: PrivacyContext) -> tuple[str, ...]:
    """Lines naming the failing criteria of a ⊥ single attempt, with their DP values and
    thresholds, also written to the enclave ledger; () for a loop (T > 1) or no candidate."""
    if spec.selection.max_iterations != 1 or len(candidates) != 1:
        return ()  # T > 1: only the selected output is covered (module docstring)
    candidate = candidates[0]
    if candidate.failure is not None:
        ctx.log_event("single_attempt_diagnosis", failure=candidate.failure)
        return (f"the single attempt (T = 1) made no candidate: {candidate.failure}",)
    failing = [r for r in candidate.results if not r.passed]
    for r in failing:  # one enclave ledger line per failing criterion
        ctx.log_event("single_attempt_diagnosis", criterion=r.id, kind=r.kind, value=r.value,
                      threshold=r.threshold, effective_threshold=r.effective_threshold,
                      epsilon=r.epsilon)
    head = (f"the single attempt (T = 1) failed {len(failing)} of {len(candidate.results)} "
            "criteria (DP values, covered by the attempt's ε₁):")
    lines = [head]
    for r in failing:
        limit = f"threshold {r.threshold:.6g}"
        if r.effective_threshold != r.threshold:
            limit += f" (effective {r.effective_threshold:.6g})"
        lines.append(f"  {r.id} ({r.kind}): DP value {r.value:.6g}, {limit}")
    return tuple(lines)
