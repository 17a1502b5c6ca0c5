"""The relative 1-way error (Hod & Canetti §4.5.2, Props. 4–6), with its derived threshold T′.

E_rel^λ(R, S) = max over 1-way cells of clip(max(r̂/ŝ, ŝ/r̂), 1, λ), r̂ = r + c, ŝ = s + c
(:func:`workbench.criteria.marginal_kinds.relative_one_way_error`). Its DP value passes below
min(T, T′), T′ = λ + (Δ/ε)·ln 2p: a candidate whose error is clipped at λ then passes with
probability p (Prop. 6).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from workbench.criteria import sensitivity as sens
from workbench.criteria.audit_case import AuditCase, replaced, rows
from workbench.criteria.kinds.base import (
    SQRT2,
    CheckContext,
    Clique,
    CriterionKind,
    Param,
    is_number,
    join_path,
)
from workbench.criteria.marginal_kinds import relative_one_way_error, smallest_one_way_count
from workbench.specification.params import open_interval, positive

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.criteria.result import CriterionResult
    from workbench.specification.model import Criterion, Spec
    from workbench.transform import TableCodec
    from workbench.transform.cells import PairedCells


def _lambda(criterion: Criterion) -> float:
    """λ (defaults to the threshold, as the spec allows)."""
    return float(criterion.params.get("lambda", criterion.threshold))


class RelativeOneWay(CriterionKind):
    """Clipped relative 1-way error; Δ from the smallest 1-way count of S; bounds [1, λ]."""

    name = "relative_one_way"
    description = ("the largest ratio between a 1-way count of R and of the release (either "
                   "way round, smoothed by c and clipped at λ)")
    params = MappingProxyType({
        "lambda": Param(None, doc="clip λ > 1 (default: the threshold)",
                        control="optional_number", label="λ", placeholder="= threshold"),
        "false_pass_probability": Param(None, open_interval(0, 0.5),
                                        "p: the pass probability of a value clipped at λ",
                                        control="number", label="p", placeholder="0.05"),
        "smoothing": Param(1, positive, "c added to every count", control="optional_number",
                           label="smoothing", placeholder="1"),
    })
    position = 20

    def check(self, ctx: CheckContext, params: Mapping[str, Any], bounds: Any,
              threshold: float, path: str) -> tuple[float, float] | None:
        """λ > 1 and ≥ T; the bounds are [1, λ]."""
        lam = params.get("lambda", threshold)
        lpath = join_path(path, "params.lambda")
        if not is_number(lam) or lam <= 1:
            ctx.problem(lpath, "must be a number > 1")
        elif lam < threshold:
            ctx.problem(lpath, f"must be >= the threshold {threshold:g}")
        if is_number(lam) and lam > 1:
            if bounds is not None and bounds != (1.0, float(lam)):
                ctx.problem(join_path(path, "bounds"), f"must be [1, lambda] = [1, {lam:g}]")
            bounds = (1.0, float(lam))
        return bounds

    def exact(self, ev: Evaluation, criterion: Criterion) -> float:
        """Exact clipped relative error on the 1-way counts."""
        c = float(criterion.params.get("smoothing", 1))
        return relative_one_way_error(ev.pc, _lambda(criterion), c)

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """Δ ≤ max{1/(s_min + c), λ − 1/(1/λ + 1/(s_min + c))} (Props. 4–5).

        A replaced record moves each count r by ≤ 1, so r̂/ŝ moves by ≤ 1/ŝ; ŝ/r̂ moves only
        while inside [1, λ], at most from λ to 1/(1/λ + 1/ŝ); both are worst at the smallest
        1-way count s_min of the public S (:func:`workbench.criteria.sensitivity.relative_one_way`).
        """
        lam = _lambda(criterion)
        s_min = smallest_one_way_count(pc)
        delta = sens.relative_one_way(s_min, lam, float(criterion.params.get("smoothing", 1)))
        return delta, {"s_min": s_min, "lambda": lam}

    def exact_reads_threshold(self, params: Mapping[str, Any]) -> bool:
        """λ defaults to the threshold, and the error is clipped at λ."""
        return "lambda" not in params

    def adjusted_threshold(self, criterion: Criterion, delta: float,
                           details: Mapping[str, Any]) -> float | None:
        """T′ = λ + (Δ/ε)·ln 2p (Prop. 6)."""
        p = float(criterion.params["false_pass_probability"])
        return sens.false_pass_threshold(details["lambda"], p, delta, criterion.epsilon)

    def release(self, ev: Evaluation, criterion: Criterion) -> CriterionResult:
        """Laplace on the clipped relative error with bounds [1, λ]; passes below min(T, T′)."""
        lam = _lambda(criterion)
        delta, shared = self.sensitivity(ev.spec, ev.table, criterion, ev.pc)
        t_prime = self.adjusted_threshold(criterion, delta, shared)
        details = {
            "s_min": shared["s_min"],
            "lambda": lam,
            "false_pass_probability": float(criterion.params["false_pass_probability"]),
            "smoothing": float(criterion.params.get("smoothing", 1)),
            "t_prime": t_prime,
        }
        return self.laplace_result(ev, criterion, self.exact(ev, criterion), delta, (1.0, lam),
                                   details=details)

    def pass_probability(self, criterion: Criterion, exact: float, delta: float | None,
                         t_eff: float) -> float | None:
        """The exact error is clipped to [1, λ] before the noise (every ratio is), so a value
        given from outside that range is clipped first."""
        lam = _lambda(criterion)
        return super().pass_probability(criterion, min(max(exact, 1.0), lam), delta, t_eff)

    def needed_epsilon(self, criterion: Criterion, exact: float, delta: float | None,
                       divisor: float, sigma_epsilon: float | None = None) -> float:
        """T′ = λ + (Δ/ε)·ln 2p moves with ε (Prop. 6), so σ ≤ (min(T, λ) + (Δ/ε)·ln 2p − v)/K
        gives ε ≥ Δ·(K√2 − ln 2p)/(min(T, λ) − v)."""
        if delta is None:
            return super().needed_epsilon(criterion, exact, delta, divisor, sigma_epsilon)
        p = float(criterion.params["false_pass_probability"])
        margin = min(criterion.threshold, _lambda(criterion)) - exact
        return delta * (divisor * SQRT2 - math.log(2 * p)) / margin if margin > 0 else math.inf

    def failing_value(self, criterion: Criterion, failing: float) -> float:
        """Every failing value is clipped to λ, where P(pass) is the spec's p (Prop. 6)."""
        return _lambda(criterion)

    def review_false_pass(self, criterion: Criterion) -> tuple[str, str] | None:
        """p at λ, by construction of T′."""
        p = float(criterion.params.get("false_pass_probability", 0.05))
        lam = _lambda(criterion)
        return (f"{p:.0%} at λ = {lam:.6g}",
                "T′ = λ + (Δ/ε)·ln 2p makes a value clipped at λ pass with probability p")

    def template(self, criterion_id: str, document: Mapping[str, Any]) -> dict[str, Any]:
        """λ = T = 2, p = 5%, ε 0.1."""
        return {"id": criterion_id, "kind": self.name, "epsilon": 0.1, "threshold": 2.0,
                "bounds": [1, 2],
                "params": {"lambda": 2.0, "false_pass_probability": 0.05, "smoothing": 1}}

    def workload_marginals(self, spec: Spec, criterion: Criterion,
                           rule_order: int = 0) -> list[Clique]:
        """Every 1-way marginal, measured for this criterion whatever the workload's
        ``one_way_share``: its value is decided by the rarest 1-way cells, which differ most
        between a proxy and a registry (issue 26: a design that left them to the 2-way
        tables because the proxy said it could failed on a registry whose rare cells
        differed)."""
        return [(name,) for name in spec.column_names]

    def audit_case(self) -> AuditCase:
        """A worst-case replace-one pair on the tiny audit design (Δ written out by hand)."""
        return AuditCase(
            {"kind": self.name, "threshold": 2.0, "bounds": [1, 2],
             "params": {"lambda": 2.0, "false_pass_probability": 0.05, "smoothing": 1}},
            replaced(rows((0, 0, 0), (0, 1, 1), (0, 2, 2), (1, 0, 1)), 3, (0, 0, 1)),
            rows((0, 0, 0), (0, 1, 1), (0, 2, 2), (1, 0, 1)),
            rows((0, 0, 0), (0, 1, 1), (0, 2, 2), (1, 0, 1)), 1.0,
            "s_min = 1 (g = b in S); R has no g = b (ratio λ = 2), R′ = S (ratio 1): "
            "Δ = max{1/ŝ, λ − 1/(1/λ + 1/ŝ)} = 1 with ŝ = 2")


KIND = RelativeOneWay()
