"""``criteria``: each criterion checked by its registered kind (:mod:`workbench.criteria.kinds`).

The generic part lives here — unique ids, unknown parameters, each declared parameter's own
constraint, ε and threshold by what the kind reads, [L, U] order and ``once`` — and the
kind's :meth:`~workbench.criteria.kinds.base.CriterionKind.check` does the rest.
"""

from __future__ import annotations

from workbench.criteria import kinds
from workbench.criteria.kinds.base import CriterionKind
from workbench.criteria.kinds.tags import Reads
from workbench.specification.document import freeze_value
from workbench.specification.errors import join_path
from workbench.specification.model import Criterion
from workbench.validation.sections.context import BuildContext

FIELD = "criteria"


def build(ctx: BuildContext) -> tuple[Criterion, ...]:
    """Every criterion, in document order."""
    out: list[Criterion] = []
    ids: set[str] = set()
    for i, raw in enumerate(ctx.doc["criteria"]):
        path = f"criteria[{i}]"
        cid, kind = raw["id"], kinds.get(raw["kind"])
        if cid in ids:
            ctx.problem(join_path(path, "id"), f"duplicate criterion id {cid!r}")
        ids.add(cid)
        params = dict(raw.get("params", {}))
        _check_params(ctx, kind, params, join_path(path, "params"))
        eps = float(raw.get("epsilon", 0.0))
        threshold = raw["threshold"]
        _check_epsilon_and_threshold(ctx, kind, eps, threshold, path)
        bounds = tuple(float(b) for b in raw["bounds"]) if "bounds" in raw else None
        if bounds is not None and not bounds[0] < bounds[1]:
            ctx.problem(join_path(path, "bounds"), "lower bound must be below upper bound")
        bounds = kind.check(ctx, params, bounds, threshold, path)
        if eps > 0:
            kind.check_epsilon(ctx, params, eps, path)
        once = bool(raw.get("once", False))
        if once:
            kind.check_once(ctx, params, path)
        out.append(Criterion(
            id=cid, kind=kind.name, threshold=float(threshold), epsilon=eps,
            bounds=bounds, params=freeze_value(params), once=once,
            description=raw.get("description", ""),
        ))
    return tuple(out)


def _check_params(ctx: BuildContext, kind: CriterionKind, params: dict, path: str) -> None:
    """No undeclared parameter, and each declared one within its own constraint."""
    for name in sorted(set(params) - set(kind.params)):
        ctx.problem(join_path(path, name), f"unknown parameter for kind '{kind.name}'")
    for name, param in kind.params.items():
        message = param.problem(params.get(name, param.default))
        if message:
            ctx.problem(join_path(path, name), message)


def _check_epsilon_and_threshold(ctx: BuildContext, kind: CriterionKind, eps: float,
                                 threshold: float, path: str) -> None:
    """A criterion that reads S only has ε = 0 and T ≥ 0; one that reads R has ε > 0, T > 0."""
    if kind.tags.reads is Reads.S_ONLY:
        if eps != 0:
            ctx.problem(join_path(path, "epsilon"), f"a '{kind.name}' criterion is computed "
                        "on the release only; its ε must be 0")
        if threshold < 0:
            ctx.problem(join_path(path, "threshold"), "must be >= 0")
    else:
        if eps <= 0:
            ctx.problem(join_path(path, "epsilon"),
                        "must be > 0 (the criterion reads confidential data)")
        if threshold <= 0:
            ctx.problem(join_path(path, "threshold"), "must be > 0")
