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
from workbench.dryrun.floors import floors_at, floors_words
from workbench.dryrun.run import select_configurations
from workbench.dryrun.size import DEFAULT_DRAWS, SizeSpec, spec_n
from workbench.dryrun.sized import SizedDryRun, dry_run_at
from workbench.spec import Configuration, Spec, load_spec, save_spec


def _draws(args: argparse.Namespace) -> int:
    """``--floor-draws``, or the default."""
    return DEFAULT_DRAWS if args.floor_draws is None else int(args.floor_draws)


def print_floors(spec: Spec, proxy: str, configs: list[Configuration], n: SizeSpec,
                 draws: int, seed: int) -> None:
    """The feasibility floors beside each threshold, per size and (transforms, min_count)."""
    if draws:
        print(floors_words(floors_at(spec, proxy, configs, n, draws=draws, seed=seed)))


def _report(sized: SizedDryRun, spec: Spec, args: argparse.Namespace) -> None:
    """Print the sorted table and the private-selection forecast."""
    result = sized.result
    n = len(result.configurations)
    sizes = ", ".join(f"{k:,}" for k in sized.sizes)
    print(f"dry run: {n} configuration(s) × {result.repetitions} repetition(s) at n = {sizes}"
          f", noise {result.noise}; {sum(r.computed for r in sized.results.values())} computed,"
          f" {sum(r.cached for r in sized.results.values())} from cache, "
          f"{sum(r.seconds for r in sized.results.values()):.1f} s")
    if len(sized.sizes) > 1:
        print("P(all criteria pass) at both ends of n (the low end counts):")
        print(sized.pass_table().head(args.top).to_string(float_format=lambda v: f"{v:.2f}"))
        print(f"at the low end, n = {sized.sizes[0]:,}:")
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
        args.floor_draws = _draws(args)
        if args.floor_draws < 0 or args.floor_draws == 1:
            raise ValueError("--floor-draws must be 0 (no floors) or at least 2")
        args.n = spec_n(spec, args.n)  # --n, else the spec's schema.expected_n
        sized = dry_run_at(spec, args.proxy, configs, args.n, repetitions=args.repetitions,
                           seed=args.seed, executor=make_executor(args.workers, args.scheduler),
                           cache=cache, progress=not args.quiet, noise=args.noise)
        result = sized.result
        if args.records:
            write_records(result.records, args.records)
        if args.write_result:
            write_result(result, spec, args.write_result, data=Path(args.proxy).name)
        _report(sized, spec, args)
        print_floors(spec, args.proxy, configs, args.n, args.floor_draws, args.seed)
        if args.write_narrowed:
            document = result.narrowed_document(spec, args.min_pass,
                                                proxy=Path(args.proxy).name)
            digest = save_spec(document, args.write_narrowed)
            print(f"narrowed spec written, frozen: {args.write_narrowed} (sha256 {digest})")
    except (ValueError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def describe_floors(args: argparse.Namespace, spec: Spec) -> int:
    """``describe SPEC --proxy P [--n N]``: the floors beside each threshold; 2 on bad input."""
    try:
        args.floor_draws = _draws(args)
        if args.floor_draws < 2:
            raise ValueError("--floor-draws must be at least 2 with --proxy")
        configs = select_configurations(spec)
        print_floors(spec, args.proxy, configs, spec_n(spec, args.n), args.floor_draws, 0)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
