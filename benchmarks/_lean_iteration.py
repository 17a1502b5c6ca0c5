"""``engine_iteration.py --lean``: the lean design's iteration at 166k, old fit vs new fit."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from workbench.criteria import release_once
from workbench.engine import run_iteration
from workbench.evidence.prepare import prepare_proxy
from workbench.generators import mbi_model
from workbench.privacy import PrivacyContext
from workbench.specification import Spec
from workbench.trial import bind
from workbench.validation import load_spec

REPO = Path(__file__).resolve().parents[1]
LEAN = REPO / "examples" / "israel_births_2014_lean.json"
PROXY = REPO / "data_public" / "proxy_sample_166k.csv.gz"


def old_estimate(domain, measured, total, iters, warm=None):
    """The fit before issue 15: mbi's own mirror descent, ``iters`` steps, compiled per call."""
    import jax.numpy as jnp
    import mbi
    from mbi import estimation, marginal_loss

    loss = marginal_loss.from_linear_measurements(
        [mbi.LinearMeasurement(jnp.asarray(m.counts.ravel(), dtype=float), m.clique, m.sigma)
         for m in measured])
    loss = marginal_loss.MarginalLossFn(
        loss.cliques, loss.loss_fn, mbi_model.lipschitz(domain, measured, loss.cliques))
    potentials = warm.potentials.expand(loss.cliques) if warm is not None else None
    return estimation.mirror_descent(mbi.Domain(domain.names, domain.sizes), loss,
                                     known_total=float(total), iters=iters,
                                     potentials=potentials)


@contextmanager
def fit_with(estimate: Callable | None) -> Iterator[None]:
    """Run the block with ``mbi_model.estimate`` replaced (None: the current one)."""
    current = mbi_model.estimate
    if estimate is not None:
        mbi_model.estimate = estimate
    try:
        yield
    finally:
        mbi_model.estimate = current


def run(spec: Spec, frame, iterations: int, label: str
        ) -> tuple[list[float], list[float], int]:
    """``iterations`` iterations cycling through the spec's configurations; (wall times, CPU
    times of this process, passes): on a shared machine the CPU time says what wall time an
    idle machine would show."""
    configs = list(spec.configurations())
    times, cpu, passes = [], [], 0
    for i in range(iterations):
        config = configs[i % len(configs)]
        codes = spec.table_codec(config).encode(frame)
        ctx = PrivacyContext.simulation(seed=1000 + i)
        once = release_once(spec, config, codes, ctx) if spec.epsilon_once else None
        t, c = time.perf_counter(), time.process_time()
        cand = run_iteration(bind(spec, config), frame, ctx, once_results=once, real_codes=codes)
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        passes += cand.passed
        failed = [r.id for r in cand.results if not r.passed] or [cand.failure or ""]
        print(f"  {label} iteration {i + 1:>2}: {times[-1]:6.2f} s wall, {cpu[-1]:6.2f} s CPU, "
              f"{'pass' if cand.passed else 'fail: ' + ', '.join(failed)}", flush=True)
    return times, cpu, passes


def lean_iterations(iterations: int, new_spec: Path | None) -> None:
    """Print the iteration time at 166k and the pass rates, old fit vs new fit."""
    spec = load_spec(LEAN)
    frame = prepare_proxy(spec, str(PROXY))
    print(f"lean design on {PROXY.name}: {len(frame):,} records; {iterations} iterations each")
    rows = []
    with fit_with(old_estimate):
        rows.append(("lean, old fit (mbi, fixed steps)", *run(spec, frame, iterations, "old")))
    rows.append(("lean, new fit (mbi_descent)", *run(spec, frame, iterations, "new")))
    if new_spec is not None:
        other = load_spec(new_spec)
        rows.append((f"{new_spec.name}, new fit", *run(other, frame, iterations, "new spec")))
    print(f"\none iteration at n = {len(frame):,} (target ≤ 10 s) and pass rate (all criteria):")
    for label, times, cpu, passes in rows:
        print(f"  {label:<36} median {statistics.median(times):6.2f} s wall, "
              f"{statistics.median(cpu):6.2f} s CPU (first {times[0]:6.2f} s wall)   "
              f"pass {passes}/{len(times)}")
