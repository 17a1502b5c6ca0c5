"""No run that never ends unannounced: γ = 0 and T = ∞ need a recorded dry-run forecast.

With γ = 0 and T = ∞ private selection stops only when a candidate passes (Liu & Talwar,
paper §3.7): if no configuration passes on the confidential data, the run never ends. Such a
spec must carry the forecast narrowing recorded (``selection.forecast``, written by
``workbench dryrun --min-pass … --write-narrowed``) with p ≥ :data:`MIN_FORECAST_P`, or the
operator must accept the risk explicitly (``--allow-unbounded``). The forecast is public (it
comes from the proxy), so the refusal may print it. Checked before any noise.
"""

from __future__ import annotations

from workbench.engine.rundir import RunRefused
from workbench.spec import Spec

#: below this forecast pass probability per iteration an unbounded loop is refused
MIN_FORECAST_P = 0.05

FIXES = ("fixes: set selection.gamma > 0 (with a finite selection.max_iterations that the "
         "theorem allows), make it a single attempt (selection.max_iterations = 1), or "
         "accept the risk with --allow-unbounded")


def unbounded_problem(spec: Spec) -> str | None:
    """Why a γ = 0, T = ∞ spec may never end (None when the loop is bounded or forecast)."""
    sel = spec.selection
    if not sel.unbounded:
        return None
    head = ("selection.gamma = 0 and selection.max_iterations = null (T = ∞): private "
            "selection stops only when a candidate passes")
    if sel.forecast is None:
        return (f"{head}, and the spec carries no dry-run forecast (selection.forecast, "
                "recorded by `workbench dryrun --min-pass P --write-narrowed`); " + FIXES)
    if sel.forecast.p < MIN_FORECAST_P:
        return (f"{head}, and its dry-run forecast p = {sel.forecast.p:.3f} per iteration is "
                f"below {MIN_FORECAST_P:g}; " + FIXES)
    return None


def check_bounded(spec: Spec, allow_unbounded: bool = False) -> None:
    """Refuse (RunRefused) a spec that may loop for ever, unless the operator allowed it."""
    problem = unbounded_problem(spec)
    if problem is not None and not allow_unbounded:
        raise RunRefused(problem)
