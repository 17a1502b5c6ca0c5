"""One seeded iteration of any generator scored on a design's criteria, DP and exact.

Shared by ``public_measurements.py`` and ``peers.py`` so that the workbench's own generator and
every baseline go through the same post-processing (synthetic rules, min_count projection) and
the same criteria: released with DP (seeded noise, the once-statistics afresh each run, as a
new run would) and exact (``workbench.criteria.exact_errors``, public stand-ins only), each
exact value judged against the effective threshold its DP release used.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from workbench.criteria import evaluate_all, exact_errors, kinds, release_once
from workbench.postprocess import project_min_count, sample_valid_for
from workbench.privacy import PrivacyContext
from workbench.privacy.noise import SeededNoise
from workbench.trial import Trial


@dataclass
class RunRow:
    """One seeded iteration of one generator on one stand-in."""

    dp_pass: bool
    exact_pass: bool
    exact: dict[str, float]
    effective: dict[str, float]
    seconds: float
    fit_seconds: float
    dp_values: dict[str, float]
    exact_passed: dict[str, bool]
    dp_passed: dict[str, bool]
    #: the ε the generator ran at under its own neighbour relation (an OpenDP peer's
    #: ``epsilon_add_remove_``, the ε it gave OpenDP; else the replace-one ε it was given)
    epsilon_run: float


def score_iteration(trial: Trial, make: Callable[[], object], codes: np.ndarray,
                    epsilon: float, seed: int) -> RunRow:
    """Fit ``make()`` at replace-one ``epsilon``, post-process it as the engine does and
    evaluate the trial's criteria on it, with DP decisions and on exact values."""
    spec, config = trial.spec, trial.configuration
    ctx = PrivacyContext.simulation(seed=seed, noise=SeededNoise(seed))
    once = release_once(spec, config, codes, ctx)
    start = time.perf_counter()
    generator = make()
    generator.fit(codes, trial.domain, epsilon, ctx)
    fit_seconds = time.perf_counter() - start
    synth = sample_valid_for(spec, trial.table, generator, codes.shape[0], ctx.rng)
    synth = project_min_count(synth, config.min_count, ctx.rng)
    results = evaluate_all(spec, config, codes, synth, ctx, once_results=once, table=trial.table)
    seconds = time.perf_counter() - start
    exact = exact_errors(spec, config, codes, synth, ctx, table=trial.table)
    effective = {r.id: float(r.effective_threshold) for r in results}
    exact_passed = {r.id: bool(kinds.get(r.kind).passes(exact[r.id], effective[r.id]))
                    for r in results}
    return RunRow(dp_pass=all(r.passed for r in results),
                  exact_pass=all(exact_passed.values()), exact=exact, effective=effective,
                  seconds=seconds, fit_seconds=fit_seconds,
                  dp_values={r.id: float(r.value) for r in results},
                  exact_passed=exact_passed, dp_passed={r.id: bool(r.passed) for r in results},
                  epsilon_run=float(getattr(generator, "epsilon_add_remove_", epsilon)))
