"""Regression MAE, train-on-synthetic test-on-real (Hod & Canetti §4.5.4, Prop. 9).

E = |MAE_R(w^ε_R) − MAE_R(w_S)|, predictions clipped to [L, U], with w^ε_R the DP
coefficients released by the regression_coefficients criterion with the same columns
(public once released) and w_S the OLS fit of S.
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
    template_target,
)
from workbench.criteria.kinds.tags import KindTags
from workbench.criteria.regression import RegressionDesign
from workbench.criteria.regression_fit import ols_from_cells

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


class RegressionMae(CriterionKind):
    """TSTR MAE gap; Δ = 2(U − L)/n; the stakeholder sets [L, U] for clipping."""

    name = "regression_mae"
    description = ("how much worse a regression fitted on the release predicts R than the "
                   "DP regression of R itself (gap in mean absolute error)")
    params = MappingProxyType({"target": shared.TARGET, "features": shared.FEATURES})
    # the noised gap uses the DP coefficients, not R's exact fit: forecasts simulate it
    tags = KindTags(bounds_editable=True, workload_group="regression", laplace_on_exact=False)
    position = 50

    def check(self, ctx: CheckContext, params: Mapping[str, Any], bounds: Any,
              threshold: float, path: str) -> tuple[float, float] | None:
        """Target and features as for the coefficients; [L, U] required for clipping."""
        shared.check_regression(ctx, params, path)
        if bounds is None:
            ctx.problem(path, "'bounds' [L, U] for clipping predictions are required")
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
        return sens.regression_mae(*criterion.bounds, pc.n), {}

    def release(self, ev: Evaluation, criterion: Criterion) -> CriterionResult:
        """Laplace on the gap, with the DP coefficients of the matching coefficient criterion."""
        if criterion.bounds is None:
            raise ValueError(f"criterion {criterion.id!r}: regression_mae needs bounds [L, U]")
        coefficients = shared.coefficient_criterion(ev.spec, criterion)
        release = shared.coefficient_release(ev, coefficients)
        design = RegressionDesign.build(ev.spec, ev.table, criterion)
        value = shared.mae_gap(ev, criterion, design, (release.intercept, release.coef))
        delta, _ = self.sensitivity(ev.spec, ev.table, criterion, ev.pc)
        return self.laplace_result(ev, criterion, value, delta, criterion.bounds,
                                   details={"coefficients_from": release.criterion_id})

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


KIND = RegressionMae()
