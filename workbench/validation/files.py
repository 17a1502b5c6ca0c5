"""Spec files: load and validate, freeze with the hash, save atomically."""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Mapping
from typing import Any

from workbench.specification.document import (
    FROZEN_KEY,
    content_of,
    read_document,
    spec_hash,
    write_document,
)
from workbench.specification.model import Spec
from workbench.validation.validate import build_spec


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
