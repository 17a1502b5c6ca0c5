"""The private-selection loop itself (paper Alg. 1), run through a :class:`PrivacyContext`.

Its arithmetic — Thm. 3's parameter checks, ε of the loop, P(release) — is the pure
:mod:`workbench.privacy.selection` below the context; this module sits above the context
because every iteration is tagged and every coin drawn by it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from workbench.privacy.context import PrivacyContext, PrivacyMode
from workbench.privacy.selection import check_selection_parameters, smallest_epsilon_0

T = TypeVar("T")
StopReason = Literal["success", "gamma", "cap"]


@dataclass(frozen=True)
class SelectionResult(Generic[T]):
    """Outcome of private selection; ``output`` is None on ⊥ (a failed candidate is never output).

    ``iterations`` and ``stopped_by`` are for the enclave's operator: Thm. 3 covers only the
    output, so do not publish them; forecast them from public pass rates with
    :func:`expected_iterations` and :func:`probability_bottom` instead.
    """

    output: T | None
    succeeded: bool
    iterations: int
    stopped_by: StopReason


def _resolve_epsilon_0(
    gamma: float, max_iterations: int | None, epsilon_0: float | None, ctx: PrivacyContext
) -> float:
    """ε₀ from the argument, else the accountant's plan, else the smallest one the cap allows."""
    plan = ctx.accountant.plan if ctx.accountant is not None else None
    if plan is not None:
        if (plan.gamma, plan.max_iterations) != (float(gamma), max_iterations):
            raise ValueError("gamma and max_iterations must match the accountant's selection plan")
        if epsilon_0 is not None and float(epsilon_0) != plan.epsilon_0:
            raise ValueError("epsilon_0 must match the accountant's selection plan")
        return plan.epsilon_0
    if epsilon_0 is not None:
        return float(epsilon_0)
    if max_iterations is None or max_iterations == 1:
        return 0.0
    return min(1.0, smallest_epsilon_0(gamma, max_iterations))


def private_selection(
    step: Callable[[int], tuple[bool, T]],
    *,
    gamma: float,
    max_iterations: int | None,
    ctx: PrivacyContext,
    epsilon_0: float | None = None,
) -> SelectionResult[T]:
    """Run ``step(1)``, ``step(2)``, … until one returns ``(True, output)`` (paper Alg. 1).

    After a failure: stop with ⊥ if T iterations have run ("cap"), else stop with ⊥ with
    probability γ ("gamma"). Before each step ``ctx.begin_iteration(i)`` tags the step's
    "loop" measurements for the accountant. In confidential mode the accountant must hold a
    selection plan with the same γ and T (and so ε₀), since that plan is what pays for it.
    """
    if not callable(step):
        raise ValueError("step must be callable as step(iteration) -> (passed, output)")
    e0 = _resolve_epsilon_0(gamma, max_iterations, epsilon_0, ctx)
    check_selection_parameters(gamma, max_iterations, e0)
    if ctx.mode is PrivacyMode.CONFIDENTIAL and (
        ctx.accountant is None or ctx.accountant.plan is None
    ):
        raise ValueError("ctx: plan the selection on the accountant before running it")
    ctx.log_event(
        "selection_start", gamma=float(gamma), max_iterations=max_iterations, epsilon_0=e0
    )
    i = 0
    try:
        while True:
            i += 1
            ctx.begin_iteration(i)
            passed, output = step(i)
            if passed:
                result = SelectionResult(output, True, i, "success")
                break
            if max_iterations is not None and i >= max_iterations:
                result = SelectionResult(None, False, i, "cap")
                break
            if ctx.coin(gamma):
                result = SelectionResult(None, False, i, "gamma")
                break
    finally:
        ctx.end_iteration()
    ctx.log_event(
        "selection_end",
        succeeded=result.succeeded,
        iterations=result.iterations,
        stopped_by=result.stopped_by,
    )
    return result
