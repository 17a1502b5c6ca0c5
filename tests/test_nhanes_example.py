"""Issue 36, must-show 5: the shipped NHANES wide example (36 of 79 columns) is a valid frozen
spec under the size guard, and the run's own seeded iteration releases on a drawn sample of the
public file (``benchmarks/nhanes_wide.py`` makes the example and checks it on the unseen half).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import REPO, shared_data

from workbench.cli.main import main
from workbench.generators.model_size_advice import check_model_size
from workbench.validation import load_spec

FROZEN = REPO / "examples" / "nhanes_wide.frozen.json"
DRAFT = REPO / "examples" / "nhanes_wide_draft.json"
NHANES = "nhanes/nhanes_2009_2012_raw.csv.gz"


def test_the_draft_and_the_frozen_example_are_wide_survey_specs_without_id() -> None:
    """At least 30 columns, never ID; structurally missing columns kept as their own value
    (``category``); each declared association has a relative-risk criterion on it whose
    threshold is below half the |log RR| of the pilot's proxy (it tells the association from
    none), and smoking × systolic BP ≥ 140 (RR about 1.2, too weak for that at n 10,000) is not
    declared."""
    for path in (DRAFT, FROZEN):
        spec = load_spec(path)
        names = [c.name for c in spec.columns]
        assert len(names) >= 30 and "ID" not in names, path.name
        policies = {c.name: c.missing for c in spec.columns}
        assert policies["SmokeNow"] == "category" and policies["BPSysAve"] == "category"
        pairs = {(p["exposure"], p["outcome"]) for p in spec.metadata.associations}
        assert pairs == {("BMI_WHO", "Diabetes"), ("PhysActive", "HealthGen")}, pairs
        rr = {(c.params["exposure"], c.params["outcome"]): c.threshold
              for c in spec.criteria if c.kind == "relative_risk"}
        assert set(rr) == pairs
        # the proxy's RR: 4.31 (BMI 30+ → diabetes) and 2.15 (inactive → fair/poor health)
        assert rr[("BMI_WHO", "Diabetes")] < math.log(4.31) / 2
        assert rr[("PhysActive", "HealthGen")] < math.log(2.15) / 2
        kinds = {c.kind for c in spec.criteria}
        assert {"relative_risk", "rate_by_group", "missing_rate"} <= kinds
    frozen = json.loads(FROZEN.read_text())
    assert load_spec(FROZEN).sha256 == frozen["frozen"]["sha256"]  # load_spec checks the hash
    forecast = frozen["selection"]["forecast"]
    assert forecast["range"]["low"] >= 0.7


def test_the_frozen_example_passes_the_size_guard() -> None:
    """The guard passes; with ``structure: junction`` it counts the unnamed structure at the
    rest of the budget (its eligibility rule), so the estimate is the declared limit itself
    (``generator.model_limit``: 1,000,000 cells, a 20th of the default), and the criteria's
    own junction tree is far below it."""
    from workbench.generators.model_limit import ModelLimit, cap_cells
    from workbench.generators.model_size import STRUCTURE_TABLE

    spec = load_spec(FROZEN)
    size = check_model_size(spec)
    assert 0 < size.cells <= cap_cells(ModelLimit.of(spec)) == 1_000_000
    own = sum(c for q, c in size.tables if q != STRUCTURE_TABLE)
    assert 0 < own < cap_cells(ModelLimit.of(spec)) / 100


def test_a_seeded_iteration_of_the_frozen_example_runs_on_a_sample_of_the_file(
        tmp_path: Path) -> None:
    """One seeded dry-run task (the run's own iteration: tests/test_rehearsal.py) of the frozen
    example on 1,500 rows drawn from the public file: every criterion is evaluated."""
    source = pd.read_csv(shared_data(NHANES), dtype=str, keep_default_na=False)
    keep = np.sort(np.random.default_rng(36).permutation(len(source))[:1_500])
    sample = tmp_path / "nhanes_sample.csv"
    source.iloc[keep].to_csv(sample, index=False)
    records = tmp_path / "records.jsonl"
    code = main(["dryrun", str(FROZEN), str(sample), "--n", "1500", "--repetitions", "1",
                 "--noise", "seeded", "--min-pass", "0", "--floor-draws", "0", "--no-cache",
                 "--workers", "0", "--records", str(records), "--quiet"])
    assert code == 0
    (record,) = [json.loads(line) for line in records.read_text().splitlines() if line]
    assert record["failure"] is None, record["failure"]
    ids = {c["id"] for c in json.loads(FROZEN.read_text())["criteria"]}
    assert set(record["criteria"]) == ids


@pytest.mark.parametrize("column", ["ID", "Gender"])
def test_the_example_leaves_out_the_identifier_and_the_duplicate_of_sex(column: str) -> None:
    assert column not in {c["name"] for c in json.loads(FROZEN.read_text())["schema"]["columns"]}
