"""Validation of a spec document, collecting every problem with its JSON path, then building Spec.

One pass reports everything: the JSON Schema for shape and types
(:mod:`workbench.validation.schema`), then the sections' semantic checks in order, run even
when the schema found problems (a section the bad shape breaks is skipped; a semantic problem
at a path the schema already flagged is left out) (:mod:`workbench.validation.sections`:
cross references, binnings, rule syntax, criteria through their kinds, generator
hyperparameters through their family, budget arithmetic, the private-selection theorem's
condition) and the checks of the whole spec (:mod:`workbench.validation.checks`). A document
that passes is turned into the immutable :class:`~workbench.specification.model.Spec`, built from
the
sections by keyword.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.specification.document import FROZEN_KEY, freeze_value, spec_hash
from workbench.specification.errors import Problem, SpecError
from workbench.specification.model import Spec
from workbench.validation.checks import whole_spec_problems
from workbench.validation.schema import schema_problems
from workbench.validation.sections import SECTIONS, BuildContext


def build_spec(document: Mapping[str, Any], *, require_frozen: bool = False) -> Spec:
    """Validate a document into an immutable Spec; one SpecError lists every problem."""
    problems = schema_problems(document)
    if problems:
        raise SpecError(sorted(set(problems) | set(_semantic_problems(document, problems))))
    try:
        return _build(document, require_frozen)
    except SpecError:
        raise
    except Exception as exc:  # a validator bug must still surface as a SpecError, never a traceback
        raise SpecError(
            [Problem("", f"internal validation error ({type(exc).__name__}); "
                     "please report this spec")]
        ) from exc


def _semantic_problems(document: Mapping[str, Any], flagged: list[Problem]) -> list[Problem]:
    """The sections' problems of a document the schema rejected (rule syntax, ε sums, …)."""
    ctx = BuildContext(document)
    for section in SECTIONS:
        try:
            ctx.built[section.FIELD] = section.build(ctx)
        except Exception:
            continue
    paths = [p.path for p in flagged]
    return [p for p in ctx.problems if not any(_related(p.path, q) for q in paths)]


def _related(a: str, b: str) -> bool:
    """Whether one JSON path is the other or lies inside it.

    >>> _related("schema.columns[0]", "schema.columns[0].type"), _related("a.b", "a.bc")
    (True, False)
    """
    short, long = sorted((a, b), key=len)
    return long == short or long.startswith((short + ".", short + "["))


def _raise_if_any(ctx: BuildContext) -> None:
    if ctx.problems:
        raise SpecError(sorted(set(ctx.problems)))


def _build(document: Mapping[str, Any], require_frozen: bool) -> Spec:
    ctx = BuildContext(document)
    for section in SECTIONS:
        ctx.built[section.FIELD] = section.build(ctx)
    digest = spec_hash(document)
    frozen = FROZEN_KEY in document
    if frozen and document[FROZEN_KEY]["sha256"] != digest:
        ctx.problem("frozen.sha256",
                    "does not match the spec's content (the spec was changed after freezing)")
    if require_frozen and not frozen:
        ctx.problem("frozen", "the spec is not frozen; freeze it before a confidential run")
    _raise_if_any(ctx)
    spec = Spec(document=freeze_value(dict(document)), sha256=digest, frozen=frozen,
                **ctx.built)
    whole_spec_problems(ctx, spec)
    _raise_if_any(ctx)
    return spec
