"""Which ``guarantee.json`` field values go with which kind and label, so that a machine reader
and the words never disagree (issue 34); ``verify`` fails a bundle that breaks a rule, naming
the field.

Rules for every kind: ``strict``, ``dataset_level`` and ``proven_for_release`` are booleans,
and ``proven_for_release: true`` needs ``strict`` and ``dataset_level`` true (a bound proven for
the release as a whole is a worst-case, dataset-level one); a label that belongs to a known
kind goes with that kind only. The built-in kinds fix every field:

=====================================  ==========  ===============  ======================
kind                                   ``strict``  ``dataset_level``  ``proven_for_release``
=====================================  ==========  ===============  ======================
``pure_epsilon_dp``                    true        true             true
``epsilon_dp_exact_posterior_mcmc``    false       true             false
``adp_pseudo_posterior``               false       true             false
``per_record_plausible_deniability``   true        false            false
=====================================  ==========  ===============  ======================

and PD's per-record figure must be ε = ε_PD + Σε_criteria (``epsilon_pd`` +
``epsilon_criteria``) when it states its parts. A plug-in kind meets the common rules only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from workbench.generators.bayesian.family import ADP, MCMC_LABEL
from workbench.generators.family import MCMC_KIND, PURE_EPSILON_DP, PURE_KIND, Guarantee
from workbench.generators.plausible_deniability.family import KIND as PD_KIND
from workbench.generators.plausible_deniability.family import LABEL as PD_LABEL

if TYPE_CHECKING:
    from workbench.privacy.budget_plan import BudgetPlan

#: kind → (label, strict, dataset_level, proven_for_release) of the built-in guarantees.
KNOWN: Mapping[str, tuple[str, bool, bool, bool]] = {
    PURE_KIND: (PURE_EPSILON_DP.label, True, True, True),
    MCMC_KIND: (MCMC_LABEL, False, True, False),
    ADP.kind: (ADP.label, False, True, False),
    PD_KIND: (PD_LABEL, True, False, False),
}
_FLAGS = ("strict", "dataset_level", "proven_for_release")
_TOL = 1e-9


def _json(value: Any) -> str:
    return "true" if value is True else "false" if value is False else repr(value)


def guarantee_problems(stated: Mapping[str, Any]) -> list[str]:
    """Disagreements between a guarantee's fields, kind and label ([] when consistent); each
    names the field, e.g. "field 'strict' is true, but kind '…' requires false".

    >>> guarantee_problems(PURE_EPSILON_DP.as_dict())
    []
    >>> guarantee_problems({**PURE_EPSILON_DP.as_dict(), "kind": MCMC_KIND})[0][:36]
    "field 'label' is 'ε-DP', but kind 'e"
    """
    kind, label = stated.get("kind"), stated.get("label")
    out = [f"field {f!r} must be true or false, not {_json(stated.get(f))}"
           for f in _FLAGS if not isinstance(stated.get(f), bool)]
    if out:
        return out
    if stated["proven_for_release"] and not (stated["strict"] and stated["dataset_level"]):
        weak = "strict" if not stated["strict"] else "dataset_level"
        out.append(f"field 'proven_for_release' is true, but {weak!r} is false (a bound proven "
                   "for the release as a whole is strict and dataset-level)")
    if kind in KNOWN:
        want_label, *flags = KNOWN[kind]
        if label != want_label:
            out.append(f"field 'label' is {label!r}, but kind {kind!r} is labelled "
                       f"{want_label!r}")
        out += [f"field {f!r} is {_json(stated[f])}, but kind {kind!r} requires {_json(w)}"
                for f, w in zip(_FLAGS, flags, strict=True) if stated[f] is not w]
    else:
        out += [f"field 'label' is {label!r}, the label of kind {k!r}, but field 'kind' is "
                f"{kind!r}" for k, (lab, *_) in KNOWN.items() if label == lab]
    if kind == PD_KIND:
        out += _record_sum_problems(stated.get("parameters"))
    return out


def _record_sum_problems(parameters: Any) -> list[str]:
    """PD: the stated per-record ε is ε_PD + Σε_criteria when both parts are given."""
    if not isinstance(parameters, Mapping) or "epsilon_criteria" not in parameters:
        return []
    try:
        total, pd, crit = (float(parameters[k]) for k in ("epsilon", "epsilon_pd",
                                                          "epsilon_criteria"))
    except (KeyError, TypeError, ValueError):
        return ["field 'parameters' must give numbers epsilon, epsilon_pd and epsilon_criteria"]
    if not math.isclose(total, pd + crit, abs_tol=_TOL):
        return [f"field 'parameters.epsilon' is {total:g}, but ε_PD + Σε_criteria = "
                f"{pd:g} + {crit:g} = {pd + crit:g}"]
    return []


def records_plan(plan: BudgetPlan, guarantee: Guarantee) -> BudgetPlan:
    """``plan`` with the guarantee's per-record part (:meth:`BudgetPlan.with_records`): gated,
    ε_PD plus the plan's statistics of R, when the guarantee states ε_PD apart."""
    params = guarantee.parameters
    gated = "epsilon_pd" in params
    return plan.with_records(guarantee.label, float(params["epsilon_pd" if gated else "epsilon"]),
                             float(params["delta"]), gated=gated)
