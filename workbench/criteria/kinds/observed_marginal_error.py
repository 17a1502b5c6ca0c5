"""Marginals over observed values: each k-way marginal from the rows complete on its columns.

For every set A of ``way`` chosen columns and every cell c of A's observed values,

    E(R, S) = max_A max_c |count_R(A = c)/D_R(A) − count_S(A = c)/D_S(A)|,
    D_X(A) = max(n_c^X(A), m(A)),

where n_c^X(A) is the number of rows of X complete on A and m(A) = n·(1 − Σ_{a∈A} φ̄_a) the
public lower bound from the columns' declared ``max_missing_rate`` φ̄
(``Spec.complete_rows_lower_bound``; the data is refused when a column exceeds φ̄). On columns
that are never missing this is the k-way marginal error of the shares.

Sensitivity (S fixed, R ~ R′ replace-one): Δ = 1/min_A m(A). For one A write a = count_R(A=c),
D = max(n_c, m). A replaced record (i) moves between complete rows: n_c and D unchanged, a
moves by ≤ 1: ≤ 1/D ≤ 1/m; (ii) stops being complete: n_c → n_c − 1 and a → a or a − 1; if
n_c − 1 ≥ m, |a/n_c − (a−1)/(n_c−1)| = (n_c − a)/(n_c(n_c−1)) ≤ 1/n_c and
|a/n_c − a/(n_c−1)| = a/(n_c(n_c−1)) ≤ 1/n_c; if the clamp holds on either side the
denominator is m on that side and the change is ≤ 1/m; (iii) becomes complete: (ii) reversed.
A maximum of terms that each move by ≤ 1/m(A) moves by ≤ max_A 1/m(A) (Prop. 3). This is the
partial-observation marginal of the missing-data issue (PrivBayesE's normalisation by n_c
with a public lower bound).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.criteria.audit_case import MISSING, MISSING_BASE, AuditCase, rows
from workbench.criteria.kinds.base import CheckContext, Clique, Param, ShareKind, join_path
from workbench.criteria.missing_values import missing_matrix
from workbench.transform.missing import MissingCodec

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.specification.model import Criterion, Spec
    from workbench.transform import TableCodec
    from workbench.transform.cells import PairedCells


def _subsets(spec: Spec, params: Mapping[str, Any]) -> list[Clique]:
    cols = params.get("columns") or list(spec.column_names)
    return [tuple(s) for s in itertools.combinations(cols, int(params.get("way", 1)))]


def _shares(codes: np.ndarray, table: TableCodec, subset: Clique, floor: int) -> np.ndarray:
    """Counts over A's observed cells / max(rows complete on A, floor)."""
    codes = np.asarray(codes)
    allow = [c for c in subset if isinstance(table.codec(c), MissingCodec)
             and table.codec(c).reserved]
    keep = ~missing_matrix(codes, table, allow).any(axis=1) if allow else np.ones(len(codes), bool)
    sizes = [table.codec(c).size for c in subset]
    idx = [table.names.index(c) for c in subset]
    flat = np.ravel_multi_index(tuple(codes[keep][:, idx].T), sizes)
    counts = np.bincount(flat, minlength=int(np.prod(sizes))).reshape(sizes)
    observed = counts[tuple(slice(0, -1) if c in allow else slice(None) for c in subset)]
    return observed / max(int(keep.sum()), floor)


def observed_marginal_error(spec: Spec, table: TableCodec, real: np.ndarray,
                            synth: np.ndarray, params: Mapping[str, Any]) -> float:
    """Exact E(R, S) of the module docstring."""
    n = len(real)
    worst = 0.0
    for subset in _subsets(spec, params):
        floor = spec.complete_rows_lower_bound(n, subset)
        gap = np.abs(_shares(real, table, subset, floor) - _shares(synth, table, subset, floor))
        worst = max(worst, float(gap.max()) if gap.size else 0.0)
    return worst


class ObservedMarginalError(ShareKind):
    """Max k-way marginal gap over observed values; Δ = 1/min_A m(A), value in [0, 1]."""

    name = "observed_marginal_error"
    description = ("the largest gap between a k-way marginal share of R and of the release, "
                   "each over the rows complete on that marginal's columns")
    params = MappingProxyType({
        "way": Param(1, doc="columns per marginal (1 or 2)", control="whole_number",
                     label="way"),
        "columns": Param(None, doc="columns to combine (null: all)", control="columns",
                         label="columns"),
    })
    position = 112

    def check_params(self, ctx: CheckContext, params: Mapping[str, Any], path: str) -> None:
        """``way`` is 1 or 2 and ``columns`` are known."""
        way = params.get("way", 1)
        if way not in (1, 2):
            ctx.problem(join_path(path, "way"), "must be 1 or 2")
        for i, name in enumerate(params.get("columns") or []):
            if name not in ctx.columns:
                ctx.unknown_column(f"{path}.columns[{i}]", name)

    def exact(self, ev: Evaluation, criterion: Criterion) -> float:
        """Exact max observed-marginal gap."""
        return observed_marginal_error(ev.spec, ev.table, ev.real, ev.synth, criterion.params)

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """Δ = 1/min_A m(A) (module docstring), from n and the declared max missing rates."""
        floor = min(spec.complete_rows_lower_bound(pc.n, s)
                    for s in _subsets(spec, criterion.params))
        return 1.0 / floor, {"complete_rows_lower_bound": floor}

    def marginals(self, spec: Spec, criterion: Criterion) -> list[Clique]:
        """The 2-way marginals the criterion compares (1-way ones are always measured)."""
        return _subsets(spec, criterion.params) if int(criterion.params.get("way", 1)) == 2 else []

    def audit_case(self) -> AuditCase:
        """A worst-case replace-one pair on the tiny audit design (Δ written out by hand)."""
        return AuditCase(
            {"kind": self.name, "threshold": 0.5, "bounds": [0, 1],
             "params": {"way": 1, "columns": ["x"]}},
            MISSING_BASE, rows((0, 1, 0), (1, 0, 1), (0, 0, 0), (1, 2, 1)), MISSING_BASE, 1 / 3,
            "S = R (n_c = 3 = m); R′ moves one observed x from 0 to 1: share 1 → 2/3 "
            "(Δ = 1/m)", design=MISSING)


KIND = ObservedMarginalError()
