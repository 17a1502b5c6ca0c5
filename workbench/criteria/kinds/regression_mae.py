"""Regression MAE, train-on-synthetic test-on-real (Hod & Canetti §4.5.4, Prop. 9).

E = |MAE_R(w^ε_R) − MAE_R(w_S)|, predictions clipped to [L, U], with w^ε_R the DP
coefficients released by the regression_coefficients criterion with the same columns
(public once released) and w_S the OLS fit of S.

``params.sensitivity: prediction_gap`` (issue 37) prices the release with a public cap G
(``params.max_prediction_gap``, target units) on how far the two public models' clipped
predictions may be apart anywhere on the domain, instead of the width U − L: each record's
term ||y − p_a| − |y − p_b|| ≤ |p_a − p_b| ≤ G, so Δ = 2G/n, data-free like 2(U − L)/n, and
P(false pass) keeps its closed form. The gap γ is computed from the two public models and the
codecs (:func:`~workbench.criteria.regression_fit.prediction_gap`); when γ > G the cap does not
hold, so the value is released with Δ = 2(U − L)/n instead and the criterion FAILS whatever
the value (fail-safe: a model that far from R's DP model anywhere is not accepted, and no
false pass can come from this branch).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.criteria import sensitivity as sens
from workbench.criteria.audit_case import AuditCase, rows
from workbench.criteria.kinds import _regression as shared
from workbench.criteria.kinds.base import (
    CheckContext,
    CriterionKind,
    join_path,
    template_target,
)
from workbench.criteria.kinds.tags import KindTags
from workbench.criteria.regression import RegressionDesign
from workbench.criteria.regression_fit import ols_from_cells, prediction_gap
from workbench.specification.params import Param, is_number, one_of

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.criteria.result import CriterionResult
    from workbench.specification.model import Criterion, Spec
    from workbench.transform import TableCodec
    from workbench.transform.cells import PairedCells


def _zero_coefficients(spec: Any, config: Any, real: np.ndarray) -> dict[str, Any]:
    """A fixed, public coefficient release predicting 0 everywhere: the MAE audit conditions
    on the once-released coefficients, which are audited on their own."""
    from workbench.criteria.dispatch import release_once
    from workbench.privacy import PrivacyContext

    coef = release_once(spec, config, real, PrivacyContext.simulation(0))["coefficients"]
    return {"coefficients": dataclasses.replace(coef, intercept=0.0,
                                                coef=np.zeros_like(coef.coef))}


BOUNDS, GAP = "bounds", "prediction_gap"


def _cap(criterion: Criterion) -> float | None:
    """G when the criterion prices with the prediction-gap cap, else None."""
    if criterion.params.get("sensitivity", BOUNDS) != GAP:
        return None
    return float(criterion.params["max_prediction_gap"])


class RegressionMae(CriterionKind):
    """TSTR MAE gap; Δ = 2(U − L)/n; the stakeholder sets [L, U] for clipping."""

    name = "regression_mae"
    description = ("how much worse a regression fitted on the release predicts R than the "
                   "DP regression of R itself (gap in mean absolute error)")
    params = MappingProxyType({
        "target": shared.TARGET, "features": shared.FEATURES,
        "sensitivity": Param(BOUNDS, one_of(BOUNDS, GAP),
                             "Δ from the clip width U − L ('bounds'), or from the public cap "
                             "max_prediction_gap ('prediction_gap', fails when exceeded)",
                             choices=(BOUNDS, GAP)),
        "max_prediction_gap": Param(None, doc="G: the largest |p_a − p_b| priced (target "
                                    "units), with sensitivity 'prediction_gap'"),
    })
    # the noised gap uses the DP coefficients, not R's exact fit: forecasts simulate it
    tags = KindTags(bounds_editable=True, workload_group="regression", laplace_on_exact=False)
    position = 50

    def check(self, ctx: CheckContext, params: Mapping[str, Any], bounds: Any,
              threshold: float, path: str) -> tuple[float, float] | None:
        """Target and features as for the coefficients; [L, U] required for clipping."""
        shared.check_regression(ctx, params, path)
        if bounds is None:
            ctx.problem(path, "'bounds' [L, U] for clipping predictions are required")
        cap = params.get("max_prediction_gap")
        if params.get("sensitivity", BOUNDS) == GAP and not (is_number(cap) and cap > 0):
            ctx.problem(join_path(path, "params.max_prediction_gap"),
                        "must be a number > 0 (target units) with sensitivity "
                        "'prediction_gap'")
        return bounds

    def exact(self, ev: Evaluation, criterion: Criterion) -> float:
        """The gap with the non-private OLS fit of R (public runs only)."""
        design = RegressionDesign.build(ev.spec, ev.table, criterion)
        fit_r = ols_from_cells(design, ev.pc.cells, ev.pc.real)
        return shared.mae_gap(ev, criterion, design, fit_r)

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """Δ = 2(U − L)/n (Prop. 9): with public w's and predictions clipped to [L, U], only
        the replaced record's two terms change, each by ≤ U − L, over n
        (:func:`workbench.criteria.sensitivity.regression_mae`)."""
        if criterion.bounds is None:
            return None, {}
        full = sens.regression_mae(*criterion.bounds, pc.n)
        cap = _cap(criterion)
        return (full if cap is None else min(full, 2.0 * cap / pc.n)), {}

    def release(self, ev: Evaluation, criterion: Criterion) -> CriterionResult:
        """Laplace on the gap, with the DP coefficients of the matching coefficient criterion."""
        if criterion.bounds is None:
            raise ValueError(f"criterion {criterion.id!r}: regression_mae needs bounds [L, U]")
        coefficients = shared.coefficient_criterion(ev.spec, criterion)
        release = shared.coefficient_release(ev, coefficients)
        design = RegressionDesign.build(ev.spec, ev.table, criterion)
        fit = (release.intercept, release.coef)
        value = shared.mae_gap(ev, criterion, design, fit)
        delta, _ = self.sensitivity(ev.spec, ev.table, criterion, ev.pc)
        details: dict[str, Any] = {"coefficients_from": release.criterion_id}
        cap = _cap(criterion)
        if cap is None:
            return self.laplace_result(ev, criterion, value, delta, criterion.bounds,
                                       details=details)
        width = float(criterion.bounds[1] - criterion.bounds[0])  # clipped: never further apart
        gap = min(width, prediction_gap(design, fit,
                                        ols_from_cells(design, ev.pc.cells, ev.pc.synth)))
        details["prediction_gap"] = gap
        if gap <= cap:
            return self.laplace_result(ev, criterion, value, delta, criterion.bounds,
                                       details=details)
        full = sens.regression_mae(*criterion.bounds, ev.pc.n)
        result = self.laplace_result(ev, criterion, value, full, criterion.bounds,
                                     details=details | {"over_cap": True})
        return dataclasses.replace(result, passed=False)

    marginals = shared.model_pairs

    def template(self, criterion_id: str, document: Mapping[str, Any]) -> dict[str, Any]:
        """[L, U] = the target's bounds; threshold 1% of their width."""
        bounds = template_target(document)[1]
        return {"id": criterion_id, "kind": self.name, "epsilon": 0.01,
                "threshold": (bounds[1] - bounds[0]) / 100, "bounds": bounds,
                "params": shared.template_params(document)}

    def audit_case(self) -> AuditCase:
        """Fixed public coefficients predicting L = 0 against S's OLS predicting U = 10."""
        return AuditCase(
            {"kind": self.name, "threshold": 1.0, "bounds": [0, 10],
             "params": {"target": "y", "features": ["g"]}},
            rows((0, 0, 0), (1, 1, 2), (0, 2, 2), (1, 0, 2)),
            rows((0, 0, 2), (1, 1, 2), (0, 2, 2), (1, 0, 2)),
            rows((0, 0, 2), (1, 1, 2), (0, 2, 2), (1, 0, 2)), 2 * 10 / 4,
            "fixed DP coefficients predict L = 0, S's OLS predicts U = 10; one y = 0 → 10 "
            "moves both MAEs by (U − L)/n in opposite directions (Δ = 2(U − L)/n)",
            companions=({"id": "coefficients", "kind": "regression_coefficients",
                         "threshold": 1.0, "params": {"target": "y", "features": ["g"]},
                         "once": True},),
            once_results=_zero_coefficients)

    def variant_audit_cases(self) -> dict[str, AuditCase]:
        """The prediction-gap Δ = 2G/n: S's OLS predicts 5 everywhere, the fixed DP model 0, so
        γ = 5 = G and a y = 0 → 10 replacement moves the gap by exactly 2G/n."""
        return {"regression_mae (prediction-gap Δ)": AuditCase(
            {"kind": self.name, "threshold": 1.0, "bounds": [0, 10],
             "params": {"target": "y", "features": ["g"], "sensitivity": GAP,
                        "max_prediction_gap": 5}},
            rows((0, 0, 0), (1, 1, 2), (0, 2, 2), (1, 0, 2)),
            rows((0, 0, 2), (1, 1, 2), (0, 2, 2), (1, 0, 2)),
            rows((0, 0, 0), (0, 1, 2), (1, 0, 0), (1, 1, 2)), 2 * 5 / 4,
            "fixed DP coefficients predict 0, S's OLS predicts 5 for both g (γ = 5 = G); each "
            "record adds |y − 0| − |y − 5| = ±5, so y = 0 → 10 moves |Σ|/n from 10/4 to 20/4: "
            "2G/n, not 2(U − L)/n = 5",
            mechanism="Laplace on the MAE gap, prediction-gap Δ",
            companions=({"id": "coefficients", "kind": "regression_coefficients",
                         "threshold": 1.0, "params": {"target": "y", "features": ["g"]},
                         "once": True},),
            once_results=_zero_coefficients)}


KIND = RegressionMae()
