"""Issue 38: the PostgreSQL catalog read through psycopg (no SQLAlchemy): a schema-qualified,
mixed-case table, its primary-key order and a foreign key to a code table in another schema
read as the public table does; a view (no key) and a query read the same rows."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pandas as pd
import pytest
from sources_helpers import DATABASE, MAIN_SPEC, ROOT, load_postgres, proxy

from workbench.sources.location import parse
from workbench.sources.sql import PostgresSource
from workbench.transform.raw import read_raw
from workbench.validation import load_spec


@pytest.fixture(scope="module")
def registry(postgres_cluster: Any) -> Any:
    """The proxy loaded, plus schema ``vault``: table ``"Births"`` (rows in reverse key order,
    birth_sex referencing the public code table) and a view over it."""
    load_postgres(postgres_cluster, proxy())
    with postgres_cluster.connect(DATABASE) as con:
        con.execute("DROP SCHEMA IF EXISTS vault CASCADE")
        con.execute("CREATE SCHEMA vault")
        con.execute('CREATE TABLE vault."Births" (LIKE public.births INCLUDING ALL)')
        con.execute('ALTER TABLE vault."Births" ADD FOREIGN KEY (birth_sex) '
                    "REFERENCES public.sex_codes (code)")
        con.execute('INSERT INTO vault."Births" SELECT * FROM public.births ORDER BY id DESC')
        con.execute('CREATE VIEW vault.births_view AS SELECT * FROM vault."Births"')
    return postgres_cluster


def _read(cluster: Any, query: str) -> pd.DataFrame:
    """The main spec's columns read from ``?query``."""
    spec = load_spec(MAIN_SPEC)
    return read_raw(cluster.url(DATABASE, query=query), spec.columns, spec.file_format)


def test_schema_table_with_key_and_code_table_reads_as_the_public_table(registry: Any) -> None:
    public = _read(registry, "table=births")
    vault = _read(registry, "table=Births&schema=vault")
    pd.testing.assert_frame_equal(vault, public)  # primary-key order, labels from sex_codes
    source = PostgresSource(parse(registry.url(DATABASE, query="table=Births&schema=vault")))
    assert source.order == ["id"]
    assert source.labels == {"birth_sex": {1.0: "M", 2.0: "F"}}
    assert source.columns["birth_weight"].native == "int4"


def test_view_and_query_read_the_same_rows(registry: Any) -> None:
    """A view has no key and no foreign key: its rows are the table's, its codes numbers."""
    by_view = _read(registry, "table=births_view&schema=vault")
    by_query = _read(registry, "query=SELECT%20*%20FROM%20vault.%22Births%22")
    key = ["birth_month", "mother_age", "parity", "gestation_week", "birth_sex", "birth_weight"]
    pd.testing.assert_frame_equal(by_view.sort_values(key, ignore_index=True),
                                  by_query.sort_values(key, ignore_index=True))
    assert set(by_view["birth_sex"].dropna()) == {"1", "2"}



def test_a_postgres_read_never_imports_sqlalchemy(registry: Any) -> None:
    """Its import and engine cost 0.5–1.4 s of every read (a fresh process: nothing else in
    it has imported SQLAlchemy)."""
    code = ("import sys\n"
            "from workbench.transform.raw import read_raw\n"
            "from workbench.validation import load_spec\n"
            f"spec = load_spec({str(MAIN_SPEC)!r})\n"
            "frame = read_raw(sys.argv[1], spec.columns, spec.file_format)\n"
            "print(len(frame), 'sqlalchemy' in sys.modules)")
    url = registry.url(DATABASE, query="table=births")
    done = subprocess.run([sys.executable, "-c", code, url], capture_output=True, text=True,
                          check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.stdout.split() == [str(len(proxy())), "False"]


@pytest.mark.parametrize(("error", "reading", "words"), [
    ("ConnectionTimeout", False, "cannot connect"),
    ("OperationalError", True, "dropped while reading"),
    ("UndefinedTable", False, "the table does not exist [SQLSTATE 42P01]"),
    ("InsufficientPrivilege", True, "permission denied"),
])
def test_driver_errors_become_one_message_without_the_driver_text(
        error: str, reading: bool, words: str) -> None:
    import psycopg

    cls = getattr(psycopg.errors, error, None) or getattr(psycopg, error)
    source = PostgresSource.__new__(PostgresSource)  # no server: only the message is made
    source.loc = parse("postgresql://ann:pw-9z@db.example/registry?table=births")
    message = str(source._fail(cls("value 'Cohen, 1987-03-02' in the driver's text"), reading))
    assert words in message and "registry?table=births" in message
    assert "Cohen" not in message and "pw-9z" not in message
