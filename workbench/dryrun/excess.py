"""A generator's excess over the feasibility floor: how much worse than an ideal generator.

The floor (:mod:`workbench.dryrun.floors`) is what a bootstrap resample of the proxy reaches
at n through the same post-processing; the excess is the median exact value the dry run's
candidates reached (per configuration and criterion, proxy data only) minus that floor, at the
same size, transformations and min_count. It separates what the generator loses from what n
itself costs (issue 15: faithfulness 6.1% at 95k is a floor of 3.8% plus an excess of 2.3).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import pandas as pd

from workbench.dryrun.floors import FloorTable
from workbench.dryrun.labels import config_labels
from workbench.dryrun.result import DryRunResult


def generator_excess(result: DryRunResult, floors: Sequence[FloorTable]) -> pd.DataFrame:
    """Configurations × criteria: median exact value − floor (NaN where either is unknown)."""
    by_part = {(t.configuration.transforms, t.configuration.min_count): t.by_id()
               for t in floors}
    rows = []
    for config in result.configurations:
        table = by_part.get((config.transforms, config.min_count), {})
        row = {}
        for cid in result.criteria:
            exact = [r.criteria[cid].exact for r in result.records
                     if r.config_key == config.key and cid in r.criteria
                     and r.criteria[cid].exact is not None]
            floor = table.get(cid)
            row[cid] = (statistics.median(exact) - floor.mean if exact and floor is not None
                        else float("nan"))
        rows.append(row)
    return pd.DataFrame(rows, index=config_labels(list(result.configurations)))


def excess_words(result: DryRunResult, floors: Sequence[FloorTable]) -> str:
    """The excess table as text, for the dry run's output."""
    frame = generator_excess(result, floors)
    with pd.option_context("display.width", 200, "display.max_columns", None,
                           "display.max_colwidth", 60):
        body = frame.to_string(float_format=lambda v: f"{v:.4g}")
    return (f"generator excess over the floor at n = {result.n or 'proxy size'} (median exact "
            f"value − floor; what the generator loses beyond what n costs):\n{body}")
