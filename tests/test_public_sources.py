"""Issue 38: the public-data commands read their proxy through the same seam as a run, so a
Parquet file, a DuckDB table or a PostgreSQL table serves as the proxy of `profile`, `design`
and `dryrun` (survey designs included) exactly as its CSV does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import shared_data
from sources_helpers import DATABASE, PROXY, load_postgres, proxy

from workbench.cli.main import main
from workbench.dryrun.survey import proxy_population
from workbench.evidence.prepare import as_evidence
from workbench.validation import load_spec

REPO = Path(__file__).resolve().parents[1]
LEAN = REPO / "examples" / "israel_births_2014_lean.json"
SURVEY = REPO / "examples" / "adult_survey.json"
KINDS = ["parquet", "duckdb", "postgresql"]


@pytest.fixture(scope="module")
def births(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The proxy as Parquet (pyarrow) and as a DuckDB table (PostgreSQL: see _births)."""
    import duckdb

    folder = tmp_path_factory.mktemp("births")
    frame = proxy()
    frame.astype({"birth_sex": "category"}).to_parquet(folder / "births.parquet", index=False)
    with duckdb.connect(str(folder / "births.duckdb")) as con:
        con.register("frame", frame)
        con.execute("CREATE TABLE births AS SELECT * FROM frame")
    return {"parquet": str(folder / "births.parquet"),
            "duckdb": f"duckdb:///{folder / 'births.duckdb'}?table=births"}


def _births(kind: str, births: dict[str, str], request: pytest.FixtureRequest) -> str:
    """The proxy's location of this kind (the PostgreSQL table: the session's cluster)."""
    if kind != "postgresql":
        return births[kind]
    cluster = request.getfixturevalue("postgres_cluster")
    load_postgres(cluster, proxy())
    return cluster.url(DATABASE, query="table=births")


@pytest.fixture(scope="module")
def adult(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The Adult sample (with its survey weight fnlwgt) as CSV, Parquet and a DuckDB table."""
    import duckdb

    folder = tmp_path_factory.mktemp("adult")
    frame = pd.read_csv(shared_data("adult/adult_train.csv.gz"), skipinitialspace=True,
                        nrows=6_000)
    frame.to_csv(folder / "adult.csv", index=False)
    frame.to_parquet(folder / "adult.parquet", index=False)
    with duckdb.connect(str(folder / "adult.duckdb")) as con:
        con.register("frame", frame)
        con.execute("CREATE TABLE adult AS SELECT * FROM frame")
    return {"csv": str(folder / "adult.csv"), "parquet": str(folder / "adult.parquet"),
            "duckdb": f"duckdb:///{folder / 'adult.duckdb'}?table=adult"}


def _as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """Categorical columns as text (the compact table holds them as Categoricals)."""
    return frame.astype({c: "string" for c in frame.columns
                         if isinstance(frame[c].dtype, pd.CategoricalDtype)})


@pytest.mark.parametrize("kind", KINDS)
def test_profile_of_a_source_prints_what_the_csv_gives(kind: str, births: dict[str, str],
                                                       request: pytest.FixtureRequest,
                                                       capsys: pytest.CaptureFixture[str]):
    data = _births(kind, births, request)
    assert main(["profile", str(LEAN), str(PROXY)]) == 0
    from_csv = capsys.readouterr().out
    assert main(["profile", str(LEAN), data]) == 0
    captured = capsys.readouterr()
    assert captured.out == from_csv and "all rules together" in from_csv
    assert "Traceback" not in captured.err


@pytest.mark.parametrize("kind", KINDS)
def test_design_and_dryrun_evidence_from_a_source_is_the_csvs(kind: str, births: dict[str, str],
                                                              request: pytest.FixtureRequest):
    """`design` and `dryrun` take their proxy as evidence (evidence.prepare.as_evidence)."""
    spec = load_spec(LEAN)
    data = _births(kind, births, request)
    evidence = as_evidence(spec, data)
    pd.testing.assert_frame_equal(_as_text(evidence.frame), _as_text(
        as_evidence(spec, str(PROXY)).frame))
    assert evidence.source is not None and "password" not in evidence.source


@pytest.mark.parametrize("kind", ["parquet", "duckdb"])
def test_a_survey_dry_run_reads_its_population_and_weights_from_a_source(
        kind: str, adult: dict[str, str]):
    spec = load_spec(SURVEY)
    population = proxy_population(spec, adult[kind])
    assert spec.survey is not None and spec.survey.weight_column in population.columns
    pd.testing.assert_frame_equal(population, proxy_population(spec, adult["csv"]))


def test_the_survey_dry_run_command_runs_on_a_duckdb_table(adult: dict[str, str],
                                                           tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[Any]):
    code = main(["dryrun", str(SURVEY), adult["duckdb"], "--survey-plots", str(tmp_path),
                 "--repetitions", "1", "--seed", "3", "--workers", "0"])
    out = capsys.readouterr().out
    assert code == 0 and "crossover" in out
    assert (tmp_path / "methods.png").is_file()
