"""Where confidential data lives: a file by its suffix, or a database URL without its password.

A location is what the operator types as ``DATA``. Only :func:`public_name` may reach a
message, a log, a ledger or a bundle: it drops the URL's password (and a ``password`` query
parameter), so credentials typed into a URL never travel further than the driver.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

#: File suffixes read through the seam (CSV, optionally gzipped, stays pandas' own reader).
FILE_KINDS = {
    ".parquet": "parquet", ".pq": "parquet",
    ".dta": "stata",
    ".sas7bdat": "sas7bdat", ".xpt": "xport",
    ".sav": "spss", ".zsav": "spss",
}
#: URL schemes read through libpq (PostgreSQL) or DuckDB's own Arrow reader.
SQL_SCHEMES = ("postgresql", "postgres")
DUCKDB_SCHEME = "duckdb"
#: URL query parameters that say what to read; never passed to the driver.
SELECTORS = ("table", "query", "schema")
#: Query parameters that are credentials; dropped from every public name.
SECRET_PARAMS = ("password", "sslpassword")


class SourceError(ValueError):
    """A data source could not be read as the spec says; the message names the source (no
    password) and columns, never a value."""


@dataclass(frozen=True)
class Location:
    """A parsed DATA argument: its kind, the driver's URL or file path, and what to select."""

    kind: str  # "csv", a FILE_KINDS value, "postgresql" or "duckdb"
    target: str  # file path, or the URL for the driver (selectors removed)
    table: str | None = None
    query: str | None = None
    schema: str | None = None
    shown: str = ""  # the public name (no password)


def is_url(location: str | os.PathLike[str]) -> bool:
    """Whether DATA is a URL (``scheme://…``) rather than a file path."""
    return "://" in os.fspath(location)


def public_name(location: str | os.PathLike[str]) -> str:
    """The location as it may be shown: a URL without its password or password parameter."""
    text = os.fspath(location)
    if not is_url(text):
        return text
    parts = urlsplit(text)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}@{host}" if user else host
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if k.lower() not in SECRET_PARAMS]
    tail = urlencode(query, quote_via=quote)
    return f"{parts.scheme}://{netloc}{parts.path}" + (f"?{tail}" if tail else "")


def parse(location: str | os.PathLike[str]) -> Location:
    """The kind of DATA and what to read from it; an unknown scheme fails clearly."""
    text = os.fspath(location)
    shown = public_name(text)
    if not is_url(text):
        suffix = Path(text).suffix.lower()
        return Location(FILE_KINDS.get(suffix, "csv"), text, shown=shown)
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    base = scheme.split("+", 1)[0]
    if base not in (*SQL_SCHEMES, DUCKDB_SCHEME):
        raise SourceError(f"data source {shown!r}: unsupported URL scheme {scheme!r} (use "
                          "postgresql://…?table=… or duckdb:///file.duckdb?table=…)")
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    picked = {k: v for k, v in pairs if k in SELECTORS}
    rest = [(k, v) for k, v in pairs if k not in SELECTORS]
    if ("table" in picked) == ("query" in picked):
        raise SourceError(f"data source {shown!r}: give exactly one of ?table=NAME or "
                          "?query=SELECT …")
    if base == DUCKDB_SCHEME:
        path = unquote(parts.path[1:] if parts.path.startswith("/") else parts.path)
        return Location("duckdb", path or ":memory:", picked.get("table"), picked.get("query"),
                        picked.get("schema"), shown)
    driver = scheme if "+" in scheme else "postgresql+psycopg"
    target = f"{driver}://{parts.netloc}{parts.path}" + (f"?{urlencode(rest)}" if rest else "")
    return Location("postgresql", target, picked.get("table"), picked.get("query"),
                    picked.get("schema"), shown)
