"""The PUBLIC proxy a generator may read: named in the spec, pinned by its SHA-256.

Two options read one: the workload family's ``public_measurements: joint`` takes marginals of a
public file as free measurements (``public_proxy``), and ``structure: public`` learns plausible
deniability's or PrivBayes' network from one (``structure_proxy``,
:mod:`workbench.generators.public_structure`). This module is the one place such a file is
resolved, hashed, read and encoded; ``field`` names the option's hyperparameter in messages.
Which file is part of the design, so the spec names it (a path resolved like the
distinguisher's proxy: absolute, else the working directory, else the repository) and pins its
bytes (``<field>_sha256``): the frozen spec's hash then covers the proxy too, and a file that is
missing or has changed since the design is refused before any budget is spent
(:func:`check_proxy_file`, called by the family's preflight and again before every read).
The proxy is read with the spec's columns only, its domain policies and raw cleaning rules, and
encoded with the configuration's codec — the steps a run applies to its own data. Nothing here
reads confidential data.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from workbench.criteria.kinds.distinguisher import proxy_path
from workbench.specification.document import file_sha256
from workbench.transform.cells import CellCounts

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np
    import pandas as pd

    from workbench.specification import Spec
    from workbench.transform import TableCodec

_HEX64 = re.compile(r"[0-9a-f]{64}")
#: (path, size, mtime) -> SHA-256, so a dry run does not hash the file once per task.
_HASHES: dict[tuple[str, int, int], str] = {}
#: One encoded proxy at a time (they can be large), keyed by file, hash, spec and codec.
_CODES: dict[tuple[Any, ...], np.ndarray] = {}
_COUNTS: dict[tuple[Any, ...], CellCounts] = {}
#: (file, hash, spec) already read under the spec by a preflight.
_READABLE: set[tuple[str, str, str]] = set()


def proxy_name_problem(value: Any) -> str | None:
    """``public_proxy``: a non-empty path string."""
    return None if isinstance(value, str) and value.strip() else "must name a public CSV file"


def sha256_problem(value: Any) -> str | None:
    """``public_proxy_sha256``: 64 lowercase hex digits (``sha256sum FILE``)."""
    ok = isinstance(value, str) and _HEX64.fullmatch(value) is not None
    return None if ok else "must be the file's SHA-256, 64 lowercase hex digits (sha256sum FILE)"


def file_hash(path: Path) -> str:
    """The file's SHA-256, cached while its size and modification time stay the same."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _HASHES:
        _HASHES[key] = file_sha256(path)
    return _HASHES[key]


def check_proxy_file(name: str, sha256: str, field: str = "public_proxy") -> Path:
    """The resolved proxy path, or ValueError naming the field: the file is missing, or its
    bytes are not the ones the spec pinned (the message gives both hashes; both are public)."""
    path = proxy_path(name)
    if not path.is_file():
        raise ValueError(f"generator {field}: the public proxy file {name!r} does not "
                         "exist; nothing was run and no budget was spent")
    actual = file_hash(path)
    if actual != sha256:
        raise ValueError(
            f"generator {field}_sha256: the public proxy file {name!r} has SHA-256 "
            f"{actual}, the spec pins {sha256}; the file changed since the design (freeze a "
            "spec that pins the new file to use it); nothing was run and no budget was spent")
    return path


def _cleaned(spec: Spec, path: Path, name: str, field: str) -> pd.DataFrame:
    """The proxy read as a run reads its data: spec columns and file format, domain policies,
    cleaning rules; an EncodingError names a missing column."""
    from workbench.transform.clean import clean
    from workbench.transform.raw import apply_domain_policy, check_missing, read_raw

    frame = read_raw(path, spec.columns, spec.file_format)
    frame = clean(apply_domain_policy(frame, spec.columns), spec)
    check_missing(frame, spec.columns)
    if len(frame) == 0:
        raise ValueError(f"generator {field}: no record of {name!r} is left after the "
                         "spec's cleaning rules")
    return frame


def check_proxy(spec: Spec, name: str, sha256: str, field: str = "public_proxy") -> None:
    """The preflight: the file exists, has the pinned bytes and reads under the spec."""
    path = check_proxy_file(name, sha256, field)
    key = (str(path.resolve()), sha256, spec.sha256)
    if key not in _READABLE:
        _cleaned(spec, path, name, field)
        _READABLE.add(key)


def proxy_codes(spec: Spec, table: TableCodec, name: str, sha256: str,
                field: str = "public_proxy") -> np.ndarray:
    """The proxy's records (checked, read and cleaned like a run's data, encoded with the
    configuration's codec ``table``), one row per record; cached."""
    path = check_proxy_file(name, sha256, field)
    key = (str(path.resolve()), sha256, spec.sha256, table)
    if key not in _CODES:
        codes = table.encode(_cleaned(spec, path, name, field))
        _CODES.clear()
        _CODES[key] = codes
    return _CODES[key]


def proxy_counts(spec: Spec, table: TableCodec, name: str, sha256: str) -> CellCounts:
    """The proxy's cell counts under the configuration's codec ``table`` (checked, read and
    cleaned like a run's data); cached."""
    codes = proxy_codes(spec, table, name, sha256)
    key = (name, sha256, spec.sha256, table)
    if key not in _COUNTS:
        _COUNTS.clear()
        _COUNTS[key] = CellCounts.from_codes(codes, table.domain)
    return _COUNTS[key]
