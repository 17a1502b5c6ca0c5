"""The ``structure`` criterion (issue 36): does the release keep the dependence between columns
that no criterion names, compared with a release that makes every column independent?

E(R, S) = U / D, where over the column pairs P (every pair, or with ``pairs: unnamed`` those
inside no marginal another criterion declares)

* U = mean_P ½Σ_v |p_R(v) − p_S(v)|, the release's total variation to R's pair tables, and
* D = mean_P ½Σ_v |p_R(v) − p_R(a)·p_R(b)|, the same for the independent release (the product
  of R's 1-way marginals).

E = 0 for S = R, about 1 when S is independent; it passes when E ≤ T (the issue's must-show:
T = 0.5). The tables are pairs only (Σ_P |a|·|b| cells, never a joint), and the kind declares
no workload marginals: "all pairs" is never one clique of the generator's model; the workload's
``structure`` option is what selects pairs for it, within ``generator.model_limit``.

**DP release and sensitivity.** (U, D) is released as one vector with Laplace noise through
the privacy layer; E is computed from it (post-processing, D clamped to ≥ 1/n). p = counts/n
with the public n. Replace-one: one record leaves a cell and enters another in every pair
table, so ‖Δp_ab‖₁ ≤ 2/n and U moves by ≤ ½·2/n = 1/n. For D, ‖Δp_a‖₁, ‖Δp_b‖₁ ≤ 2/n, so
‖Δ(p_a⊗p_b)‖₁ ≤ ‖Δp_a‖₁·‖p_b′‖₁ + ‖p_a‖₁·‖Δp_b‖₁ ≤ 4/n and D moves by ≤ ½(2/n + 4/n) = 3/n.
Add/remove-one (public n, n ≥ 3): U moves by ≤ ½/n; the product moves by ≤ (2(n+1) + 1)/n²
≤ 3/n, so D by ≤ 2/n. Means over P keep these bounds. Δ₁ of (U, D) = 1/n + 3/n = 4/n for both.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.criteria.audit_case import AuditCase, replaced, rows
from workbench.criteria.kinds.base import (
    CheckContext,
    Clique,
    CriterionKind,
    Param,
    join_path,
    pairs,
)
from workbench.criteria.kinds.tags import KindTags
from workbench.specification.params import one_of

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.criteria.result import CriterionResult
    from workbench.specification.model import Criterion, Spec
    from workbench.transform import TableCodec
    from workbench.transform.cells import PairedCells

SCOPES = ("all", "unnamed")


def structure_sensitivity(n: int) -> float:
    """Δ₁ of (U, D): 4/n (the module docstring derives 1/n + 3/n)."""
    from workbench.criteria import sensitivity

    return 4.0 * sensitivity.one_over_n(n)


def named_cliques(spec: Spec, criterion_id: str | None = None) -> list[Clique]:
    """The multi-way marginals the spec's other criteria declare (what they name)."""
    from workbench.criteria import kinds

    out: list[Clique] = []
    for c in spec.criteria:
        if c.id != criterion_id and c.kind != "structure":
            out += [tuple(q) for q in kinds.get(c.kind).marginals(spec, c) if len(q) > 1]
    return out


def scope_pairs(spec: Spec, criterion: Criterion) -> list[Clique]:
    """The pairs the criterion averages over (all, or those no other criterion names)."""
    every = pairs(spec.column_names)
    if criterion.params.get("pairs", "all") == "all":
        return every
    named = [set(q) for q in named_cliques(spec, criterion.id)]
    return [p for p in every if not any(set(p) <= q for q in named)]


def pair_means(pc: PairedCells, names: list[Clique]) -> tuple[float, float]:
    """Exact (U, D) of the module docstring over ``names``, one bincount per pair and side."""
    n = float(pc.n)
    dom = pc.domain
    one = {c: pc.marginal((c,), "real") / n for c in dom.names}
    u = d = 0.0
    for a, b in names:
        ia, ib = dom.index(a), dom.index(b)
        sa, sb = dom.sizes[ia], dom.sizes[ib]
        flat = pc.cells[:, ia] * sb + pc.cells[:, ib]
        r = np.bincount(flat, weights=pc.real, minlength=sa * sb) / n
        s = np.bincount(flat, weights=pc.synth, minlength=sa * sb) / n
        u += 0.5 * float(np.abs(r - s).sum())
        d += 0.5 * float(np.abs(r - np.outer(one[a], one[b]).ravel()).sum())
    k = max(len(names), 1)
    return u / k, d / k


def ratio(u: float, d: float, n: int) -> float:
    """U/D with D clamped to ≥ 1/n (independent R: any release is as good as independence)."""
    return float(u) / max(float(d), 1.0 / n)


class Structure(CriterionKind):
    """Mean pair TV of the release over that of an independent release; Δ₁ = 4/n on (U, D)."""

    name = "structure"
    description = ("the mean total variation between R's and the release's column-pair "
                   "tables, as a share of an independent release's (0: R's dependence kept; "
                   "1: no better than independent columns)")
    params = MappingProxyType({
        "pairs": Param("all", one_of(*SCOPES), "'all' column pairs, or the 'unnamed' ones no "
                       "other criterion's marginals contain", control="choice", label="pairs",
                       choices=SCOPES),
    })
    position = 119
    tags = KindTags(sigma_by_simulation=True,
                    noise_note="Laplace on two means of R's pair tables; the ratio is "
                               "computed from them")

    def check(self, ctx: CheckContext, params: Mapping[str, Any], bounds: Any,
              threshold: float, path: str) -> tuple[float, float] | None:
        """No bounds; a positive threshold; at least two columns."""
        if bounds is not None:
            ctx.problem(join_path(path, "bounds"), "a 'structure' criterion takes no bounds")
        if not threshold > 0:
            ctx.problem(join_path(path, "threshold"), "must be > 0 (a ratio to an independent "
                        "release, e.g. 0.5)")
        if len(ctx.columns) < 2:
            ctx.problem(join_path(path, "kind"), "a 'structure' criterion needs two columns")
        return None

    def preflight(self, spec: Spec, criterion: Criterion) -> None:
        """'unnamed' with every pair named by other criteria has nothing to measure."""
        if not scope_pairs(spec, criterion):
            raise ValueError(f"criterion {criterion.id!r} (structure): params.pairs "
                             "'unnamed' leaves no pair (other criteria name every pair); use "
                             "'all'")

    def _pairs(self, ev: Evaluation, criterion: Criterion) -> list[Clique]:
        """The criterion's pairs, refused by name when there are none."""
        chosen = scope_pairs(ev.spec, criterion)
        if not chosen:
            self.preflight(ev.spec, criterion)
        return chosen

    def exact(self, ev: Evaluation, criterion: Criterion) -> float:
        """U/D on the exact pair tables (confidential)."""
        u, d = pair_means(ev.pc, self._pairs(ev, criterion))
        return ratio(u, d, ev.n)

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """Δ₁ = 4/n on (U, D), both neighbour relations (the module docstring's derivation)."""
        return structure_sensitivity(pc.n), {}

    def release(self, ev: Evaluation, criterion: Criterion) -> CriterionResult:
        """Laplace(Δ₁/ε) on (U, D); the ratio of the noisy pair."""
        from workbench.criteria.evaluation_state import purpose

        chosen = self._pairs(ev, criterion)
        u, d = pair_means(ev.pc, chosen)
        delta, details = self.sensitivity(ev.spec, ev.table, criterion, ev.pc)
        noisy = ev.ctx.laplace(np.array([u, d]), sensitivity=float(delta or 0.0),
                               epsilon=criterion.epsilon, purpose=purpose(criterion))
        nu, nd = (float(x) for x in np.asarray(noisy.value).ravel())
        return self.result(criterion, ratio(nu, nd, ev.n), record=noisy.record,
                           details={**details, "pairs": len(chosen)})

    def template(self, criterion_id: str, document: Mapping[str, Any]) -> dict[str, Any]:
        """Threshold 0.5 (half an independent release's distance), ε 0.05, unnamed pairs."""
        return {"id": criterion_id, "kind": self.name, "epsilon": 0.05, "threshold": 0.5,
                "params": {"pairs": "unnamed"}}

    def audit_case(self) -> AuditCase:
        """The largest move of (U, D) over every R of four GXY rows and every replacement,
        S = R (found by brute force; Δ₁ = 4/n is a proven bound, not attained)."""
        real = rows((0, 0, 0), (0, 0, 1), (0, 1, 0), (0, 1, 1))
        return AuditCase(
            {"kind": self.name, "threshold": 0.5, "params": {"pairs": "all"}},
            real, replaced(real, 0, (1, 2, 2)), real, 4 / 4,
            "S = R (D = 0: g is constant, x and y independent); R′ moves one record to "
            "(b, 2, 2): U 0 → 1/4, D 0 → 19/48, so (U, D) moves by 31/48 of Δ₁ = 4/n = 1",
            mechanism="Laplace on (U, D)", tightness=31 / 48)


KIND = Structure()
