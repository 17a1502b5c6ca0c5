"""The workload family's ``structure`` option wired to its engines: rounds, tree, junction.

Kept apart from :mod:`~workbench.generators.workload_generator` so the family's class stays
about its measurements; this module only says what the option costs and runs it at its ε.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.generators.mbi_model import NoisyMarginal
from workbench.generators.model_limit import ModelLimit
from workbench.generators.structure_junction import run_junction
from workbench.generators.structure_selection import run_structure
from workbench.generators.structure_tree import run_tree, tree_edges

if TYPE_CHECKING:
    from workbench.privacy import PrivacyContext
    from workbench.transform import Domain


def structure_note(gen: Any, eps: float) -> str:
    """The derived workload's note on the ε ``eps`` the structure option takes from ε_gen."""
    if gen.structure == "junction":
        return (f" (ε {eps:.6g} of ε_gen then goes to a width-2 junction tree of unnamed "
                f"cliques, {gen.structure_select_share:g} of it selecting them, the rest "
                "measuring them, within generator.model_limit)")
    if gen.structure.startswith("tree"):
        return (f" (ε {eps:.6g} of ε_gen then goes to a spanning forest of "
                f"unnamed pairs, {gen.structure_select_share:g} of it selecting edges, "
                "the rest measuring them, within generator.model_limit"
                + (f"; then {gen.structure_rounds} rounds of {gen.structure_picks}"
                   if gen.structure == "tree_pairs" else "") + ")")
    if gen.structure != "none":
        return (f" (ε {eps:.6g} of ε_gen goes first to "
                f"{gen.structure_rounds} rounds of {gen.structure_picks} selecting "
                f"unnamed {gen.structure} within generator.model_limit)")
    return ""


def structure_rounds(gen: Any, eps: float, privacy: PrivacyContext,
                     limit: ModelLimit) -> Callable[..., object]:
    """The rounds of :mod:`~workbench.generators.structure_selection` (and the tree of
    :mod:`~workbench.generators.structure_tree`) at ``eps``, as a callable (domain, measured,
    n, truth, measure, warm) → estimate; records the chosen cliques on ``gen.structure_``."""
    def rounds(domain: Domain, measured: list[NoisyMarginal], n: int,
               truth: Callable[..., np.ndarray], measure: Callable[..., NoisyMarginal],
               warm: object | None = None) -> object:
        rest, gen.structure_ = eps, []
        if gen.structure == "junction":
            model, gen.structure_ = run_junction(
                domain, measured, n, truth, measure, epsilon=eps,
                select_share=gen.structure_select_share, edges=gen.structure_edges,
                limit=limit, privacy=privacy, iters=gen.iters, warm=warm)
            return model
        if gen.structure.startswith("tree"):
            both = gen.structure == "tree_pairs"
            # tree_pairs: ε by the cliques each part adds (edges planned vs round picks)
            edges = tree_edges(domain, measured, gen.structure_edges)
            part = eps * edges / (edges + gen.structure_rounds * gen.structure_picks) \
                if both else eps
            warm, gen.structure_ = run_tree(
                domain, measured, n, truth, measure, epsilon=part,
                select_share=gen.structure_select_share, edges=gen.structure_edges,
                limit=limit, privacy=privacy,
                iters=max(1, gen.iters // 4) if both else gen.iters, warm=warm)
            if not both:
                return warm
            rest = eps - part
        model, picked = run_structure(
            domain, measured, n, truth, measure, epsilon=rest,
            rounds=gen.structure_rounds, triples=gen.structure == "pairs_triples",
            limit=limit, privacy=privacy, iters=gen.iters, warm=warm,
            picks=gen.structure_picks)
        gen.structure_ = [*gen.structure_, *picked]
        return model
    return rounds
