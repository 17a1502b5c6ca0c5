"""The design assistant: per-criterion ε, ε_gen and the selection mode from the proxy at n.

``design(spec, proxy, n, target_p=0.6)`` rehearses the spec's generator on the public proxy
resampled to the registry's expected size, derives each criterion's ε from its margin on the
candidates, forecasts P(all pass) for every alternative, and keeps the smallest ε_total (by
``privacy.budget_plan.BudgetPlan``) whose forecast reaches the target; ``workbench design``
prints the derivation table and writes the draft spec. Public data only (simulation contexts).
Names are loaded on first use (PEP 562), so the CLI's parser does not import the engine.
"""

from __future__ import annotations

import importlib
from typing import Any

_NAMES = {
    "Alternative": "workbench.design.assistant",
    "DesignResult": "workbench.design.assistant",
    "design": "workbench.design.assistant",
    "CandidateFacts": "workbench.design.facts",
    "candidate_facts": "workbench.design.facts",
    "needed_epsilon": "workbench.design.rules",
}


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        return getattr(importlib.import_module(_NAMES[name]), name)
    raise AttributeError(f"module 'workbench.design' has no attribute {name!r}")


__all__ = sorted(_NAMES)
