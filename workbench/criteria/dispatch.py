"""Evaluate every acceptance criterion of a spec for one release candidate, with DP, in one call.

The engine calls :func:`evaluate_all` once per private-selection iteration, and
:func:`release_once` once before the loop for the statistics of R alone (§4.14.1). Work is
shared: R and S are reduced once to counts on their combined distinct cells
(:class:`~workbench.criteria.evaluation_state.Evaluation`), and each criterion is handed to its
kind (:mod:`workbench.criteria.kinds`), which holds its exact error, its sensitivity (a
function of n, the spec and S only) and its DP release through ``ctx``.

Pass rule: the DP value must be below the threshold (below min(T, T′) for the relative 1-way
criterion, T′ from Prop. 6). Criteria that read S only (face-privacy counts) are computed
without noise and pass when the count is at most the threshold (so 0 means "none allowed").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from workbench.criteria import kinds
from workbench.criteria.evaluation_state import Evaluation
from workbench.criteria.kinds.base import CriterionKind
from workbench.criteria.result import CriterionResult
from workbench.privacy import PrivacyContext, PrivacyMode
from workbench.specification.model import Criterion, Spec
from workbench.specification.space import Configuration
from workbench.transform import TableCodec
from workbench.transform.cells import PairedCells


def _check_context(ctx: PrivacyContext) -> None:
    """The sensitivities here are derived for replace-one neighbours with public n."""
    if ctx.neighbour != "replace_one":
        raise ValueError(
            "criteria sensitivities are derived for replace_one neighbours (public n); "
            "this run uses add_remove"
        )


def kind_of(criterion: Criterion) -> CriterionKind:
    """The registered kind of a criterion; an unknown kind fails naming the criterion."""
    try:
        return kinds.get(criterion.kind)
    except ValueError:
        raise ValueError(f"criterion {criterion.id!r}: unknown kind {criterion.kind!r}") from None


def criterion_sensitivity(
    spec: Spec, table: TableCodec, criterion: Criterion, pc: PairedCells
) -> tuple[float | None, dict[str, Any]]:
    """Δ of one criterion from n, the spec and S (pc.synth): the one dispatch the engine and
    the co-design readouts share.

    Returns (Δ, public details); Δ is None for criteria released without noise.
    """
    return kind_of(criterion).sensitivity(spec, table, criterion, pc)


def evaluate_all(
    spec: Spec,
    config: Configuration,
    real_codes: np.ndarray,
    synth_codes: np.ndarray,
    ctx: PrivacyContext,
    once_results: Mapping[str, Any] | None = None,
    *,
    table: TableCodec,
) -> list[CriterionResult]:
    """DP results of every criterion of ``spec`` for candidate S against R, in spec order.

    ``real_codes`` and ``synth_codes`` are (n, d) code matrices of ``table`` (the Trial's codec).
    ``once_results`` holds the releases of criteria marked ``once`` (from :func:`release_once`).
    Each in-loop criterion is one ε-DP measurement through ``ctx``.
    """
    _check_context(ctx)
    ev = Evaluation(spec, config, real_codes, synth_codes, ctx, once_results, table)
    return [kind_of(c).release(ev, c) for c in spec.criteria]


def evaluate_criterion(
    spec: Spec,
    config: Configuration,
    criterion_id: str,
    real_codes: np.ndarray,
    synth_codes: np.ndarray,
    ctx: PrivacyContext,
    once_results: Mapping[str, Any] | None = None,
    *,
    table: TableCodec,
    cells: PairedCells | None = None,
) -> CriterionResult:
    """The DP result of one criterion (an MAE criterion also releases its coefficients);
    ``cells``: R and S already reduced (:class:`~workbench.criteria.evaluation_state.
    Evaluation`), when the same candidate is evaluated many times."""
    _check_context(ctx)
    ev = Evaluation(spec, config, real_codes, synth_codes, ctx, once_results, table, cells)
    criterion = spec.criterion(criterion_id)
    return kind_of(criterion).release(ev, criterion)


def release_once(
    spec: Spec, config: Configuration, real_codes: np.ndarray, ctx: PrivacyContext
) -> dict[str, Any]:
    """The once-statistics of R alone (criteria with ``once``), computed before the loop."""
    _check_context(ctx)
    real_codes = np.asarray(real_codes).astype(np.int64, copy=False)  # kinds compute on rows
    return {
        c.id: kind_of(c).release_once(spec, config, c, real_codes, ctx)
        for c in spec.criteria
        if c.once
    }


def exact_errors(
    spec: Spec,
    config: Configuration,
    real_codes: np.ndarray,
    synth_codes: np.ndarray,
    ctx: PrivacyContext,
    *,
    table: TableCodec,
    once_results: Mapping[str, Any] | None = None,
) -> dict[str, float]:
    """Exact E(R, S) of every criterion, for PUBLIC data only (refused in a confidential run).

    Conditional means are the plain group means (no resizing); regression criteria use the
    non-private OLS fit of R. For co-design on the proxy and for tests.
    """
    if ctx.mode is not PrivacyMode.SIMULATION:
        raise ValueError("exact criterion errors are for public simulation runs only")
    ev = Evaluation(spec, config, real_codes, synth_codes, ctx, once_results, table)
    return {c.id: kind_of(c).exact(ev, c) for c in spec.criteria}
