"""issue 38: every file format and DuckDB give read_raw's CSV frame (same values, same dtypes,
labels as category labels, declared missing codes missing); a type that cannot match the spec
is refused naming the column and the type; the public commands read the same sources."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pyreadstat
import pytest
from sources_helpers import MAIN_SPEC, PROXY, SEX_CODES, coded, proxy, write_files

from workbench.cli.main import main
from workbench.transform import ColumnSpec, EncodingError
from workbench.transform.missing import FileFormat
from workbench.transform.raw import read_raw
from workbench.validation import load_spec

ROWS = 5_000


@pytest.fixture(scope="module")
def spec():
    return load_spec(MAIN_SPEC)


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, Path]:
    """The first ROWS records of the proxy and their CSV."""
    frame = proxy().head(ROWS)
    folder = tmp_path_factory.mktemp("small")
    frame.to_csv(folder / "births.csv", index=False)
    return frame, folder


def test_each_file_format_reads_as_the_csv_does(spec, small) -> None:
    frame, folder = small
    want = read_raw(folder / "births.csv", spec.columns, spec.file_format)
    for kind, path in write_files(frame, folder / "files").items():
        got = read_raw(path, spec.columns, spec.file_format)
        assert list(got.dtypes) == list(want.dtypes), kind
        pd.testing.assert_frame_equal(got, want, obj=kind)


def test_duckdb_table_with_enum_and_query_read_as_the_csv(spec, small, tmp_path: Path) -> None:
    frame, folder = small
    want = read_raw(folder / "births.csv", spec.columns, spec.file_format)
    db = tmp_path / "registry.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TYPE sex AS ENUM ('M', 'F')")
        con.register("proxy", coded(frame).assign(birth_sex=frame["birth_sex"]))
        con.execute("CREATE TABLE births AS SELECT birth_month::SMALLINT AS birth_month, "
                    "mother_age, parity, gestation_week, birth_sex::sex AS birth_sex, "
                    "birth_weight, NULL::INTEGER AS father_age FROM proxy")
    for query in ("table=births", "query=SELECT%20*%20FROM%20births%20WHERE%20parity%3E0"):
        got = read_raw(f"duckdb:///{db}?{query}", spec.columns, spec.file_format)
        pd.testing.assert_frame_equal(got, want, obj=query)


def test_declared_missing_codes_and_spss_user_missing_become_missing(tmp_path: Path) -> None:
    columns = [ColumnSpec("age", "integer", None, (0.0, 99.0), "allow", "error"),
               ColumnSpec("sex", "categorical", ("M", "F"), None, "allow", "error")]
    frame = pd.DataFrame({"age": [30.0, -9.0, 41.0, 77.0], "sex": [1.0, 2.0, 8.0, 2.0]})
    labels = {"sex": {1: "M", 2: "F", 8: "refused"}}
    sav = tmp_path / "s.sav"
    pyreadstat.write_sav(frame, sav, variable_value_labels=labels,
                         missing_ranges={"age": [77]})
    got = read_raw(sav, columns, FileFormat(("-9", "refused"), declared=True))
    assert got["age"].isna().tolist() == [False, True, False, True]  # -9 declared, 77 SPSS
    assert got["sex"].tolist()[:2] == ["M", "F"] and got["sex"].isna().tolist()[2]
    assert str(got["sex"].dtype) == "string" and str(got["age"].dtype) == "float64"


def test_a_type_that_cannot_match_is_refused_naming_column_and_type(spec, small,
                                                                    tmp_path: Path) -> None:
    frame, _ = small
    path = tmp_path / "t.dta"
    pyreadstat.write_dta(frame.astype({"parity": str}), path)
    with pytest.raises(EncodingError, match=r"column 'parity' has type 'string'.*integer"):
        read_raw(path, spec.columns, spec.file_format)
    parquet = tmp_path / "t.parquet"
    frame.assign(birth_sex=frame["birth_sex"].eq("M")).to_parquet(parquet)
    with pytest.raises(EncodingError, match=r"column 'birth_sex' has type 'bool' \(boolean\)"):
        read_raw(parquet, spec.columns, spec.file_format)
    with pytest.raises(EncodingError, match=r"has no column\(s\) 'birth_weight'"):
        frame.drop(columns="birth_weight").to_parquet(parquet)
        read_raw(parquet, spec.columns, spec.file_format)


def test_unlabelled_code_reads_as_its_number_and_the_domain_policy_drops_it(spec,
                                                                            tmp_path: Path):
    frame = coded(proxy().head(50))
    frame.loc[3, "birth_sex"] = 9  # no label: read as '9', outside {'M', 'F'}
    path = tmp_path / "c.dta"
    pyreadstat.write_dta(frame, path, variable_value_labels={
        "birth_sex": {c: s for s, c in SEX_CODES.items()}})
    got = read_raw(path, spec.columns, spec.file_format)
    assert got.loc[3, "birth_sex"] == "9" and got.loc[4, "birth_sex"] in {"M", "F"}


def test_profile_reads_a_parquet_proxy_as_its_csv(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    parquet = tmp_path / "proxy.parquet"
    proxy().to_parquet(parquet)
    assert main(["profile", str(MAIN_SPEC), str(PROXY)]) == 0
    from_csv = capsys.readouterr().out
    assert main(["profile", str(MAIN_SPEC), str(parquet)]) == 0
    assert capsys.readouterr().out == from_csv and "birth_weight" in from_csv
