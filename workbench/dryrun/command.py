"""``workbench dryrun``: the dry run from the command line (table, forecast, narrowed spec).

Only argument handling and printing live here; the choices it makes (configurations,
executor, files) are the public functions of :mod:`workbench.dryrun` that the widgets call.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.dryrun.cache import DryRunCache
from workbench.dryrun.executors import make_executor
from workbench.dryrun.files import write_records, write_result
from workbench.dryrun.result import DryRunResult
from workbench.dryrun.run import dry_run, select_configurations
from workbench.spec import Spec, load_spec, save_spec


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
        if getattr(args, "survey_plots", None):
            from workbench.dryrun.survey import print_survey_report, survey_dry_run

            print_survey_report(survey_dry_run(
                spec, args.proxy, args.survey_plots, fraction=args.survey_fraction,
                reps=10 * args.repetitions, seed=args.seed))
            return 0
        configs = select_configurations(spec, args.configs, args.limit, args.seed)
        cache = None if args.no_cache else DryRunCache(args.cache)
        result = dry_run(spec, args.proxy, configs, repetitions=args.repetitions,
                         seed=args.seed, executor=make_executor(args.workers, args.scheduler),
                         cache=cache, progress=not args.quiet, noise=args.noise)
        if args.records:
            write_records(result.records, args.records)
        if args.write_result:
            write_result(result, spec, args.write_result, data=Path(args.proxy).name)
        _report(result, spec, args)
        if args.write_narrowed:
            document = result.narrowed_document(spec, args.min_pass,
                                                proxy=Path(args.proxy).name)
            digest = save_spec(document, args.write_narrowed)
            print(f"narrowed spec written, frozen: {args.write_narrowed} (sha256 {digest})")
    except (ValueError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
