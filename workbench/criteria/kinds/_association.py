"""What the association kinds share: a noisy count table of R, the measure post-processed.

Every association kind releases ONE table of R's counts — exposure × outcome (2×2), or group ×
outcome (k×2) — with Laplace noise through the privacy layer, and computes its measure from the
noisy table (post-processing, no further ε) against the same measure of the public candidate
S's exact table.

**Sensitivity (every association kind).** The table's cells are disjoint: a record sits in at
most one cell (none when its exposure, group or outcome is missing, or when its group is not
one of the table's groups, which are chosen from S alone). Replacing one record removes 1 from
at most one cell and adds 1 to at most one cell, so ‖T(R) − T(R′)‖₁ ≤ 2; adding or removing one
record changes one cell by 1. Δ = 2 (replace-one) or 1 (add/remove-one), whatever n is
(:func:`workbench.privacy.sensitivity.histogram`). The measure is a function of the noisy table
and of S, so it needs no sensitivity of its own.

**Under ``metadata.n_policy: dp``** (a raw row that crosses a rule adds a record to the cleaned
table or removes one; the validator then requires ``budget.neighbour: replace_one``): the table
is a count table, never divided by n or n̂, so the two moves of the cleaned table are the two
above — replace-one L1 ≤ 2, add/remove-one L1 ≤ 1 — and the Δ = 2 the kinds already use covers
both (:data:`TABLE_DP_N_BOUND`). Every measure (a ratio or a difference of rates) is computed
from counts alone: S holds n̂ records and R n, and a rate within a cell does not depend on
either total. ``workbench.audits.n_policy`` audits each kind on add- and remove-one neighbours
(L1 1 of Δ 2: loose by design; the replace-one pair that reaches Δ is the kind's own case).

**Missing values:** rows with a missing exposure, group or outcome are left out of both tables
(R's and S's), so a column may be ``allow`` or ``category``; the criterion then compares the
association among the rows that have both values.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.criteria import associations as assoc
from workbench.criteria.kinds.base import CheckContext, Clique, CriterionKind, Param, join_path
from workbench.criteria.kinds.tags import KindTags
from workbench.specification.params import positive

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.criteria.result import CriterionResult
    from workbench.specification.model import Criterion, Spec
    from workbench.transform import TableCodec
    from workbench.transform.cells import CellCounts, PairedCells

LEVELS_DOC = ("values counted as 'yes': a list of the column's values, or {'below': x} / "
              "{'at_least': x} for a numeric column")
OUTCOME = Param(None, doc="the yes/no outcome column", control="column", label="outcome")
POSITIVE = Param(None, doc="outcome " + LEVELS_DOC, control="json", label="outcome present")
SMOOTHING_PARAM = Param(assoc.SMOOTHING, positive, "c added to every cell before a rate or "
                        "ratio (0.5: Haldane–Anscombe)", control="optional_number",
                        label="smoothing", placeholder="0.5")


def table_sensitivity(spec: Spec) -> float:
    """Δ of a count table with disjoint cells (the module docstring derives it)."""
    from workbench.privacy import sensitivity

    return float(sensitivity.histogram(spec.budget.neighbour))


def _smallest_share(cells: np.ndarray) -> float | None:
    """The smallest cell / their total (None when the proxy has no row in them)."""
    total = float(cells.sum())
    return float(cells.min()) / total if total > 0 else None


def smoothing(criterion: Criterion) -> float:
    """The criterion's c."""
    return float(criterion.params.get("smoothing", assoc.SMOOTHING))


#: Why a count table's Δ holds under ``n_policy: dp`` (module doc); every table kind states it.
TABLE_DP_N_BOUND = (
    "under n_policy dp the release is R's count table, never scaled by n or n̂: replace-one "
    "moves it by L1 ≤ 2 (one cell −1, another +1), add/remove-one by L1 ≤ 1 (one cell ±1), so "
    "the replace-one Δ = 2 covers both; the measure is computed from counts within cells "
    "(post-processing), whatever n and n̂ = |S| are")


class TableKind(CriterionKind):
    """A kind whose DP release is one count table of R; its value is computed from it."""

    tags = KindTags(sigma_by_simulation=True,
                    noise_note="Laplace on a count table of R; the measure is computed from it",
                    dp_n_bound=TABLE_DP_N_BOUND)

    @abstractmethod
    def tables(self, ev: Evaluation, criterion: Criterion) -> tuple[np.ndarray, np.ndarray]:
        """(R's table, S's table), the same shape; R's is confidential."""

    @abstractmethod
    def value(self, real: np.ndarray, synth: np.ndarray, criterion: Criterion) -> float:
        """The error between R's (possibly noisy) table and S's exact one."""

    def exact(self, ev: Evaluation, criterion: Criterion) -> float:
        """The error with R's exact table (for public co-design and floors)."""
        real, synth = self.tables(ev, criterion)
        return self.value(real, synth, criterion)

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """Δ = 2 (replace-one) or 1 (add/remove-one): the L1 sensitivity of R's count table.
        Its cells are disjoint and fixed by the spec and S, so one replaced record leaves at
        most one cell and enters at most one (see :mod:`._association`)."""
        return table_sensitivity(spec), {}

    def release(self, ev: Evaluation, criterion: Criterion) -> CriterionResult:
        """Laplace(Δ/ε) on every cell of R's table; the error of the noisy table against S."""
        from workbench.criteria.evaluation_state import purpose

        real, synth = self.tables(ev, criterion)
        delta, details = self.sensitivity(ev.spec, ev.table, criterion, ev.pc)
        flat = np.asarray(real, dtype=np.float64).ravel()
        if flat.size == 0:  # no cell to compare (chosen from S alone): nothing is released
            return self.result(criterion, 0.0, details={**details, "cells": 0})
        noisy = ev.ctx.laplace(flat, sensitivity=float(delta or 0.0),
                               epsilon=criterion.epsilon, purpose=purpose(criterion))
        value = self.value(noisy.value.reshape(real.shape), synth, criterion)
        return self.result(criterion, value, record=noisy.record,
                           details={**details, "cells": int(flat.size)})

    def check_params(self, ctx: CheckContext, params: Mapping[str, Any], path: str) -> None:
        """The kind's own parameter checks (columns and level sets)."""

    def check(self, ctx: CheckContext, params: Mapping[str, Any], bounds: Any,
              threshold: float, path: str) -> tuple[float, float] | None:
        """No bounds (the value is not clipped); the outcome and its level set checked."""
        if bounds is not None:
            ctx.problem(join_path(path, "bounds"), f"a '{self.name}' criterion takes no bounds")
        ppath = join_path(path, "params")
        outcome = params.get("outcome")
        if assoc.check_column(ctx, join_path(ppath, "outcome"), outcome):
            assoc.check_levels(ctx, join_path(ppath, "positive"), outcome,
                               params.get("positive"))
        self.check_params(ctx, params, ppath)
        return None


class PairKind(TableKind):
    """An exposure–outcome measure from the 2×2 table: |m(R̃) − m(S)|, m = log RR, log OR, RD."""

    params = MappingProxyType({
        "exposure": Param(None, doc="the exposure column", control="column", label="exposure"),
        "exposed": Param(None, doc="exposure " + LEVELS_DOC, control="json",
                         label="exposed"),
        "outcome": OUTCOME,
        "positive": POSITIVE,
        "smoothing": SMOOTHING_PARAM,
    })
    position = 120

    def check_params(self, ctx: CheckContext, params: Mapping[str, Any], path: str) -> None:
        """The exposure is a known column other than the outcome, with a valid level set."""
        exposure = params.get("exposure")
        if assoc.check_column(ctx, join_path(path, "exposure"), exposure):
            if exposure == params.get("outcome"):
                ctx.problem(join_path(path, "exposure"), "the exposure and the outcome must be "
                            "different columns")
            assoc.check_levels(ctx, join_path(path, "exposed"), exposure, params.get("exposed"))

    def tables(self, ev: Evaluation, criterion: Criterion) -> tuple[np.ndarray, np.ndarray]:
        """R's and S's 2×2 exposure × outcome counts (missing rows left out)."""
        return assoc.two_by_two(ev.pc, ev.table, criterion.params)

    def workload_cell_share(self, table: TableCodec, criterion: Criterion,
                            proxy: CellCounts) -> float | None:
        """The smallest cell of the proxy's 2×2 table, as a share of its rows: log RR, log OR
        and RD divide by the exposure groups and (log RR, log OR) by their outcome cells, so
        the noise a marginal at ε adds to the measure is about √2·Δ/(ε·n·p) for the smallest
        cell p."""
        p = criterion.params
        e = assoc.yes_codes(table, str(p["exposure"]), p["exposed"])
        o = assoc.yes_codes(table, str(p["outcome"]), p["positive"])
        counts = proxy.marginal((str(p["exposure"]), str(p["outcome"])))
        two = np.array([[counts[np.ix_(e == i, o == j)].sum() for j in (1, 0)] for i in (1, 0)])
        return _smallest_share(two.ravel())

    def value(self, real: np.ndarray, synth: np.ndarray, criterion: Criterion) -> float:
        """|m(R) − m(S)| with the kind's measure m, both tables smoothed by c."""
        c = smoothing(criterion)
        return abs(assoc.measure(real, self.name, c) - assoc.measure(synth, self.name, c))

    def marginals(self, spec: Spec, criterion: Criterion) -> list[Clique]:
        """The measure is a function of the exposure × outcome 2-way marginal."""
        return [(str(criterion.params["exposure"]), str(criterion.params["outcome"]))]

    def template_params(self, document: Mapping[str, Any]) -> dict[str, Any]:
        """The draft's first two categorical columns, each first value as 'yes'."""
        cols = [c for c in document.get("schema", {}).get("columns", [])
                if isinstance(c, Mapping) and c.get("domain")]
        first = cols[0] if cols else {"name": None, "domain": [None]}
        second = cols[1] if len(cols) > 1 else first
        return {"exposure": first.get("name"), "exposed": list(first["domain"][:1]),
                "outcome": second.get("name"), "positive": list(second["domain"][:1]),
                "smoothing": assoc.SMOOTHING}

    def template(self, criterion_id: str, document: Mapping[str, Any]) -> dict[str, Any]:
        """ε 0.05, threshold 0.2 (on the measure's scale)."""
        return {"id": criterion_id, "kind": self.name, "epsilon": 0.05, "threshold": 0.2,
                "params": self.template_params(document)}


__all__ = ["OUTCOME", "POSITIVE", "SMOOTHING_PARAM", "PairKind", "TableKind",
           "smoothing", "table_sensitivity"]
