"""Issue 36: one worker pool per design (and per dry run with several scenarios).

An executor opened as a context manager keeps its workers across calls, so a design's fits,
pricing draws and rehearsals share them (warm JAX caches); the seeded results are the same in
this process, on one pool reused and on fresh pools; an error or Ctrl-C leaves no worker
process behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import psutil
import pytest

from workbench.design.jobs import Shared, fit_candidate, run_jobs
from workbench.design.variants import variant_document
from workbench.dryrun import InlineExecutor, LocalExecutor, dry_run
from workbench.evidence.sampler import sample_proxy
from workbench.trial import bind
from workbench.validation import build_spec

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
from test_design_keeps_its_word import issue_draft  # noqa: E402


def _pid(_shared: object, item: float) -> int:
    """A pool job: this worker's pid (after a pause, so both workers take a job)."""
    time.sleep(item)
    return os.getpid()


def _boom(_shared: object, item: int) -> int:
    """A pool job that fails on item 1 and keeps the others busy."""
    if item == 1:
        raise ValueError("planted failure in a task")
    time.sleep(5)
    return item


def _gone(pids: list[int], timeout: float = 20.0) -> bool:
    """Every pid has exited (and been reaped) within ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        alive = [p for p in pids if psutil.pid_exists(p)
                 and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
        if not alive:
            return True
        time.sleep(0.2)
    return False


@pytest.fixture(scope="module")
def spec():
    """The issue's draft (workload family: its fit compiles JAX in each worker), small."""
    return build_spec(issue_draft(pair_threshold=0.05))


@pytest.fixture(scope="module")
def proxy():
    return sample_proxy(4000, seed=3)


def _records(result) -> list[dict]:
    return [r.outcome() for r in result.records]


@pytest.mark.slow
def test_one_pool_reused_gives_the_records_of_fresh_pools_and_of_this_process(spec, proxy
                                                                               ) -> None:
    """Two dry runs (different seeds: two payloads) on one opened pool: the same workers run
    both, and the records equal those of a fresh pool per dry run and of this process."""
    args = dict(repetitions=2, progress=False, noise="seeded", n=1500)
    pool = LocalExecutor(2)
    with pool:
        reused = [dry_run(spec, proxy, executor=pool, seed=s, **args) for s in (1, 2)]
        first_pids = pool.worker_pids()
        assert len(first_pids) == 2
        dry_run(spec, proxy, executor=pool, seed=3, **args)
        assert pool.worker_pids() == first_pids  # the same processes, kept warm
    assert pool.worker_pids() == [] and _gone(first_pids)
    fresh = [dry_run(spec, proxy, executor=LocalExecutor(2), seed=s, **args) for s in (1, 2)]
    inline = [dry_run(spec, proxy, executor=InlineExecutor(), seed=s, **args) for s in (1, 2)]
    for a, b, c in zip(reused, fresh, inline, strict=True):
        assert len(a.records) == 2
        assert _records(a) == _records(b) == _records(c)
    assert _records(reused[0]) != _records(reused[1])


@pytest.mark.slow
def test_parallel_candidate_fits_are_those_of_this_process(spec, proxy) -> None:
    """The design's candidate fits as jobs: the same candidates (codes and exact errors) in
    this process, on one pool reused for two batches and on a fresh pool."""
    config = next(spec.configurations())
    frame = proxy.head(1500)
    real = bind(spec, config).encode(frame)
    docs = [variant_document(spec, g, caps=False) for g in (1.0, 2.0)]
    items = [(doc, seed) for doc in docs for seed in (0, 7919)]
    shared = Shared(None, config.to_dict(), frame, real)

    def facts(executor) -> list[tuple[bytes, dict]]:
        made = run_jobs(executor, fit_candidate, shared, items)
        return [(np.ascontiguousarray(f.synth).tobytes(), f.exact) for f in made]

    here = facts(InlineExecutor())
    pool = LocalExecutor(2)
    with pool:
        once, again = facts(pool), facts(pool)
    assert here == once == again == facts(LocalExecutor(2))
    assert here[0] != here[1]  # the seeds matter


@pytest.mark.slow
def test_an_exception_inside_a_task_leaves_no_child() -> None:
    """A task that raises: its error reaches the caller, and the pool's workers (the opened
    one's, and a fresh pool's) are terminated before it does."""
    pool = LocalExecutor(2)
    with pytest.raises(ValueError, match="planted failure"), pool:
        pids = sorted({pid for _i, pid in pool.map(_pid, None, [0.5, 0.5])})
        assert len(pids) == 2
        list(pool.map(_boom, None, [0, 1, 2, 3]))
    assert pool.worker_pids() == [] and _gone(pids)
    fresh = LocalExecutor(2)
    seen: list[int] = []
    with pytest.raises(ValueError, match="planted failure"):
        for _i, pid in fresh.map(_pid, None, [0.5, 0.5]):
            seen.append(pid)
        # unopened: each call has its own pool, already ended cleanly
        assert fresh.worker_pids() == [] and _gone(seen)
        list(fresh.map(_boom, None, [0, 1, 2, 3]))
    assert fresh.worker_pids() == []


SCRIPT = """
import json, os, sys, time
from workbench.dryrun import LocalExecutor

def pid(_shared, item):
    time.sleep(item)
    return os.getpid()

def slow(_shared, item):
    time.sleep(120)

if __name__ == "__main__":
    pool = LocalExecutor(2)
    try:
        with pool:
            pids = sorted({p for _i, p in pool.map(pid, None, [0.5, 0.5])})
            print(json.dumps(pids), flush=True)
            list(pool.map(slow, None, [0, 1, 2]))
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(130)
"""


@pytest.mark.slow
def test_ctrl_c_ends_the_pool_without_orphans(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the whole foreground process group, as a terminal sends it) during
    long tasks: the parent stops at once, and no worker outlives it."""
    script = tmp_path / "pool_script.py"
    script.write_text(textwrap.dedent(SCRIPT))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                             env=env, start_new_session=True)
    try:
        pids = json.loads(child.stdout.readline())
        assert len(pids) == 2
        time.sleep(1.0)  # the slow tasks are running
        os.killpg(child.pid, signal.SIGINT)
        out, _ = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 130 and "interrupted" in out
    assert _gone(pids)
