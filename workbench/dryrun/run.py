"""``dry_run``: rehearse the enclave's iteration on the public proxy, many times, in parallel.

Each (configuration, repetition) task runs ``workbench.engine.run_iteration`` in a SIMULATION
context seeded from (seed, configuration key, repetition), so the dry run exercises exactly the
code the confidential run will execute. Results are cached on disk (see
:mod:`workbench.dryrun.cache`), so an edit to the spec recomputes only what it changes.
"""

from __future__ import annotations

import hashlib
import os
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.dryrun.cache import DryRunCache, frame_fingerprint, iteration_digest, record_key
from workbench.dryrun.executors import Executor, LocalExecutor
from workbench.dryrun.result import DryRunResult, sort_records
from workbench.dryrun.size import check_n
from workbench.dryrun.tasks import NOISE_MODES, NoiseMode, TaskRecord, plan_tasks
from workbench.dryrun.worker import Payload
from workbench.evidence.core import Evidence
from workbench.evidence.prepare import as_evidence, check_proxy_weights
from workbench.specification import Configuration, Spec
from workbench.validation import build_spec

ProgressCallback = Callable[[int, int], None]


def pick_configurations(configs: Sequence[Configuration], limit: int | None,
                        seed: int = 0) -> list[Configuration]:
    """At most ``limit`` configurations spread over the space (a seeded sample, kept in order)."""
    if limit is None or limit >= len(configs):
        return list(configs)
    if limit < 1:
        raise ValueError("limit must be >= 1")
    chosen = sorted(random.Random(seed).sample(range(len(configs)), limit))
    return [configs[i] for i in chosen]


def select_configurations(spec: Spec, which: str | None = None, limit: int | None = None,
                          seed: int = 0) -> list[Configuration]:
    """The configurations to rehearse: ``which`` is ``"all"`` (the full space), ``"narrowed"``
    (the spec's ``selection.configurations``) or None (the narrowed list if the spec has one,
    else the full space); then at most ``limit`` of them (:func:`pick_configurations`)."""
    if which not in (None, "all", "narrowed"):
        raise ValueError(f"which must be 'all', 'narrowed' or None, not {which!r}")
    narrowed = spec.selection.configurations
    if which == "narrowed" and narrowed is None:
        raise ValueError("the spec has no narrowed list (selection.configurations) to try")
    use_narrowed = which == "narrowed" or (which is None and narrowed is not None)
    configs = list(narrowed) if use_narrowed and narrowed else list(spec.full_space())
    return pick_configurations(configs, limit, seed)


def _configurations(spec: Spec, configs: Iterable[Configuration | Mapping[str, Any]] | None
                    ) -> list[Configuration]:
    """The configurations to try, without duplicates (the spec's own list when None)."""
    items = spec.configurations() if configs is None else configs
    out: dict[str, Configuration] = {}
    for c in items:
        config = c if isinstance(c, Configuration) else Configuration.from_dict(c)
        spec.table_codec(config)  # fails early, naming the column, on an unknown alternative
        out.setdefault(config.key, config)
    if not out:
        raise ValueError("no configurations to try")
    return list(out.values())


def _cache(cache: DryRunCache | str | os.PathLike[str] | bool | None) -> DryRunCache | None:
    """None/False: no cache; True: the default directory; a path or a DryRunCache: that one."""
    if cache is None or cache is False:
        return None
    if cache is True:
        return DryRunCache()
    if isinstance(cache, DryRunCache):
        return cache
    return DryRunCache(Path(cache))


class _Progress:
    """A tqdm bar (True/None), nothing (False), or a callback(done, total)."""

    def __init__(self, progress: bool | ProgressCallback | None, total: int, done: int) -> None:
        self.total, self.done = total, done
        self.callback = progress if callable(progress) else None
        self.bar = None
        if progress is None or progress is True:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, initial=done, unit="task", desc="dry run",
                            dynamic_ncols=True)
        self._emit()

    def _emit(self) -> None:
        if self.callback is not None:
            self.callback(self.done, self.total)

    def advance(self) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.update(1)
        self._emit()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def dry_run(
    spec: Spec | Mapping[str, Any],
    proxy_frame: Evidence | pd.DataFrame | str | os.PathLike[str],
    configurations: Iterable[Configuration | Mapping[str, Any]] | None = None,
    repetitions: int = 5,
    seed: int = 0,
    executor: Executor | None = None,
    cache: DryRunCache | str | os.PathLike[str] | bool | None = None,
    progress: bool | ProgressCallback | None = None,
    *,
    noise: NoiseMode = "opendp",
    n: int | None = None,
    weights: np.ndarray | None = None,
) -> DryRunResult:
    """Run every configuration ``repetitions`` times on the proxy and collect the outcomes.

    ``proxy_frame`` is the evidence, or a raw proxy frame or CSV path, cleaned as the run
    cleans its data. ``executor`` defaults to ``LocalExecutor(workers=2)``. ``noise="seeded"``
    replaces OpenDP's unseedable noise by seeded numpy noise (public simulation only) so records are
    reproducible across executors and machines. ``progress``: None/True for a progress bar,
    False for none, or a callback ``(done, total)``. ``n``: rehearse at that many records,
    each task on its own resample of the cleaned proxy (:mod:`workbench.dryrun.size`; for a
    range of sizes use :func:`dry_run_at`); None rehearses on the proxy as it is.
    ``weights`` (one per row of the cleaned proxy, a scenario's; default the evidence's
    anchor): each task draws its own population of n rows (default the proxy's size) with
    expected counts ∝ weights (:mod:`workbench.evidence.population`).
    """
    if noise not in NOISE_MODES:
        raise ValueError(f"noise must be one of {', '.join(NOISE_MODES)}")
    if isinstance(repetitions, bool) or not isinstance(repetitions, int) or repetitions < 1:
        raise ValueError("repetitions must be an integer >= 1")
    spec = spec if isinstance(spec, Spec) else build_spec(spec)
    configs = _configurations(spec, configurations)
    n = check_n(n)  # type: ignore[assignment]
    if isinstance(n, tuple):
        raise ValueError("dry_run takes one size n; use dry_run_at for a range (low, high)")
    evidence = as_evidence(spec, proxy_frame)
    frame = evidence.frame
    weights = evidence.anchor if weights is None else weights
    if weights is not None:
        weights = np.asarray(weights, dtype=float)
        if weights.shape != (len(frame),) or not np.all(np.isfinite(weights)) \
                or np.any(weights < 0) or weights.sum() <= 0:
            raise ValueError("weights: one finite weight ≥ 0 per row of the cleaned proxy, "
                             "not all 0")
        n = len(frame) if n is None else n
    check_proxy_weights(spec, frame, n)
    document = spec.to_document()
    payload = Payload(_payload_id(document, frame, n, weights), document, frame, n, weights)
    tasks = plan_tasks(payload.payload_id, [c.to_dict() for c in configs],
                       [c.key for c in configs], repetitions, seed, noise)
    store = _cache(cache)
    known = store.load(payload.payload_id) if store else {}
    records: list[TaskRecord] = []
    todo = []
    for task in tasks:
        hit = known.get(record_key(payload.payload_id, task))
        if hit is not None:
            records.append(hit)
        else:
            todo.append(task)
    by_id = {(t.config_key, t.rep): t for t in todo}
    start = time.perf_counter()
    bar = _Progress(progress, len(tasks), len(records))
    try:
        for record in (executor or LocalExecutor()).run(payload, todo) if todo else ():
            if store is not None:
                task = by_id[(record.config_key, record.rep)]
                store.append(payload.payload_id, record_key(payload.payload_id, task), record)
            records.append(record)
            bar.advance()
    finally:
        bar.close()
    return DryRunResult(
        criteria=tuple(c.id for c in spec.criteria),
        configurations=tuple(configs),
        records=sort_records(records, configs),
        repetitions=repetitions,
        seed=seed,
        noise=noise,
        computed=len(todo),
        cached=len(tasks) - len(todo),
        seconds=time.perf_counter() - start,
        n=n if n is not None else len(frame),
    )


def _payload_id(document: Mapping[str, Any], frame: pd.DataFrame, n: int | None = None,
                weights: np.ndarray | None = None) -> str:
    """Identity of what a task's outcome depends on besides its own fields."""
    from workbench import __version__

    parts = [iteration_digest(document), frame_fingerprint(frame), __version__]
    if n is not None:
        parts.append(f"n={n}")
    if weights is not None:
        parts.append("weights=" + hashlib.sha256(weights.tobytes()).hexdigest())
    text = "\x1f".join(parts)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
