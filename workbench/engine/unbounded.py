"""No run that never ends unannounced: γ = 0 and T = ∞ need a forecast made at the data's n.

With γ = 0 and T = ∞ private selection stops only when a candidate passes (Liu & Talwar,
paper §3.7): if no configuration passes on the confidential data, the run never ends. Such a
spec must carry the forecast narrowing recorded (``selection.forecast``, written by
``workbench dryrun --min-pass … --write-narrowed``) with p ≥ :data:`MIN_FORECAST_P`, or the
operator must accept the risk explicitly (``--allow-unbounded``). Checked before any noise.

**The forecast holds at the n it was made at.** Pass rates move with n (the noise of every
criterion is fixed while the statistics scale with n): a forecast made at 166,000 records says
nothing at 3,000, where the narrowed spec of the paper loops for ever. So the forecast records
its n (``forecast.n``, and ``forecast.n_max`` when a range was rehearsed at both ends), and a
γ = 0, T = ∞ run is refused unless the cleaned data's n lies in the sizes it covers
(:func:`covered_sizes`): a range [n, n_max] as recorded; a single n within ±
:data:`N_TOLERANCE` of it (10%: the rehearsal resamples the proxy at one n, and a registry's
final count differs from its planning figure by a few percent); without a recorded n, the
spec's ``schema.expected_n`` the same way. n is public under ``metadata.n_policy: public``
(replace-one neighbours: generators sample n records, sensitivities assume it), so the refusal
may print both sizes; under ``dp`` the validator refuses γ = 0, T = ∞, so no run reaches this
check with a confidential n. The data are read and cleaned before the budget store is
opened, so a refused run spends nothing and writes nothing there.
"""

from __future__ import annotations

import math

from workbench.engine.rundir import RunRefused
from workbench.specification import Spec

#: below this forecast pass probability per iteration an unbounded loop is refused
MIN_FORECAST_P = 0.05
#: a forecast made at one n covers data of n·(1 ± N_TOLERANCE) records
N_TOLERANCE = 0.10

FIXES = ("fixes: set selection.gamma > 0 (with a finite selection.max_iterations that the "
         "theorem allows), make it a single attempt (selection.max_iterations = 1), or "
         "accept the risk with --allow-unbounded")
HEAD = ("selection.gamma = 0 and selection.max_iterations = null (T = ∞): private "
        "selection stops only when a candidate passes")


def unbounded_problem(spec: Spec) -> str | None:
    """Why a γ = 0, T = ∞ spec may never end (None when the loop is bounded or forecast)."""
    sel = spec.selection
    if not sel.unbounded:
        return None
    if sel.forecast is None:
        return (f"{HEAD}, and the spec carries no dry-run forecast (selection.forecast, "
                "recorded by `workbench dryrun --min-pass P --write-narrowed`); " + FIXES)
    if sel.forecast.p < MIN_FORECAST_P:
        return (f"{HEAD}, and its dry-run forecast p = {sel.forecast.p:.3f} per iteration is "
                f"below {MIN_FORECAST_P:g}; " + FIXES)
    return None


def check_bounded(spec: Spec, allow_unbounded: bool = False) -> None:
    """Refuse (RunRefused) a spec that may loop for ever, unless the operator allowed it."""
    problem = unbounded_problem(spec)
    if problem is not None and not allow_unbounded:
        raise RunRefused(problem)


def covered_sizes(spec: Spec) -> tuple[int, int, str] | None:
    """(low, high, where from) of the n a γ = 0, T = ∞ spec's forecast covers, or None.

    >>> _around(166_000)
    (149400, 182600)
    """
    forecast = spec.selection.forecast
    if forecast is not None and forecast.n is not None:
        if forecast.n_max is not None and forecast.n_max > forecast.n:
            return forecast.n, forecast.n_max, (
                f"its dry-run forecast was made over n = {forecast.n:,}–{forecast.n_max:,}")
        low, high = _around(forecast.n)
        return low, high, (f"its dry-run forecast was made at n = {forecast.n:,} (covering "
                           f"{low:,}–{high:,}, ±{N_TOLERANCE:.0%})")
    expected = spec.expected_n
    if expected is not None:
        low, high = (expected.low, expected.high) if expected.is_range else _around(
            expected.low)
        return low, high, (f"its forecast records no n, and schema.expected_n covers "
                           f"{low:,}–{high:,}")
    return None


def _around(n: int) -> tuple[int, int]:
    """n·(1 ± N_TOLERANCE), rounded outwards."""
    return (math.floor(n * (1 - N_TOLERANCE) + 1e-9), math.ceil(n * (1 + N_TOLERANCE) - 1e-9))


def check_size(spec: Spec, n: int, allow_unbounded: bool = False) -> None:
    """Refuse a γ = 0, T = ∞ run whose cleaned n lies outside the sizes its forecast covers
    (before any budget: the caller has read and cleaned the data, nothing else)."""
    if not spec.selection.unbounded or allow_unbounded:
        return
    covered = covered_sizes(spec)
    ways = ("Nothing was run and no budget was spent. Ways out: (1) a forecast at this n: "
            f"`workbench dryrun SPEC PROXY --n {n} --min-pass P --write-narrowed OUT.json`; "
            "(2) a cap T with γ > 0: selection.gamma > 0 and a finite "
            "selection.max_iterations; (3) accept the risk with --allow-unbounded")
    if covered is None:
        raise RunRefused(f"{HEAD}, and neither its forecast nor schema.expected_n says at "
                         f"which n it was made; the cleaned data have n = {n:,} records. "
                         + ways)
    low, high, source = covered
    if not low <= n <= high:
        raise RunRefused(f"{HEAD}; {source}, but the cleaned data have n = {n:,} records, "
                         "so the forecast says nothing about whether this run ends. " + ways)
