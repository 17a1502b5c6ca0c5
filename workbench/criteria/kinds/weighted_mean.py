"""Weighted mean error: the gap between the weighted (Horvitz–Thompson) means of R and the release.

E(R, S) = |Σ_{x ∈ R} w(x)·y(x) − Σ_{y ∈ S} w′(y)·y(y)| / N, y = clip(target's bin-to-number
value, L, U), with R's survey base weights w ∈ [w_L, w_U], S's calibrated weights w′ and the
public population total N (the HT estimator of a mean with known N).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.criteria import weighting
from workbench.criteria.audit_case import BASE, SURVEY_MAX_WEIGHT, AuditCase, replaced
from workbench.criteria.kinds.base import (
    CheckContext,
    Clique,
    CriterionKind,
    Param,
    join_path,
    numeric_column,
    template_target,
)
from workbench.criteria.kinds.tags import KindTags
from workbench.criteria.kinds.weighted_marginal_error import (
    check_survey,
    survey_inputs_at_max_weight,
)
from workbench.privacy import sensitivity as sens

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.specification.model import Criterion, Spec
    from workbench.transform import TableCodec
    from workbench.transform.cells import PairedCells


class WeightedMean(CriterionKind):
    """|weighted mean of R − weighted mean of S|; Δ from the weight and value bounds, over N."""

    name = "weighted_mean"
    description = ("the gap between the survey-weighted mean of the target column in R and "
                   "the calibrated-weight mean in the release")
    params = MappingProxyType({
        "target": Param(None, doc="the averaged numeric column", control="column",
                        label="target"),
    })
    tags = KindTags(bounds_editable=True, workload_group="mean")
    position = 115

    def check(self, ctx: CheckContext, params: Mapping[str, Any], bounds: Any,
              threshold: float, path: str) -> tuple[float, float] | None:
        """[L, U] of the target required; the target numeric; a survey section present."""
        if bounds is None:
            ctx.problem(path, "'bounds' [L, U] of the target are required for a weighted mean")
        numeric_column(ctx, join_path(path, "params.target"), params.get("target"))
        check_survey(ctx, path, self.name)
        return bounds

    def _values(self, ev: Evaluation, codes: np.ndarray, criterion: Criterion) -> np.ndarray:
        lo, hi = criterion.bounds or (0.0, 0.0)
        return np.clip(ev.table.numbers(codes, str(criterion.params["target"])), lo, hi)

    def exact(self, ev: Evaluation, criterion: Criterion) -> float:
        """|Σ w·y over R − Σ w′·y over S| / N."""
        real_w, synth_w = weighting.weights(ev)
        gap = (np.sum(real_w * self._values(ev, ev.real, criterion))
               - np.sum(synth_w * self._values(ev, ev.synth, criterion)))
        return float(abs(gap)) / weighting.population_total(ev.spec)

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """Δ = (max − min of w·y over the corners w ∈ {w_L, w_U}, y ∈ {L, U}) / N.

        S and its weights are fixed; replacing a record of R swaps one term w·y for another,
        both between the smallest and the largest corner
        (:func:`workbench.privacy.sensitivity.weighted_term`), so Σ w·y/N — and its distance
        to S's — moves by at most that range over N. For y ∈ [0, U] this is w_U·U/N.
        """
        survey = weighting.survey_of(spec)
        lo, hi = criterion.bounds or (0.0, 0.0)
        n_pop = weighting.population_total(spec)
        delta = sens.weighted_term(*survey.weight_bounds, lo, hi, spec.budget.neighbour)
        return delta / n_pop, {"population": n_pop, "weight_bounds": list(survey.weight_bounds)}

    def marginals(self, spec: Spec, criterion: Criterion) -> list[Clique]:
        """Only the target's 1-way marginal (always measured)."""
        return []

    def template(self, criterion_id: str, document: Mapping[str, Any]) -> dict[str, Any]:
        """The last numeric column of the draft, threshold a twentieth of its range."""
        target, bounds = template_target(document)
        return {"id": criterion_id, "kind": self.name, "epsilon": 0.01,
                "threshold": (bounds[1] - bounds[0]) / 20, "bounds": bounds,
                "params": {"target": target}}

    def survey_estimand(self, criterion: Criterion, population: Any, weight: float
                        ) -> tuple[str, Any, float, float]:
        """The weighted mean of the target, clipped to [L, U]; Δ = w·(U − L)/N."""
        from workbench.survey.simulation import mean

        lo, hi = criterion.bounds or (0.0, 1.0)
        target = str(criterion.params["target"])
        truth = float(pd.to_numeric(population[target]).clip(lo, hi).mean())
        return (f"mean {target}", mean(target, lo, hi, weight, weight), truth,
                weight * (hi - lo) / len(population))

    def sampling_sd(self, criterion: Criterion, proxy: Any) -> float:
        """SD of the target's mean at the proxy's n (a quarter of the range without it)."""
        lo, hi = criterion.bounds or (0.0, 1.0)
        target = str(criterion.params["target"])
        if target not in proxy:
            return (hi - lo) / 4
        values = pd.to_numeric(proxy[target], errors="coerce").clip(lo, hi)
        return float(values.std()) / math.sqrt(len(proxy))

    def audit_case(self) -> AuditCase:
        """S = R at weight 3; one y 0 → 10 at weight w_U moves Σ w·y/N by w_U·U/N."""
        return AuditCase(
            {"kind": self.name, "threshold": 1.0, "bounds": [0, 10], "params": {"target": "y"}},
            BASE, replaced(BASE, 0, (0, 0, 2)), BASE, (SURVEY_MAX_WEIGHT * 10 - 1 * 0) / 12,
            "S = R, weights 3; R′ moves one y from 0 to 10 at weight w_U: Σ w·y/N moves by "
            "w_U·U/N = (max − min corner of w·y)/N",
            once_results=survey_inputs_at_max_weight)


KIND = WeightedMean()
