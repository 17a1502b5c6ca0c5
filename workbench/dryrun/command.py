"""``workbench dryrun``: the dry run from the command line (table, forecast, narrowed spec).

Only argument handling and printing live here; the choices it makes (configurations,
executor, files) are the public functions of :mod:`workbench.dryrun` that the widgets call.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from workbench.dryrun.cache import DryRunCache
from workbench.dryrun.excess import excess_words
from workbench.dryrun.executors import make_executor
from workbench.dryrun.files import write_records, write_result
from workbench.dryrun.floors import FloorTable, floors_at, floors_words
from workbench.dryrun.reversal import reversal_check
from workbench.dryrun.run import select_configurations
from workbench.dryrun.size import DEFAULT_DRAWS, SizeSpec, spec_n
from workbench.dryrun.sized import SizedDryRun, dry_run_at
from workbench.evidence.core import Evidence
from workbench.evidence.prepare import as_evidence
from workbench.evidence.published import read_published_tables
from workbench.generators.model_size_advice import check_model_size
from workbench.specification import Configuration, Spec
from workbench.validation import load_spec, save_spec


def _draws(args: argparse.Namespace) -> int:
    """``--floor-draws``, or the default."""
    return DEFAULT_DRAWS if args.floor_draws is None else int(args.floor_draws)


def print_floors(spec: Spec, proxy: Evidence | str, configs: list[Configuration], n: SizeSpec,
                 draws: int, seed: int) -> dict[int, list[FloorTable]]:
    """The feasibility floors beside each threshold, per size and (transforms, min_count), on
    the evidence's anchor (the proxy raked to published tables, when given)."""
    if not draws:
        return {}
    tables = floors_at(spec, proxy, configs, n, draws=draws, seed=seed)
    print(floors_words(tables))
    return tables


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


def _shown(proxy: str) -> str:
    """The proxy as a result file names it: a file's name, a URL without its password."""
    from workbench.sources import is_url, public_name

    return public_name(proxy) if is_url(proxy) else Path(proxy).name


def masked_proxy(spec: Spec, path: str, masks: list[str], seed: int) -> object:
    """The proxy path, or (with ``--missingness``) the proxy read and masked by the simulator
    (``proxy.missingness``); a mask naming no column applies to every non-forbid column."""
    if not masks:
        return path
    from workbench.evidence.missingness import apply_masks, parse_masks
    from workbench.transform.raw import read_raw

    frame = read_raw(path, spec.columns, spec.file_format)
    forbid = [c.name for c in spec.columns if c.missing == "forbid"]
    return apply_masks(frame, parse_masks(masks), seed=seed, exclude=forbid)


class _ScenarioEta:
    """``--robust``'s progress lines: each scenario, what is left and an ETA (the dry run's
    own time per scenario before one has finished, then the mean)."""

    def __init__(self, first_seconds: float) -> None:
        self.first, self.start = first_seconds, time.monotonic()

    def __call__(self, name: str, k: int, total: int) -> None:
        done = k - 1
        per = (time.monotonic() - self.start) / done if done else self.first
        left = per * (total - done)
        eta = f"~{max(1, round(left))} s" if left < 90 else f"~{round(left / 60)} min"
        print(f"robust forecast: scenario {k} of {total} ({name}) … ETA {eta}",
              file=sys.stderr, flush=True)


def _robust_scenarios(spec: Spec, result: Any, proxy: Any, args: argparse.Namespace,
                      executor: Any = None) -> dict[str, float]:
    """p of the narrowed design on the proxy (this dry run) and on every other proxy scenario
    (:mod:`workbench.dryrun.robust`, seeded dry runs at the same n), printed as a range; with
    ``--published-tables``, on the proxy raked to them and within their rounding instead."""
    from workbench.dryrun.robust import robust_forecast
    from workbench.evidence.core import SCENARIOS
    from workbench.validation import build_spec

    sel = spec.selection
    narrowed = build_spec(result.narrowed_document(spec, args.min_pass))
    kept = list(narrowed.configurations())
    on_proxy = result.selection_forecast(sel.gamma, sel.max_iterations, args.min_pass).p
    tables = getattr(args, "published_tables", None)
    published = read_published_tables(narrowed, tables) if tables else None
    robust = robust_forecast(narrowed, as_evidence(narrowed, proxy, published), kept, args.n,
                             repetitions=args.repetitions, seed=args.seed,
                             names=None if published else SCENARIOS[1:], executor=executor,
                             on_scenario=None if args.quiet else _ScenarioEta(result.seconds))
    scenarios = dict(robust.scenarios) if published else {"proxy": on_proxy,
                                                          **robust.scenarios}
    print("forecast over proxy scenarios: " + ", ".join(f"{k} {v:.2f}"
                                                        for k, v in scenarios.items())
          + f"; range {min(scenarios.values()):.2f}–{max(scenarios.values()):.2f}"
          + (f" (the proxy as it is: {on_proxy:.2f})" if published else ""))
    return scenarios


def run_command(args: argparse.Namespace) -> int:
    """Run the dry run the options describe; 0 on success, 2 on a usage problem."""
    if args.write_narrowed and args.min_pass is None:
        print("error: --write-narrowed needs --min-pass", file=sys.stderr)
        return 2
    if getattr(args, "published_tables", None) and not getattr(args, "robust", False):
        print("error: --published-tables needs --robust (the tables anchor its scenarios)",
              file=sys.stderr)
        return 2
    try:
        spec = load_spec(args.spec)
        check_model_size(spec)  # before any fit: a model above generator.model_limit (exit 2)
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
        proxy = masked_proxy(spec, args.proxy, getattr(args, "missingness", None) or [],
                             args.seed)
        # one pool for the dry run and every robust scenario (workers stay warm)
        with make_executor(args.workers, args.scheduler) as executor:
            _dry_run_and_report(spec, proxy, configs, cache, args, executor)
    except (ValueError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _dry_run_and_report(spec: Spec, proxy: Any, configs: list, cache: Any,
                        args: argparse.Namespace, executor: Any) -> None:
    """The dry run, its records and report, floors and (``--write-narrowed``) the narrowed
    frozen spec, on one executor."""
    sized = dry_run_at(spec, proxy, configs, args.n, repetitions=args.repetitions,
                       seed=args.seed, executor=executor,
                       cache=cache, progress=not args.quiet, noise=args.noise)
    result = sized.result
    if args.records:
        write_records(result.records, args.records)
    if args.write_result:
        write_result(result, spec, args.write_result, data=_shown(args.proxy))
    _report(sized, spec, args)
    tables = getattr(args, "published_tables", None)
    floors = print_floors(spec, as_evidence(spec, args.proxy, read_published_tables(
        spec, tables)) if tables else args.proxy, configs, args.n, args.floor_draws,
        args.seed)
    for size, res in sorted(sized.results.items()):
        if size in floors:
            print(excess_words(res, floors[size]))
    if args.write_narrowed:
        scenarios = None
        if getattr(args, "robust", False):
            scenarios = _robust_scenarios(spec, result, proxy, args, executor)
        where = _shown(args.proxy)
        if getattr(args, "published_tables", None) and scenarios:
            where += f" raked to {Path(args.published_tables).name}"
        document = result.narrowed_document(spec, args.min_pass, n=result.n,
                                            proxy=where,
                                            n_max=sized.sizes[-1], scenarios=scenarios)
        digest = save_spec(document, args.write_narrowed)
        print(f"narrowed spec written, frozen: {args.write_narrowed} (sha256 {digest})")


def strict_problem(args: argparse.Namespace, spec: Spec) -> str | None:
    """``validate --strict --proxy P``: a problem when an independent-marginals release of
    the proxy at n passes every criterion (they protect no utility), or when a release with a
    declared association reversed does (issue 36: none sees its direction), else None."""
    if args.proxy is None:
        return "--strict needs --proxy (the public proxy the trivial release is drawn from)"
    draws = args.floor_draws if args.floor_draws is not None else 3
    tables = floors_at(spec, args.proxy, [next(spec.configurations())], spec_n(spec, args.n),
                       draws=max(2, draws), seed=0)
    for size, items in sorted(tables.items()):
        for table in items:
            if table.floors and len(table.unprotective) == len(table.floors):
                values = ", ".join(f"{f.criterion} {f.trivial:.4g} < {f.threshold:.4g}"
                                   for f in table.floors)
                return (f"criteria: a release that keeps only the proxy's 1-way marginals (no "
                        f"relation between columns) passes every criterion at n = {size:,} "
                        f"({values}): the criteria protect no utility; tighten a threshold or "
                        "add a criterion on relations between columns")
    for reversal in reversal_check(spec, args.proxy, spec_n(spec, args.n), max(2, draws), 0):
        if reversal.all_pass:
            return f"criteria: {reversal.words().removeprefix('WARNING: ')}"
    return None


def describe_floors(args: argparse.Namespace, spec: Spec) -> int:
    """``describe SPEC --proxy P [--n N]``: the floors beside each threshold; 2 on bad input."""
    try:
        args.floor_draws = _draws(args)
        if args.floor_draws < 0 or args.floor_draws == 1:
            raise ValueError("--floor-draws must be 0 (no floors) or at least 2")
        if args.floor_draws == 0:
            print("feasibility floors: none computed (--floor-draws 0: no floors)")
            return 0
        configs = select_configurations(spec)
        print_floors(spec, args.proxy, configs, spec_n(spec, args.n), args.floor_draws, 0)
        for reversal in reversal_check(spec, args.proxy, spec_n(spec, args.n),
                                       args.floor_draws, 0):  # issue 36
            print(reversal.words())
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
