"""The frozen spec: one validated, hashed, immutable document that describes a whole release design.

Load with :func:`load_spec`, build from a dict with :func:`build_spec`, freeze
with :func:`freeze_document`. Every problem is reported at once in a
:class:`SpecError`, each with its JSON path.

Two layers live here (``docs/architecture.md``, "Layers"): the model — the immutable
:class:`Spec` and its section objects, the configuration space, the document and its hash,
parameter declarations — which the criteria and generators import; and the validator
(:mod:`~workbench.spec.validate`, :mod:`~workbench.spec.sections`), which reads their
registries. The validator's entry points are loaded on first use (PEP 562), so importing a
model type never imports the registries.
"""

from __future__ import annotations

import importlib
from typing import Any

from workbench.spec.document import (
    FROZEN_KEY,
    canonical_json,
    content_of,
    parse_document,
    read_document,
    spec_hash,
    write_document,
)
from workbench.spec.errors import Problem, SpecError
from workbench.spec.model import (
    Alternative,
    Budget,
    ColumnSpec,
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
from workbench.spec.space import Configuration, GeneratorSpace

#: Validator entry points and the module that defines each (imported on first use).
_VALIDATOR = {
    "build_spec": "workbench.spec.validate",
    "json_schema": "workbench.spec.schema",
    "load_spec": "workbench.spec.files",
    "freeze_document": "workbench.spec.files",
    "save_spec": "workbench.spec.files",
}


def __getattr__(name: str) -> Any:
    if name in _VALIDATOR:
        return getattr(importlib.import_module(_VALIDATOR[name]), name)
    raise AttributeError(f"module 'workbench.spec' has no attribute {name!r}")


__all__ = [
    "FROZEN_KEY",
    "Alternative",
    "Budget",
    "ColumnSpec",
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
    "build_spec",
    "canonical_json",
    "content_of",
    "freeze_document",
    "json_schema",
    "load_spec",
    "parse_document",
    "read_document",
    "save_spec",
    "spec_hash",
    "write_document",
]
