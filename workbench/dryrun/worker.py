"""The worker side of a dry run: the spec and proxy installed once, then one task at a time.

Executors send a :class:`Payload` once per worker process (a pickled file a pool worker loads
on its first task, a Dask broadcast) and then only small :class:`Task` objects; a worker
keeps its last few shared objects (:data:`KEEP`), so a pool reused across a design's
scenarios and drafts installs each payload once and keeps its warm JAX compile cache. Each
task rehearses the
enclave's code path exactly: the run's before-loop releases
(:func:`workbench.engine.before_loop.release_before_loop`: once-statistics, survey raking),
then ``workbench.engine.run_iteration``, in a SIMULATION context seeded by the task (its noise
source too, with ``noise="seeded"``).
"""

from __future__ import annotations

import pickle
import signal
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from workbench.criteria import exact_errors
from workbench.dryrun.noise import noise_source
from workbench.dryrun.tasks import CriterionOutcome, Task, TaskRecord
from workbench.engine import run_iteration
from workbench.engine.before_loop import release_before_loop
from workbench.engine.blas import single_threaded_blas
from workbench.evidence.population import population, size_seed
from workbench.privacy import PrivacyContext
from workbench.specification import Spec
from workbench.survey.weight_check import WeightCheckFailed
from workbench.trial import Trial, bind
from workbench.validation import build_spec


@dataclass(frozen=True)
class Payload:
    """What every worker needs once: the spec document, the cleaned proxy frame, and the size
    ``n`` each task resamples it to (None: the proxy as it is)."""

    payload_id: str
    document: Mapping[str, Any]
    frame: pd.DataFrame
    n: int | None = None
    #: a proxy scenario's row weights (:mod:`workbench.dryrun.robust`): each task then draws
    #: its own population of n rows with expected counts ∝ weights, copying a row only where
    #: it must (:func:`workbench.evidence.population.population_rows`)
    weights: np.ndarray | None = None


#: How many payloads (and shared objects) a worker keeps, the most recently used: a design
#: rehearses a draft on several scenarios in turn, each its own payload.
KEEP = 3

_INSTALLED: OrderedDict[str, tuple[Spec, pd.DataFrame, int | None, np.ndarray | None]] = \
    OrderedDict()
_SHARED: OrderedDict[str, Any] = OrderedDict()


def _keep(cache: OrderedDict, key: str, value: Any) -> None:
    """Put ``key`` last (most recent) and forget the oldest beyond :data:`KEEP`."""
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > KEEP:
        cache.popitem(last=False)


def install(payload: Payload) -> None:
    """Build the spec once in this process and keep it with the frame under the payload id."""
    found = _INSTALLED.get(payload.payload_id)
    _keep(_INSTALLED, payload.payload_id, found or (
        build_spec(payload.document), payload.frame, payload.n, payload.weights))


def uninstall(payload_id: str) -> None:
    """Forget a payload (when its dry run is over)."""
    _INSTALLED.pop(payload_id, None)


def ignore_interrupts() -> None:
    """Pool initializer: Ctrl-C reaches the whole process group, but only the parent acts on
    it (it terminates its workers), so a worker neither dies mid-task nor prints a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def call_shared(fn: Callable[[Any, Any], Any], key: str, path: str, item: Any) -> Any:
    """A pool worker's side of ``Executor.map``: ``fn(shared, item)``, the shared object
    unpickled from ``path`` on this worker's first task that needs it, then kept by ``key``."""
    shared = _SHARED.get(key)
    if shared is None:
        with open(path, "rb") as fh:
            shared = pickle.load(fh)
    _keep(_SHARED, key, shared)
    return fn(shared, item)


def run_payload_task(payload: Payload, task: Task) -> TaskRecord:
    """One dry-run task with its payload (installed on this worker's first task of it)."""
    install(payload)
    return run_task(task)


def task_frame(frame: pd.DataFrame, n: int | None, weights: np.ndarray | None,
               seed: int) -> pd.DataFrame:
    """The records a task rehearses on: its own resample of the proxy at n, or its own
    population of a proxy scenario at n (expected counts ∝ weights); the proxy itself when
    n is None."""
    return frame if n is None else population(frame, n, size_seed(seed, n), weights)


def run_task(task: Task) -> TaskRecord:
    """Rehearse one iteration for one (configuration, repetition) and record the outcome."""
    try:
        spec, frame, n, weights = _INSTALLED[task.payload_id]
    except KeyError:
        raise RuntimeError("dry-run payload not installed in this worker") from None
    frame = task_frame(frame, n, weights, task.seed)
    ctx = PrivacyContext.simulation(task.seed, neighbour=spec.budget.neighbour,
                                    noise=noise_source(task.noise, task.seed))
    start = time.perf_counter()
    with single_threaded_blas():
        record = _rehearse(bind(spec, task.config), frame, task, ctx)
    return TaskRecord(**{**record, "seconds": time.perf_counter() - start})


def _rehearse(trial: Trial, frame: pd.DataFrame, task: Task, ctx: PrivacyContext
              ) -> dict[str, Any]:
    """The enclave's steps on the proxy, plus the exact errors (fine: the proxy is public)."""
    spec, config = trial.spec, trial.configuration
    codes = trial.encode(frame)
    try:
        inputs = release_before_loop(trial, frame, ctx)  # the run's own before-loop steps
    except WeightCheckFailed:  # the run would stop before its loop: no release (⊥)
        return {"config_key": task.config_key, "rep": task.rep, "seed": task.seed,
                "noise": task.noise, "passed": False, "failure": "survey weight check",
                "criteria": {c.id: CriterionOutcome(False, None, None, None)
                             for c in spec.criteria}}
    cand = run_iteration(trial, frame, ctx, once_results=inputs.once, real_codes=codes)
    exact = ({} if cand.codes is None
             else exact_errors(spec, config, codes, cand.codes, ctx, table=trial.table,
                               once_results=inputs.once))
    by_id = {r.id: r for r in cand.results}
    criteria = {}
    for c in spec.criteria:
        r = by_id.get(c.id)
        criteria[c.id] = CriterionOutcome(
            passed=bool(r.passed) if r else False,
            value=float(r.value) if r else None,
            threshold=float(r.effective_threshold) if r else None,
            exact=float(exact[c.id]) if c.id in exact else None,
        )
    return {"config_key": task.config_key, "rep": task.rep, "seed": task.seed,
            "noise": task.noise, "passed": bool(cand.passed), "failure": cand.failure,
            "criteria": criteria}
