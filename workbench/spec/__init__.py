"""The frozen spec: one validated, hashed, immutable document that describes a whole release design.

Load with :func:`load_spec`, build from a dict with :func:`build_spec`, freeze
with :func:`freeze_document`. Every problem is reported at once in a
:class:`SpecError`, each with its JSON path.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Mapping
from typing import Any

from workbench.spec.build import build_spec, json_schema
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
    FaithfulnessRule,
    Metadata,
    Rule,
    Selection,
    Spec,
)
from workbench.spec.space import Configuration, GeneratorSpace


def load_spec(path: str | os.PathLike[str], *, require_frozen: bool = False) -> Spec:
    """Read, validate and build a spec file (JSON or YAML)."""
    return build_spec(read_document(path), require_frozen=require_frozen)


def freeze_document(document: Mapping[str, Any]) -> dict[str, Any]:
    """Validate the design and return it with a freeze record holding its SHA-256."""
    from workbench import __version__

    content = content_of(document)
    build_spec(content)
    frozen = dict(content)
    frozen[FROZEN_KEY] = {
        "sha256": spec_hash(content),
        "frozen_at": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "tool_version": __version__,
    }
    return frozen


def save_spec(
    document: Mapping[str, Any] | Spec, path: str | os.PathLike[str], *, freeze: bool = True
) -> str:
    """Validate and write a spec atomically (frozen by default); return its hash."""
    doc = document.to_document() if isinstance(document, Spec) else content_of(document)
    out = freeze_document(doc) if freeze else (build_spec(doc) and doc)
    write_document(out, path)
    return spec_hash(out)


__all__ = [
    "FROZEN_KEY",
    "Alternative",
    "Budget",
    "ColumnSpec",
    "ColumnTransform",
    "Configuration",
    "Constraints",
    "Criterion",
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
