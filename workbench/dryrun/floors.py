"""Feasibility floors: the value each criterion takes for an ideal generator at n records.

The ideal generator is a bootstrap resample of the data itself. Run through the iteration's
own post-processing (rejection against the synthetic rules, the min_count projection) and
compared with the data exactly, it shows how far below a threshold even a perfect model can
get at n (issue 15: 1 − β_max of a bootstrap resample is 3–5% at 95k records). A threshold
below, or within one SD of, its floor is "infeasible at n" before anyone spends a thought on
ε. Everything here runs on PUBLIC proxy data in a simulation context (exact values).

**The trivial-generator floor** (issue 28) is the other end: the value of each criterion for a
release that keeps only the proxy's 1-way marginals (every column drawn independently from its
own distribution at n, through the same rules and projection). A criterion such a release
passes does not protect utility — it accepts data that carry no relation between columns — so
the spec review, the co-design Criteria tab and ``describe --proxy`` warn, and
``workbench validate --strict`` refuses a spec whose every criterion it passes.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from workbench.criteria.dispatch import kind_of
from workbench.criteria.evaluation_state import Evaluation
from workbench.dryrun.size import DEFAULT_DRAWS, SizeSpec, check_n, size_ends
from workbench.dryrun.tasks import task_seed
from workbench.engine.before_loop import release_before_loop
from workbench.evidence.core import Evidence
from workbench.evidence.prepare import as_evidence
from workbench.postprocess import project_min_count, sample_valid_for
from workbench.privacy import PrivacyContext
from workbench.specification import Configuration, Spec
from workbench.specification.model import Criterion
from workbench.trial import Trial, bind


class Bootstrap:
    """The ideal generator: samples rows of R with replacement (a sampler for rejection; the
    reversal check draws its rows from it too)."""

    def __init__(self, codes: np.ndarray) -> None:
        self.codes = codes

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.codes[rng.integers(0, self.codes.shape[0], size=n)]


class _Independent:
    """The trivial generator: every column drawn on its own from R's 1-way distribution
    (exact marginals, no dependence between columns)."""

    def __init__(self, codes: np.ndarray) -> None:
        self.codes = codes

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        rows = self.codes.shape[0]
        return np.stack([self.codes[rng.integers(0, rows, size=n), j]
                         for j in range(self.codes.shape[1])], axis=1)


@dataclass(frozen=True)
class Floor:
    """One criterion's floor at n: mean and SD over the draws, beside its threshold."""

    criterion: str
    threshold: float
    mean: float
    sd: float
    draws: int
    #: the value of an independent-marginals release (the trivial generator), and whether it
    #: passes (then the criterion does not protect utility)
    trivial: float = math.nan
    trivial_passes: bool = False

    @property
    def infeasible(self) -> bool:
        """Whether the threshold is below, or within one SD of, the floor (criteria pass
        below their threshold); never for an unknown (NaN) floor."""
        return bool(self.threshold <= self.mean + (0.0 if math.isnan(self.sd) else self.sd))

    @property
    def headroom(self) -> float:
        """What the threshold leaves a real generator above the floor."""
        return self.threshold - self.mean

    def words(self) -> str:
        """``floor 3.1e-02 ± 1.2e-03`` and the flag, for tables and editors."""
        flag = "  INFEASIBLE at n" if self.infeasible else ""
        return f"floor {self.mean:.4g} ± {self.sd:.2g}{flag}"


@dataclass(frozen=True)
class FloorTable:
    """The floors of every criterion for one configuration at one size n."""

    n: int
    configuration: Configuration
    floors: tuple[Floor, ...]

    def by_id(self) -> dict[str, Floor]:
        """Floors keyed by criterion id."""
        return {f.criterion: f for f in self.floors}

    @property
    def infeasible(self) -> list[str]:
        """Ids of the criteria flagged infeasible at n."""
        return [f.criterion for f in self.floors if f.infeasible]

    @property
    def unprotective(self) -> list[str]:
        """Ids of the criteria an independent-marginals release passes at n."""
        return [f.criterion for f in self.floors if f.trivial_passes]

    def frame(self) -> pd.DataFrame:
        """One row per criterion: threshold, floor, SD, headroom, the flag, and the trivial
        generator's value with whether it passes."""
        return pd.DataFrame(
            [{"criterion": f.criterion, "threshold": f.threshold, "floor": f.mean, "sd": f.sd,
              "headroom": f.headroom, "infeasible at n": f.infeasible,
              "trivial release": f.trivial, "trivial passes": f.trivial_passes}
             for f in self.floors]
        ).set_index("criterion")

    def summary(self) -> str:
        """The table as text (the CLI prints this)."""
        with pd.option_context("display.width", 200, "display.max_columns", None):
            return self.frame().to_string(float_format=lambda v: f"{v:.4g}")


def _decision_threshold(ev: Evaluation, criterion_id: str) -> float:
    """The threshold a DP value is compared with: T, or min(T, T′) where the kind adjusts it
    (T′ from Δ, which depends on n, the spec and S only)."""
    criterion = ev.spec.criterion(criterion_id)
    kind = kind_of(criterion)
    delta, details = kind.sensitivity(ev.spec, ev.table, criterion, ev.pc)
    return kind.effective_threshold(criterion, delta, details)


def _exact(ev: Evaluation, criterion: Criterion) -> float:
    """The exact error (every kind declares one: ``exact`` is abstract)."""
    return float(kind_of(criterion).exact(ev, criterion))


def floor_draw(trial: Trial, codes: np.ndarray,
               ctx: PrivacyContext, once: Mapping[str, Any] | None = None,
               generator: str = "bootstrap", sampler: Any = None
               ) -> tuple[dict[str, float], dict[str, float]]:
    """(exact errors, effective thresholds) of one release of ``codes`` (R at its size) by the
    ideal generator (``bootstrap``) or the trivial one (``independent``), through the synthetic
    rules and the projection, against R itself (``once``: what a run releases before its
    loop, e.g. a survey's raking and R's base weights); ``sampler`` replaces both (e.g. the
    reversed-association release of :mod:`workbench.dryrun.reversal`)."""
    spec, configuration = trial.spec, trial.configuration
    if sampler is None:
        sampler = Bootstrap(codes) if generator == "bootstrap" else _Independent(codes)
    synth = sample_valid_for(spec, trial.table, sampler, codes.shape[0], ctx.rng)
    synth = project_min_count(synth, configuration.min_count, ctx.rng)
    ev = Evaluation(spec, configuration, codes, synth, ctx, once, trial.table)
    exact = {c.id: _exact(ev, c) for c in spec.criteria}
    return exact, {c.id: _decision_threshold(ev, c.id) for c in spec.criteria}


def feasibility_floors(
    spec: Spec,
    proxy: Evidence | pd.DataFrame | str | os.PathLike[str],
    configuration: Configuration | None = None,
    n: int | None = None,
    draws: int = DEFAULT_DRAWS,
    seed: int = 0,
) -> FloorTable:
    """Every criterion's floor at ``n`` records (None: the cleaned proxy's size), averaged
    over ``draws`` draws. Each draw takes R = a population at n of the evidence's anchor
    (:meth:`workbench.evidence.core.Evidence.population`) and S = a bootstrap of R.
    ``configuration`` defaults to the spec's first one."""
    n = check_n(n)  # type: ignore[assignment]
    if isinstance(n, tuple):
        raise ValueError("feasibility_floors takes one size n; use floors_at for a range")
    if isinstance(draws, bool) or not isinstance(draws, int) or draws < 2:
        raise ValueError("draws must be an integer >= 2 (the SD needs two)")
    evidence = as_evidence(spec, proxy)
    config = configuration if configuration is not None else next(spec.configurations())
    trial = bind(spec, config)
    values: dict[str, list[float]] = {c.id: [] for c in spec.criteria}
    trivial: dict[str, list[float]] = {c.id: [] for c in spec.criteria}
    thresholds: dict[str, list[float]] = {c.id: [] for c in spec.criteria}
    size = len(evidence.frame) if n is None else n
    for d in range(draws):
        ctx = PrivacyContext.simulation(task_seed(seed, f"floor:n={size}", d),
                                        neighbour=spec.budget.neighbour)
        real = evidence.population(n, ctx.rng)
        # a survey's raking and base weights, as the run releases them before its loop
        once = release_before_loop(trial, real, ctx).once if spec.survey is not None else None
        codes = trial.encode(real)
        exact, eff = floor_draw(trial, codes, ctx, once)
        flat, _ = floor_draw(trial, codes, ctx, once, generator="independent")
        for cid in values:
            values[cid].append(exact[cid])
            trivial[cid].append(flat[cid])
            thresholds[cid].append(eff[cid])
    floors = []
    for c in spec.criteria:
        limit = float(np.mean(thresholds[c.id]))
        flat_mean = _mean(trivial[c.id])
        passes = math.isfinite(flat_mean) and kind_of(c).passes(flat_mean, limit)
        floors.append(Floor(c.id, limit, _mean(values[c.id]), _sd(values[c.id]), draws,
                            flat_mean, bool(passes)))
    return FloorTable(size, config, tuple(floors))


def floors_at(spec: Spec, proxy: Evidence | pd.DataFrame | str | os.PathLike[str],
              configurations: Sequence[Configuration] | None = None, n: SizeSpec = None,
              draws: int = DEFAULT_DRAWS, seed: int = 0) -> dict[int, list[FloorTable]]:
    """Floors per rehearsed size (both ends of a range) and configuration: what the dry run's
    table, ``describe --proxy`` and the editors show. The widgets call this."""
    evidence = as_evidence(spec, proxy)
    if n is None and spec.expected_n is not None:  # schema.expected_n, both ends
        n = spec.expected_n.size
    configs = floor_configurations(configurations if configurations is not None
                                   else [next(spec.configurations())])
    out: dict[int, list[FloorTable]] = {}
    for size in size_ends(check_n(n)) or (None,):
        tables = [feasibility_floors(spec, evidence, c, size, draws, seed)
                  for c in configs]
        out[tables[0].n] = tables
    return out


def floor_configurations(configurations: Sequence[Configuration]) -> list[Configuration]:
    """One configuration per (transformations, min_count): all a floor depends on (the ideal
    generator has no hyperparameters)."""
    seen: dict[tuple, Configuration] = {}
    for c in configurations:
        seen.setdefault((c.transforms, c.min_count), c)
    return list(seen.values())


def floors_words(tables: Mapping[int, Sequence[FloorTable]]) -> str:
    """Each size's floor tables as text, the flagged criteria named."""
    lines: list[str] = []
    for size, items in sorted(tables.items()):
        for table in items:
            if not table.floors:
                lines.append(f"feasibility floors at n = {size:,}: none (the spec has no "
                             "criteria yet)")
                continue
            lines.append(f"feasibility floors at n = {size:,} (ideal generator: a bootstrap of "
                         f"the proxy at n, min_count {table.configuration.min_count}, "
                         f"{table.floors[0].draws} draws):")
            lines.append(table.summary())
            if table.infeasible:
                lines.append("infeasible at n: " + ", ".join(table.infeasible))
            if table.unprotective:
                lines.append("passed by an independent-marginals release (this criterion "
                             "does not protect utility): " + ", ".join(table.unprotective))
    return "\n".join(lines)


def _mean(values: Sequence[float]) -> float:
    finite = [v for v in values if math.isfinite(v)]
    return float(np.mean(finite)) if finite else math.nan


def _sd(values: Sequence[float]) -> float:
    finite = [v for v in values if math.isfinite(v)]
    return float(np.std(finite, ddof=1)) if len(finite) > 1 else math.nan
