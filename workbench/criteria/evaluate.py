"""Evaluate every acceptance criterion of a spec for one release candidate, with DP, in one call.

The engine calls :func:`evaluate_all` once per private-selection iteration, and
:func:`release_once` once before the loop for the statistics of R alone (§4.14.1). Work is
shared: R and S are reduced once to counts on their combined distinct cells, and every
criterion but criterion 1 and faithfulness (which have their own cell-level algorithms) reads
those counts. Each DP value comes from one ``ctx.laplace`` call whose Δ is a function of n,
the spec and S only (:mod:`workbench.criteria.sensitivity`).

Pass rule: the DP value must be below the threshold (below min(T, T′) for the relative 1-way
criterion, T′ from Prop. 6). Face-privacy counts are computed on S alone, without noise, and
pass when the count is at most the threshold (so a threshold of 0 means "none allowed").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from workbench.criteria import sensitivity
from workbench.criteria.cells import PairedCells
from workbench.criteria.marginal_kinds import (
    max_ecdf_error,
    relative_one_way_error,
    smallest_one_way_count,
    tv_marginals_error,
)
from workbench.criteria.marginals import max_marginal_error
from workbench.criteria.means import (
    conditional_mean_error,
    exact_conditional_mean_error,
    mean_groups,
)
from workbench.criteria.record_kinds import face_privacy_count, faithfulness_error
from workbench.criteria.regression import (
    MECHANISM as REGRESSION_MECHANISM,
)
from workbench.criteria.regression import (
    RegressionDesign,
    RegressionRelease,
    clipped_mae,
    coefficient_error,
    dp_coefficients_from_cells,
    dp_regression_coefficients,
    feature_sd,
    ols_from_cells,
    regression_columns,
    regression_sensitivity,
)
from workbench.criteria.result import NO_MECHANISM, CriterionResult, from_noisy
from workbench.privacy import PrivacyContext, PrivacyMode
from workbench.spec.model import Criterion, Spec
from workbench.spec.space import Configuration
from workbench.transform import TableCodec

#: Kinds whose value is a share of n in [0, 1]: Δ = 1/n and the DP value is clipped to [0, 1].
UNIT_KINDS = ("max_marginal_error", "faithfulness", "max_ecdf", "tv_marginals")


def _check_context(ctx: PrivacyContext) -> None:
    """The sensitivities here are derived for replace-one neighbours with public n."""
    if ctx.neighbour != "replace_one":
        raise ValueError(
            "criteria sensitivities are derived for replace_one neighbours (public n); "
            "this run uses add_remove"
        )


def _purpose(criterion: Criterion) -> str:
    """Ledger label of a criterion's measurement (public names only)."""
    return f"criterion {criterion.id} ({criterion.kind})"


def criterion_sensitivity(
    spec: Spec, table: TableCodec, criterion: Criterion, pc: PairedCells
) -> tuple[float | None, dict[str, Any]]:
    """Δ of one criterion from n, the spec and S (pc.synth): the one dispatch the engine and
    the co-design readouts share.

    Returns (Δ, public details); Δ is None for criteria released without noise.
    """
    kind, params, n = criterion.kind, criterion.params, pc.n
    if kind in UNIT_KINDS:
        return sensitivity.one_over_n(n), {}
    if kind == "relative_one_way":
        lam = float(params.get("lambda", criterion.threshold))
        s_min = smallest_one_way_count(pc)
        delta = sensitivity.relative_one_way(s_min, lam, float(params.get("smoothing", 1)))
        return delta, {"s_min": s_min, "lambda": lam}
    if kind == "conditional_mean":
        groups = mean_groups(spec, table, criterion, pc)
        return groups.sensitivity, {"m_hat_min": int(groups.m_hat.min()),
                                    "groups": len(groups.labels)}
    if kind == "regression_mae":
        if criterion.bounds is None:
            return None, {}
        return sensitivity.regression_mae(*criterion.bounds, n), {}
    if kind == "regression_coefficients":
        design = RegressionDesign.build(spec, table, criterion)
        return regression_sensitivity(design), {"features": design.p}
    return None, {}



class _Evaluation:
    """One candidate's evaluation: shared cells, cached intermediate results, the releases."""

    def __init__(
        self,
        spec: Spec,
        config: Configuration,
        real_codes: np.ndarray,
        synth_codes: np.ndarray,
        ctx: PrivacyContext,
        once_results: Mapping[str, RegressionRelease] | None,
    ) -> None:
        """Reduce R and S once to paired cell counts over the configuration's domain."""
        self.spec = spec
        self.config = config
        self.table = spec.table_codec(config)
        self.pc = PairedCells.from_codes(real_codes, synth_codes, self.table.domain)
        self.real = np.asarray(real_codes, dtype=np.int64)
        self.synth = np.asarray(synth_codes, dtype=np.int64)
        self.ctx = ctx
        self.once = dict(once_results or {})
        self.releases: dict[str, RegressionRelease] = {}

    @property
    def n(self) -> int:
        """The public number of records."""
        return self.pc.n

    # --- exact errors (confidential; only ever handed to ctx.laplace or to public tests) ----
    def exact(self, criterion: Criterion) -> float:
        """E(R, S) of one R-vs-S criterion, without noise (resizing not applied)."""
        kind, params = criterion.kind, criterion.params
        if kind == "max_marginal_error":
            return max_marginal_error(
                self.real, self.synth, self.table.domain, max_way=params.get("max_way")
            )
        if kind == "relative_one_way":
            lam, c = self._lambda(criterion), float(params.get("smoothing", 1))
            return relative_one_way_error(self.pc, lam, c)
        if kind == "conditional_mean":
            groups = mean_groups(self.spec, self.table, criterion, self.pc)
            return exact_conditional_mean_error(
                groups, self.pc, bool(params.get("include_overall", True))
            )
        if kind == "faithfulness":
            return faithfulness_error(self.spec, self.config, self.real, self.synth)
        if kind == "max_ecdf":
            return max_ecdf_error(self.pc, self.table, str(params["column"]))
        if kind == "tv_marginals":
            return tv_marginals_error(
                self.pc, int(params.get("way", 2)), str(params.get("aggregate", "mean"))
            )
        if kind == "regression_coefficients":
            design = RegressionDesign.build(self.spec, self.table, criterion)
            _, coef_r = ols_from_cells(design, self.pc.cells, self.pc.real)
            _, coef_s = ols_from_cells(design, self.pc.cells, self.pc.synth)
            sd = feature_sd(design, self.pc.cells, self.pc.synth)
            return coefficient_error(coef_r, coef_s, sd)
        if kind == "regression_mae":
            design = RegressionDesign.build(self.spec, self.table, criterion)
            fit_r = ols_from_cells(design, self.pc.cells, self.pc.real)
            return self._mae_gap(criterion, design, fit_r)
        if kind == "face_privacy_count":
            return float(self._face_count(criterion))
        raise ValueError(f"criterion {criterion.id!r}: unknown kind {kind!r}")

    def _lambda(self, criterion: Criterion) -> float:
        """λ of the relative 1-way criterion (defaults to the threshold, as the spec allows)."""
        return float(criterion.params.get("lambda", criterion.threshold))

    def _face_count(self, criterion: Criterion) -> int:
        """Face-privacy count on S alone."""
        measure = str(criterion.params.get("measure", "unique_rows"))
        return face_privacy_count(self.pc.synth, measure, self.config.min_count)

    def _mae_gap(
        self, criterion: Criterion, design: RegressionDesign, fit_r: tuple[float, np.ndarray]
    ) -> float:
        """|MAE_R(w_R) − MAE_R(w_S)| with predictions clipped to the criterion's [L, U]."""
        if criterion.bounds is None:
            raise ValueError(f"criterion {criterion.id!r}: regression_mae needs bounds [L, U]")
        fit_s = ols_from_cells(design, self.pc.cells, self.pc.synth)
        cells, real = self.pc.cells, self.pc.real
        mae_r = clipped_mae(design, cells, real, fit_r[0], fit_r[1], criterion.bounds)
        mae_s = clipped_mae(design, cells, real, fit_s[0], fit_s[1], criterion.bounds)
        return abs(mae_r - mae_s)

    # --- DP releases -------------------------------------------------------------------
    def release(self, criterion: Criterion) -> CriterionResult:
        """The DP result of one criterion."""
        handlers: dict[str, Callable[[Criterion], CriterionResult]] = {
            "relative_one_way": self._relative,
            "conditional_mean": self._conditional_mean,
            "regression_coefficients": self._coefficients,
            "regression_mae": self._mae,
            "face_privacy_count": self._face,
        }
        if criterion.kind in UNIT_KINDS:
            return self._unit(criterion)
        if criterion.kind not in handlers:
            raise ValueError(f"criterion {criterion.id!r}: unknown kind {criterion.kind!r}")
        return handlers[criterion.kind](criterion)

    def _unit(self, criterion: Criterion) -> CriterionResult:
        """Laplace with Δ = 1/n on a share in [0, 1]; the DP value is clipped to [0, 1]."""
        delta, _ = criterion_sensitivity(self.spec, self.table, criterion, self.pc)
        noisy = self.ctx.laplace(
            self.exact(criterion),
            sensitivity=delta,
            epsilon=criterion.epsilon,
            purpose=_purpose(criterion),
            bounds=(0.0, 1.0),
        )
        value = float(np.clip(noisy.value.ravel()[0], 0.0, 1.0))
        return from_noisy(criterion.id, criterion.kind, criterion.threshold, noisy, value=value)

    def _relative(self, criterion: Criterion) -> CriterionResult:
        """Props. 4–6: clipped relative 1-way error, Δ from s_min of S, threshold T′ derived."""
        lam = self._lambda(criterion)
        p = float(criterion.params["false_pass_probability"])
        c = float(criterion.params.get("smoothing", 1))
        delta, shared = criterion_sensitivity(self.spec, self.table, criterion, self.pc)
        s_min = shared["s_min"]
        noisy = self.ctx.laplace(
            relative_one_way_error(self.pc, lam, c),
            sensitivity=delta,
            epsilon=criterion.epsilon,
            purpose=_purpose(criterion),
            bounds=(1.0, lam),
        )
        t_prime = sensitivity.false_pass_threshold(lam, p, delta, criterion.epsilon)
        details = {
            "s_min": s_min,
            "lambda": lam,
            "false_pass_probability": p,
            "smoothing": c,
            "t_prime": t_prime,
        }
        return from_noisy(
            criterion.id,
            criterion.kind,
            criterion.threshold,
            noisy,
            adjusted_threshold=t_prime,
            details=details,
        )

    def _conditional_mean(self, criterion: Criterion) -> CriterionResult:
        """Alg. 2 with public sizes m̂ from S; Δ = (U − L)/min m̂."""
        groups = mean_groups(self.spec, self.table, criterion, self.pc)
        include = bool(criterion.params.get("include_overall", True))
        noisy = self.ctx.laplace(
            conditional_mean_error(groups, self.pc, self.ctx.rng, include),
            sensitivity=groups.sensitivity,
            epsilon=criterion.epsilon,
            purpose=_purpose(criterion),
            bounds=(groups.low, groups.high),
        )
        details = {
            "target": groups.target,
            "groups": len(groups.labels),
            "m_hat_min": int(groups.m_hat.min()),
            "resize_slack": groups.slack,
            "pad_value": groups.pad,
        }
        return from_noisy(criterion.id, criterion.kind, criterion.threshold, noisy, details=details)

    def coefficient_release(self, criterion: Criterion) -> RegressionRelease:
        """DP coefficients of R: the once-release when given, else released now (in the loop)."""
        if criterion.id in self.releases:
            return self.releases[criterion.id]
        design = RegressionDesign.build(self.spec, self.table, criterion)
        if criterion.once:
            if criterion.id not in self.once:
                raise ValueError(
                    f"criterion {criterion.id!r} is computed once outside the loop; pass its "
                    "release in once_results (see release_once)"
                )
            release = self.once[criterion.id]
            if release.names != design.names:
                raise ValueError(
                    f"criterion {criterion.id!r}: the once-release has other features than "
                    "this configuration's design"
                )
        else:
            release = dp_coefficients_from_cells(
                design, self.pc.cells, self.pc.real, self.n, criterion, self.ctx
            )
        self.releases[criterion.id] = release
        return release

    def _coefficients(self, criterion: Criterion) -> CriterionResult:
        """‖w^ε(R) − w(S)‖₁ standardised with S's sd: post-processing of the DP coefficients."""
        release = self.coefficient_release(criterion)
        design = RegressionDesign.build(self.spec, self.table, criterion)
        _, coef_s = ols_from_cells(design, self.pc.cells, self.pc.synth)
        sd = feature_sd(design, self.pc.cells, self.pc.synth)
        value = coefficient_error(release.coef, coef_s, sd)
        rec = release.record
        return CriterionResult(
            id=criterion.id,
            kind=criterion.kind,
            threshold=criterion.threshold,
            value=value,
            passed=bool(value < criterion.threshold),
            epsilon=criterion.epsilon,
            mechanism=REGRESSION_MECHANISM,
            bounds=None if rec is None else rec.bounds,
            sensitivity=None if rec is None else rec.sensitivity,
            sigma=None if rec is None else rec.sigma,
            stage="once" if criterion.once else (rec.stage if rec else "loop"),
            details={"features": len(release.names), "target": release.target},
            record=rec,
        )

    def _coefficient_criterion(self, criterion: Criterion) -> Criterion:
        """The regression_coefficients criterion whose DP w^ε(R) an MAE criterion uses (§4.5.4)."""
        wanted = regression_columns(self.spec, criterion)
        for c in self.spec.criteria:
            if c.kind == "regression_coefficients" and regression_columns(self.spec, c) == wanted:
                return c
        raise ValueError(
            f"criterion {criterion.id!r}: regression_mae needs a regression_coefficients "
            "criterion with the same target and features, whose DP coefficients it uses"
        )

    def _mae(self, criterion: Criterion) -> CriterionResult:
        """Prop. 9: |MAE_R(w^ε_R) − MAE_R(w_S)| with clipped predictions, Δ = 2(U − L)/n."""
        if criterion.bounds is None:
            raise ValueError(f"criterion {criterion.id!r}: regression_mae needs bounds [L, U]")
        release = self.coefficient_release(self._coefficient_criterion(criterion))
        design = RegressionDesign.build(self.spec, self.table, criterion)
        noisy = self.ctx.laplace(
            self._mae_gap(criterion, design, (release.intercept, release.coef)),
            sensitivity=criterion_sensitivity(self.spec, self.table, criterion, self.pc)[0],
            epsilon=criterion.epsilon,
            purpose=_purpose(criterion),
            bounds=criterion.bounds,
        )
        details = {"coefficients_from": release.criterion_id}
        return from_noisy(criterion.id, criterion.kind, criterion.threshold, noisy, details=details)

    def _face(self, criterion: Criterion) -> CriterionResult:
        """S-only count, no noise and no ε; passes when at most the threshold."""
        value = float(self._face_count(criterion))
        return CriterionResult(
            id=criterion.id,
            kind=criterion.kind,
            threshold=criterion.threshold,
            value=value,
            passed=bool(value <= criterion.threshold),
            epsilon=0.0,
            mechanism=NO_MECHANISM,
            bounds=None,
            sensitivity=None,
            sigma=None,
            stage="loop" if self.ctx.iteration is not None else "once",
            details={
                "measure": str(criterion.params.get("measure", "unique_rows")),
                "min_count": self.config.min_count,
            },
        )


def evaluate_all(
    spec: Spec,
    config: Configuration,
    real_codes: np.ndarray,
    synth_codes: np.ndarray,
    ctx: PrivacyContext,
    once_results: Mapping[str, RegressionRelease] | None = None,
) -> list[CriterionResult]:
    """DP results of every criterion of ``spec`` for candidate S against R, in spec order.

    ``real_codes`` and ``synth_codes`` are (n, d) code matrices of ``spec.table_codec(config)``.
    ``once_results`` holds the releases of criteria marked ``once`` (from :func:`release_once`).
    Each in-loop criterion is one ε-DP measurement through ``ctx``.
    """
    _check_context(ctx)
    ev = _Evaluation(spec, config, real_codes, synth_codes, ctx, once_results)
    return [ev.release(c) for c in spec.criteria]


def evaluate_criterion(
    spec: Spec,
    config: Configuration,
    criterion_id: str,
    real_codes: np.ndarray,
    synth_codes: np.ndarray,
    ctx: PrivacyContext,
    once_results: Mapping[str, RegressionRelease] | None = None,
) -> CriterionResult:
    """The DP result of one criterion (an MAE criterion also releases its coefficients)."""
    _check_context(ctx)
    ev = _Evaluation(spec, config, real_codes, synth_codes, ctx, once_results)
    return ev.release(spec.criterion(criterion_id))


def release_once(
    spec: Spec, config: Configuration, real_codes: np.ndarray, ctx: PrivacyContext
) -> dict[str, RegressionRelease]:
    """The once-statistics of R alone (criteria with ``once``), computed before the loop."""
    _check_context(ctx)
    return {
        c.id: dp_regression_coefficients(spec, config, c, real_codes, ctx)
        for c in spec.criteria
        if c.once
    }


def exact_errors(
    spec: Spec,
    config: Configuration,
    real_codes: np.ndarray,
    synth_codes: np.ndarray,
    ctx: PrivacyContext,
) -> dict[str, float]:
    """Exact E(R, S) of every criterion, for PUBLIC data only (refused in a confidential run).

    Conditional means are the plain group means (no resizing); regression criteria use the
    non-private OLS fit of R. For co-design on the proxy and for tests.
    """
    if ctx.mode is not PrivacyMode.SIMULATION:
        raise ValueError("exact criterion errors are for public simulation runs only")
    ev = _Evaluation(spec, config, real_codes, synth_codes, ctx, None)
    return {c.id: ev.exact(c) for c in spec.criteria}
