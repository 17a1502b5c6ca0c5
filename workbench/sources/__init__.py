"""Data sources: one seam for every read of a table the spec describes (confidential or public).

``DATA`` is a CSV file (read by ``transform.raw`` as before), a Parquet, Stata, SAS or SPSS
file, or a database URL (``postgresql://…?table=…|query=…``, ``duckdb:///file?table=…``).
:func:`read_source` reads only the wanted columns, in chunks, checks each column's type
against the spec before any row is read, and converts values into the spec's raw values.
Every message names the source by :func:`public_name` (never a password) and never a value.
This package sits below ``transform`` (which it feeds) and imports nothing else of workbench.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

import pandas as pd

from workbench.sources.convert import Want, assemble, check_columns, convert_chunk
from workbench.sources.location import SourceError, is_url, parse, public_name

__all__ = ["SourceError", "Want", "column_names", "exists", "is_source", "is_url",
           "public_name", "read_source", "source_chunks"]


def is_source(location: str | os.PathLike[str]) -> bool:
    """Whether DATA is read through this seam (anything but a CSV file)."""
    return is_url(location) or parse(location).kind != "csv"


def exists(location: str | os.PathLike[str]) -> bool:
    """Whether a file exists; a URL is checked when it is opened (True here)."""
    return is_url(location) or os.path.isfile(os.fspath(location))


def _open(location: str | os.PathLike[str]):
    """The reader for DATA's kind (its libraries are imported only when needed)."""
    loc = parse(location)
    if loc.kind == "parquet":
        from workbench.sources.files import ParquetSource

        return ParquetSource(loc)
    if loc.kind in ("stata", "spss", "sas7bdat", "xport"):
        from workbench.sources.files import ReadstatSource

        return ReadstatSource(loc)
    if loc.kind == "postgresql":
        from workbench.sources.sql import PostgresSource

        return PostgresSource(loc)
    if loc.kind == "duckdb":
        from workbench.sources.sql import DuckDBSource

        return DuckDBSource(loc)
    raise SourceError(f"data {public_name(location)!r} is a CSV file: read it with "
                      "transform.raw.read_raw")


def _checked(location: str | os.PathLike[str], wants: Sequence[Want]):
    """The opened source, its columns checked against ``wants`` before any row is read."""
    try:
        source = _open(location)
    except ImportError as exc:
        raise SourceError(f"reading {public_name(location)!r} needs the optional packages of "
                          f"workbench[sources] ({exc.name} is not installed)") from None
    check_columns(wants, source.columns, public_name(location))
    return source


def column_names(location: str | os.PathLike[str]) -> list[str]:
    """The columns DATA holds (a CSV's header; a file's, table's or query's columns), read
    before any row, e.g. to see whether an optional column (a survey weight) is there."""
    if not is_source(location):
        return [str(c).strip() for c in pd.read_csv(location, nrows=0).columns]
    try:
        source = _open(location)
    except ImportError as exc:
        raise SourceError(f"reading {public_name(location)!r} needs the optional packages of "
                          f"workbench[sources] ({exc.name} is not installed)") from None
    names = list(source.columns)
    con = getattr(source, "con", None)
    if con is not None:  # DuckDB: the read-only connection is not needed any more
        con.close()
    return names


def read_source(location: str | os.PathLike[str], wants: Sequence[Want],
                markers: Sequence[str] = ()) -> pd.DataFrame:
    """The wanted columns under spec names, typed as a CSV read gives them; refuses a missing
    column or a type that cannot match before reading a row. ``markers``: the spec's declared
    missing markers (a value spelled like one becomes missing)."""
    source = _checked(location, wants)
    names = list(dict.fromkeys(w.source for w in wants))
    return assemble(source.chunks(names), wants, source.columns, source.labels, markers,
                    public_name(location))


def source_chunks(location: str | os.PathLike[str], wants: Sequence[Want],
                  markers: Sequence[str] = ()) -> Iterator[pd.DataFrame]:
    """:func:`read_source`'s frame chunk by chunk (each as it arrives, never all at once), so a
    caller can reduce every chunk before the next is read."""
    source = _checked(location, wants)
    names = list(dict.fromkeys(w.source for w in wants))
    shown = public_name(location)
    for chunk in source.chunks(names):
        yield pd.DataFrame(convert_chunk(chunk, wants, source.columns, source.labels, markers,
                                         shown), copy=False)
