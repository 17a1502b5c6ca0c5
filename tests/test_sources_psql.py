"""Issue 38: PostgreSQL rows through psql (libpq's C client) parsed by Arrow's CSV reader. The
password never reaches psql's argv (visible in ``ps``), only its environment; psql's failures
become the seam's one-line refusals (no driver text, no password); a consumer that stops early
ends the child; the frame is the one the CSV read of the same table gives."""

from __future__ import annotations

import subprocess
from typing import Any

import pandas as pd
import pytest
from sources_helpers import DATABASE, MAIN_SPEC, PROXY, load_postgres, proxy

from workbench.sources import psql
from workbench.sources.location import SourceError, parse
from workbench.sources.sql import PostgresSource
from workbench.transform.raw import read_raw
from workbench.validation import load_spec


@pytest.fixture(scope="module")
def registry(postgres_cluster: Any) -> Any:
    """The cluster with the proxy loaded (shared with the other source tests)."""
    load_postgres(postgres_cluster, proxy())
    return postgres_cluster


@pytest.fixture()
def started(monkeypatch: pytest.MonkeyPatch) -> list[subprocess.Popen]:
    """Every psql child the reader starts (the real Popen, recorded with its environment as
    ``child.given_env``)."""
    children: list[subprocess.Popen] = []
    real = subprocess.Popen

    def record(*args: Any, **kwargs: Any) -> subprocess.Popen:
        child = real(*args, **kwargs)
        child.given_env = kwargs.get("env")  # type: ignore[attr-defined]
        children.append(child)
        return child

    monkeypatch.setattr(psql.subprocess, "Popen", record)
    return children


def test_the_password_goes_to_the_environment_never_to_argv(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PGPASSWORD", raising=False)
    for url, secret in [("postgresql://ann:pw%409z@db.example:5433/reg?sslmode=require",
                         "pw@9z"),
                        ("postgresql://ann@db.example:5433/reg?password=pw-2q&sslmode=require",
                         "pw-2q"),
                        ("postgresql://:pw-3x@db.example:5433/reg?sslmode=require", "pw-3x")]:
        argv, env = psql.command("psql", url, "SELECT 1")
        assert not any("pw" in arg for arg in argv), argv
        assert argv[argv.index("-d") + 1].endswith("db.example:5433/reg?sslmode=require")
        assert env["PGPASSWORD"] == secret and "-w" in argv  # never prompts
        assert env["PGCLIENTENCODING"] == "UTF8" and env["PGCONNECT_TIMEOUT"] == "10"
    for url in ("postgresql:///reg?service=registry", "postgresql://ann@db.example/reg"):
        argv, env = psql.command("psql", url, "SELECT 1")
        assert "PGPASSWORD" not in env  # libpq finds it (PGPASSFILE, the service file)
        assert argv[argv.index("-d") + 1] == url
    argv, _ = psql.command("psql", "postgresql://ann:pw-4@/reg?host=/run/pg", "SELECT 1")
    assert argv[argv.index("-d") + 1] == "postgresql://ann@/reg?host=%2Frun%2Fpg"
    source = PostgresSource.__new__(PostgresSource)  # no server: only the choice is made
    source.uri = "postgresql://ann@db.example/reg?sslpassword=k3y"
    assert source.reader() != "psql"  # an sslpassword could only go on psql's command line


def test_psql_reads_the_table_as_the_csv_reads_without_the_password_in_argv(
        registry: Any, started: list[subprocess.Popen]) -> None:
    if psql.program() is None:
        pytest.skip("psql is not on PATH (Debian's postgresql-client installs it)")
    spec = load_spec(MAIN_SPEC)
    url = registry.url(DATABASE, query="table=births")
    assert PostgresSource(parse(url)).reader() == "psql"
    frame = read_raw(url, spec.columns, spec.file_format)
    pd.testing.assert_frame_equal(frame, read_raw(PROXY, spec.columns, spec.file_format))
    assert len(started) == 1 and started[0].returncode == 0
    assert registry.password not in " ".join(started[0].args)
    assert started[0].given_env["PGPASSWORD"] == registry.password  # type: ignore[attr-defined]


@pytest.mark.parametrize(("case", "words"), [
    ("wrong_password", "cannot connect"),  # libpq gives no SQLSTATE before a session
    ("missing_table", "the table does not exist [SQLSTATE 42P01]"),
    ("missing_column", "a column does not exist [SQLSTATE 42703]"),
])
def test_psql_failures_become_the_seams_one_line_refusals(
        case: str, words: str, registry: Any, started: list[subprocess.Popen]) -> None:
    if psql.program() is None:
        pytest.skip("psql is not on PATH")
    source = PostgresSource(parse(registry.url(DATABASE, query="table=births")))
    select = "SELECT birth_month FROM births"
    if case == "wrong_password":  # e.g. the password changed between the catalog and the rows
        source.uri = source.uri.replace(registry.password, "wrong-pw-4k")
    elif case == "missing_table":  # e.g. the table dropped between the catalog and the rows
        select = "SELECT birth_month FROM no_such_table"
    else:
        select = "SELECT no_such_column AS birth_month FROM births"
    with pytest.raises(SourceError) as caught:
        list(source._psql_chunks(select, ["birth_month"]))
    message = str(caught.value)
    assert words in message and source.loc.shown in message
    if case == "wrong_password":  # word for word what the catalog's connection says
        with pytest.raises(SourceError) as by_catalog:
            PostgresSource(parse(source.uri + "?table=births"))
        assert message == str(by_catalog.value)
    assert "\n" not in message and "no budget was spent" in message
    for secret in (registry.password, "wrong-pw-4k", "no_such", "ERROR", "FATAL", "psql"):
        assert secret not in message
    assert started and all(child.returncode not in (0, None) for child in started)


def test_a_consumer_that_stops_early_ends_psql(registry: Any,
                                               started: list[subprocess.Popen]) -> None:
    if psql.program() is None:
        pytest.skip("psql is not on PATH")
    source = PostgresSource(parse(registry.url(DATABASE, query="table=births")))
    names = ["birth_month", "birth_weight"]
    select = "SELECT birth_month, birth_weight FROM births CROSS JOIN generate_series(1, 20)"
    chunks = source._psql_chunks(select, names)
    first = next(chunks)
    assert list(first.columns) == names and len(first) > 0
    chunks.close()
    assert len(started) == 1 and started[0].returncode is not None  # ended, and waited for
    empty = list(source._psql_chunks("SELECT birth_month FROM births WHERE false",
                                     ["birth_month"]))
    assert empty == [] and started[1].returncode == 0  # no row: no chunk, not a failure


def test_debians_pg_wrapper_is_looked_through_to_the_newest_psql(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """pg_wrapper may point PGHOST/PGPORT at a local cluster: the real binary is run."""
    (tmp_path / "pg_wrapper").write_text("#!/usr/bin/perl\n")
    (tmp_path / "psql").symlink_to(tmp_path / "pg_wrapper")
    (tmp_path / "own-psql").write_text("")
    found = {"psql": str(tmp_path / "psql")}
    monkeypatch.setattr(psql.shutil, "which", lambda name: found.get(name))
    monkeypatch.setattr(psql.glob, "glob", lambda pattern: [
        "/usr/lib/postgresql/9.6/bin/psql", "/usr/lib/postgresql/16/bin/psql",
        "/usr/lib/postgresql/15/bin/psql"])
    assert psql.program() == "/usr/lib/postgresql/16/bin/psql"
    found["psql"] = str(tmp_path / "own-psql")  # a psql that is not the wrapper: as found
    assert psql.program() == str(tmp_path / "own-psql")
    monkeypatch.setattr(psql.glob, "glob", lambda pattern: [])
    found["psql"] = str(tmp_path / "psql")
    assert psql.program() is None  # the wrapper without a binary: ADBC reads
