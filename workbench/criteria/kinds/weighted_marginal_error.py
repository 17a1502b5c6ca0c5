"""Weighted marginal error: the largest gap between weighted cell totals of R and of the release.

E(R, S) = max over the cells v of the marginal on ``columns`` of
|Σ_{x ∈ R} w(x)·1[x ∈ v] − Σ_{y ∈ S} w′(y)·1[y ∈ v]| / N, with R's survey base weights w
(clipped to the public [w_L, w_U]), S's calibrated weights w′ (post-processing of S, the DP
raking and the public margins: :mod:`workbench.criteria.weighting`) and N the public
population total.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.criteria import weighting
from workbench.criteria.audit_case import BASE, SURVEY_MAX_WEIGHT, AuditCase, replaced
from workbench.criteria.kinds.base import CheckContext, Clique, Param, ShareKind, join_path

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.specification.model import Criterion, Spec
    from workbench.transform import TableCodec
    from workbench.transform.cells import PairedCells


def check_survey(ctx: CheckContext, path: str, name: str) -> None:
    """A weighted kind needs the spec's survey section (its weights and totals)."""
    doc = getattr(ctx, "doc", None)
    if isinstance(doc, Mapping) and "survey" not in doc:
        ctx.problem(path, f"a '{name}' criterion needs a survey section (weights and totals)")


def weighted_cells(codes: np.ndarray, w: np.ndarray, cols: list[int],
                   sizes: list[int]) -> np.ndarray:
    """Weighted totals of every cell of the marginal on ``cols``."""
    idx = np.ravel_multi_index(tuple(codes[:, cols].T), sizes) if len(codes) else np.array([],
                                                                                          int)
    return np.bincount(idx, weights=w, minlength=int(np.prod(sizes)))


def survey_inputs_at_max_weight(spec: Any, config: Any, real: np.ndarray) -> dict[str, Any]:
    """R's base weights all at the public maximum w_U: the weighted kinds' worst case."""
    return {weighting.SURVEY_KEY: weighting.SurveyInputs(np.full(len(real), SURVEY_MAX_WEIGHT))}


class WeightedMarginalError(ShareKind):
    """Max weighted marginal gap / N; Δ = w_U/N from the public weight bounds."""

    name = "weighted_marginal_error"
    description = ("the largest gap between a weighted cell total of R (survey weights) and "
                   "of the release (its calibrated weights), as a share of the population")
    params = MappingProxyType({
        "columns": Param((), doc="the columns of the weighted marginal", control="columns",
                         label="columns"),
    })
    position = 110

    def check_params(self, ctx: CheckContext, params: Mapping[str, Any], path: str) -> None:
        """Known columns, at least one; the spec must have a survey section."""
        cols = params.get("columns", ())
        if not isinstance(cols, list) or not cols:
            ctx.problem(join_path(path, "columns"), "must be a non-empty list of columns")
            return
        for j, c in enumerate(cols):
            if c not in ctx.columns:
                ctx.unknown_column(f"{path}.columns[{j}]", c)
        check_survey(ctx, path, self.name)

    def exact(self, ev: Evaluation, criterion: Criterion) -> float:
        """max_v |weighted R_v − weighted S_v| / N."""
        real_w, synth_w = weighting.weights(ev)
        names = list(ev.table.names)
        cols = [names.index(c) for c in criterion.params["columns"]]
        sizes = [ev.table.domain.sizes[j] for j in cols]
        gap = (weighted_cells(ev.real, real_w, cols, sizes)
               - weighted_cells(ev.synth, synth_w, cols, sizes))
        return float(np.abs(gap).max()) / weighting.population_total(ev.spec)

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """Δ = w_U/N: S and its weights are fixed; replacing a record of R (weight ≤ w_U)
        takes ≤ w_U from one cell and adds ≤ w_U to another (or changes one cell by
        ≤ w_U − w_L), so every |R_v − S_v|/N, and their max, moves by ≤ w_U/N; adding or
        removing one moves one cell by ≤ w_U. N and w_U are public (the survey section)."""
        survey = weighting.survey_of(spec)
        n_pop = weighting.population_total(spec)
        return survey.weight_bounds[1] / n_pop, {"population": n_pop,
                                                 "weight_max": survey.weight_bounds[1]}

    def marginals(self, spec: Spec, criterion: Criterion) -> list[Clique]:
        """The (unweighted) marginal of its columns, when it has two or more."""
        cols = tuple(str(c) for c in criterion.params.get("columns", ()))
        return [cols] if len(cols) > 1 else []

    def template_params(self, document: Mapping[str, Any]) -> dict[str, Any]:
        """The first two columns of the draft."""
        cols = [c.get("name") for c in document.get("schema", {}).get("columns", [])
                if isinstance(c, Mapping)]
        return {"columns": cols[:2]}

    def survey_estimand(self, criterion: Criterion, population: Any, weight: float
                        ) -> tuple[str, Any, float, float]:
        """The weighted share of the first column's most common value; Δ = w/N."""
        from workbench.survey.simulation import proportion

        column = str(criterion.params["columns"][0])
        value = population[column].astype(str).mode().iloc[0]
        truth = float((population[column].astype(str) == str(value)).mean())
        return (f"share {column}={value}", proportion(column, value, weight, weight), truth,
                weight / len(population))

    def sampling_sd(self, criterion: Criterion, proxy: Any) -> float:
        """SD of a share at the proxy's n, at its worst (p = ½)."""
        return math.sqrt(0.25 / len(proxy))

    def audit_case(self) -> AuditCase:
        """S raked to N = 12, R's weights at w_U = 3: one record moves a cell by w_U/N."""
        return AuditCase(
            {"kind": self.name, "threshold": 0.5, "bounds": [0, 1],
             "params": {"columns": ["g", "x"]}},
            BASE, replaced(BASE, 0, (1, 2, 0)), BASE, SURVEY_MAX_WEIGHT / 12,
            "S = R, S raked to N = 12 (weights 3), R's weights w_U = 3; R′ moves one record "
            "from cell (a, 0) to (b, 2): the max gap goes 0 → w_U/N (Δ = w_U/N)",
            once_results=survey_inputs_at_max_weight)


KIND = WeightedMarginalError()
