"""``selection``: private selection's γ, cap T and ε₀ (the theorem's condition checked by
``workbench.privacy``), an optional narrowed list of configurations and the dry-run forecast
narrowing recorded (``forecast``), which ``workbench run`` requires when γ = 0 and T = ∞."""

from __future__ import annotations

from workbench.privacy import check_selection_parameters
from workbench.specification.forecast import RecordedForecast
from workbench.specification.model import Selection
from workbench.specification.space import Configuration
from workbench.validation.sections.context import BuildContext

FIELD = "selection"


def build(ctx: BuildContext) -> Selection:
    """The selection parameters and the narrowed configurations (points checked later)."""
    raw = ctx.doc["selection"]
    try:
        check_selection_parameters(raw["gamma"], raw["max_iterations"], raw["epsilon_0"])
    except ValueError as exc:
        ctx.problem("selection", str(exc))
    configs = None
    if "configurations" in raw:
        configs = []
        for i, c in enumerate(raw["configurations"]):
            try:
                configs.append(Configuration.from_dict(c))
            except (KeyError, TypeError, ValueError, AttributeError):
                ctx.problem(
                    f"selection.configurations[{i}]",
                    "must have 'transforms', 'generator' (with 'family') and 'min_count'",
                )
        configs = tuple(configs)
    recorded = raw.get("forecast")
    if recorded is not None and recorded.get("n_max") is not None and (
            recorded.get("n") is None or recorded["n_max"] < recorded["n"]):
        ctx.problem("selection.forecast.n_max", "needs forecast.n and must be >= it (the "
                    "range of n the forecast was made over)")
    return Selection(
        gamma=float(raw["gamma"]),
        max_iterations=raw["max_iterations"],
        epsilon_0=float(raw["epsilon_0"]),
        configurations=configs,
        forecast=None if recorded is None else RecordedForecast.from_document(recorded),
    )
