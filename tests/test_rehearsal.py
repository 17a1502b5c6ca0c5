"""A rehearsal is the run (issue 26): for every example, a seeded dry-run task and `workbench
run --rehearse` of the same frozen file on the same public data, with the same seed, make the
same first iteration — the same configuration, the same decision on every criterion and the
same DP values, bit for bit — because both call the same before-loop releases (once
statistics, the survey's raking), the same iteration function and the same seeded context.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import shared_data, write_adult_halves

from workbench.dryrun.tasks import Task
from workbench.dryrun.worker import Payload, install, run_task, uninstall
from workbench.engine import run
from workbench.privacy import Ledger
from workbench.validation import load_spec

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
ROWS = 6_000  # each example rehearses on this many public records (speed, not realism)


def _head(source: Path, target: Path, rows: int) -> Path:
    """The first ``rows`` records of a (gzipped) CSV: scripts/behaviour_snapshot.py's."""
    spec = importlib.util.spec_from_file_location("behaviour_snapshot",
                                                  REPO / "scripts" / "behaviour_snapshot.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.head(source, target, rows)


def _adult_halves(work: Path) -> Path:
    """The Adult halves under work/out/adult; returns the confidential half's first rows."""
    out = write_adult_halves(work)
    frame = pd.read_csv(out / "adult_confidential.csv").head(3_000)
    frame.to_csv(work / "confidential.csv", index=False)
    return work / "confidential.csv"


def _data(example: str, work: Path) -> Path:
    if example == "israel_births_2014_narrowed":  # γ = 0, T = ∞: at the n it was made for
        return REPO / "data_public" / "proxy_sample_166k.csv.gz"
    if example.startswith("israel_births"):
        return _head(REPO / "data_public" / "proxy_sample_166k.csv.gz", work / "births.csv", ROWS)
    if example == "us_birth_weight_continuous":
        return _head(shared_data("us_births_2019_singleton_sample160k.csv.gz"),
                     work / "us.csv", 1_500)  # the MCMC's cost grows with n
    if example == "adult_plausible_deniability":
        return _adult_halves(work)
    if example == "adult_missing":  # its structure comes from the raw public half
        _adult_halves(work)
        return _head(work / "out" / "adult" / "adult_raw_confidential.csv", work / "adult.csv",
                     ROWS)
    if example == "nhanes_wide":  # the wide NHANES example (36 of its 79 columns)
        return _head(shared_data("nhanes/nhanes_2009_2012_raw.csv.gz"), work / "nhanes.csv",
                     ROWS)
    if example == "adult_survey":  # its weights must describe the margins' N (weight check)
        return _adult_weighted(work, 10_000)
    return _head(shared_data("adult/adult_train.csv.gz"), work / "adult.csv", ROWS)


def _adult_weighted(work: Path, rows: int) -> Path:
    """The first Adult rows with fnlwgt rescaled to the example's population N (its margins
    are the whole file's weighted totals): the run's weight check passes."""
    frame = pd.read_csv(shared_data("adult/adult_train.csv.gz"), skipinitialspace=True,
                        nrows=rows)
    doc = json.loads((EXAMPLES / "adult_survey.json").read_text())
    n_pop = sum(doc["survey"]["margins"][0]["totals"].values())
    frame["fnlwgt"] = frame["fnlwgt"] * (n_pop / frame["fnlwgt"].sum())
    frame.to_csv(work / "adult_weighted.csv", index=False)
    return work / "adult_weighted.csv"


FROZEN = sorted(p.name.removesuffix(".frozen.json") for p in EXAMPLES.glob("*.frozen.json"))


def _first_iteration(out: Path) -> dict:
    """The rehearsal's first iteration as its enclave ledger recorded it."""
    lines = Ledger.read(out / "enclave" / "ledger.jsonl")
    return next(e for e in lines if e.get("event") == "rehearsal_iteration"
                and e.get("iteration") == 1)


@pytest.mark.slow
@pytest.mark.parametrize("example", FROZEN)
def test_a_seeded_dry_run_task_and_a_rehearsal_make_the_same_iteration(
        example, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # the Adult examples read their public proxies from out/adult/
    data = _data(example, tmp_path)
    frozen = EXAMPLES / f"{example}.frozen.json"
    seed = 20261127
    outcome = run(frozen, data, tmp_path / "run", quiet=True, rehearsal=seed,
                  allow_unbounded=True)
    assert outcome.status in ("complete", "no_release")
    status = json.loads((tmp_path / "run" / "status.json").read_text())
    assert status["rehearsal"] == seed
    first = _first_iteration(tmp_path / "run")
    # the dry run's own task function, at the configuration the rehearsal drew, same seed
    spec = load_spec(frozen)
    config = next(c for c in spec.configurations() if c.key == first["configuration"])
    from workbench.evidence.prepare import prepare_proxy

    payload = Payload(f"rehearsal-{example}", spec.to_document(), prepare_proxy(spec, data))
    install(payload)
    try:
        record = run_task(Task(payload.payload_id, config.to_dict(), config.key, 0, seed,
                               "seeded"))
    finally:
        uninstall(payload.payload_id)
    assert record.passed is first["passed"], (record.failure, first["failure"])
    rehearsed = {cid: (ok, value) for cid, ok, value in
                 zip(first["criteria"], first["passes"], first["values"], strict=True)}
    dried = {cid: (o.passed, o.value) for cid, o in record.criteria.items()
             if o.value is not None}
    assert dried == rehearsed
    if outcome.status == "complete":  # a released rehearsal says what it is
        readme = (outcome.release_dir / "README.md").read_text(encoding="utf-8")
        assert readme.startswith("> **Rehearsal, not a release**")
