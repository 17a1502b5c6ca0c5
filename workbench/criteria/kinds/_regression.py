"""What the two regression kinds share: their parameter checks and the one DP coefficient
release of R that both read (§4.5.4). Not a kind itself (it defines no ``KIND``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from workbench.criteria.kinds.base import (
    CheckContext,
    Clique,
    Param,
    complete_column,
    is_number,
    join_path,
    numeric_column,
    pairs,
    template_target,
)
from workbench.criteria.regression import (
    RegressionDesign,
    RegressionRelease,
    dp_coefficients_from_cells,
    regression_columns,
)
from workbench.criteria.regression_fit import clipped_mae, ols_from_cells

if TYPE_CHECKING:
    import numpy as np

    from workbench.criteria.evaluation_state import Evaluation
    from workbench.specification.model import Criterion, Spec

TARGET = Param(None, doc="the numeric target column", control="column", label="target")
FEATURES = Param("all_other", doc="'all_other' or a list of feature columns",
                 control="features", label="features")


def features(ctx: CheckContext, params: Mapping[str, Any], path: str) -> list[str]:
    """The feature columns ('all_other' resolved), each checked against the schema."""
    target = params.get("target")
    feats = params.get("features", "all_other")
    if feats == "all_other":
        return [c for c in ctx.columns if c != target]
    if not isinstance(feats, list) or not feats:
        ctx.problem(join_path(path, "features"),
                    "must be 'all_other' or a non-empty list of columns")
        return []
    for j, f in enumerate(feats):
        if f not in ctx.columns:
            ctx.unknown_column(f"{path}.features[{j}]", f)
        elif f == target:
            ctx.problem(f"{path}.features[{j}]", "the target cannot also be a feature")
    return list(feats)


def statistic_weights(ctx: CheckContext, params: Mapping[str, Any], path: str) -> None:
    """Per-entry budget weights of the DP regression: names of its columns, weights > 0."""
    wpath = join_path(path, "statistic_weights")
    weights = params["statistic_weights"]
    if not isinstance(weights, Mapping) or not weights:
        ctx.problem(wpath, "must be a non-empty mapping from entry name to weight")
        return
    named = [params.get("target"), *features(ctx, params, path)]
    allowed = {c for c in named if isinstance(c, str)}
    for name, value in weights.items():
        epath = join_path(wpath, str(name))
        if not is_number(value) or value <= 0:
            ctx.problem(epath, "must be a number > 0")
        for factor in str(name).removesuffix("^2").split("*"):
            column, _, label = factor.partition("=")
            if column not in allowed:
                ctx.problem(epath, f"{column!r} is not the target or a feature of this "
                            "regression")
            elif label and label not in [str(v) for v in ctx.columns[column].domain or ()]:
                ctx.problem(epath, f"{label!r} is not a value of column {column!r}")


def check_regression(ctx: CheckContext, params: Mapping[str, Any], path: str) -> None:
    """Target numeric, features known, L1 norm, and per-entry weights when given."""
    ppath = join_path(path, "params")
    numeric_column(ctx, join_path(ppath, "target"), params.get("target"))
    for f in features(ctx, params, ppath):
        if f in ctx.columns:
            complete_column(ctx, join_path(ppath, "features"), f)
    if params.get("norm", "l1") != "l1":
        ctx.problem(join_path(ppath, "norm"), "must be 'l1'")
    if "statistic_weights" in params:
        statistic_weights(ctx, params, ppath)


def coefficient_criterion(spec: Spec, criterion: Criterion) -> Criterion:
    """The regression_coefficients criterion whose DP w^ε(R) a criterion uses (§4.5.4)."""
    wanted = regression_columns(spec, criterion)
    for c in spec.criteria:
        if c.kind == "regression_coefficients" and regression_columns(spec, c) == wanted:
            return c
    raise ValueError(
        f"criterion {criterion.id!r}: regression_mae needs a regression_coefficients "
        "criterion with the same target and features, whose DP coefficients it uses"
    )


def coefficient_release(ev: Evaluation, criterion: Criterion) -> RegressionRelease:
    """DP coefficients of R: the once-release when given, else released now (in the loop);
    released at most once per evaluation, shared by the MAE criterion."""
    key = ("regression coefficients", criterion.id)
    if key in ev.cache:
        return ev.cache[key]
    design = RegressionDesign.build(ev.spec, ev.table, criterion)
    if criterion.once:
        if criterion.id not in ev.once:
            raise ValueError(
                f"criterion {criterion.id!r} is computed once outside the loop; pass its "
                "release in once_results (see release_once)"
            )
        release = ev.once[criterion.id]
        if release.names != design.names:
            raise ValueError(
                f"criterion {criterion.id!r}: the once-release has other features than "
                "this configuration's design"
            )
    else:
        release = dp_coefficients_from_cells(design, ev.pc.cells, ev.pc.real, ev.n, criterion,
                                             ev.ctx)
    ev.cache[key] = release
    return release


def mae_gap(ev: Evaluation, criterion: Criterion, design: RegressionDesign,
            fit_r: tuple[float, np.ndarray]) -> float:
    """|MAE_R(w_R) − MAE_R(w_S)| with predictions clipped to the criterion's [L, U]."""
    if criterion.bounds is None:
        raise ValueError(f"criterion {criterion.id!r}: regression_mae needs bounds [L, U]")
    fit_s = ols_from_cells(design, ev.pc.cells, ev.pc.synth)
    cells, real = ev.pc.cells, ev.pc.real
    mae_r = clipped_mae(design, cells, real, fit_r[0], fit_r[1], criterion.bounds)
    mae_s = clipped_mae(design, cells, real, fit_s[0], fit_s[1], criterion.bounds)
    return abs(mae_r - mae_s)


def model_pairs(_kind: Any, spec: Spec, criterion: Criterion) -> list[Clique]:
    """Both kinds' ``marginals``: OLS coefficients, and so predictions, are functions of the
    model's second moments, i.e. of every 2-way of its columns."""
    target, feats = regression_columns(spec, criterion)
    return pairs([c for c in spec.column_names if c == target or c in feats])


def template_params(document: Mapping[str, Any]) -> dict[str, Any]:
    """Target: the draft's last numeric column; features: all the others."""
    return {"target": template_target(document)[0], "features": "all_other"}
