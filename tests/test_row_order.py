"""Issue 38: the designs whose runs depend on the data only through the multiset of rows
(``engine.row_order``), so a database may send distinct rows with counts. The check is the
bytes: the README's main job on the proxy's rows shuffled gives the proxy run's release.csv
and ledger (the same rehearsal seed)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from workbench.cli.main import main
from workbench.engine.row_order import order_free
from workbench.validation import load_spec

ROOT = Path(__file__).resolve().parents[1]
PROXY = ROOT / "data_public" / "proxy_sample_166k.csv.gz"
MAIN_SPEC = ROOT / "examples" / "israel_births_2014_narrowed.frozen.json"
LEAN = ROOT / "examples" / "israel_births_2014_lean.json"


@pytest.mark.parametrize("path", [MAIN_SPEC, LEAN])
def test_births_designs_are_order_free(path: Path) -> None:
    assert order_free(load_spec(path))


@pytest.mark.parametrize("path", ["adult_plausible_deniability.json", "adult_survey.json",
                                  "adult_missing.json", "us_birth_weight_continuous.json"])
def test_row_based_or_unchecked_designs_keep_the_source_order(path: str) -> None:
    """A row split (plausible deniability), a survey weight, 'allow' columns, or an unchecked
    family or kind: the source's own order is kept."""
    assert not order_free(load_spec(ROOT / "examples" / path))


def test_one_unlisted_criterion_kind_is_enough_to_keep_the_order() -> None:
    spec = load_spec(LEAN)
    first = dataclasses.replace(spec.criteria[0], kind="weighted_mean")
    assert not order_free(dataclasses.replace(spec, criteria=(first, *spec.criteria[1:])))


def _run(data: Path, work: Path) -> Path:
    """The README's main job, rehearsed with seed 7; the bundle folder."""
    code = main(["run", str(MAIN_SPEC), str(data), "--out", str(work / "run"),
                 "--budget-store", str(work / "budgets"), "--rehearse", "7", "--quiet"])
    assert code == 0
    return work / "run" / "release"


def test_main_job_on_shuffled_rows_gives_the_same_bytes(tmp_path: Path) -> None:
    shuffled = tmp_path / "shuffled.csv"
    pd.read_csv(PROXY).sample(frac=1.0, random_state=11).to_csv(shuffled, index=False)
    a, b = _run(PROXY, tmp_path / "a"), _run(shuffled, tmp_path / "b")
    for name in ("release.csv", "ledger.jsonl"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
