"""Databases read in place: PostgreSQL through SQLAlchemy + psycopg, DuckDB through its Arrow
reader; the spec's columns only, streamed (``COPY … TO STDOUT`` in chunks; Arrow batches).

``?table=NAME`` (optionally ``&schema=S``) reads those columns of the table, ordered by its
primary key when it has one (so two reads give the same rows in the same order); ``?query=…``
reads them from the query's result, which must not repeat a column name. A PostgreSQL integer
column with a foreign key to a code table (its key and one text column) reads as that table's
labels when the spec declares the column categorical. Credentials come from the URL, the
environment or libpq's own files (``PGPASSFILE``, ``PGSERVICEFILE``/``?service=``); every
message names the source by :func:`~workbench.sources.location.public_name` and a SQLSTATE,
never the driver's text (which may quote a value).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pandas as pd

from workbench.sources.convert import SourceColumn, arrow_frame
from workbench.sources.files import CHUNK_ROWS
from workbench.sources.location import Location, SourceError
from workbench.sources.prefetch import prefetched

#: SQLSTATEs an operator can act on, said in words (anything else: its code only).
SQLSTATES = {
    "42P01": "the table does not exist",
    "42703": "a column does not exist",
    "42501": "permission denied (the role may not read it)",
    "28P01": "authentication failed",
    "28000": "authentication failed",
    "3D000": "the database does not exist",
    "42601": "the query has a syntax error",
    "57P01": "the server closed the connection",
    "42702": "a column name is ambiguous",
}
#: PostgreSQL type categories (pg_type.typcategory) as type classes.
PG_CATEGORY = {"S": "text", "E": "text", "B": "boolean"}
PG_INTEGERS = {"int2", "int4", "int8"}


def _pg_kind(name: str, category: str) -> str:
    """The type class of a PostgreSQL type from its name and category."""
    if category == "N":
        return "integer" if name in PG_INTEGERS else "float"
    return PG_CATEGORY.get(category, "other")


def _duck_kind(native: str) -> str:
    """The type class of a DuckDB type from its name."""
    t = native.upper()
    if t in {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
             "UINTEGER", "UBIGINT", "UHUGEINT"}:
        return "integer"
    if t in {"FLOAT", "DOUBLE"} or t.startswith("DECIMAL"):
        return "float"
    if t == "VARCHAR" or t.startswith("ENUM"):
        return "text"
    return "boolean" if t == "BOOLEAN" else "other"


class PostgresSource:
    """A PostgreSQL table or query: column types from the catalog, rows by a server cursor."""

    def __init__(self, loc: Location) -> None:
        from sqlalchemy import create_engine
        from sqlalchemy.pool import NullPool

        self.loc = loc
        args = {} if "connect_timeout" in loc.target else {"connect_timeout": 10}
        self.order: list[str] = []
        self.labels: dict[str, dict[float, str]] = {}
        with self._guard():
            self.engine = create_engine(loc.target, poolclass=NullPool, connect_args=args)
            with self.engine.connect() as conn:
                self.columns = self._describe(conn)

    def _fail(self, exc: BaseException, reading: bool = False) -> SourceError:
        """One message for a driver error (SQLAlchemy's or, while streaming, psycopg's): the
        source's public name and the SQLSTATE, never the driver's text."""
        import psycopg
        from sqlalchemy import exc as sa_exc

        orig = getattr(exc, "orig", None) or exc
        state = getattr(orig, "sqlstate", None) or ""
        connection = isinstance(exc, sa_exc.OperationalError | psycopg.OperationalError) or \
            type(exc).__name__ == "OperationalError"
        if state in SQLSTATES:
            what = SQLSTATES[state]
        elif connection and not state and reading:
            what = "the connection was dropped while reading"
        elif connection and not state:
            what = "cannot connect (server unreachable, or it refused the connection)"
        elif state.startswith("08"):
            what = "the connection failed or was dropped"
        else:
            what = f"the database refused the read ({type(orig or exc).__name__})"
        code = f" [SQLSTATE {state}]" if state else ""
        return SourceError(f"data source {self.loc.shown!r}: {what}{code}; nothing was run "
                           "and no budget was spent")

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn any driver error inside the block into :meth:`_fail`'s message."""
        from sqlalchemy.exc import SQLAlchemyError

        try:
            yield
        except SQLAlchemyError as exc:
            raise self._fail(exc) from None

    def _q(self, name: str) -> str:
        """A quoted identifier."""
        return self.engine.dialect.identifier_preparer.quote(name)

    def _relation(self) -> str:
        """The FROM clause: the table (schema-qualified) or the query as a subquery."""
        if self.loc.query is not None:
            return f"({self.loc.query}) AS workbench_source"
        table = self._q(self.loc.table or "")
        return f"{self._q(self.loc.schema)}.{table}" if self.loc.schema else table

    def _describe(self, conn: Any) -> dict[str, SourceColumn]:
        """Column names and types of the table or query (no row read), labels, key order."""
        from sqlalchemy import inspect, text

        if self.loc.table is not None:
            inspector = inspect(conn)
            if not inspector.has_table(self.loc.table, schema=self.loc.schema):
                raise SourceError(f"data source {self.loc.shown!r} has no table "
                                  f"{self.loc.table!r}; nothing was run and no budget was "
                                  "spent")
            key = inspector.get_pk_constraint(self.loc.table, schema=self.loc.schema)
            self.order = list(key.get("constrained_columns") or [])
        result = conn.execute(text(f"SELECT * FROM {self._relation()} LIMIT 0"))
        names = list(result.keys())
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise SourceError(f"data source {self.loc.shown!r}: the query returns column name(s) "
                              f"{', '.join(repr(d) for d in dupes)} more than once; nothing "
                              "was run and no budget was spent")
        oids = [d[1] for d in result.cursor.description]
        result.close()
        rows = conn.execute(text("SELECT oid, typname, typcategory FROM pg_type WHERE oid = "
                                 "ANY(:oids)"), {"oids": sorted(set(oids))}).all()
        types = {int(r[0]): (str(r[1]), str(r[2])) for r in rows}
        columns = {}
        for name, oid in zip(names, oids, strict=True):
            native, category = types.get(int(oid), ("unknown", "X"))
            columns[name] = SourceColumn(_pg_kind(native, category), native)
        if self.loc.table is not None:
            self.labels = self._code_tables(conn, columns)
        return columns

    def _code_tables(self, conn: Any, columns: dict[str, SourceColumn]) -> dict[str, Any]:
        """Labels of integer columns with a one-column foreign key to a (code, label) table."""
        from sqlalchemy import inspect, text

        inspector = inspect(conn)
        labels: dict[str, dict[float, str]] = {}
        for fk in inspector.get_foreign_keys(self.loc.table or "", schema=self.loc.schema):
            own, ref = fk["constrained_columns"], fk["referred_columns"]
            if len(own) != 1 or columns.get(own[0], SourceColumn("", "")).kind != "integer":
                continue
            table, schema = fk["referred_table"], fk.get("referred_schema")
            texts = [c["name"] for c in inspector.get_columns(table, schema=schema)
                     if c["name"] != ref[0] and c["type"].python_type is str]
            if len(texts) != 1:
                continue
            where = f"{self._q(schema)}.{self._q(table)}" if schema else self._q(table)
            rows = conn.execute(text(f"SELECT {self._q(ref[0])}, {self._q(texts[0])} "
                                     f"FROM {where}")).all()
            labels[own[0]] = {float(code): str(label) for code, label in rows
                              if code is not None and label is not None}
        return labels

    def chunks(self, names: list[str]) -> Iterator[pd.DataFrame]:
        """Rows of ``names`` streamed by COPY (``sources.pgcopy``), CHUNK_ROWS at a time."""
        import psycopg

        from workbench.sources.pgcopy import copy_chunks

        picked = ", ".join(self._q(n) for n in names)
        order = f" ORDER BY {', '.join(self._q(k) for k in self.order)}" if self.order else ""
        select = f"SELECT {picked} FROM {self._relation()}{order}"
        kinds = {n: self.columns[n].kind for n in names}
        try:
            import adbc_driver_manager
        except ImportError:
            adbc_driver_manager = None
        if adbc_driver_manager is not None and self.loc.target.startswith("postgresql+psycopg:"):
            from workbench.sources.pgcopy import adbc_chunks

            uri = "postgresql:" + self.loc.target.split(":", 1)[1]
            try:
                yield from adbc_chunks(uri, select, names)
            except adbc_driver_manager.Error as exc:
                raise self._fail(exc, reading=True) from None
            except OSError:  # the Arrow stream broke off (its text is the driver's: not shown)
                raise SourceError(f"data source {self.loc.shown!r}: the connection was dropped "
                                  "while reading; nothing was run and no budget was "
                                  "spent") from None
            return
        with self._guard(), self.engine.connect() as conn:
            try:
                yield from copy_chunks(conn.connection.dbapi_connection, select, names, kinds,
                                       CHUNK_ROWS)
            except psycopg.Error as exc:
                raise self._fail(exc, reading=True) from None
            except (pd.errors.ParserError, ValueError, UnicodeDecodeError) as exc:
                raise SourceError(f"data source {self.loc.shown!r}: the rows could not be "
                                  f"parsed ({type(exc).__name__}); nothing was run and no "
                                  "budget was spent") from None


class DuckDBSource:
    """A DuckDB database file, opened read-only; rows as Arrow record batches."""

    def __init__(self, loc: Location) -> None:
        import duckdb

        self.loc = loc
        self.labels: dict[str, dict[float, str]] = {}
        try:
            self.con = duckdb.connect(loc.target, read_only=True)
            rel = self.con.sql(f"SELECT * FROM {self._relation()} LIMIT 0")
            names, types = rel.columns, [str(t) for t in rel.types]
        except duckdb.Error as exc:
            raise self._fail(exc) from None
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise SourceError(f"data source {loc.shown!r}: the query returns column name(s) "
                              f"{', '.join(repr(d) for d in dupes)} more than once")
        self.columns = {n: SourceColumn(_duck_kind(t), t) for n, t in zip(names, types,
                                                                           strict=True)}

    def _fail(self, exc: BaseException) -> SourceError:
        """One message for a DuckDB error (its class names what went wrong, not a value)."""
        what = {"CatalogException": "the table does not exist",
                "BinderException": "a column does not exist",
                "IOException": "the database file cannot be opened",
                "PermissionException": "permission denied",
                "ParserException": "the query has a syntax error"}.get(type(exc).__name__,
                                                                         type(exc).__name__)
        return SourceError(f"data source {self.loc.shown!r}: {what}; nothing was run and no "
                           "budget was spent")

    def _relation(self) -> str:
        """The FROM clause: the table or the query as a subquery."""
        if self.loc.query is not None:
            return f"({self.loc.query}) AS workbench_source"
        table = '"' + (self.loc.table or "").replace('"', '""') + '"'
        return f'"{self.loc.schema}".{table}' if self.loc.schema else table

    def chunks(self, names: list[str]) -> Iterator[pd.DataFrame]:
        """Arrow record batches of ``names`` as pandas frames (ENUM columns as text)."""
        import duckdb

        picked = ", ".join('"' + n.replace('"', '""') + '"' for n in names)
        try:
            result = self.con.execute(f"SELECT {picked} FROM {self._relation()}")
            # DuckDB ≥ 1.4 names it to_arrow_reader; 1.0–1.3 fetch_record_batch
            reader = getattr(result, "to_arrow_reader", None) or result.fetch_record_batch
            for batch in prefetched(reader(CHUNK_ROWS)):
                yield arrow_frame(batch, names)
        except duckdb.Error as exc:
            raise self._fail(exc) from None
        finally:
            self.con.close()
