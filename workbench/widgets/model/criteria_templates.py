"""Starting points for a new criterion of each kind, filled from the draft's public schema."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

KINDS = (
    "max_marginal_error",
    "relative_one_way",
    "conditional_mean",
    "regression_coefficients",
    "regression_mae",
    "faithfulness",
    "max_ecdf",
    "tv_marginals",
    "face_privacy_count",
)


def _numeric_columns(document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Integer and continuous columns (they have bounds for a criterion's [L, U])."""
    cols = document.get("schema", {}).get("columns", [])
    numeric = ("integer", "continuous")
    return [c for c in cols if isinstance(c, Mapping) and c.get("type") in numeric]


def new_criterion(kind: str, criterion_id: str, document: Mapping[str, Any]) -> dict[str, Any]:
    """A valid-looking criterion of ``kind``; thresholds are placeholders to tune on the proxy."""
    if kind not in KINDS:
        raise ValueError(f"unknown criterion kind {kind!r}")
    numeric = _numeric_columns(document)
    target = numeric[-1] if numeric else {"name": "", "bounds": [0, 1]}
    bounds = list(target.get("bounds", [0, 1]))
    marginals = next((c.get("id") for c in document.get("criteria", [])
                      if isinstance(c, Mapping) and c.get("kind") == "max_marginal_error"), None)
    base: dict[str, Any] = {"id": criterion_id, "kind": kind, "epsilon": 0.01}
    if kind in ("max_marginal_error", "faithfulness", "max_ecdf", "tv_marginals"):
        base |= {"threshold": 0.05, "bounds": [0, 1]}
        params = {"max_marginal_error": {"max_way": None}, "faithfulness": {},
                  "max_ecdf": {"column": target.get("name")},
                  "tv_marginals": {"way": 2, "aggregate": "mean"}}[kind]
        return base | {"params": params}
    if kind == "relative_one_way":
        return base | {"threshold": 2.0, "epsilon": 0.1, "bounds": [1, 2],
                       "params": {"lambda": 2.0, "false_pass_probability": 0.05, "smoothing": 1}}
    if kind == "conditional_mean":
        return base | {"threshold": (bounds[1] - bounds[0]) / 20, "bounds": bounds,
                       "params": {"target": target.get("name"), "group_by": [],
                                  "include_overall": True,
                                  "resize_slack": marginals if marginals else 0.0}}
    if kind == "regression_coefficients":
        return base | {"threshold": 30, "params": {"target": target.get("name"),
                                                   "features": "all_other", "norm": "l1"}}
    if kind == "regression_mae":
        return base | {"threshold": (bounds[1] - bounds[0]) / 100, "bounds": bounds,
                       "params": {"target": target.get("name"), "features": "all_other"}}
    return {"id": criterion_id, "kind": kind, "threshold": 0, "epsilon": 0,
            "params": {"measure": "unique_rows"}}


def fresh_id(kind: str, document: Mapping[str, Any]) -> str:
    """``kind``, or ``kind_2``, ``kind_3``… when taken."""
    taken = {c.get("id") for c in document.get("criteria", []) if isinstance(c, Mapping)}
    if kind not in taken:
        return kind
    k = 2
    while f"{kind}_{k}" in taken:
        k += 1
    return f"{kind}_{k}"
