"""A subgroup mean of a target with missing values, imputed by 1-NN hot deck (Merrill ch. 6).

E(R, S) = |mean of the imputed target over R's subgroup − the same on S|. S is imputed the same
way (public, no noise). On R: a Laplace count of the subgroup (Δ = 1) gives the public size s,
then the imputed sum / s is released with generalized Cauchy noise scaled to the smooth bound
(B + N̂·(b − a))/s of :mod:`workbench.criteria.knn_impute`, ln 2-smooth per add/remove step.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.criteria.audit_case import BASE, AuditCase, replaced
from workbench.criteria.kinds.base import (
    CheckContext,
    Clique,
    CriterionKind,
    Param,
    join_path,
    numeric_column,
)
from workbench.criteria.kinds.tags import KindTags
from workbench.criteria.knn_impute import Features, impute, smooth_bound
from workbench.privacy import smooth
from workbench.specification.params import name_list, open_interval

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.criteria.result import CriterionResult
    from workbench.specification.model import Criterion, Spec
    from workbench.transform import TableCodec
    from workbench.transform.cells import PairedCells

BETA = math.log(2.0)  # the kNN bound is ln 2-smooth per add/remove step
STEPS = 2  # one replace-one step = remove + add
MIN_EPSILON = 2.0 * STEPS * BETA  # the smooth release needs ε/steps ≥ 2β: 4 ln 2


class NoFiniteVarianceWarning(UserWarning):
    """The generalized Cauchy noise at this ε has no finite variance (γ ≤ 3)."""


def target_range(spec: Spec, target: str) -> tuple[float, float]:
    """[a, b] of the target from the spec: its bounds, or its numeric domain's extremes."""
    col = spec.column(target)
    if col.bounds is not None:
        return float(col.bounds[0]), float(col.bounds[1])
    values = [float(v) for v in col.domain or (0, 1)]
    return min(values), max(values)


def mean_epsilon(criterion: Criterion) -> float:
    """The ε of the smooth release: what the subgroup count leaves."""
    return criterion.epsilon * (1.0 - float(criterion.params.get("count_share", 0.2)))


def gamma_for(epsilon: float) -> float:
    """γ for the mean release: the largest ≤ 4 that admits a ln 2-smooth bound per step."""
    return smooth.gamma_for_smoothness(epsilon / STEPS, BETA)


def _inputs(ev: Evaluation, criterion: Criterion, codes: np.ndarray
            ) -> tuple[Features, np.ndarray, np.ndarray, np.ndarray]:
    """(features, feature codes, target values with NaN for missing, subgroup mask)."""
    names = list(ev.table.domain.names)
    target = str(criterion.params["target"])
    feats = [str(f) for f in criterion.params["features"]]
    numbers = []
    for f in feats:
        try:
            numbers.append(np.asarray(ev.table.codec(f).numbers(), dtype=np.float64))
        except ValueError:
            numbers.append(None)
    features = Features.of_codecs(numbers, [ev.table.domain.size_of(f) for f in feats])
    arr = np.asarray(codes, dtype=np.int64)
    y = np.asarray(ev.table.codec(target).numbers(), dtype=np.float64)[arr[:, names.index(target)]]
    column = criterion.params.get("subgroup_column")
    if column is None:
        inside = np.ones(arr.shape[0], dtype=bool)
    else:
        labels = np.asarray(ev.table.codec(str(column)).labels, dtype=object)
        wanted = {str(v) for v in criterion.params.get("subgroup_values", ())}
        inside = np.isin(labels[arr[:, names.index(str(column))]].astype(str), list(wanted))
    return features, arr[:, [names.index(f) for f in feats]], y, inside


def _imputed_mean(ev: Evaluation, criterion: Criterion, codes: np.ndarray) -> tuple[float, Any]:
    """(mean of the imputed target over the subgroup, the imputation) of one coded table."""
    low, _ = target_range(ev.spec, str(criterion.params["target"]))
    features, fcodes, y, inside = _inputs(ev, criterion, codes)
    imp = impute(features, fcodes, y, inside, fill=low)
    size = int(inside.sum())
    return (float(imp.values[inside].sum() / size) if size else low), imp


class KnnImputedMean(CriterionKind):
    """|imputed subgroup mean in R − in S|; Laplace count + smooth-sensitivity Cauchy sum."""

    name = "knn_imputed_mean"
    description = ("the gap between the mean of the target over a subgroup in R and in the "
                   "release, missing targets imputed from their nearest complete record")
    params = MappingProxyType({
        "target": Param(None, doc="the averaged numeric column (may have missing values)",
                        control="column", label="target"),
        "features": Param(None, name_list, "columns the nearest neighbour is found on "
                          "(their bins are the coarsening)", control="columns",
                          label="features"),
        "subgroup_column": Param(None, doc="the column defining the subgroup (none: all "
                                 "rows); never the target", control="column",
                                 label="subgroup column"),
        "subgroup_values": Param((), doc="the subgroup column's values (labels) in the "
                                 "subgroup", label="subgroup values"),
        "count_share": Param(0.2, open_interval(0, 1), "share of ε for the subgroup count",
                             control="number", label="count share"),
    })
    tags = KindTags(noise_note=("a Laplace count of the subgroup, then generalized Cauchy noise "
                                "on the imputed mean scaled to its smooth sensitivity"),
                    workload_group="mean")
    position = 95

    def check(self, ctx: CheckContext, params: Mapping[str, Any], bounds: Any,
              threshold: float, path: str) -> tuple[float, float] | None:
        """Target numeric; features known and not the target; subgroup column not the target."""
        ppath = join_path(path, "params")
        target = params.get("target")
        numeric_column(ctx, join_path(ppath, "target"), target, missing_ok=True)
        for j, f in enumerate(params.get("features") or []):
            if f not in ctx.columns:
                ctx.unknown_column(f"{ppath}.features[{j}]", f)
            elif f == target:
                ctx.problem(f"{ppath}.features[{j}]", "the target cannot be a feature")
        column = params.get("subgroup_column")
        if column is not None:
            if column not in ctx.columns:
                ctx.unknown_column(join_path(ppath, "subgroup_column"), column)
            elif column == target:
                ctx.problem(join_path(ppath, "subgroup_column"), "the subgroup may not be "
                            "defined by the imputed target")
            if not params.get("subgroup_values"):
                ctx.problem(join_path(ppath, "subgroup_values"), "name the subgroup's values")
        return bounds

    def check_epsilon(self, ctx: CheckContext, params: Mapping[str, Any], epsilon: float,
                      path: str) -> None:
        """The smooth release needs ε·(1 − count share) ≥ 4 ln 2 (replace-one: two steps)."""
        share = params.get("count_share", 0.2)
        if not isinstance(share, int | float) or not 0 < share < 1:
            return
        if epsilon * (1 - share) < MIN_EPSILON * (1 - 1e-12):
            ctx.problem(join_path(path, "epsilon"), (
                f"a kNN-imputed mean needs epsilon x (1 - count_share) >= 4 ln 2 = "
                f"{MIN_EPSILON:.4f}: its smooth bound is ln 2-smooth per add/remove step and "
                "a replace-one step is two of them"))

    def exact(self, ev: Evaluation, criterion: Criterion) -> float:
        """|imputed subgroup mean of R − of S| (no noise)."""
        return abs(_imputed_mean(ev, criterion, ev.real)[0]
                   - _imputed_mean(ev, criterion, ev.synth)[0])

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """Δ = 1 for the subgroup count (the first release); the mean's noise is smooth.

        The count: a replaced record leaves or enters the subgroup at most once, and the
        subgroup is defined by an observed column, never by the imputed target, so imputation
        cannot move anyone in or out: Δ = 1. The mean's smooth bound (B + N̂(b − a))/s depends
        on R and is never returned here (see :mod:`workbench.criteria.knn_impute`).
        """
        eps = mean_epsilon(criterion)
        gamma = gamma_for(eps) if eps >= MIN_EPSILON * (1 - 1e-12) else None
        return 1.0, {"gamma": gamma, "count_share": criterion.params.get("count_share", 0.2)}

    def release(self, ev: Evaluation, criterion: Criterion) -> CriterionResult:
        """Laplace count (ε·share), then the smooth-sensitivity mean (the rest of ε)."""
        from workbench.criteria.evaluation_state import purpose

        eps_mean = mean_epsilon(criterion)
        if eps_mean < MIN_EPSILON * (1 - 1e-12):  # before any noise
            raise ValueError(f"criterion {criterion.id!r}: epsilon too small for a kNN-"
                             "imputed mean (needs epsilon x (1 - count_share) >= 4 ln 2)")
        gamma = gamma_for(eps_mean)
        if gamma <= 3.0:
            warnings.warn(f"criterion {criterion.id!r}: at epsilon {eps_mean:.3g} the "
                          "generalized Cauchy noise has no finite variance (needs > 4 ln 2 "
                          "per add/remove step)", NoFiniteVarianceWarning, stacklevel=2)
        low, high = target_range(ev.spec, str(criterion.params["target"]))
        features, fcodes, y, inside = _inputs(ev, criterion, ev.real)
        eps_count = criterion.epsilon - eps_mean
        count = ev.ctx.laplace(float(inside.sum()), sensitivity=1.0, epsilon=eps_count,
                               purpose=f"{purpose(criterion)} subgroup count",
                               bounds=(0.0, float(ev.n)))
        s = max(1.0, float(count.value.ravel()[0]))
        imp = impute(features, fcodes, y, inside, fill=low)
        bound = smooth_bound(imp.donee_bound, low, high, s)
        noisy = ev.ctx.smooth_cauchy(float(imp.values[inside].sum()) / s, epsilon=eps_mean,
                                     purpose=purpose(criterion), bounds=(low, high),
                                     smooth_sensitivity=bound,
                                     beta=BETA, gamma=gamma, steps=STEPS)
        mean_r = float(np.clip(noisy.value.ravel()[0], low, high))
        value = abs(mean_r - _imputed_mean(ev, criterion, ev.synth)[0])
        result = self.result(criterion, value, record=noisy.record,
                             details={"gamma": gamma, "count_epsilon": eps_count})
        return dataclasses.replace(result, epsilon=criterion.epsilon)  # count + mean

    def marginals(self, spec: Spec, criterion: Criterion) -> list[Clique]:
        """The target with each feature and with the subgroup column."""
        target = str(criterion.params["target"])
        others = [*criterion.params.get("features", ()), criterion.params.get("subgroup_column")]
        return [(target, str(o)) for o in others if o is not None and o != target]

    def template(self, criterion_id: str, document: Mapping[str, Any]) -> dict[str, Any]:
        """The last numeric column (prefer one with missing values allowed), two features."""
        cols = [c for c in document.get("schema", {}).get("columns", [])
                if isinstance(c, Mapping)]
        numeric = [c for c in cols if c.get("type") in ("integer", "continuous")]
        allowed = [c for c in numeric if c.get("missing") == "allow"]
        target = (allowed or numeric or [{"name": None, "bounds": [0, 1]}])[-1]
        others = [c.get("name") for c in cols if c.get("name") != target.get("name")]
        low, high = target.get("bounds", [0, 1])
        return {"id": criterion_id, "kind": self.name, "epsilon": 7.0,
                "threshold": (high - low) / 20,
                "params": {"target": target.get("name"), "features": others[:2],
                           "count_share": 0.2}}

    def audit_case(self) -> AuditCase:
        """A worst-case replace-one pair on the tiny audit design (Δ written out by hand)."""
        return AuditCase(
            {"kind": self.name, "threshold": 1.0, "epsilon": 8.0,
             "params": {"target": "y", "features": ["x"], "subgroup_column": "g",
                        "subgroup_values": ["a"]}},
            BASE, replaced(BASE, 0, (1, 0, 0)), BASE, 1.0,
            "the subgroup g = a loses one record: its Laplace count moves by 1 (Δ = 1); the "
            "mean's smooth release is audited in audits.smooth",
            mechanism="Laplace on the subgroup count")


KIND = KnnImputedMean()
