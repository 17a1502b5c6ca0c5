"""Reading, writing, canonicalising and hashing spec documents (plain JSON-like data)."""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from workbench.specification.errors import Problem, SpecError

FROZEN_KEY = "frozen"


def read_document(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Load a spec file as a plain dict (JSON, or YAML by extension); errors name the file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(
            [Problem("", f"cannot read spec file {str(p)!r}: {exc.strerror}")]
        ) from None
    return parse_document(text, yaml=p.suffix.lower() in {".yaml", ".yml"})


def parse_document(text: str, *, yaml: bool = False) -> dict[str, Any]:
    """Parse spec text; a syntax error becomes a SpecError with the line and column."""
    if yaml:
        import yaml as _yaml

        try:
            doc = _yaml.safe_load(text)
        except _yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            raise SpecError([Problem("", f"not valid YAML{where}")]) from None
    else:
        try:
            doc = json.loads(text, parse_constant=_reject_constant)
        except json.JSONDecodeError as exc:
            raise SpecError(
                [Problem("", f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}")]
            ) from None
        except ValueError as exc:
            raise SpecError([Problem("", str(exc))]) from None
    if not isinstance(doc, dict):
        raise SpecError([Problem("", "the spec must be an object (a mapping of sections)")])
    return doc


def _reject_constant(name: str) -> Any:
    raise ValueError(f"not valid JSON: {name} is not allowed in a spec")


def content_of(document: Mapping[str, Any]) -> dict[str, Any]:
    """The design itself: everything except the freeze record."""
    return {k: thaw(v) for k, v in document.items() if k != FROZEN_KEY}


def canonical_json(document: Mapping[str, Any]) -> str:
    """Deterministic text of the design: sorted keys, no whitespace, UTF-8, no NaN."""
    return json.dumps(
        content_of(document),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )


def spec_hash(document: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical design; the identity a frozen spec records."""
    return hashlib.sha256(canonical_json(document).encode("utf-8")).hexdigest()


def forecast_hash(document: Mapping[str, Any]) -> str:
    """SHA-256 of the design without its recorded forecast (``selection.forecast``): what a
    forecast records as the design it was made for (it cannot cover itself)."""
    content = content_of(document)
    selection = content.get("selection")
    if isinstance(selection, dict):
        content["selection"] = {k: v for k, v in selection.items() if k != "forecast"}
    return spec_hash(content)


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file's bytes, so a spec or a fact list can pin exactly which public
    file it names."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_document(document: Mapping[str, Any], path: str | os.PathLike[str]) -> None:
    """Write atomically (temp file + rename) so a crash never leaves half a spec."""
    p = Path(path)
    text = json.dumps(thaw(document), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def freeze_value(value: Any) -> Any:
    """Deep read-only view: dicts become MappingProxyType, lists become tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: freeze_value(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze_value(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """A plain, mutable deep copy of a (possibly frozen) value."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        raise SpecError([Problem("", "numbers in a spec must be finite")])
    return copy.copy(value)
