"""Benchmark: how long the co-design app takes to refresh every readout after one edit.

Target (issue 6): an edit of a threshold refreshes all readouts in ≤ 0.5 s with the 166k-row
public proxy. The time covers the whole chain a browser edit triggers: the widget's observer,
the session's re-validation (build_spec), and every editor's refresh (criteria readouts, budget
total and plots, schema, constraints, faithfulness, export summary, status bar).
Run: ``MPLBACKEND=Agg python benchmarks/widgets_refresh.py``.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")

REPO = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 0.5


def _timed(action: Callable[[], None]) -> float:
    """Wall time of one action, in seconds."""
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _series(
    name: str, widget: object, values: list[float], repeats: int, *, target: bool = True
) -> list[float]:
    """Set ``widget.value`` to each value in turn, ``repeats`` times; one timing per edit."""
    times = []
    for _ in range(repeats):
        for v in values:
            times.append(_timed(lambda v=v: setattr(widget, "value", v)))
    median, worst = statistics.median(times), max(times)
    verdict = "no target" if not target else ("ok" if worst <= TARGET_SECONDS else "OVER TARGET")
    print(f"{name:<58} median {median:.3f} s   max {worst:.3f} s   ({len(times)} edits, {verdict})")
    return times


def main(repeats: int = 5) -> None:
    from workbench.widgets import CoDesignApp, Session

    t0 = time.perf_counter()
    session = Session.from_files(REPO / "examples" / "israel_births_2014.json",
                                 REPO / "data_public" / "proxy_sample_166k.csv.gz")
    t1 = time.perf_counter()
    app = CoDesignApp(session)
    t2 = time.perf_counter()
    n = len(app.lab.cleaned(session.spec))
    print(f"proxy: {len(session.proxy):,} raw rows, {n:,} after cleaning")
    print(f"load spec + proxy: {t1 - t0:.2f} s; build app with first sample and readouts: "
          f"{t2 - t1:.2f} s")
    criteria = app.criteria
    threshold = _series("threshold edit (regression_mae: Δ unchanged)",
                        criteria.row("regression_mae").threshold, [4.0, 6.0, 5.0], repeats)
    slack = _series("threshold edit (marginals: resize slack moves Δ of 3 means)",
                    criteria.row("marginals").threshold, [0.02, 0.015, 0.01], repeats)
    eps = _series("ε edit (relative_1way: σ, T′, ε_total; Budget tab hidden)",
                  criteria.row("relative_1way").epsilon, [0.2, 0.25, 0.3], repeats)
    invalid = _series("invalid threshold edit, then a valid one (error shown)",
                      criteria.row("mean_parity").threshold, [-1.0, 0.3], repeats)
    app.select("Budget")
    shown = _series("ε edit with the Budget tab shown (bar and σ plot redrawn)",
                    criteria.row("relative_1way").epsilon, [0.2, 0.25, 0.3], repeats)
    slack_shown = _series("marginals threshold edit with the Budget tab shown",
                          criteria.row("marginals").threshold, [0.02, 0.015, 0.01], repeats)
    gen = _series("ε_gen slider (refits the quick sample: not a threshold edit)",
                  app.budget.eps_generator, [3.5, 4.0], 1, target=False)
    edits = threshold + slack + slack_shown
    worst = max(edits)
    print(f"threshold edits, worst of {len(edits)}: {worst:.3f} s "
          f"(target ≤ {TARGET_SECONDS} s: {'PASS' if worst <= TARGET_SECONDS else 'FAIL'})")
    del eps, invalid, gen, shown


if __name__ == "__main__":
    main()
