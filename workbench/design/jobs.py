"""The design assistant's independent units, run on the dry run's executor (issue 36).

A design fits several proxy candidates per ε_gen, measures σ·ε of some criteria by
simulation, and prices each (ε_gen, K) with DP draws per candidate; none depends on another,
so each is a job on the executor that rehearses the drafts (one pool for the whole design,
:mod:`workbench.dryrun.executors`). A job rebuilds its trial from the variant's document and
is seeded by its own fields only, under one BLAS thread (:mod:`workbench.engine.blas`), so
its result is the same in this process, on a reused pool or on fresh ones. Public data only:
the proxy population at n and candidates made from it, in simulation contexts.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from workbench.criteria import evaluate_criterion
from workbench.design.facts import CandidateFacts, candidate_facts
from workbench.design.progress import Countdown
from workbench.design.variants import variant
from workbench.dryrun.executors import map_tasks
from workbench.engine.before_loop import release_before_loop
from workbench.engine.blas import single_threaded_blas
from workbench.privacy import PrivacyContext
from workbench.privacy.noise import SeededNoise
from workbench.specification import Configuration
from workbench.specification.n_policy import N_HAT_KEY
from workbench.transform.cells import PairedCells
from workbench.trial import Trial, bind
from workbench.validation import build_spec


@dataclass
class Shared:
    """What every job of a step needs, sent once per worker: the variant's document, the
    configuration, the proxy population at n, its codes, and the candidates' codes."""

    document: Mapping[str, Any] | None
    configuration: Mapping[str, Any]
    frame: pd.DataFrame
    real: np.ndarray
    synths: tuple[np.ndarray, ...] = ()
    _trial: Trial | None = field(default=None, repr=False)

    def trial(self, document: Mapping[str, Any] | None = None) -> Trial:
        """The bound trial of ``document`` (default the shared one, built once per worker)."""
        if document is not None:
            return bind(build_spec(document), Configuration.from_dict(dict(self.configuration)))
        if self._trial is None:
            if self.document is None:
                raise ValueError("this job needs a variant's document")
            self._trial = self.trial(self.document)
        return self._trial

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_trial": None}  # built where it is used


def fit_candidate(shared: Shared, item: tuple[Mapping[str, Any], int]) -> CandidateFacts:
    """Job: one proxy candidate of a variant (its document, at its ε_gen), measured exactly."""
    document, seed = item
    with single_threaded_blas():
        return candidate_facts(shared.trial(document), shared.frame, shared.real, seed)


def sigma_epsilon(trial: Trial, frame: pd.DataFrame, real: np.ndarray, synth: np.ndarray,
                  criterion_id: str, draws: int, seed: int) -> float:
    """σ·ε of a criterion's DP value, measured at ε = 1 over ``draws`` releases."""
    at_one = bind(variant(trial.spec, trial.spec.budget.epsilon_generator, {criterion_id: 1.0}),
                  trial.configuration)
    values, cells = [], _Cells(at_one, real, synth)
    for d in range(max(draws, 2)):
        ctx = PrivacyContext.simulation(seed=seed + d, noise=SeededNoise(seed + d))
        once = release_before_loop(at_one, frame, ctx).once
        values.append(evaluate_criterion(at_one.spec, at_one.configuration, criterion_id, real,
                                         synth, ctx, once_results=once, table=at_one.table,
                                         cells=cells.at(once)).value)
    return statistics.stdev(values)


def group_pass(trial: Trial, frame: pd.DataFrame, real: np.ndarray, synth: np.ndarray,
               ids: Sequence[str], draws: int, seed: int) -> float:
    """Share of ``draws`` DP releases in which every criterion of ``ids`` passes."""
    passed, cells = 0, _Cells(trial, real, synth)
    for d in range(draws):
        ctx = PrivacyContext.simulation(seed=seed + d, noise=SeededNoise(seed + d))
        once = release_before_loop(trial, frame, ctx).once
        passed += all(evaluate_criterion(trial.spec, trial.configuration, i, real, synth, ctx,
                                         once_results=once, table=trial.table,
                                         cells=cells.at(once)).passed
                      for i in ids)
    return passed / draws


class _Cells:
    """R and S of one candidate reduced to paired cells once, for every DP draw (the draws
    differ in their noise only; under ``n_policy: dp`` one reduction per released n̂)."""

    def __init__(self, trial: Trial, real: np.ndarray, synth: np.ndarray) -> None:
        self.domain, self.real, self.synth = trial.table.domain, real, synth
        self.made: dict[int | None, PairedCells] = {}

    def at(self, once: Mapping[str, Any]) -> PairedCells:
        n = once.get(N_HAT_KEY)
        if n not in self.made:
            self.made[n] = PairedCells.from_codes(self.real, self.synth, self.domain, n=n)
        return self.made[n]


def sigma_job(shared: Shared, item: tuple[str, int, int]) -> float:
    """Job: :func:`sigma_epsilon` of one criterion on the first candidate."""
    criterion_id, draws, seed = item
    with single_threaded_blas():
        return sigma_epsilon(shared.trial(), shared.frame, shared.real, shared.synths[0],
                             criterion_id, draws, seed)


def pass_job(shared: Shared, item: tuple[Mapping[str, Any], int, tuple[str, ...], int, int]
             ) -> float:
    """Job: :func:`group_pass` of one priced variant (its document) on candidate i."""
    document, i, ids, draws, seed = item
    with single_threaded_blas():
        return group_pass(shared.trial(document), shared.frame, shared.real, shared.synths[i],
                          ids, draws, seed)


def run_jobs(executor: Any, fn: Callable[[Shared, Any], Any], shared: Shared,
             items: Sequence[Any], countdown: Countdown | None = None,
             describe: Callable[[int], str] | None = None) -> list[Any]:
    """The jobs' results in item order (they finish in any order); each finished job is
    announced on ``countdown`` (with ``describe(i)``)."""
    out: dict[int, Any] = {}
    for i, result in map_tasks(executor, fn, shared, items):
        out[i] = result
        if countdown is not None:
            countdown.finished(describe(i) if describe else "")
    return [out[i] for i in range(len(items))]
