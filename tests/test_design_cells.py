"""The design's cells from one place (``workbench.trial.cells``) when configurations differ in
their transforms: the evidence's codec is picked (the first transform set), the reversal check
and the association proposals run in every transform set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from conftest import shared_csv
from test_associations import _document, plant_smoking

from workbench.design import proposals
from workbench.dryrun import reversal
from workbench.dryrun.floors import Floor, FloorTable
from workbench.evidence.prepare import as_evidence
from workbench.evidence.published import design_table
from workbench.trial.cells import design_codec, design_configuration, transform_sets
from workbench.validation import build_spec

FINE, COARSE = [20, 25, 30, 35, 40], [25, 40]


def _two_sets(coarse_first: bool = False) -> dict[str, Any]:
    """The association stand-in spec with mother_age binned two ways and two hyperparameter
    sets: four configurations, two transform sets (optionally narrowed, coarse first)."""
    doc = _document(False)
    doc["transformations"]["columns"]["mother_age"] = {"alternatives": [
        {"name": "fine", "kind": "bins", "edges": FINE},
        {"name": "coarse", "kind": "bins", "edges": COARSE}]}
    doc["generator"]["search_space"] = [{"algorithm": ["fixed"], "one_way_share": [0.25, 0.5]}]
    if coarse_first:
        configs = list(build_spec(doc).configurations())
        doc["selection"]["configurations"] = [c.to_dict() for c in configs[2:] + configs[:2]]
    return doc


@pytest.fixture(scope="module")
def standin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The planted smoking stand-in (public US sample) as a CSV."""
    frame = pd.read_csv(shared_csv("us_births_2019_singleton_sample10k.csv"))
    frame = plant_smoking(frame[["mother_age", "parity", "gestation_week", "birth_weight"]])
    path = tmp_path_factory.mktemp("cells") / "standin.csv"
    frame.to_csv(path, index=False)
    return path


def _age_cells(config: Any) -> str:
    """The mother_age alternative of a configuration."""
    return config.transform_of("mother_age")


def test_transform_sets_and_the_picked_design_codec(standin: Path) -> None:
    """Four configurations, two transform sets in configuration order; the design's codec is
    the first set's, follows a narrowed selection, and is the one the evidence encodes with
    and published tables are read in."""
    spec = build_spec(_two_sets())
    assert len(list(spec.configurations())) == 4
    sets = transform_sets(spec)
    assert [_age_cells(c) for c in sets] == ["fine", "coarse"]
    assert design_configuration(spec) == sets[0]
    sizes = {name: spec.table_codec(c).codec("mother_age").size for name, c in
             zip(("fine", "coarse"), sets, strict=True)}
    assert sizes["fine"] > sizes["coarse"]
    assert design_codec(spec).codec("mother_age").size == sizes["fine"]

    narrowed = build_spec(_two_sets(coarse_first=True))
    assert [_age_cells(c) for c in transform_sets(narrowed)] == ["coarse", "fine"]
    codec = design_codec(narrowed)
    assert codec.codec("mother_age").size == sizes["coarse"]
    assert design_table(narrowed).codec("mother_age").size == sizes["coarse"]
    evidence = as_evidence(narrowed, str(standin))
    age = narrowed.column_names.index("mother_age")
    assert np.array_equal(evidence.codes, codec.encode(evidence.frame))
    assert evidence.codes[:, age].max() == sizes["coarse"] - 1


def test_reversal_check_runs_in_every_transform_set(standin: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The criteria see the reversed release in each transform set: the check warns when they
    all pass in any set, naming it, and otherwise reports the first set's failure."""
    spec = build_spec(_two_sets())
    seen: list[str] = []
    passing = {"coarse"}

    def fake_floor_draw(trial: Any, codes: Any, ctx: Any, once: Any, sampler: Any) -> Any:
        cells = _age_cells(trial.configuration)
        seen.append(cells)
        assert codes[:, 0].max() < trial.table.codec("mother_age").size  # encoded in its cells
        limit = 1.0 if cells in passing else -1.0
        return {c.id: 0.0 for c in spec.criteria}, {c.id: limit for c in spec.criteria}

    monkeypatch.setattr(reversal, "floor_draw", fake_floor_draw)
    (check,) = reversal.reversal_check(spec, str(standin), 2000, draws=2)
    assert seen == ["fine", "fine", "coarse", "coarse"]
    assert check.all_pass and "mother_age: coarse" in check.transforms
    assert "in the cells (mother_age: coarse" in check.words()
    assert check.words().startswith("WARNING")

    passing.clear()
    (check,) = reversal.reversal_check(spec, str(standin), 2000, draws=2)
    assert not check.all_pass and "mother_age: fine" in check.transforms


def test_proposed_threshold_clears_the_floor_of_every_transform_set(
        standin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A declared pair's proposed criterion sits above the ideal generator's floor in the
    transform set where that floor is highest, not only in the first one."""
    spec = build_spec(_two_sets())
    called: list[str] = []

    def fake_floors(drafted: Any, evidence: Any, config: Any, n: int, draws: int,
                    seed: int) -> FloorTable:
        called.append(_age_cells(config))
        mean = 0.9 if _age_cells(config) == "coarse" else 0.01
        floors = tuple(Floor(c.id, c.threshold, mean, 0.05, draws) for c in drafted.criteria)
        return FloorTable(n, config, floors)

    monkeypatch.setattr(proposals, "feasibility_floors", fake_floors)
    out = proposals.propose_associations(spec, as_evidence(spec, str(standin)), 3000)
    assert called == ["fine", "coarse"]
    (cid,) = out.added
    criterion = next(c for c in out.spec.criteria if c.id == cid)
    assert criterion.threshold >= 0.9 + 2 * 0.05
    assert any("the ideal generator's floor 0.9 + 2 SD" in line for line in out.lines)
