"""Regression coefficients (Hod & Canetti §4.5.4): DP OLS coefficients of R against S's.

The DP part reads R alone: the coefficients w^ε(R) come from sufficient-statistics
perturbation (:mod:`workbench.criteria.regression`), so with a fixed transformation the
criterion may be computed ``once``, before the loop (§4.14.1). The error
‖w^ε(R) − w(S)‖₁, standardised with S's standard deviations, is post-processing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from workbench.criteria.audit_case import BASE, AuditCase, replaced
from workbench.criteria.kinds import _regression as shared
from workbench.criteria.kinds.base import (
    CheckContext,
    CriterionKind,
    Param,
    join_path,
)
from workbench.criteria.kinds.tags import KindTags, Reads
from workbench.criteria.regression import (
    ENTRYWISE,
    JOINT,
    MECHANISM,
    RegressionDesign,
    RegressionRelease,
    dp_regression_coefficients,
    regression_sensitivity,
)
from workbench.criteria.regression_fit import (
    coefficient_error,
    feature_sd,
    ols_from_cells,
    tuned_statistic_weights,
)
from workbench.criteria.result import CriterionResult
from workbench.specification.params import one_of

if TYPE_CHECKING:
    import numpy as np

    from workbench.criteria.evaluation_state import Evaluation
    from workbench.privacy import PrivacyContext
    from workbench.specification.model import Criterion, Spec
    from workbench.specification.space import Configuration
    from workbench.transform import TableCodec
    from workbench.transform.cells import PairedCells


class RegressionCoefficients(CriterionKind):
    """DP coefficients of R (R alone) against OLS coefficients of S; may run once."""

    name = "regression_coefficients"
    description = ("the L1 gap between DP linear-regression coefficients of R and those of "
                   "the release, each standardised by the release's standard deviation")
    params = MappingProxyType({
        "target": shared.TARGET,
        "features": shared.FEATURES,
        "norm": Param("l1", one_of("l1"), "the distance between coefficient vectors"),
        "statistic_weights": Param(None, doc="per-entry budget weights of the release "
                                   "(see criteria.regression_fit.tuned_statistic_weights)"),
        "sensitivity": Param(ENTRYWISE, one_of(ENTRYWISE, JOINT),
                             "Δ of the release: 'entrywise' Σ_e c_e·ρ_e, or 'joint', the exact "
                             "L1 diameter over the public record universe (smaller, same "
                             "noise shape)", choices=(ENTRYWISE, JOINT)),
    })
    tags = KindTags(reads=Reads.R_ALONE, bounds_editable=True, workload_group="regression",
                    noise_note="noise on the regression's sufficient statistics",
                    sigma_by_simulation=True)
    position = 40

    def check(self, ctx: CheckContext, params: Mapping[str, Any], bounds: Any,
              threshold: float, path: str) -> tuple[float, float] | None:
        """Target, features, norm and weights; [L, U] (optional) clips the target."""
        shared.check_regression(ctx, params, path)
        return bounds

    def check_once(self, ctx: CheckContext, params: Mapping[str, Any], path: str) -> None:
        """Once only when the regression's columns have a single transformation alternative."""
        cols = [params.get("target"), *shared.features(ctx, params, join_path(path, "params"))]
        varying = [f"{c}: {ctx.alternatives(c)}" for c in cols if ctx.alternatives(c) > 1]
        if varying:
            ctx.problem(join_path(path, "once"),
                        "the regression columns have several transformation alternatives ("
                        + ", ".join(varying) + "), so the statistic depends on the "
                        "configuration")

    def exact(self, ev: Evaluation, criterion: Criterion) -> float:
        """‖w(R) − w(S)‖₁ with the non-private OLS fit of R (public runs only)."""
        design = RegressionDesign.build(ev.spec, ev.table, criterion)
        _, coef_r = ols_from_cells(design, ev.pc.cells, ev.pc.real)
        _, coef_s = ols_from_cells(design, ev.pc.cells, ev.pc.synth)
        return coefficient_error(coef_r, coef_s, feature_sd(design, ev.pc.cells, ev.pc.synth))

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """L1 Δ = Σ_e c_e·ρ_e of the weighted sufficient statistics (replace-one), or under
        ``params.sensitivity: joint`` the exact max_{x, x′} ‖c ⊙ (φ(x) − φ(x′))‖₁.

        Each released entry is a sum over records of a per-record value in a public interval
        of width ρ_e (feature ranges from the codecs, mapped onto [−½, ½]); replacing one
        record moves entry e by ≤ ρ_e, and entry e is released as c_e·s_e
        (:func:`workbench.criteria.regression.regression_sensitivity`). The per-entry extremes
        need different records, so the sum overstates the move of one replacement; "joint"
        scans every pair of the public record universe instead
        (:func:`workbench.criteria.regression_joint.joint_delta`): 11.41 against 15.91 on the
        births designs (0.72), so the same noise costs 0.72 of the ε.
        """
        design = RegressionDesign.build(spec, table, criterion)
        return regression_sensitivity(design), {"features": design.p}

    def release(self, ev: Evaluation, criterion: Criterion) -> CriterionResult:
        """‖w^ε(R) − w(S)‖₁: post-processing of the DP coefficients (released now or once)."""
        release = shared.coefficient_release(ev, criterion)
        design = RegressionDesign.build(ev.spec, ev.table, criterion)
        _, coef_s = ols_from_cells(design, ev.pc.cells, ev.pc.synth)
        sd = feature_sd(design, ev.pc.cells, ev.pc.synth)
        value = coefficient_error(release.coef, coef_s, sd)
        rec = release.record
        result = self.result(criterion, value, record=rec, mechanism=MECHANISM,
                             stage="once" if criterion.once else None,
                             details={"features": len(release.names), "target": release.target})
        return dataclasses.replace(result, epsilon=criterion.epsilon)

    def tuned_params(self, spec: Spec, table: TableCodec, criterion: Criterion,
                     cells: np.ndarray, counts: np.ndarray) -> dict[str, Any]:
        """Per-entry budget weights of the sufficient statistics tuned on the public proxy
        (:func:`workbench.criteria.regression_fit.tuned_statistic_weights`)."""
        design = RegressionDesign.build(spec, table, criterion)
        return {"statistic_weights": tuned_statistic_weights(design, cells, counts)}

    def release_once(self, spec: Spec, config: Configuration, criterion: Criterion,
                     real_codes: np.ndarray, ctx: PrivacyContext) -> RegressionRelease:
        """The DP coefficients of R alone (:func:`dp_regression_coefficients`)."""
        return dp_regression_coefficients(spec, config, criterion, real_codes, ctx)

    marginals = shared.model_pairs

    def template(self, criterion_id: str, document: Mapping[str, Any]) -> dict[str, Any]:
        """Threshold 30 (standardised units), L1 norm."""
        return {"id": criterion_id, "kind": self.name, "epsilon": 0.01, "threshold": 30,
                "params": shared.template_params(document) | {"norm": "l1"}}

    def audit_case(self) -> AuditCase:
        """y ~ g on the tiny design: a record's change reaches 4 of the 5 units of Δ."""
        return AuditCase(
            {"kind": self.name, "threshold": 1.0, "params": {"target": "y", "features": ["g"]},
             "once": True},
            BASE, replaced(BASE, 0, (0, 0, 2)), BASE, 1 * 1 + 2 * 1 + 4 * 0.5,
            "y ~ g: weighted statistics (Σz, Σt, Σzt), weights (1, 2, 4), ranges (1, 1, ½): "
            "Δ = 5; (a, 0) → (a, 10) moves Σt by 1 and Σzt by ½: 4 of 5, the most one record "
            "can (the per-entry extremes need different records), so Δ/2 still leaks 1.6ε",
            mechanism="Laplace on the weighted sufficient statistics (vector)", stage="once",
            tightness=0.8)

    def variant_audit_cases(self) -> dict[str, AuditCase]:
        """The "joint" Δ: the pair (a, 0) → (b, 10) attains the exact diameter, so Δ/2 is
        caught at full strength."""
        return {"regression_coefficients (joint Δ)": AuditCase(
            {"kind": self.name, "threshold": 1.0,
             "params": {"target": "y", "features": ["g"], "sensitivity": JOINT}, "once": True},
            BASE, replaced(BASE, 0, (0, 0, 2)), BASE, 4.0,
            "y ~ g, weights (1, 2, 4) on (Σz, Σt, Σzt), records (z, t) ∈ {−½, ½}²: weighted "
            "φ = (z, 2t, 4zt); pairs with the same g differ by 0 + 2 + 2 = 4, the others by "
            "1 + 2 + 0 or 1 + 0 + 2 = 3, so the diameter is 4 (the entrywise sum says 5); "
            "(a, 0) → (a, 10) attains it",
            mechanism="Laplace on the weighted sufficient statistics (vector), joint Δ",
            stage="once")}


KIND = RegressionCoefficients()
