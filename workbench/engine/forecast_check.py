"""A recorded forecast belongs to its design (issue 26): ``workbench run`` and ``verify`` check.

``selection.forecast`` records ``spec_sha256``, the hash of the design it was made for
(``spec.document.forecast_hash``: the spec without its forecast). A spec edited after its dry
run keeps a forecast of something else, and a γ = 0, T = ∞ run licensed by it would loop on a
promise made for another design; so ``run`` refuses such a spec before any budget, and
``verify`` fails a bundle whose spec carries one. A forecast recorded before issue 26 has no
hash: it is accepted and flagged.
"""

from __future__ import annotations

from workbench.specification import Spec
from workbench.specification.document import forecast_hash


def forecast_problem(spec: Spec) -> str | None:
    """Why the spec's forecast does not belong to it, or None."""
    forecast = spec.selection.forecast
    if forecast is None or forecast.spec_sha256 is None:
        return None
    actual = forecast_hash(spec.document)
    if forecast.spec_sha256 != actual:
        return (f"selection.forecast was made for another design (spec_sha256 "
                f"{forecast.spec_sha256[:12]}…, this design is {actual[:12]}…): the spec "
                "changed after its dry run; rehearse the frozen file again (`workbench "
                "dryrun … --write-narrowed` or `workbench design`)")
    return None


def forecast_words(spec: Spec) -> str:
    """What verify prints about the forecast (it belongs, or carries no hash)."""
    f = spec.selection.forecast
    if f is None:
        return "none recorded"
    at = "" if f.n is None else f" at n = {f.n:,}" + ("" if not f.n_max else f"–{f.n_max:,}")
    interval = "" if f.interval is None else f" [{f.interval[0]:.2f}, {f.interval[1]:.2f}]"
    spread = "" if f.low is None else f", range over proxy scenarios {f.low:.2f}–{f.high:.2f}"
    owner = ("made for this design" if f.spec_sha256 is not None
             else "recorded without the hash of its design (before issue 26)")
    return f"p = {f.p:.3f}{interval}{at}{spread}; {owner}"
