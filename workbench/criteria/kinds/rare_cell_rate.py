"""The rate of a yes/no outcome within rare cells (issue 36): where a maximum share error is
blind, because a rare cell's rows are a tiny share of n whatever their outcomes.

The rare cells are the combinations of the ``cells`` columns that hold 1..``max_size`` rows of
the candidate S (the declared public size; S is public inside the loop, R never chooses them).
``aggregate: pooled`` (default) compares the outcome rate over all rows in those cells;
``max`` the largest gap over the cells one by one. E(R, S) = |rate(R) − rate(S)| (pooled) or
max over rare cells of it, rate = (yes + c)/(rows + 2c).

The DP release is R's counts over the rare cells × outcome (a 2-vector when pooled): its cells
are fixed by S and disjoint, so Δ = 2 (replace-one) or 1 (add/remove-one)
(:mod:`._association`; a record that moves into or out of the rare cells changes one count).
With no rare cell in S nothing is released and the value is 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.criteria import associations as assoc
from workbench.criteria.audit_case import BASE, AuditCase, replaced
from workbench.criteria.kinds._association import (
    OUTCOME,
    POSITIVE,
    SMOOTHING_PARAM,
    TableKind,
    smoothing,
)
from workbench.criteria.kinds.base import Clique, Param, join_path
from workbench.criteria.kinds.tags import KindTags
from workbench.specification.params import one_of, whole_at_least

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.criteria.kinds.checks import CheckContext
    from workbench.specification.model import Criterion, Spec

AGGREGATES = ("pooled", "max")


class RareCellRate(TableKind):
    """|rate(R̃) − rate(S)| within S's rare cells (pooled or per cell); Δ of the table = 2."""

    name = "rare_cell_rate"
    description = ("the gap between the rate of a yes/no outcome in R and in the release "
                   "within the rare cells (at most max_size rows of the release)")
    params = MappingProxyType({
        "cells": Param(None, doc="the columns whose combinations are the cells",
                       control="columns", label="cells"),
        "max_size": Param(None, whole_at_least(1), "a cell is rare when the release holds "
                          "1..max_size of its rows (public)", control="whole_number",
                          label="max size"),
        "outcome": OUTCOME,
        "positive": POSITIVE,
        "aggregate": Param("pooled", one_of(*AGGREGATES), "pooled: one rate over every rare "
                           "row; max: the largest gap cell by cell", control="choice",
                           label="aggregate", choices=AGGREGATES),
        "smoothing": SMOOTHING_PARAM,
    })
    tags = KindTags(clip=(0.0, 1.0), sigma_by_simulation=True,
                    noise_note=TableKind.tags.noise_note,
                    dp_n_bound=TableKind.tags.dp_n_bound)
    position = 124

    def check_params(self, ctx: CheckContext, params: Mapping[str, Any], path: str) -> None:
        """``cells``: known columns, none of them the outcome; ``max_size`` given."""
        cells = params.get("cells")
        cpath = join_path(path, "cells")
        if not isinstance(cells, list) or not cells:
            ctx.problem(cpath, "must list at least one column")
            return
        for j, c in enumerate(cells):
            if assoc.check_column(ctx, f"{cpath}[{j}]", c) and c == params.get("outcome"):
                ctx.problem(f"{cpath}[{j}]", "the outcome cannot be one of the cell columns")
        if params.get("max_size") is None:
            ctx.problem(join_path(path, "max_size"), "is required: a whole number ≥ 1")

    def tables(self, ev: Evaluation, criterion: Criterion) -> tuple[np.ndarray, np.ndarray]:
        """R's and S's counts over S's rare cells × outcome (summed to one row when pooled)."""
        p = criterion.params
        cells = [str(c) for c in p["cells"]]
        keys = assoc.rare_keys(ev.pc, ev.table, cells, str(p["outcome"]), p["positive"],
                               int(p["max_size"]))
        real, synth = assoc.group_table(ev.pc, ev.table, cells, str(p["outcome"]),
                                        p["positive"], keys)
        if p.get("aggregate", "pooled") == "pooled" and len(keys):
            return real.sum(axis=0, keepdims=True), synth.sum(axis=0, keepdims=True)
        return real, synth

    def value(self, real: np.ndarray, synth: np.ndarray, criterion: Criterion) -> float:
        """The |rate gap| (pooled: one row; max: the largest over the rare cells)."""
        c = smoothing(criterion)
        gaps = np.abs(assoc.rates(real, c) - assoc.rates(synth, c))
        return float(gaps.max()) if gaps.size else 0.0

    def marginals(self, spec: Spec, criterion: Criterion) -> list[Clique]:
        """The rates are a function of the cells × outcome marginal."""
        return [(*(str(c) for c in criterion.params["cells"]),
                 str(criterion.params["outcome"]))]

    def template(self, criterion_id: str, document: Mapping[str, Any]) -> dict[str, Any]:
        """The draft's first column as cells, the last column with a domain as outcome."""
        cols = [c for c in document.get("schema", {}).get("columns", [])
                if isinstance(c, Mapping)]
        named = [c for c in cols if c.get("domain")]
        outcome = named[-1] if named else {"name": None, "domain": [None]}
        first = next((c.get("name") for c in cols if c.get("name") != outcome.get("name")),
                     None)
        return {"id": criterion_id, "kind": self.name, "epsilon": 0.05, "threshold": 0.1,
                "params": {"cells": [first], "max_size": 100, "outcome": outcome.get("name"),
                           "positive": list(outcome["domain"][:1]), "aggregate": "pooled",
                           "smoothing": assoc.SMOOTHING}}

    def audit_case(self) -> AuditCase:
        """A worst-case replace-one pair on the tiny audit design (Δ written out by hand)."""
        return AuditCase(
            {"kind": self.name, "threshold": 0.5,
             "params": {"cells": ["g"], "max_size": 2, "outcome": "x", "positive": [2],
                        "aggregate": "max"}},
            BASE, replaced(BASE, 0, (1, 2, 0)), BASE, 2.0,
            "S = BASE has 2 rows in g = a and in g = b, both rare (max_size 2); record "
            "(a, x = 0) becomes (b, x = 2): the table loses 1 in (a, no) and gains 1 in "
            "(b, yes), L1 2 (Δ = 2)",
            mechanism="Laplace on the rare cells × outcome table (vector)")


KIND = RareCellRate()
