"""Databases read in place: PostgreSQL through libpq (psycopg for the catalog; the rows by
``psql``'s COPY parsed by Arrow when psql is on PATH, else ADBC, else psycopg's COPY), DuckDB
through its Arrow reader; the spec's columns only, streamed in chunks.

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
#: A table's primary-key columns, in key order (%s: the table's oid).
PRIMARY_KEY = ("SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
               "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = %s AND i.indisprimary "
               "ORDER BY array_position(i.indkey::int2[], a.attnum)")
#: One-column foreign keys of a table: (its column, the referred table's oid, referred column).
FOREIGN_KEYS = ("SELECT a.attname, c.confrelid, r.attname FROM pg_constraint c "
                "JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1] "
                "JOIN pg_attribute r ON r.attrelid = c.confrelid AND r.attnum = c.confkey[1] "
                "WHERE c.conrelid = %s AND c.contype = 'f' AND cardinality(c.conkey) = 1 "
                "ORDER BY c.conname")
#: A table's text (string-category) columns other than the named one.
TEXT_COLUMNS = ("SELECT a.attname FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
                "WHERE a.attrelid = %s AND a.attname <> %s AND a.attnum > 0 "
                "AND NOT a.attisdropped AND t.typcategory = 'S' ORDER BY a.attnum")


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
    """A PostgreSQL table or query: column types from the catalog, rows through ADBC or COPY.

    libpq all the way (psycopg for the catalog, ADBC or psycopg for the rows), no SQLAlchemy:
    importing it and building an engine cost 0.5–1.4 s of every read (issue 38)."""

    def __init__(self, loc: Location) -> None:
        self.loc = loc
        # the libpq URI (a ``postgresql+driver://`` scheme's driver part is dropped)
        self.uri = "postgresql:" + loc.target.split(":", 1)[1]
        self.order: list[str] = []
        self.labels: dict[str, dict[float, str]] = {}
        with self._connect() as conn:
            self.columns = self._describe(conn)

    @contextmanager
    def _connect(self) -> Iterator[Any]:
        """A psycopg connection (10 s connect timeout unless the URL sets one); any driver
        error inside the block becomes :meth:`_fail`'s message."""
        import psycopg

        args = {} if "connect_timeout" in self.uri else {"connect_timeout": 10}
        try:
            with psycopg.connect(self.uri, **args) as conn:
                yield conn
        except psycopg.Error as exc:
            raise self._fail(exc) from None

    def _fail(self, exc: BaseException, reading: bool = False) -> SourceError:
        """One message for a driver error (psycopg's or ADBC's): the source's public name and
        the SQLSTATE, never the driver's text."""
        import psycopg

        state = getattr(exc, "sqlstate", None) or ""
        connection = isinstance(exc, psycopg.OperationalError) or \
            type(exc).__name__ == "OperationalError" or getattr(exc, "lost", False)  # ADBC, psql
        if state in SQLSTATES:
            what = SQLSTATES[state]
        elif connection and not state and reading:
            what = "the connection was dropped while reading"
        elif connection and not state:
            what = "cannot connect (server unreachable, or it refused the connection)"
        elif state.startswith("08"):
            what = "the connection failed or was dropped"
        else:
            what = f"the database refused the read ({type(exc).__name__})"
        code = f" [SQLSTATE {state}]" if state else ""
        return SourceError(f"data source {self.loc.shown!r}: {what}{code}; nothing was run "
                           "and no budget was spent")

    @staticmethod
    def _q(name: str) -> str:
        """A quoted identifier."""
        return '"' + name.replace('"', '""') + '"'

    def _relation(self) -> str:
        """The FROM clause: the table (schema-qualified) or the query as a subquery."""
        if self.loc.query is not None:
            return f"({self.loc.query}) AS workbench_source"
        table = self._q(self.loc.table or "")
        return f"{self._q(self.loc.schema)}.{table}" if self.loc.schema else table

    def _describe(self, conn: Any) -> dict[str, SourceColumn]:
        """Column names and types of the table or query (no row read), labels, key order."""
        table = None
        if self.loc.table is not None:
            table = conn.execute("SELECT to_regclass(%s)::oid", [self._relation()]).fetchone()[0]
            if table is None:
                raise SourceError(f"data source {self.loc.shown!r} has no table "
                                  f"{self.loc.table!r}; nothing was run and no budget was "
                                  "spent")
            self.order = [r[0] for r in conn.execute(PRIMARY_KEY, [table])]
        with conn.cursor() as cursor:
            cursor.execute(f"SELECT * FROM {self._relation()} LIMIT 0")
            described = [(d.name, d.type_code) for d in cursor.description or ()]
        names = [name for name, _ in described]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise SourceError(f"data source {self.loc.shown!r}: the query returns column name(s) "
                              f"{', '.join(repr(d) for d in dupes)} more than once; nothing "
                              "was run and no budget was spent")
        oids = sorted({int(oid) for _, oid in described})
        rows = conn.execute("SELECT oid, typname, typcategory FROM pg_type WHERE oid = "
                            "ANY(%s)", [oids]).fetchall()
        types = {int(r[0]): (str(r[1]), str(r[2])) for r in rows}
        columns = {}
        for name, oid in described:
            native, category = types.get(int(oid), ("unknown", "X"))
            columns[name] = SourceColumn(_pg_kind(native, category), native)
        if table is not None:
            self.labels = self._code_tables(conn, table, columns)
        return columns

    def _code_tables(self, conn: Any, table: int,
                     columns: dict[str, SourceColumn]) -> dict[str, dict[float, str]]:
        """Labels of integer columns with a one-column foreign key to a (code, label) table:
        the referred table's only text column besides the key."""
        labels: dict[str, dict[float, str]] = {}
        for own, referred, key in conn.execute(FOREIGN_KEYS, [table]).fetchall():
            if columns.get(own, SourceColumn("", "")).kind != "integer":
                continue
            texts = [r[0] for r in conn.execute(TEXT_COLUMNS, [referred, key]).fetchall()]
            if len(texts) != 1:
                continue
            where = conn.execute("SELECT %s::regclass::text", [referred]).fetchone()[0]
            rows = conn.execute(f"SELECT {self._q(key)}, {self._q(texts[0])} "
                                f"FROM {where}").fetchall()
            labels[own] = {float(code): str(label) for code, label in rows
                           if code is not None and label is not None}
        return labels

    def chunks(self, names: list[str]) -> Iterator[pd.DataFrame]:
        """Rows of ``names`` streamed by psql (``sources.psql``), ADBC or psycopg's COPY
        (``sources.pgcopy``), whichever is there first (:meth:`reader`): the same frames."""
        import psycopg

        from workbench.sources.pgcopy import copy_chunks

        picked = ", ".join(self._q(n) for n in names)
        order = f" ORDER BY {', '.join(self._q(k) for k in self.order)}" if self.order else ""
        select = f"SELECT {picked} FROM {self._relation()}{order}"
        kinds = {n: self.columns[n].kind for n in names}
        if self.reader() == "psql":
            yield from self._psql_chunks(select, names)
            return
        adbc_driver_manager = _adbc()
        if adbc_driver_manager is not None:
            from workbench.sources.pgcopy import adbc_chunks

            try:
                yield from adbc_chunks(self.uri, select, names)
            except adbc_driver_manager.Error as exc:
                raise self._fail(exc, reading=True) from None
            except OSError:  # the Arrow stream broke off (its text is the driver's: not shown)
                raise SourceError(f"data source {self.loc.shown!r}: the connection was dropped "
                                  "while reading; nothing was run and no budget was "
                                  "spent") from None
            return
        with self._connect() as conn:
            try:
                yield from copy_chunks(conn, select, names, kinds, CHUNK_ROWS)
            except psycopg.Error as exc:
                raise self._fail(exc, reading=True) from None
            except (pd.errors.ParserError, ValueError, UnicodeDecodeError) as exc:
                raise SourceError(f"data source {self.loc.shown!r}: the rows could not be "
                                  f"parsed ({type(exc).__name__}); nothing was run and no "
                                  "budget was spent") from None


    def reader(self) -> str:
        """Which client reads the rows: ``psql`` (on PATH, and no ``sslpassword`` in the URL,
        which psql could only take on its command line), else ``adbc``, else ``psycopg``."""
        from workbench.sources import psql

        if psql.program() is not None and psql.usable(self.uri):
            return "psql"
        return "adbc" if _adbc() is not None else "psycopg"

    def _psql_chunks(self, select: str, names: list[str]) -> Iterator[pd.DataFrame]:
        """The rows through psql, its failures as the one-line refusals the other readers
        give (a failed connection diagnosed by psycopg, which says why: no driver text)."""
        from workbench.sources import psql

        program = psql.program() or "psql"  # reader() found it on PATH a moment ago
        natives = {n: self.columns[n].native for n in names}
        try:
            yield from psql.psql_chunks(program, self.uri, select, names, natives)
        except psql.PsqlFailed as exc:
            if not exc.sqlstate and not exc.rows and exc.exit_code == 2:
                with self._connect():  # raises the refusal saying why libpq cannot connect
                    pass
            raise self._fail(exc, reading=True) from None
        except (ValueError, OSError) as exc:  # Arrow's parse errors quote the row: not shown
            raise SourceError(f"data source {self.loc.shown!r}: the rows could not be parsed "
                              f"({type(exc).__name__}); nothing was run and no budget was "
                              "spent") from None


def _adbc():
    """ADBC's driver manager, or None when ``adbc-driver-postgresql`` is not installed."""
    try:
        import adbc_driver_manager
    except ImportError:
        return None
    return adbc_driver_manager


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
