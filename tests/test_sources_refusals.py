"""Must-show 3 of issue 38: each bad source exits 2 with one message that names the source
without its password, with no traceback, no password anywhere (stderr, the run folder, the
budget store) and no budget spent (the store holds no ledger line, no bundle is written).
The CLI's ``main`` runs in-process: an escaping exception (a traceback) fails the test."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from pg_server import free_port
from sources_helpers import (
    ANALYST,
    ANALYST_PASSWORD,
    DATABASE,
    MAIN_SPEC,
    load_postgres,
    proxy,
)

from workbench.cli.main import main
from workbench.sources import public_name
from workbench.transform import EncodingError

COLUMNS = "birth_month, mother_age, parity, gestation_week, birth_sex, birth_weight"
#: case → (URL query or None for a file, whether to log in as the analyst, expected words)
CASES = {
    "unreachable": ("table=births", False, "cannot connect"),
    "missing_table": ("table=no_such_table", False, "has no table 'no_such_table'"),
    "missing_column": ("query=SELECT id, birth_month, mother_age FROM births", False,
                       "has no column(s) 'parity'"),
    "permission": ("table=births", True, "permission denied"),
    "duplicate_columns": (f"query=SELECT birth_month, {COLUMNS} FROM births", False,
                          "returns column name(s) 'birth_month' more than once"),
    "wrong_type": ("query=SELECT birth_month, mother_age, parity, gestation_week, birth_sex, "
                   "birth_weight::text AS birth_weight FROM births", False,
                   "column 'birth_weight' has type 'text'"),
    "wrong_type_parquet": (None, False, "column 'birth_weight' has type 'large_string' (text)"),
    # the server drops the connection mid-stream: the session kills itself at row 100,000
    "dropped_mid_read": (f"query=SELECT {COLUMNS} FROM births WHERE id < 100000 OR "
                         "pg_terminate_backend(pg_backend_pid())", False,
                         "the server closed the connection|dropped while reading"),
}


@pytest.fixture(scope="module")
def registry(postgres_cluster: Any) -> Any:
    """The cluster with the proxy loaded (shared with test_sources_main_job)."""
    load_postgres(postgres_cluster, proxy())
    return postgres_cluster


def _data(case: str, cluster: Any, folder: Path) -> tuple[str, str]:
    """The DATA argument of a case and the password it carries."""
    query, analyst, _ = CASES[case]
    if query is None:
        frame = proxy().astype({"birth_weight": "string"})
        frame.to_parquet(folder / "births.parquet")
        return str(folder / "births.parquet"), cluster.password
    query = query.replace(" ", "%20")
    if analyst:
        return cluster.url(DATABASE, ANALYST, ANALYST_PASSWORD, query), ANALYST_PASSWORD
    url = cluster.url(DATABASE, query=query)
    if case == "unreachable":
        url = url.replace(f":{cluster.port}/", f":{free_port()}/")
    return url, cluster.password


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_source_exits_2_naming_it_without_password_or_spend(
        case: str, registry: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, password = _data(case, registry, tmp_path)
    out, store = tmp_path / "run", tmp_path / "budgets"
    code = main(["run", str(MAIN_SPEC), data, "--out", str(out), "--budget-store", str(store),
                 "--quiet"])
    done = capsys.readouterr()
    lines = done.err.strip().splitlines()
    assert code == 2, done.err
    assert len(lines) == 1 and "Traceback" not in done.err
    assert re.search(CASES[case][2].replace("(", r"\(").replace(")", r"\)"), lines[0])
    assert public_name(data) in lines[0]
    assert password not in done.err + done.out
    for path in [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".parquet"]:
        assert password.encode() not in path.read_bytes(), path
    assert not (out / "release").exists()
    ledgers = list(store.rglob("ledger.jsonl"))
    assert all(p.read_text() == "" for p in ledgers)


def test_public_name_drops_the_password_and_keeps_the_rest() -> None:
    url = "postgresql://registrar:s3cr%40t@db.example:5432/reg?table=births&password=x2"
    assert public_name(url) == "postgresql://registrar@db.example:5432/reg?table=births"
    assert public_name("duckdb:///data/reg.duckdb?table=births") == \
        "duckdb:///data/reg.duckdb?table=births"
    assert pd.isna(pd.NA) and public_name("births.csv") == "births.csv"


def test_password_from_pgpassfile_reads_the_table(registry: Any, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.transform.raw import read_raw
    from workbench.validation import load_spec

    passfile = tmp_path / "pgpass"
    passfile.write_text(f"127.0.0.1:{registry.port}:{DATABASE}:postgres:{registry.password}\n")
    passfile.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    spec = load_spec(MAIN_SPEC)
    url = f"postgresql://postgres@127.0.0.1:{registry.port}/{DATABASE}?table=births"
    frame = read_raw(url, spec.columns, spec.file_format)
    assert len(frame) == len(proxy()) and set(frame["birth_sex"]) == {"M", "F"}
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "absent"))
    with pytest.raises(EncodingError, match=r"authentication failed|cannot connect"):
        read_raw(url, spec.columns, spec.file_format)


#: Each PostgreSQL reader, as the seam picks it: psql on PATH, else ADBC, else psycopg.
READERS = ("psql", "adbc", "psycopg")


def _only(reader: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``reader`` the one the seam picks (psql off PATH; ADBC's import failing)."""
    from workbench.sources import psql

    if reader != "psql":
        monkeypatch.setattr(psql, "program", lambda: None)
    if reader == "psycopg":
        monkeypatch.setitem(sys.modules, "adbc_driver_manager", None)  # import fails


def test_every_postgres_reader_reads_the_same_frame(registry: Any,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """psql + Arrow, ADBC and psycopg's COPY give one frame (so outputs never depend on it)."""
    from workbench.sources.location import parse
    from workbench.sources.sql import PostgresSource
    from workbench.transform.raw import read_raw
    from workbench.validation import load_spec

    spec = load_spec(MAIN_SPEC)
    url = registry.url(DATABASE, query="table=births")
    frames = {}
    for reader in READERS:
        with monkeypatch.context() as patch:
            _only(reader, patch)
            assert PostgresSource(parse(url)).reader() == reader
            frames[reader] = read_raw(url, spec.columns, spec.file_format)
    for reader in READERS[1:]:
        pd.testing.assert_frame_equal(frames[reader], frames["psql"])
    assert set(frames["psql"]["birth_sex"]) == {"M", "F"} and len(frames["psql"]) == len(proxy())


@pytest.mark.parametrize("reader", READERS)
def test_every_postgres_reader_refuses_a_dropped_connection(
        reader: str, registry: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.transform.raw import read_raw
    from workbench.validation import load_spec

    spec = load_spec(MAIN_SPEC)
    query, _, words = CASES["dropped_mid_read"]
    url = registry.url(DATABASE, query=query.replace(" ", "%20"))
    _only(reader, monkeypatch)
    with pytest.raises(EncodingError, match=words) as caught:
        read_raw(url, spec.columns, spec.file_format)
    assert registry.password not in str(caught.value)
