"""The spec at another ε_gen and criterion ε's: what the design assistant prices and drafts.

Kept apart from :mod:`workbench.design.assistant` so the jobs a design sends to its executor
(:mod:`workbench.design.jobs`) rebuild exactly the parent's variant from its document.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any

from workbench.specification import Configuration, Spec
from workbench.validation import build_spec


def variant_document(spec: Spec, eps_gen: float, epsilons: Mapping[str, float] | None = None,
                     tuned: Mapping[str, Mapping[str, Any]] | None = None, caps: bool = True
                     ) -> dict[str, Any]:
    """The document of the spec at ε_gen with the given criterion ε's and tuned parameters.

    ε_gen is written once, as every grid's (and the narrowed list's) generator 'epsilon'; the
    budget's derived fields are left out (the validator derives them). ``caps=False`` leaves
    out the budget's ε caps too: an ε_gen being priced may exceed them, a draft may not."""
    doc = spec.to_document()
    if not caps:
        for key in ("epsilon_total_max", "epsilon_lifetime_max"):
            doc["budget"].pop(key, None)
    for grid in doc["generator"]["search_space"]:
        grid["epsilon"] = [float(eps_gen)]
    for c in doc["selection"].get("configurations") or ():
        c["generator"]["epsilon"] = float(eps_gen)
    for key in ("epsilon_generator", "epsilon_criteria"):
        doc["budget"].pop(key, None)
    for c in doc["criteria"]:
        if epsilons and math.isfinite(epsilons.get(c["id"], math.inf)):
            c["epsilon"] = float(epsilons[c["id"]])  # ∞ (margin ≤ 0): the spec's ε stays
        if tuned and tuned.get(c["id"]):  # parameters its kind tuned on the proxy
            c.setdefault("params", {}).update(copy.deepcopy(dict(tuned[c["id"]])))
    doc["selection"].pop("forecast", None)
    return doc


def variant(spec: Spec, eps_gen: float, epsilons: Mapping[str, float] | None = None,
            tuned: Mapping[str, Mapping[str, Any]] | None = None, caps: bool = True) -> Spec:
    """:func:`variant_document`, validated."""
    return build_spec(variant_document(spec, eps_gen, epsilons, tuned, caps))


def at_epsilon(configuration: Configuration, eps_gen: float | None) -> Configuration:
    """The configuration with its generator at ε_gen (every grid of a variant declares it);
    None: without its own ε_gen (the variant's derived ε_gen applies)."""
    d = configuration.to_dict()
    d["generator"].pop("epsilon", None)
    if eps_gen is not None:
        d["generator"]["epsilon"] = float(eps_gen)
    return Configuration.from_dict(d)
