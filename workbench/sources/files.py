"""Parquet (pyarrow) and the statistics formats (pyreadstat): spec columns only, in chunks.

Parquet is read as Arrow record batches of the wanted columns; a dictionary (categorical)
column reads as its text. Stata ``.dta``, SPSS ``.sav`` and SAS ``.sas7bdat``/``.xpt`` are
read by pyreadstat in row chunks with ``usecols``; their value labels (SAS: the ``.sas7bcat``
catalog beside a ``.sas7bdat``, if present) become category labels, and their own missing
codes (Stata ``.a``–``.z``, SPSS user-missing values, SAS special missings) arrive missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.sources.convert import SourceColumn, arrow_frame
from workbench.sources.location import Location, SourceError
from workbench.sources.prefetch import prefetched

#: Rows per chunk: bounded memory per read, few enough chunks to stay fast.
CHUNK_ROWS = 262_144


def _arrow_kind(t: Any) -> str:
    """The type class of an Arrow type."""
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        return _arrow_kind(t.value_type)
    if pa.types.is_integer(t):
        return "integer"
    if pa.types.is_floating(t) or pa.types.is_decimal(t):
        return "float"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "text"
    if pa.types.is_boolean(t):
        return "boolean"
    return "other"


def _unreadable(loc: Location, exc: BaseException) -> SourceError:
    """One message for a file its library cannot open (the exception's type only)."""
    if isinstance(exc, FileNotFoundError):
        return SourceError(f"data file {loc.shown!r} does not exist")
    if isinstance(exc, PermissionError):
        return SourceError(f"data file {loc.shown!r}: permission denied")
    return SourceError(f"cannot read data file {loc.shown!r} as {loc.kind} "
                       f"({type(exc).__name__})")


class ParquetSource:
    """A Parquet file: its Arrow schema, then record batches of the wanted columns."""

    def __init__(self, loc: Location) -> None:
        import pyarrow.parquet as pq

        self.loc = loc
        try:
            self.file = pq.ParquetFile(loc.target)
        except Exception as exc:  # pyarrow raises several types for a bad file
            raise _unreadable(loc, exc) from None
        schema = self.file.schema_arrow
        self.columns = {f.name: SourceColumn(_arrow_kind(f.type), str(f.type)) for f in schema}
        self.labels: dict[str, dict[float, str]] = {}

    def chunks(self, names: list[str]) -> Iterator[pd.DataFrame]:
        """Record batches of ``names`` as pandas frames (dictionary columns as text)."""
        try:
            batches = self.file.iter_batches(batch_size=CHUNK_ROWS, columns=names)
            for batch in prefetched(batches):
                yield arrow_frame(batch, names)
        except Exception as exc:
            raise _unreadable(self.loc, exc) from None


def _readstat_reader(kind: str) -> Any:
    """pyreadstat's reader for one statistics format."""
    import pyreadstat

    return {"stata": pyreadstat.read_dta, "spss": pyreadstat.read_sav,
            "sas7bdat": pyreadstat.read_sas7bdat, "xport": pyreadstat.read_xport}[kind]


class ReadstatSource:
    """A Stata, SPSS or SAS file: metadata first (types, labels), then row chunks."""

    def __init__(self, loc: Location) -> None:
        self.loc = loc
        self.read = _readstat_reader(loc.kind)
        self.extra: dict[str, Any] = {}
        catalog = Path(loc.target).with_suffix(".sas7bcat")
        if loc.kind == "sas7bdat" and catalog.is_file():
            self.extra["catalog_file"] = str(catalog)
        if not Path(loc.target).is_file():
            raise SourceError(f"data file {loc.shown!r} does not exist")
        try:
            _, meta = self.read(loc.target, metadataonly=True, **self.extra)
        except Exception as exc:  # pyreadstat raises its own types for a bad file
            raise _unreadable(loc, exc) from None
        types = meta.readstat_variable_types
        self.columns = {name: SourceColumn("text" if types[name] == "string" else "float"
                                           if types[name] in ("double", "float") else
                                           "integer", types[name])
                        for name in meta.column_names}
        self.labels = {}
        for name, labelset in (meta.variable_to_label or {}).items():
            value_labels = (meta.value_labels or {}).get(labelset)
            if value_labels:
                self.labels[name] = {float(k): str(v) for k, v in value_labels.items()
                                     if isinstance(k, int | float)}
        for name, mapping in (meta.variable_value_labels or {}).items():
            if name not in self.labels:
                self.labels[name] = {float(k): str(v) for k, v in mapping.items()
                                     if isinstance(k, int | float)}

    def chunks(self, names: list[str]) -> Iterator[pd.DataFrame]:
        """Row chunks of ``names``, codes unlabelled (labels are applied per spec column)."""
        import pyreadstat

        try:
            for frame, _ in pyreadstat.read_file_in_chunks(
                    self.read, self.loc.target, chunksize=CHUNK_ROWS, usecols=names,
                    **self.extra):
                yield frame
        except Exception as exc:
            raise _unreadable(self.loc, exc) from None
