"""Missingness profile of PUBLIC data: rates, co-missing patterns, complete rows per marginal.

What ``workbench profile`` and the co-design missingness panel show (exact figures: public
data only). The complete-row count behind each workload marginal is what a partial-observation
generator (``missing_strategy: partial``) reads for it, beside the public lower bound the
sensitivities assume (``Spec.complete_rows_lower_bound``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from workbench.generators.workload import derive_workload

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from workbench.specification.model import Spec


@dataclass(frozen=True)
class MissingProfile:
    """Missing rates, patterns and complete rows per marginal of one public table."""

    n_rows: int
    rates: dict[str, float]
    policies: dict[str, str]
    #: (columns missing together, rows with exactly that pattern), most frequent first
    patterns: tuple[tuple[tuple[str, ...], int], ...]
    #: (marginal's columns, rows complete on them, public lower bound from the spec)
    marginals: tuple[tuple[tuple[str, ...], int, int], ...]

    @property
    def any_missing(self) -> bool:
        """Whether any column has a missing value or may have one."""
        return any(self.rates.values()) or any(p != "forbid" for p in self.policies.values())


def missing_profile(frame: pd.DataFrame, spec: Spec, top: int = 12) -> MissingProfile:
    """Profile a PUBLIC frame (spec columns, as ``read_raw`` gives them)."""
    names = list(spec.column_names)
    gone = frame[names].isna()
    rates = {c: float(gone[c].mean()) if len(frame) else 0.0 for c in names}
    counts = Counter(tuple(c for c, m in zip(names, row, strict=True) if m)
                     for row in gone.to_numpy(dtype=bool))
    patterns = tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top])
    workload = derive_workload(spec)
    cliques = [(c,) for c in names] + [i.clique for i in workload.items]
    n = len(frame)
    marginals = tuple(
        (clique, int((~gone[list(clique)].any(axis=1)).sum()),
         spec.complete_rows_lower_bound(n, clique))
        for clique in cliques)
    return MissingProfile(n, rates, {c.name: c.missing for c in spec.columns}, patterns,
                          marginals)


def format_missing_profile(prof: MissingProfile, rows: int = 30) -> str:
    """Rates, patterns and complete rows per marginal as text."""
    n = max(prof.n_rows, 1)
    lines = [f"Missing values ({prof.n_rows} rows of PUBLIC data, exact)",
             f"{'column':<18}{'policy':>10}{'missing':>10}"]
    lines += [f"{c:<18}{prof.policies[c]:>10}{r:>10.3%}" for c, r in prof.rates.items()]
    lines += ["", "missingness patterns (columns missing together):"]
    for cols, count in prof.patterns:
        lines.append(f"  {count:>8} ({count / n:7.3%})  {', '.join(cols) or '(complete)'}")
    lines += ["", "complete rows behind each workload marginal (and the spec's lower bound):"]
    for clique, complete, bound in prof.marginals[:rows]:
        lines.append(f"  {' × '.join(clique):<40}{complete:>9} ({complete / n:7.3%})"
                     f"  bound {bound}")
    if len(prof.marginals) > rows:
        lines.append(f"  … {len(prof.marginals) - rows} more")
    return "\n".join(lines)


def upset_figure(prof: MissingProfile) -> Figure:
    """An UpSet-style plot: pattern sizes (bars) over a dot matrix of the columns in each."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    patterns = [p for p in prof.patterns if p[0]] or list(prof.patterns)
    columns = [c for c in prof.rates if any(c in p for p, _ in patterns)] or list(prof.rates)
    fig = Figure(figsize=(max(4, 0.6 * len(patterns) + 2), 2 + 0.35 * len(columns)))
    top, bottom = fig.subplots(2, 1, sharex=True,
                               gridspec_kw={"height_ratios": [2, max(1, 0.35 * len(columns))]})
    x = np.arange(len(patterns))
    top.bar(x, [count for _, count in patterns], color="#4a6fa5")
    top.set_ylabel("rows")
    top.set_title("missingness patterns")
    for j, column in enumerate(columns):
        on = [column in p for p, _ in patterns]
        bottom.scatter(x, [j] * len(x), c=["#222" if o else "#ddd" for o in on], s=40)
    bottom.set_yticks(range(len(columns)), columns)
    bottom.set_xticks(x, [""] * len(x))
    bottom.invert_yaxis()
    return fig
