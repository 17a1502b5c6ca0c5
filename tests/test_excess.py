"""The generator's excess over the feasibility floor, a first-class figure of the dry run."""

from __future__ import annotations

import math

import pytest
from test_dryrun import _cheap_document

from workbench.dryrun.excess import excess_words, generator_excess
from workbench.dryrun.floors import Floor, FloorTable
from workbench.dryrun.result import DryRunResult
from workbench.dryrun.tasks import CriterionOutcome, TaskRecord
from workbench.validation import build_spec


def test_excess_is_median_exact_minus_floor_per_configuration() -> None:
    spec = build_spec(_cheap_document())
    configs = list(spec.configurations())[:2]
    exact = {0: [0.050, 0.062, 0.055], 1: [0.040, 0.041, 0.039]}
    records = tuple(
        TaskRecord(c.key, rep, rep, "seeded", True, None,
                   {cid: CriterionOutcome(True, 0.0, 1.0,
                                          exact[i][rep] if cid == "faithfulness" else None)
                    for cid in ("marginals", "mean_gestation", "faithfulness")})
        for i, c in enumerate(configs) for rep in range(3))
    result = DryRunResult(tuple(c.id for c in spec.criteria), tuple(configs), records, 3, 0,
                          "seeded")
    floors = [FloorTable(95_000, c, (Floor("faithfulness", 0.3, 0.038, 0.001, 5),))
              for c in configs]
    frame = generator_excess(result, floors)
    assert frame["faithfulness"].tolist() == pytest.approx([0.055 - 0.038, 0.040 - 0.038])
    assert math.isnan(frame["marginals"].iloc[0])  # no exact value or no floor: unknown
    assert "generator excess over the floor" in excess_words(result, floors)
