"""What a dry run found: pass probabilities per configuration and criterion, and narrowing."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import pandas as pd

from workbench.dryrun.forecast import (
    SelectionForecast,
    forecast,
    forecast_record,
    wilson_interval,
)
from workbench.dryrun.labels import config_labels
from workbench.dryrun.tasks import NoiseMode, TaskRecord
from workbench.specification import Configuration, Spec
from workbench.validation import build_spec

ALL = "all criteria"


@dataclass(frozen=True)
class DryRunResult:
    """Records of every (configuration, repetition) with the tables stakeholders decide on."""

    criteria: tuple[str, ...]
    configurations: tuple[Configuration, ...]
    records: tuple[TaskRecord, ...]
    repetitions: int
    seed: int
    noise: NoiseMode
    computed: int = 0
    cached: int = 0
    seconds: float = 0.0
    n: int | None = None  # records per rehearsed iteration (the cleaned proxy's or the resample's)

    # --- tables -----------------------------------------------------------------------------
    def records_frame(self) -> pd.DataFrame:
        """One row per task: decisions, DP values and exact values per criterion, and time."""
        labels = dict(zip((c.key for c in self.configurations),
                          config_labels(self.configurations), strict=True))
        rows = []
        for r in self.records:
            row: dict[str, Any] = {"configuration": labels[r.config_key], "rep": r.rep,
                                   "seed": r.seed, "passed": r.passed, "failure": r.failure}
            for cid in self.criteria:
                o = r.criteria.get(cid)
                row[f"pass:{cid}"] = bool(o.passed) if o else False
                row[f"dp:{cid}"] = o.value if o else None
                row[f"exact:{cid}"] = o.exact if o else None
            row["seconds"] = r.seconds
            row["key"] = r.config_key
            rows.append(row)
        return pd.DataFrame(rows)

    @cached_property
    def table(self) -> pd.DataFrame:
        """Configurations sorted by P(all criteria pass), with every criterion's pass rate."""
        by_key: dict[str, list[TaskRecord]] = {c.key: [] for c in self.configurations}
        for r in self.records:
            by_key[r.config_key].append(r)
        rows = []
        for i, (config, label) in enumerate(zip(self.configurations,
                                                config_labels(self.configurations), strict=True)):
            recs = by_key[config.key]
            n = len(recs)
            passes = sum(r.passed for r in recs)
            low, high = wilson_interval(passes, n)
            row: dict[str, Any] = {"configuration": label, ALL: passes / n if n else math.nan,
                                   "low": low, "high": high, "runs": n,
                                   "sampling_failures": sum(r.failure is not None for r in recs)}
            for cid in self.criteria:
                row[cid] = (sum(bool(r.criteria.get(cid) and r.criteria[cid].passed)
                                for r in recs) / n) if n else math.nan
            row["mean_criteria"] = sum(row[c] for c in self.criteria) / max(len(self.criteria), 1)
            row["seconds"] = sum(r.seconds for r in recs) / n if n else math.nan
            row["order"] = i
            row["key"] = config.key
            rows.append(row)
        frame = pd.DataFrame(rows).sort_values(
            [ALL, "mean_criteria", "order"], ascending=[False, False, True], kind="stable")
        return frame.drop(columns=["order"]).set_index("configuration")

    def pass_probabilities(self) -> dict[str, float]:
        """P(all criteria pass) per configuration key (the estimate from the repetitions)."""
        return dict(zip(self.table["key"], self.table[ALL], strict=True))

    def criterion_pass_rates(self) -> pd.DataFrame:
        """Configurations × criteria pass rates (plus the all-criteria column), sorted."""
        return self.table[[*self.criteria, ALL]]

    # --- narrowing --------------------------------------------------------------------------
    def narrow(self, min_pass: float) -> list[Configuration]:
        """Configurations whose all-criteria pass probability is at least ``min_pass``."""
        if not 0.0 <= float(min_pass) <= 1.0:
            raise ValueError("min_pass must be a probability in [0, 1]")
        by_key = {c.key: c for c in self.configurations}
        keep = self.table[self.table[ALL] >= float(min_pass) - 1e-12]
        return [by_key[k] for k in keep["key"]]

    def narrowed_document(self, spec: Spec, min_pass: float, *, n: int | None = None,
                          proxy: str | None = None, n_max: int | None = None,
                          scenarios: Mapping[str, float] | None = None) -> dict[str, Any]:
        """The spec document with ``selection.configurations`` set to the narrowed list and
        ``selection.forecast`` to this dry run's forecast over it (``workbench run`` needs
        one when γ = 0 and T = ∞): p with its interval, what it was rehearsed at (``n``,
        ``n_max`` for a range) and on (``proxy``), the proxy scenarios' p (``scenarios``,
        :mod:`workbench.dryrun.robust`), and the hash of the design it belongs to."""
        chosen = self.narrow(min_pass)
        if not chosen:
            raise ValueError(f"no configuration passes with probability >= {min_pass:g}; "
                             "lower min_pass, add repetitions or revisit the design")
        document = spec.to_document()
        document["selection"] = {**document["selection"],
                                 "configurations": [c.to_dict() for c in chosen]}
        # With ε_gen alternatives the charge follows the largest one left: derived by the
        # validator, so a written copy (older specs) is dropped rather than rewritten.
        if any(name == "epsilon" for grid in spec.generator.grids for name, _ in grid):
            document["budget"].pop("epsilon_generator", None)
        p = self.selection_forecast(spec.selection.gamma, spec.selection.max_iterations,
                                    min_pass).p
        keys = {c.key for c in chosen}
        kept = [r for r in self.records if r.config_key in keys]
        document["selection"]["forecast"] = forecast_record(
            document, p, sum(r.passed for r in kept), len(kept), repetitions=self.repetitions,
            min_pass=min_pass, n=n, n_max=n_max, proxy=proxy, seed=self.seed,
            noise=self.noise, scenarios=scenarios)
        build_spec(document)
        return document

    def selection_forecast(self, gamma: float, max_iterations: int | None,
                           min_pass: float = 0.0) -> SelectionForecast:
        """Expected iterations and P(⊥) over the space narrowed at ``min_pass``."""
        p = self.pass_probabilities()
        return forecast([p[c.key] for c in self.narrow(min_pass)], gamma, max_iterations)

    # --- plots ------------------------------------------------------------------------------
    def heatmap(self, ax: Any = None, max_rows: int = 40) -> Any:
        """A figure of configurations × criteria pass rates, best configurations on top."""
        from workbench.dryrun.plots import pass_rate_heatmap

        return pass_rate_heatmap(self.criterion_pass_rates(), ax=ax, max_rows=max_rows)

    def summary(self, rows: int = 10) -> str:
        """The top of the sorted table as text (the CLI prints this)."""
        cols = [ALL, "low", "high", "runs", *self.criteria]
        with pd.option_context("display.width", 200, "display.max_columns", None,
                               "display.max_colwidth", 60):
            return self.table[cols].head(rows).to_string(float_format=lambda v: f"{v:.2f}")


def sort_records(records: Sequence[TaskRecord], configs: Sequence[Configuration]
                 ) -> tuple[TaskRecord, ...]:
    """Records in configuration order, then repetition (completion order is arbitrary)."""
    order = {c.key: i for i, c in enumerate(configs)}
    return tuple(sorted(records, key=lambda r: (order[r.config_key], r.rep)))
