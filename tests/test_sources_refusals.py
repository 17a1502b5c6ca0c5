"""Must-show 3 of issue 38: each bad source exits 2 with one message that names the source
without its password, with no traceback, no password anywhere (stderr, the run folder, the
budget store) and no budget spent (the store holds no ledger line, no bundle is written)."""

from __future__ import annotations

import os
import subprocess
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
    ROOT,
    load_postgres,
    proxy,
)

from workbench.sources import public_name

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
        case: str, registry: Any, tmp_path: Path) -> None:
    data, password = _data(case, registry, tmp_path)
    out, store = tmp_path / "run", tmp_path / "budgets"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "workbench.cli.main", "run", str(MAIN_SPEC),
                           data, "--out", str(out), "--budget-store", str(store), "--quiet"],
                          capture_output=True, text=True, env=env, timeout=300)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert CASES[case][2] in lines[0] and public_name(data) in lines[0]
    assert password not in done.stderr + done.stdout
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
