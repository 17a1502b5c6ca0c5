"""The public 166k proxy loaded where registries keep data (issue 38): a PostgreSQL table with a
value-labelled smallint column (a foreign key to a code table) and nullable columns, and
Parquet, Stata, SPSS and SAS transport copies, each written by its own library."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
PROXY = ROOT / "data_public" / "proxy_sample_166k.csv.gz"
MAIN_SPEC = ROOT / "examples" / "israel_births_2014_narrowed.frozen.json"
SEX_CODES = {"M": 1, "F": 2}
DATABASE = "registry"
#: a role that may log in but not read the births table (the permission refusal)
ANALYST, ANALYST_PASSWORD = "analyst", "analyst-pw-7f3c1b"


def proxy() -> pd.DataFrame:
    """The public proxy as pandas reads the CSV."""
    return pd.read_csv(PROXY)


def coded(frame: pd.DataFrame) -> pd.DataFrame:
    """birth_sex as its code 1/2 (the labels live beside the data, as registries keep them)."""
    out = frame.copy()
    out["birth_sex"] = out["birth_sex"].map(SEX_CODES).astype("int8")
    return out


def write_files(frame: pd.DataFrame, folder: Path) -> dict[str, Path]:
    """Parquet (pyarrow; birth_sex categorical), Stata and SPSS (pyreadstat; birth_sex a
    labelled code), SAS transport (pyreadstat: xpt holds no value labels, so text)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import pyreadstat

    folder.mkdir(parents=True, exist_ok=True)
    labels = {"birth_sex": {code: label for label, code in SEX_CODES.items()}}
    paths = {k: folder / f"births.{k}" for k in ("parquet", "dta", "sav", "xpt")}
    table = pa.Table.from_pandas(frame.astype({"birth_sex": "category"}), preserve_index=False)
    pq.write_table(table, paths["parquet"])
    pyreadstat.write_dta(coded(frame), paths["dta"], variable_value_labels=labels)
    pyreadstat.write_sav(coded(frame), paths["sav"], variable_value_labels=labels)
    pyreadstat.write_xport(frame, paths["xpt"])
    return paths


def load_postgres(cluster: Any, frame: pd.DataFrame) -> None:
    """Database ``registry``: ``sex_codes`` (code smallint → label) and ``births`` (id primary
    key; birth_sex smallint referencing sex_codes; parity nullable; father_age nullable with
    NULLs, not in the spec); role ``analyst`` may connect but not read births. Loaded once
    per cluster (the session's tests share it)."""
    if getattr(cluster, "registry_loaded", False):
        return
    with cluster.connect() as con:
        con.execute(f"DROP DATABASE IF EXISTS {DATABASE}")
        con.execute(f"CREATE DATABASE {DATABASE}")
    with cluster.connect(DATABASE) as con:
        con.execute("CREATE TABLE sex_codes (code smallint PRIMARY KEY, label text NOT NULL)")
        con.execute("INSERT INTO sex_codes VALUES (1, 'M'), (2, 'F')")
        con.execute("""CREATE TABLE births (
            id integer PRIMARY KEY, birth_month smallint NOT NULL, mother_age smallint NOT NULL,
            parity smallint, gestation_week smallint NOT NULL,
            birth_sex smallint NOT NULL REFERENCES sex_codes (code),
            birth_weight integer NOT NULL, father_age smallint)""")
        rows = coded(frame)
        rows.insert(0, "id", range(1, len(rows) + 1))
        rows["father_age"] = (rows["mother_age"] + 2).where(rows.index % 7 != 0)
        text = io.StringIO()
        rows.to_csv(text, index=False, header=False, float_format="%.0f")
        with con.cursor().copy("COPY births FROM STDIN WITH (FORMAT csv)") as copy:
            copy.write(text.getvalue())
        con.execute("ANALYZE births")
        con.execute(f"DROP ROLE IF EXISTS {ANALYST}")
        con.execute(f"CREATE ROLE {ANALYST} LOGIN PASSWORD '{ANALYST_PASSWORD}'")
        con.execute(f"GRANT SELECT ON sex_codes TO {ANALYST}")
    cluster.registry_loaded = True
