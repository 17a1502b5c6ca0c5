"""The frozen spec: one validated, hashed, immutable document that describes a whole release design.

This package is the *model* only: the immutable :class:`Spec` and its section objects, the
configuration space, the document and its hash, parameter declarations, which criteria and
generators import. Validation (which reads their registries, so it sits above them) lives in
:mod:`workbench.validation`: load with ``load_spec``, build from a dict with ``build_spec``,
freeze with ``freeze_document``; every problem is reported at once in a :class:`SpecError`,
each with its JSON path.
"""

from __future__ import annotations

from workbench.specification.document import (
    canonical_json,
    content_of,
    parse_document,
    read_document,
    spec_hash,
)
from workbench.specification.errors import Problem, SpecError
from workbench.specification.model import Criterion, Spec
from workbench.specification.space import Configuration

__all__ = [
    "Configuration",
    "Criterion",
    "Problem",
    "Spec",
    "SpecError",
    "canonical_json",
    "content_of",
    "parse_document",
    "read_document",
    "spec_hash",
]
