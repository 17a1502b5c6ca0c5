"""``dry_run_at``: the dry run at the registry's expected size, one number or a range.

The public entry point the CLI and the widgets share: with a range (low, high) it rehearses at
both ends and reports both; the low end is the one that counts (forecasts, narrowing).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from workbench.dryrun.result import DryRunResult
from workbench.dryrun.run import dry_run
from workbench.dryrun.size import SizeSpec, check_n, size_ends
from workbench.specification import Configuration, Spec
from workbench.validation import build_spec


@dataclass(frozen=True)
class SizedDryRun:
    """Dry-run results per rehearsed size; ``result`` is the one that counts (the low end)."""

    n: SizeSpec
    results: Mapping[int, DryRunResult]

    @property
    def sizes(self) -> tuple[int, ...]:
        """The rehearsed sizes, smallest first."""
        return tuple(sorted(self.results))

    @property
    def result(self) -> DryRunResult:
        """The result at the low end of n: the one forecasts and narrowing use."""
        return self.results[self.sizes[0]]

    def pass_table(self) -> pd.DataFrame:
        """P(all criteria pass) per configuration (rows) and rehearsed size (columns)."""
        from workbench.dryrun.result import ALL

        cols = {f"n={k:,}": r.table[ALL] for k, r in sorted(self.results.items())}
        return pd.DataFrame(cols).loc[self.result.table.index]


def dry_run_at(
    spec: Spec | Mapping[str, Any],
    proxy: pd.DataFrame | str | os.PathLike[str],
    configurations: Iterable[Configuration | Mapping[str, Any]] | None = None,
    n: SizeSpec = None,
    **options: Any,
) -> SizedDryRun:
    """Dry runs at ``n`` (None: the cleaned proxy's own size; a number; or (low, high), both
    ends rehearsed). ``options`` are :func:`workbench.dryrun.dry_run`'s (repetitions, seed,
    executor, cache, progress, noise)."""
    spec = spec if isinstance(spec, Spec) else build_spec(spec)
    if n is None and spec.expected_n is not None:  # schema.expected_n, both ends
        n = spec.expected_n.size
    n = check_n(n)
    configs = list(configurations) if configurations is not None else None
    ends: tuple[int | None, ...] = size_ends(n) or (None,)
    results: dict[int, DryRunResult] = {}
    for size in ends:
        result = dry_run(spec, proxy, configs, n=size, **options)
        results[int(result.n or 0)] = result
    return SizedDryRun(n, results)
