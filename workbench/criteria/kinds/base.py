"""What a criterion kind declares, in one place: a subclass of :class:`CriterionKind`.

Every part of the package that depends on a criterion's kind asks its kind object:

* everyone: its capability flags, one declared ``tags`` value (:mod:`.tags`);
* the spec validator: ``params`` (names, defaults, context-free constraints), ``check``
  (semantic validation against the spec being built, returning the criterion's [L, U]),
  ``check_epsilon`` and ``check_once``;
* the engine: ``exact`` (E(R, S), confidential), ``sensitivity`` (Δ from n, the spec and S
  only, derived in its docstring), ``release`` (the DP result through ``ctx``) and
  ``release_once``;
* the workload generator: ``marginals``; the design assistant: ``needed_epsilon``;
* the editors and reviews: ``template``, ``description``, ``adjusted_threshold``,
  ``failing_value``, ``review_false_pass`` and ``exact_reads_threshold``.
"""

from __future__ import annotations

import copy
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from workbench.criteria.kinds.checks import (  # noqa: F401 - re-exported for the kinds
    CheckContext,
    Clique,
    complete_column,
    numeric_column,
    pairs,
    template_target,
    whole_in,
)
from workbench.criteria.kinds.tags import KindTags, Reads
from workbench.criteria.result import NO_MECHANISM, CriterionResult
from workbench.privacy.mechanisms import laplace_cdf
from workbench.specification.errors import join_path
from workbench.specification.params import Param, is_number

if TYPE_CHECKING:
    from workbench.criteria.audit_case import AuditCase
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.privacy import MeasurementRecord, PrivacyContext
    from workbench.specification.model import Criterion, Spec
    from workbench.specification.space import Configuration
    from workbench.transform import TableCodec
    from workbench.transform.cells import CellCounts, PairedCells

SQRT2 = math.sqrt(2.0)
#: How far above T the failing value of a false pass sits, as a share of T.
FALSE_PASS_MARGIN = 0.10
#: The workload generator's weight multipliers, one hyperparameter per group.
WORKLOAD_GROUPS = ("regression", "mean", "marginal", "faithfulness")
#: A share criterion at this threshold (the share kinds' template, 5% of n) needs as much of
#: ε_gen as a criterion of a kind whose threshold has other units.
REFERENCE_SHARE = 0.05


class CriterionKind(ABC):
    """A criterion kind: subclass it in one module under ``workbench/criteria/kinds/``.

    Class attributes are the declarations; override the methods the kind needs. A module
    that defines ``KIND = MyKind()`` is registered when ``workbench.criteria.kinds`` is
    imported; a test may call :func:`workbench.criteria.kinds.register` instead.
    """

    #: The spec's ``kind`` string.
    name: ClassVar[str] = ""
    #: Plain words for reviews and editors: what the error measures.
    description: ClassVar[str] = ""
    #: Declared parameters (``params`` of the criterion), in editor order.
    params: ClassVar[Mapping[str, Param]] = MappingProxyType({})
    #: Position in lists (the spec's enum, the editor's menu); ties by name.
    position: ClassVar[int] = 1000
    #: The capability flags, in one declared value (:class:`KindTags`).
    tags: ClassVar[KindTags] = KindTags()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A capability flag declared beside ``tags`` would be silently ignored: refuse it."""
        super().__init_subclass__(**kwargs)
        stray = sorted(set(vars(cls)) & {f.name for f in fields(KindTags)})
        if stray:
            raise TypeError(f"criterion kind {cls.__name__}: declare {', '.join(stray)} in "
                            "tags = KindTags(...)")

    # --- validation ------------------------------------------------------------------------
    def check(self, ctx: CheckContext, params: Mapping[str, Any], bounds: Any,
              threshold: float, path: str) -> tuple[float, float] | None:
        """Semantic checks beyond each parameter's own constraint; returns [L, U] (or None)."""
        return bounds

    def check_epsilon(self, ctx: CheckContext, params: Mapping[str, Any], epsilon: float,
                      path: str) -> None:
        """Checks of the criterion's ε beyond > 0 (e.g. a mechanism's minimum); none here."""
        return  # an optional hook: nothing by default

    def preflight(self, spec: Spec, criterion: Criterion) -> None:
        """Checks of PUBLIC inputs a run needs (files the criterion reads), made before any
        budget is spent; raise ValueError naming the criterion. None here."""
        return  # an optional hook: nothing by default

    def check_once(self, ctx: CheckContext, params: Mapping[str, Any], path: str) -> None:
        """``once`` is for statistics of R alone under a fixed transformation (§4.14.1)."""
        ctx.problem(join_path(path, "once"), f"a '{self.name}' criterion compares R with the "
                    "candidate, so it must run in the loop")

    # --- evaluation ------------------------------------------------------------------------
    @abstractmethod
    def exact(self, ev: Evaluation, criterion: Criterion) -> float:
        """E(R, S) without noise (confidential: only handed to ``ctx`` or to public tests)."""

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """(Δ, public details) from n, the spec and S only; Δ is None when there is no noise."""
        return None, {}

    def release(self, ev: Evaluation, criterion: Criterion) -> CriterionResult:
        """The DP result: one Laplace draw on the exact value with this kind's Δ."""
        delta, details = self.sensitivity(ev.spec, ev.table, criterion, ev.pc)
        return self.laplace_result(ev, criterion, self.exact(ev, criterion), delta,
                                   criterion.bounds, details=details)

    def release_once(self, spec: Spec, config: Configuration, criterion: Criterion,
                     real_codes: np.ndarray, ctx: PrivacyContext) -> Any:
        """The statistic of R alone computed before the loop (``reads`` is R_ALONE only)."""
        raise ValueError(f"criterion {criterion.id!r}: a '{self.name}' criterion has no "
                         "once-statistic")

    def laplace_result(self, ev: Evaluation, criterion: Criterion, value: float,
                       delta: float | None, bounds: tuple[float, float] | None, *,
                       details: Mapping[str, Any] | None = None) -> CriterionResult:
        """One ``ctx.laplace`` call on ``value``, the DP value clipped to ``clip``, decided by
        :meth:`result`."""
        from workbench.criteria.evaluation_state import purpose

        if delta is None:
            raise ValueError(f"criterion {criterion.id!r}: no sensitivity for this kind")
        noisy = ev.ctx.laplace(value, sensitivity=delta, epsilon=criterion.epsilon,
                               purpose=purpose(criterion), bounds=bounds)
        shown = float(noisy.value.ravel()[0])
        if self.tags.clip is not None:
            shown = float(np.clip(shown, *self.tags.clip))
        return self.result(criterion, shown, record=noisy.record, details=details)

    def result(self, criterion: Criterion, value: float, *,
               record: MeasurementRecord | None = None, mechanism: str | None = None,
               details: Mapping[str, Any] | None = None,
               stage: str | None = None) -> CriterionResult:
        """The released row: the DP ``value`` decided against :meth:`effective_threshold` by
        :meth:`passes` (Δ, σ, ε and bounds from the measurement ``record``; none without
        noise)."""
        delta = None if record is None else record.sensitivity
        details = dict(details or {})
        t_prime = None if delta is None else self.adjusted_threshold(criterion, delta, details)
        t_eff = self.effective_threshold(criterion, delta, details)
        return CriterionResult(
            id=criterion.id, kind=criterion.kind, threshold=float(criterion.threshold),
            value=float(value), passed=self.passes(value, t_eff),
            epsilon=criterion.epsilon if record is None else record.epsilon,
            mechanism=mechanism or (NO_MECHANISM if record is None else record.mechanism),
            bounds=None if record is None else record.bounds, sensitivity=delta,
            sigma=None if record is None else record.sigma,
            adjusted_threshold=None if t_prime is None else float(t_prime),
            effective_threshold=t_eff,
            stage=stage or ("loop" if record is None else record.stage),
            details=details, record=record)

    # --- pass decisions: the ONE owner ------------------------------------------------------
    def effective_threshold(self, criterion: Criterion, delta: float | None,
                            details: Mapping[str, Any]) -> float:
        """The threshold a DP value is compared with: T, or min(T, T′) where the kind derives
        a T′ from public quantities (Δ, which reads n, the spec and S only)."""
        t = float(criterion.threshold)
        if delta is None or criterion.epsilon <= 0:
            return t
        adjusted = self.adjusted_threshold(criterion, delta, details)
        return t if adjusted is None else min(t, float(adjusted))

    def passes(self, value: float, t_eff: float) -> bool:
        """The pass test: strictly below T_eff, or at most T_eff for a kind that is not
        ``strict`` (a count on the release alone: a threshold of 0 means "none allowed")."""
        return bool(value < t_eff) if self.tags.strict else bool(value <= t_eff)

    def pass_probability(self, criterion: Criterion, exact: float, delta: float | None,
                         t_eff: float) -> float | None:
        """P(:meth:`passes`) for the DP value of a criterion whose exact value is ``exact``.

        Without noise (ε = 0 or no Δ) the decision itself, 0 or 1. With Laplace(Δ/ε) on the
        value, clipped to ``clip``: 1 when T_eff is above the clip range (the clipped value
        always passes), 0 when below it, else F_Lap(T_eff − exact) (clipping inside the range
        does not change a comparison with T_eff). None when the kind's noise is not one
        Laplace draw on the value (``noise_note``): a forecast must then simulate the release.
        """
        if criterion.epsilon <= 0 or delta is None:
            return float(self.passes(exact, t_eff))
        if not self.tags.closed_form_pass:
            return None
        if self.tags.clip is not None:
            lo, hi = self.tags.clip
            if t_eff > hi or (not self.tags.strict and t_eff >= hi):
                return 1.0
            if t_eff < lo or (self.tags.strict and t_eff <= lo):
                return 0.0
        return laplace_cdf(t_eff - exact, delta / criterion.epsilon)

    def false_pass_probability(self, criterion: Criterion, delta: float | None,
                               details: Mapping[str, Any]) -> float | None:
        """P(false pass): the chance that a true value :data:`FALSE_PASS_MARGIN` above T
        (:meth:`failing_value`) still passes; data-independent. None without noise or when
        the noise is not one Laplace draw on the value."""
        if criterion.epsilon <= 0 or delta is None or delta <= 0 or self.tags.noise_note:
            return None
        failing = self.failing_value(
            criterion, criterion.threshold + FALSE_PASS_MARGIN * abs(criterion.threshold))
        return self.pass_probability(criterion, failing, delta,
                                     self.effective_threshold(criterion, delta, details))

    # --- the design assistant ---------------------------------------------------------------
    def needed_epsilon(self, criterion: Criterion, exact: float, delta: float | None,
                       divisor: float, sigma_epsilon: float | None = None) -> float:
        """The smallest ε whose noise σ ≤ margin/divisor, margin = T − exact (the design's ε
        rule): σ = √2·Δ/ε for one Laplace draw, or ``sigma_epsilon``/ε measured on the proxy
        for a value computed from a noisy vector; ``inf`` without a margin."""
        margin = criterion.threshold - exact
        scale = sigma_epsilon if sigma_epsilon is not None else SQRT2 * float(delta or 0.0)
        return divisor * scale / margin if margin > 0 else math.inf

    def tuned_params(self, spec: Spec, table: TableCodec, criterion: Criterion,
                     cells: np.ndarray, counts: np.ndarray) -> dict[str, Any]:
        """Parameters the design assistant tunes on the PUBLIC proxy's distinct cells and
        counts (merged into the criterion's ``params``); none by default."""
        return {}

    # --- the survey simulation (public proxy as population) -----------------------------------
    def survey_estimand(self, criterion: Criterion, population: Any, weight: float
                        ) -> tuple[str, Any, float, float] | None:
        """(name, estimator, population truth, Laplace Δ of the weighted sum / N) of the
        estimate a weighted criterion makes, for ``dryrun --survey-plots``; None for a kind
        that makes no weighted estimate."""
        return None

    def sampling_sd(self, criterion: Criterion, proxy: Any) -> float | None:
        """The sampling SD of the kind's weighted estimate at the proxy's n (the crossover ε
        of the co-design survey panel); None for a kind that makes no weighted estimate."""
        return None

    # --- the privacy audit -----------------------------------------------------------------
    @abstractmethod
    def audit_case(self) -> AuditCase:
        """A worst-case replace-one neighbour pair on a tiny public design that reaches this
        kind's Δ (or the reason it cannot be flagged at Δ/2): see
        :mod:`workbench.criteria.audit_case`. Abstract, so a kind without one cannot even be
        made (Python's TypeError names ``audit_case``); ``tests/test_audits.py`` audits each."""

    def variant_audit_cases(self) -> Mapping[str, AuditCase]:
        """Worst-case pairs of the kind's other release options (e.g. another Δ rule), by
        audit name; audited like :meth:`audit_case` (``workbench.audits.criteria``)."""
        return {}

    # --- the workload generator ------------------------------------------------------------
    def workload_need(self, criterion: Criterion) -> float:
        """How much of ε_gen the criterion's marginals need (unitless; never its own ε, so a
        test's ε cannot move the release it tests): 1, or 0 for a kind reading S only.

        A threshold in a column's units cannot be compared with another kind's without data,
        so each such criterion needs the same; the per-kind multipliers tune the mix."""
        return 0.0 if self.tags.reads is Reads.S_ONLY else 1.0

    def workload_cell_share(self, table: TableCodec, criterion: Criterion,
                            proxy: CellCounts) -> float | None:
        """The smallest share of a PUBLIC proxy among the cells the criterion's measure divides
        by (a rate's or a ratio's denominator), or None when it divides by none (a share of n:
        the noise on a share does not depend on the cell's size). The workload scales the
        need by it when the spec pins a public proxy (``generators.workload``)."""
        return None

    def marginals(self, spec: Spec, criterion: Criterion) -> list[Clique]:
        """Multi-way marginals the error depends on (1-way ones are always measured)."""
        return []

    def workload_marginals(self, spec: Spec, criterion: Criterion,
                           rule_order: int = 0) -> list[Clique]:
        """What the workload generator measures for the criterion; ``rule_order`` (its
        ``faithfulness_cliques`` option) lets a kind derive cliques from a spec rule instead."""
        return self.marginals(spec, criterion)

    # --- editors and reviews ---------------------------------------------------------------
    def template(self, criterion_id: str, document: Mapping[str, Any]) -> dict[str, Any]:
        """A valid-looking new criterion for the editor; thresholds are to tune on the proxy."""
        if self.tags.reads is Reads.S_ONLY:
            return {"id": criterion_id, "kind": self.name, "threshold": 0, "epsilon": 0,
                    "params": self.template_params(document)}
        return {"id": criterion_id, "kind": self.name, "epsilon": 0.01, "threshold": 0.05,
                "params": self.template_params(document)}

    def template_params(self, document: Mapping[str, Any]) -> dict[str, Any]:
        """The template's ``params``: every declared default (copied: a draft may edit them)."""
        return {name: copy.deepcopy(p.default) for name, p in self.params.items()}

    def exact_reads_threshold(self, params: Mapping[str, Any]) -> bool:
        """Whether the exact value depends on the threshold (caches must then key on it)."""
        return False

    def adjusted_threshold(self, criterion: Criterion, delta: float,
                           details: Mapping[str, Any]) -> float | None:
        """A threshold derived from public quantities (T′), or None."""
        return None

    def failing_value(self, criterion: Criterion, failing: float) -> float:
        """The true value a false pass is judged at, given a failing one (clipped like the DP
        value)."""
        return failing if self.tags.clip is None else min(failing, self.tags.clip[1])

    def review_false_pass(self, criterion: Criterion) -> tuple[str, str] | None:
        """The spec review's false-pass cell and note, when the generic '50% at T' is wrong."""
        if self.tags.noise_note:
            return "—", f"{self.tags.noise_note}: not a single Laplace tail"
        if self.tags.clip is not None and criterion.threshold >= self.tags.clip[1]:
            lo, hi = self.tags.clip
            return "100%", (f"the DP value is clipped to [{lo:g}, {hi:g}], so it is always "
                            f"below a threshold ≥ {hi:g}")
        return None


class ShareKind(CriterionKind):
    """A share of n in [0, 1]: bounds fixed to [0, 1], Δ = 1/n, the DP value clipped to [0, 1]."""

    tags = KindTags(clip=(0.0, 1.0))

    def check(self, ctx: CheckContext, params: Mapping[str, Any], bounds: Any,
              threshold: float, path: str) -> tuple[float, float] | None:
        """The bounds of a share are [0, 1]; the kind's own checks follow."""
        if bounds is not None and bounds != (0.0, 1.0):
            ctx.problem(join_path(path, "bounds"), f"a '{self.name}' value lies in [0, 1]")
        self.check_params(ctx, params, join_path(path, "params"))
        return (0.0, 1.0)

    def check_params(self, ctx: CheckContext, params: Mapping[str, Any], path: str) -> None:
        """Checks of the parameters that need the spec (column names, the number of columns)."""

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """Δ = 1/n (:func:`workbench.criteria.sensitivity.one_over_n`; the kind's docstring
        says why one replaced record moves the share by at most 1/n)."""
        from workbench.criteria import sensitivity

        return sensitivity.one_over_n(pc.n), {}

    def workload_need(self, criterion: Criterion) -> float:
        """REFERENCE_SHARE / T: a share's noise from a marginal at ε is √2·Δ_hist/(ε·n) per
        cell, so keeping it a fixed fraction of T needs ε ∝ 1/T (n is common to all)."""
        need = super().workload_need(criterion)
        return need and REFERENCE_SHARE / max(float(criterion.threshold), 1e-6)

    def template(self, criterion_id: str, document: Mapping[str, Any]) -> dict[str, Any]:
        """Threshold 5% of n, ε 0.01, bounds [0, 1]."""
        out = super().template(criterion_id, document)
        params = out.pop("params")
        return out | {"bounds": [0, 1], "params": params}




__all__ = [
    "FALSE_PASS_MARGIN",
    "WORKLOAD_GROUPS",
    "CheckContext",
    "Clique",
    "CriterionKind",
    "Param",
    "ShareKind",
    "is_number",
    "join_path",
    "numeric_column",
    "pairs",
    "template_target",
    "whole_in",
]
