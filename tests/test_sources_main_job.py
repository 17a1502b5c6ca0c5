"""Must-show 1 and 4 of issue 38: the README's main job from PostgreSQL, Parquet, Stata, SPSS and
SAS transport copies of the public proxy gives the CSV run's release.csv and ledger byte for
byte (the same rehearsal seed), and `workbench pilot` on the PostgreSQL table writes a FACTS
file that `workbench proxy build` accepts (a rehearsal's run id is a function of its seed and
the spec, so the ledgers are compared byte for byte too). (SAS: .xpt is written
here; .sas7bdat is read by the same pyreadstat path but no library can write one.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from sources_helpers import DATABASE, MAIN_SPEC, PROXY, load_postgres, proxy, write_files

from workbench.cli.main import main

SEED = "7"
BUNDLE_FILES = ("release.csv", "ledger.jsonl")


def _same_bytes(name: str, a: Path, b: Path) -> bool:
    """Whether bundle file ``name`` is byte-identical in a and b."""
    return (a / name).read_bytes() == (b / name).read_bytes()


def _run(data: str, work: Path) -> Path:
    """The README's main job (`workbench run SPEC DATA --out … --budget-store …`), rehearsed
    with the seed; returns the bundle folder."""
    code = main(["run", str(MAIN_SPEC), data, "--out", str(work / "run"), "--budget-store",
                 str(work / "budgets"), "--rehearse", SEED, "--quiet"])
    assert code == 0, f"run from {data} exited {code}"
    return work / "run" / "release"


@pytest.fixture(scope="module")
def sources(postgres_cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every source of the proxy: the CSV itself, the PostgreSQL table, the four files."""
    frame = proxy()
    load_postgres(postgres_cluster, frame)
    files = write_files(frame, tmp_path_factory.mktemp("files"))
    return {"csv": str(PROXY),
            "postgresql": postgres_cluster.url(DATABASE, query="table=births"),
            **{kind: str(path) for kind, path in files.items()}}


@pytest.fixture(scope="module")
def bundles(sources: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The main job run once per source (each in its own folder and budget store)."""
    return {kind: _run(data, tmp_path_factory.mktemp(f"run-{kind}"))
            for kind, data in sources.items()}


@pytest.mark.parametrize("kind", ["postgresql", "parquet", "dta", "sav", "xpt"])
def test_main_job_from_source_is_byte_identical_to_csv(bundles: dict[str, Path],
                                                       kind: str) -> None:
    for name in BUNDLE_FILES:
        assert _same_bytes(name, bundles[kind], bundles["csv"]), \
            f"{name} from {kind} differs from the CSV run"
    assert len(pd.read_csv(bundles[kind] / "release.csv")) > 1000


def test_postgres_password_stays_out_of_the_run(postgres_cluster: Any,
                                                bundles: dict[str, Path]) -> None:
    secret = postgres_cluster.password.encode()
    work = bundles["postgresql"].parents[1]
    files = [p for p in work.rglob("*") if p.is_file()]
    assert files and not [p for p in files if secret in p.read_bytes()]


def test_pilot_on_postgres_gives_facts_that_proxy_build_accepts(
        sources: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    facts, built = tmp_path / "facts.json", tmp_path / "proxy.csv"
    code = main(["pilot", str(MAIN_SPEC), sources["postgresql"], "--epsilon", "1",
                 "--out", str(facts), "--budget-store", str(tmp_path / "budgets"),
                 "--pairs", "birth_month:birth_sex"])
    assert code == 0 and facts.is_file()
    code = main(["proxy", "build", str(MAIN_SPEC), str(facts), "--n", "5000", "--out",
                 str(built)])
    assert code == 0, capsys.readouterr().err
    made = pd.read_csv(built)
    assert len(made) == 5000
    assert set(made["birth_sex"]) <= {"M", "F"} and made["birth_weight"].between(200, 7000).all()
