"""Validation of a spec document, collecting every problem with its JSON path, then building Spec.

Two passes: the JSON Schema for shape and types (:mod:`workbench.spec.schema`), then the
sections' semantic checks in order (:mod:`workbench.spec.sections`: cross references,
binnings, rule syntax, criteria through their kinds, generator hyperparameters through their
family, budget arithmetic, the private-selection theorem's condition) and the checks of the
whole spec (:mod:`workbench.spec.checks`). A document that passes is turned into the
immutable :class:`~workbench.spec.model.Spec`, built from the sections by keyword.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.spec.checks import whole_spec_problems
from workbench.spec.document import FROZEN_KEY, freeze_value, spec_hash
from workbench.spec.errors import Problem, SpecError
from workbench.spec.model import Spec
from workbench.spec.schema import schema_problems
from workbench.spec.sections import SECTIONS, BuildContext


def build_spec(document: Mapping[str, Any], *, require_frozen: bool = False) -> Spec:
    """Validate a document into an immutable Spec; one SpecError lists every problem."""
    problems = schema_problems(document)
    if problems:
        raise SpecError(problems)
    try:
        return _build(document, require_frozen)
    except SpecError:
        raise
    except Exception as exc:  # a validator bug must still surface as a SpecError, never a traceback
        raise SpecError(
            [Problem("", f"internal validation error ({type(exc).__name__}); "
                     "please report this spec")]
        ) from exc


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
