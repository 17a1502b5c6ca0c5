"""Public dry runs: rehearse the enclave's iteration on the proxy to rank and narrow configurations.

Hod & Canetti §4.10: each configuration is tried several times on public proxy data, and only
those passing every criterion often enough go into the frozen spec. :func:`dry_run` runs the
same ``run_iteration`` the confidential run uses, in parallel (:class:`LocalExecutor`, or
:class:`DaskExecutor` on a cluster), with a cache; :class:`DryRunResult` ranks configurations,
draws the heat map, narrows the space and forecasts private selection. Dry-run files (records
and the pass-rate summary) are written and read only in :mod:`workbench.dryrun.files`.
"""

from workbench.dryrun.cache import DryRunCache, iteration_digest
from workbench.dryrun.executors import DaskExecutor, InlineExecutor, LocalExecutor, make_executor
from workbench.dryrun.files import (
    PassRates,
    read_pass_rates,
    read_records,
    write_records,
    write_result,
)
from workbench.dryrun.forecast import forecast, wilson_interval
from workbench.dryrun.noise import noise_source
from workbench.dryrun.result import ALL, DryRunResult
from workbench.dryrun.run import dry_run, pick_configurations, select_configurations
from workbench.dryrun.size import low_end, parse_n, spec_n
from workbench.dryrun.sized import dry_run_at
from workbench.dryrun.tasks import CriterionOutcome, TaskRecord, task_seed

__all__ = [
    "ALL",
    "CriterionOutcome",
    "DaskExecutor",
    "DryRunCache",
    "DryRunResult",
    "InlineExecutor",
    "LocalExecutor",
    "PassRates",
    "TaskRecord",
    "dry_run",
    "dry_run_at",
    "forecast",
    "iteration_digest",
    "low_end",
    "make_executor",
    "noise_source",
    "parse_n",
    "pick_configurations",
    "read_pass_rates",
    "read_records",
    "select_configurations",
    "spec_n",
    "task_seed",
    "wilson_interval",
    "write_records",
    "write_result",
]
