"""``selection``: private selection's γ, cap T and ε₀ (the theorem's condition checked by
``workbench.privacy``), and an optional narrowed list of configurations."""

from __future__ import annotations

from workbench.privacy import check_selection_parameters
from workbench.spec.model import Selection
from workbench.spec.sections.context import BuildContext
from workbench.spec.space import Configuration

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
    return Selection(
        gamma=float(raw["gamma"]),
        max_iterations=raw["max_iterations"],
        epsilon_0=float(raw["epsilon_0"]),
        configurations=configs,
    )
