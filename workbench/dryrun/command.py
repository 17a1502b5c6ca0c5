"""``workbench dryrun``: the dry run from the command line (table, forecast, narrowed spec)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from workbench.dryrun.cache import DryRunCache
from workbench.dryrun.executors import DaskExecutor, Executor, InlineExecutor, LocalExecutor
from workbench.dryrun.result import DryRunResult
from workbench.dryrun.run import dry_run, pick_configurations
from workbench.spec import Configuration, Spec, load_spec, save_spec
from workbench.spec.space import iter_configurations


def select_configurations(spec: Spec, which: str | None, limit: int | None,
                          seed: int) -> list[Configuration]:
    """The configurations the options select (shared by the CLI and the Feasibility tab)."""
    narrowed = spec.selection.configurations
    if which == "narrowed" and narrowed is None:
        raise ValueError("--configs narrowed: the spec has no selection.configurations")
    use_narrowed = which == "narrowed" or (which is None and narrowed is not None)
    configs = list(narrowed) if use_narrowed and narrowed else list(iter_configurations(spec))
    return pick_configurations(configs, limit, seed)


def make_executor(workers: int, scheduler: str | None = None) -> Executor:
    """Dask when a scheduler address is given, else local processes (0: this process)."""
    if scheduler:
        return DaskExecutor(scheduler)
    if workers < 0:
        raise ValueError("--workers must be >= 0")
    return InlineExecutor() if workers == 0 else LocalExecutor(workers)


def _executor(args: argparse.Namespace) -> Executor:
    return make_executor(args.workers, args.scheduler)


def _report(result: DryRunResult, spec: Spec, args: argparse.Namespace) -> None:
    """Print the sorted table and the private-selection forecast."""
    n = len(result.configurations)
    print(f"dry run: {n} configuration(s) × {result.repetitions} repetition(s), noise "
          f"{result.noise}; {result.computed} computed, {result.cached} from cache, "
          f"{result.seconds:.1f} s")
    print(f"sorted by P(all criteria pass) (top {min(args.top, n)} of {n}):")
    print(result.summary(rows=args.top))
    sel = spec.selection
    min_pass = args.min_pass if args.min_pass is not None else 0.0
    kept = result.narrow(min_pass)
    if args.min_pass is not None:
        print(f"narrowed at min pass {min_pass:g}: {len(kept)} of {n} configuration(s)")
    if kept:
        print("forecast: " + result.selection_forecast(sel.gamma, sel.max_iterations,
                                                       min_pass).summary())
    else:
        print("forecast: no configuration left; private selection would never succeed")


def run_command(args: argparse.Namespace) -> int:
    """Run the dry run the options describe; 0 on success, 2 on a usage problem."""
    if args.write_narrowed and args.min_pass is None:
        print("error: --write-narrowed needs --min-pass", file=sys.stderr)
        return 2
    try:
        spec = load_spec(args.spec)
        configs = select_configurations(spec, args.configs, args.limit, args.seed)
        cache = None if args.no_cache else DryRunCache(args.cache)
        result = dry_run(spec, args.proxy, configs, repetitions=args.repetitions,
                         seed=args.seed, executor=_executor(args), cache=cache,
                         progress=not args.quiet, noise=args.noise)
        if args.records:
            lines = (json.dumps(r.to_dict(), allow_nan=False) for r in result.records)
            Path(args.records).write_text("\n".join(lines) + "\n", encoding="utf-8")
        _report(result, spec, args)
        if args.write_narrowed:
            document = result.narrowed_document(spec, args.min_pass)
            digest = save_spec(document, args.write_narrowed)
            print(f"narrowed spec written, frozen: {args.write_narrowed} (sha256 {digest})")
    except (ValueError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
