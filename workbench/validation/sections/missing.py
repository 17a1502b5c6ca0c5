"""The missing-value fields of ``schema.columns[]``: label, declared maximum rate, source name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.specification.errors import join_path
from workbench.transform.missing import DEFAULT_MAX_MISSING_RATE
from workbench.validation.sections.context import BuildContext

#: The label a missing value gets when the spec names none.
DEFAULT_LABELS = {"category": "NA", "allow": ""}


def missing_fields(ctx: BuildContext, path: str, raw: Mapping[str, Any],
                   domain: tuple | None) -> dict[str, Any]:
    """``missing_label``, ``max_missing_rate`` and ``source`` of one column, checked."""
    policy = raw["missing"]
    label = raw.get("missing_label", DEFAULT_LABELS.get(policy, ""))
    rate = raw.get("max_missing_rate")
    if policy == "forbid":
        for key in ("missing_label", "max_missing_rate"):
            if key in raw:
                ctx.problem(join_path(path, key), f"'{key}' needs missing: category or allow")
    elif domain is not None and label in {str(v) for v in domain}:
        ctx.problem(join_path(path, "missing_label"),
                    "the missing label must differ from every domain value")
    if policy == "category" and not label:
        ctx.problem(join_path(path, "missing_label"), "a missing category needs a label")
    if policy == "allow" and rate is None:
        rate = DEFAULT_MAX_MISSING_RATE
    return {"missing_label": label if policy != "forbid" else "",
            "max_missing_rate": None if rate is None else float(rate),
            "source": raw.get("source")}
