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
    FROZEN_KEY,
    canonical_json,
    content_of,
    parse_document,
    read_document,
    spec_hash,
    write_document,
)
from workbench.specification.errors import Problem, SpecError
from workbench.specification.model import (
    Alternative,
    Budget,
    ColumnTransform,
    Constraints,
    Criterion,
    ExpectedN,
    FaithfulnessRule,
    Metadata,
    Rule,
    Selection,
    Spec,
)
from workbench.specification.space import Configuration, GeneratorSpace

__all__ = [
    "FROZEN_KEY",
    "Alternative",
    "Budget",
    "ColumnTransform",
    "Configuration",
    "Constraints",
    "Criterion",
    "ExpectedN",
    "FaithfulnessRule",
    "GeneratorSpace",
    "Metadata",
    "Problem",
    "Rule",
    "Selection",
    "Spec",
    "SpecError",
    "canonical_json",
    "content_of",
    "parse_document",
    "read_document",
    "spec_hash",
    "write_document",
]
