"""The `workbench` command; every user error exits 2 with a message, never a traceback."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from workbench.cli.sizes import add_size_arguments

if TYPE_CHECKING:
    from workbench.specification import Spec

# Every workbench module is imported lazily, inside the command that needs it, so that
# `workbench --help` and argument errors start as fast as Python itself (numpy, pandas, OpenDP
# and the registries load only when a command runs: tests/test_cli_startup.py).

EXIT_OK, EXIT_USAGE, EXIT_FAILED = 0, 2, 1


def load_spec(path: str, **kwargs: Any) -> Spec:
    """``workbench.validation.load_spec``, imported when a command first needs it."""
    from workbench.validation import load_spec as load

    return load(path, **kwargs)


def _stand_in_problem(spec: Spec) -> str | None:
    """The stand-in rehearsal's refusal (``engine.stand_in``), the one ``run`` would give; a
    spec whose public input files are not there yet is told so on stderr and not rehearsed
    (``run`` refuses it before any budget, naming the file)."""
    from workbench.engine.preflight import preflight_problem, say
    from workbench.engine.stand_in import StandInFailure, rehearse_on_stand_in

    missing = preflight_problem(spec)
    if missing:
        print(f"note: not rehearsed on stand-in rows: {missing}", file=sys.stderr)
        return None
    try:
        rehearse_on_stand_in(spec, say)
    except StandInFailure as exc:
        return str(exc)
    return None


def _model_size_problem(spec: Spec) -> str | None:
    """Print the model-size estimate (``generators.model_size``; public, no fit); the refusal
    when it is above ``generator.model_limit``, else None."""
    from workbench.generators.model_size import ModelLimit, model_size
    from workbench.generators.model_size_advice import size_refusal

    size = model_size(spec)
    print(size.words(ModelLimit.of(spec)), flush=True)
    return size_refusal(spec, size)


def _validate(args: argparse.Namespace) -> int:
    spec = load_spec(args.spec)
    problem = _model_size_problem(spec) or _stand_in_problem(spec)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if args.strict:
        from workbench.dryrun.command import strict_problem

        problem = strict_problem(args, spec)
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return EXIT_USAGE
    print(
        f"OK: {args.spec} is a valid spec (sha256 {spec.sha256}, "
        f"{'frozen' if spec.frozen else 'not frozen'})"
    )
    return EXIT_OK


def _describe(args: argparse.Namespace) -> int:
    from workbench.report import describe_spec

    spec = load_spec(args.spec)
    print(describe_spec(spec))
    too_large = _model_size_problem(spec)
    if too_large:  # describe shows it; validate, freeze, run, dryrun and design refuse
        print(f"WARNING: {too_large}")
    if args.proxy is None:
        if args.n is not None:
            print("error: --n needs --proxy (the public proxy to resample)", file=sys.stderr)
            return EXIT_USAGE
        return EXIT_OK
    from workbench.dryrun.command import describe_floors
    from workbench.evidence.declared import spec_pilot_warnings

    for line in spec_pilot_warnings(spec, args.spec):  # the proxy lacks a declared pair
        print(line, file=sys.stderr)
    return describe_floors(args, spec)


def _profile(args: argparse.Namespace) -> int:
    from workbench.report.profile import format_profile
    from workbench.transform.clean import profile
    from workbench.transform.raw import read_raw

    spec = load_spec(args.spec)
    frame = read_raw(args.data, spec.columns, spec.file_format)
    print(format_profile(spec, profile(frame, spec)))
    from workbench.report.missing_profile import format_missing_profile, missing_profile

    missing = missing_profile(frame, spec)
    if missing.any_missing:
        print()
        print(format_missing_profile(missing))
    if args.upset:
        from workbench.report.missing_profile import upset_figure

        upset_figure(missing).savefig(args.upset, dpi=100, bbox_inches="tight")
        print(f"UpSet plot written: {args.upset}")
    return EXIT_OK


def _freeze(args: argparse.Namespace) -> int:
    from workbench.specification.document import read_document
    from workbench.validation import save_spec

    spec = load_spec(args.spec)
    problem = _model_size_problem(spec) or _stand_in_problem(spec)
    if problem:
        print(f"error: {problem}; nothing was written", file=sys.stderr)
        return EXIT_USAGE
    digest = save_spec(read_document(args.spec), args.out)
    print(f"frozen: {args.out} (sha256 {digest})")
    return EXIT_OK


def _run(args: argparse.Namespace) -> int:
    from workbench.engine import run
    from workbench.engine.release_parquet import release_formats

    if args.format == "parquet":  # checked before any budget: the bundle is written after
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            print("error: --format parquet needs pyarrow (pip install "
                  "'release-workbench[sources]')", file=sys.stderr)
            return EXIT_USAGE
    with release_formats([args.format] if args.format != "csv" else []):
        outcome = run(args.spec, args.data, args.out, quiet=args.quiet,
                      spend_again=args.spend_again, budget_store=args.budget_store,
                      allow_unbounded=args.allow_unbounded, proxy=args.proxy,
                      rehearsal=args.rehearse)
    if outcome.status == "complete":
        from workbench.engine import verify_bundle

        print(f"release published: {outcome.release_dir}")
        check = verify_bundle(outcome.release_dir)
        print(check.summary())
        if not check.ok:
            return 1
    else:
        print("private selection stopped without a candidate (⊥): nothing is released")
        for line in outcome.diagnosis:  # a single attempt only (engine.diagnosis says why)
            print(line)
    print(f"epsilon_total of this run: {outcome.epsilon_total:g}")
    if abs(outcome.epsilon_charged - outcome.epsilon_total) > 1e-9:
        print(f"epsilon charged by this run: {outcome.epsilon_charged:g} (once-statistics "
              "reused from an earlier run)")
    if outcome.epsilon_cumulative > outcome.epsilon_charged + 1e-9:
        print(f"cumulative epsilon on dataset {outcome.dataset!r}: "
              f"{outcome.epsilon_cumulative:g}")
    print(f"budget store: {outcome.budget_store}")
    return EXIT_OK if outcome.status == "complete" else 1


def _verify(args: argparse.Namespace) -> int:
    from workbench.engine import verify_bundle

    result = verify_bundle(args.bundle)
    print(result.summary())
    return EXIT_OK if result.ok else 1


def _dashboard(args: argparse.Namespace) -> int:
    from workbench.cli.dashboard import run_dashboard

    return run_dashboard(args)


def _design(args: argparse.Namespace) -> int:
    from workbench.design.command import run_command

    return run_command(args)


def _proxy(args: argparse.Namespace) -> int:
    from workbench.cli.own_data import run_proxy

    return run_proxy(args)


def _pilot(args: argparse.Namespace) -> int:
    from workbench.cli.own_data import run_pilot

    return run_pilot(args)


def _dryrun(args: argparse.Namespace) -> int:
    from workbench.dryrun.command import run_command

    return run_command(args)


def _describe_n_policy_on_help(parser: argparse.ArgumentParser) -> None:
    """``pilot --help`` adds what a later run publishes about n (``spec.n_policy``), worded
    only when that help is shown: the spec model is too heavy to import for ``--help``."""
    original = parser.format_help

    def format_help() -> str:
        from workbench.specification.n_policy import pilot_words

        if parser.description and pilot_words() not in parser.description:
            parser.description = f"{parser.description} {pilot_words()}"
        return original()

    parser.format_help = format_help  # type: ignore[method-assign]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="workbench",
        description="Release Workbench: co-design, freeze and run once a differentially private "
        "microdata release.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(
        name: str, help_text: str, func: Callable[[argparse.Namespace], int]
    ) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(func=func)
        return p

    p = add(
        "validate",
        "Check a spec file; exit 0 if valid, 2 with every problem listed if not.",
        _validate,
    )
    p.add_argument("spec", help="path to a spec file (.json, .yaml)")
    p.add_argument("--strict", action="store_true",
                   help="also refuse a spec whose every criterion is passed by a release that "
                   "keeps only the proxy's 1-way marginals (its criteria protect no utility), or "
                   "one with a declared association reversed; needs --proxy")
    p.add_argument("--proxy", default=None, help="the PUBLIC proxy CSV for --strict")
    add_size_arguments(p)
    p = add(
        "describe",
        "Print a readable summary of a spec: columns, domain sizes, configuration "
        "count, criteria and epsilon_total; with --proxy, each criterion's feasibility floor "
        "(the value an ideal generator reaches at n) beside its threshold.",
        _describe,
    )
    p.add_argument("spec", help="path to a spec file (.json, .yaml)")
    p.add_argument("--proxy", default=None, help="PUBLIC proxy CSV for the feasibility floors")
    add_size_arguments(p)
    p = add(
        "profile",
        "Profile PUBLIC data against a spec: out-of-domain and missing shares per "
        "column, and the share each cleaning rule removes. Never use it on "
        "confidential data: its figures are exact, not private.",
        _profile,
    )
    p.add_argument("spec", help="path to a spec file")
    p.add_argument("data", help="path to a public CSV file (may be gzipped)")
    p.add_argument("--upset", default=None, metavar="OUT.png",
                   help="also draw the missingness patterns as an UpSet-style plot")
    p = add("freeze", "Validate a draft spec and write it frozen, with its SHA-256.", _freeze)
    p.add_argument("spec", help="path to a draft spec file")
    p.add_argument("out", help="where to write the frozen spec (.json)")
    p = add(
        "design",
        "Design assistant on the PUBLIC proxy at the registry's size: derive each criterion's "
        "ε, ε_gen and the selection mode with the smallest epsilon_total whose forecast "
        "P(all criteria pass) reaches --target-p; print the derivation, write a draft spec.",
        _design,
    )
    from workbench.design.command import add_arguments as design_arguments

    design_arguments(p)
    p = add(
        "run",
        "Run a FROZEN spec once on confidential data and publish the release bundle in "
        "OUT/release (the ledger and status stay in OUT). Every run's ε is also recorded "
        "in the budget store of the spec's dataset (metadata.dataset), whatever OUT is: a "
        "dataset that already has spend is refused unless --spend-again, and "
        "budget.epsilon_lifetime_max caps the total.",
        _run,
    )
    p.add_argument("spec", help="path to a frozen spec file")
    p.add_argument("data", help="path to the confidential CSV file (may be gzipped)")
    p.add_argument("--out", required=True, help="run directory (new or from an earlier run)")
    p.add_argument("--proxy", default=None, metavar="PUBLIC.csv",
                   help="PUBLIC proxy data the report overlays on the release (optional)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--spend-again", action="store_true",
                   help="allow another run on a dataset that already has spend; the bundle "
                   "shows the cumulative ε")
    p.add_argument("--allow-unbounded", action="store_true",
                   help="run a γ = 0, T = ∞ spec (it stops only when a candidate passes) "
                   "without a recorded dry-run forecast p ≥ 0.05")
    p.add_argument("--format", choices=["csv", "parquet"], default="csv",
                   help="parquet: the bundle also carries release.parquet (labels as "
                   "categories in code order, numbers as numbers); verify checks it")
    p.add_argument("--rehearse", type=int, default=None, metavar="SEED",
                   help="PUBLIC data only: run the same code path with seeded noise (a "
                   "simulation context, a fresh temporary budget store unless --budget-store); "
                   "a dry-run task of the same seed makes the same first iteration")
    p.add_argument("--budget-store", default=None, metavar="DIR",
                   help="root of the budget store (default: $WORKBENCH_BUDGET_STORE, else "
                   "$XDG_STATE_HOME/release-workbench/budgets or "
                   "~/.local/state/release-workbench/budgets); keep one store per machine "
                   "for real data")
    p = add(
        "verify",
        "Check a release bundle's consistency from its public files: spec hash, "
        "configuration, rows and labels, constraints, min_count, ledger. Exit 0 if it passes.",
        _verify,
    )
    p.add_argument("bundle", help="the run directory or its release/ folder")
    p = add(
        "dryrun",
        "Rehearse the run on the PUBLIC proxy: try each configuration several times with the "
        "enclave's own iteration, print configurations sorted by the probability that every "
        "criterion passes and the private-selection forecast; optionally write the narrowed, "
        "frozen spec.",
        _dryrun,
    )
    p.add_argument("spec", help="path to a spec file (draft or frozen)")
    p.add_argument("proxy", help="path to the PUBLIC proxy CSV (may be gzipped)")
    p.add_argument("--configs", choices=("all", "narrowed"), default=None,
                   help="the full space, or the spec's narrowed list (default: the narrowed "
                   "list when the spec has one, else the full space)")
    p.add_argument("--limit", type=int, default=None,
                   help="try at most N configurations, a seeded sample spread over the space")
    p.add_argument("--repetitions", type=int, default=5, help="tries per configuration")
    p.add_argument("--seed", type=int, default=0, help="seed of every task's randomness")
    p.add_argument("--workers", type=int, default=2,
                   help="local worker processes (0: run in this process)")
    p.add_argument("--scheduler", default=None,
                   help="dask.distributed scheduler address, tcp://host:port (needs the "
                   "'cluster' extra); replaces --workers")
    p.add_argument("--min-pass", type=float, default=None,
                   help="keep configurations passing all criteria with at least this "
                   "probability (the paper used 0.1); the forecast is for the kept ones")
    p.add_argument("--write-narrowed", default=None, metavar="OUT.json",
                   help="needs --min-pass: write the spec narrowed at it, frozen, with its "
                   "forecast (p, 95%% interval, n, proxy, the hash of the design it belongs to)")
    p.add_argument("--robust", action="store_true",
                   help="with --write-narrowed: also rehearse the narrowed design on proxy "
                   "scenarios (flatter, sharper 1-way marginals; rare cells thinned, "
                   "thickened) and record the range of p")
    p.add_argument("--published-tables", default=None, metavar="TABLES.json",
                   help="with --robust: the registry's own published 1-way tables in the "
                   "design's cells: 'counts' (births per cell, exact) or 'columns' shares with "
                   "their rounding 'step', and optional cross-tables 'pairs' ('a|b' → counts); "
                   "the scenarios become the proxy raked to them (and shifts within the "
                   "shares' rounding)")
    p.add_argument("--noise", choices=("opendp", "seeded"), default="opendp",
                   help="'seeded': reproducible numpy noise instead of OpenDP's (public "
                   "simulation only; for comparing runs)")
    p.add_argument("--cache", default=None, metavar="DIR",
                   help="cache directory (default ~/.cache/release-workbench/dryrun)")
    p.add_argument("--no-cache", action="store_true", help="recompute everything")
    p.add_argument("--records", default=None, metavar="OUT.jsonl",
                   help="also write one JSON line per (configuration, repetition)")
    p.add_argument("--write-result", default=None, metavar="OUT.json",
                   help="also write every configuration's pass probability (the spec review "
                   "dashboard's --dryrun input)")
    add_size_arguments(p)
    p.add_argument("--top", type=int, default=20, help="rows of the sorted table to print")
    p.add_argument("--missingness", action="append", default=None, metavar="MECH:RATE[:COLS[:DEP]]",
                   help="rehearse more holes than the proxy has: an MCAR, MAR or MNAR mask "
                   "(e.g. MCAR:0.2, MAR:0.3:workclass:age); repeatable; without COLS every "
                   "column that may be missing")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--survey-plots", default=None, metavar="DIR",
                   help="instead of the configuration dry run, simulate the spec's survey on "
                   "the proxy as population (SRS at --survey-fraction, --repetitions × 10 "
                   "samples): paired boxplots, per-method boxplots, what-if tables and the "
                   "crossover ε, written to DIR")
    p.add_argument("--survey-fraction", type=float, default=0.05,
                   help="sampling fraction of the survey simulation (default 0.05)")
    from workbench.cli.own_data import add_pilot_arguments, add_proxy_arguments

    p = add("proxy", "Public proxies for your own schema: `proxy build SPEC FACTS --n N --out "
            "FILE` fits the maximum-entropy distribution of published facts (docs/facts.md) and "
            "samples a record-level proxy.", _proxy)
    add_proxy_arguments(p)
    p = add(
        "pilot",
        "A DP pilot on CONFIDENTIAL data when no public table exists: measure 1-way marginals, "
        "missing rates, out-of-domain counts and the 2-way tables of the spec's declared "
        "associations (or of --pairs; --pairs none for none) with ε = --epsilon "
        "(charged to the dataset's budget store like a run) and write a public FACTS file for "
        "`workbench proxy build`; --discover-labels also releases frequent unknown labels and "
        "out-of-range sides with (ε, δ)-DP.",
        _pilot,
    )
    _describe_n_policy_on_help(p)
    add_pilot_arguments(p)
    p = add(
        "dashboard",
        "Serve a dashboard with Voilà on 127.0.0.1 at a free port and print its URL: "
        "codesign (edit a draft on the public proxy), spec (review a frozen spec) or release "
        "(review a release bundle).",
        _dashboard,
    )
    from workbench.cli.dashboard import add_arguments

    add_arguments(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; map known user errors to exit code 2 with a readable message."""
    args = build_parser().parse_args(argv)
    from workbench.engine.rundir import RunRefused
    from workbench.specification import SpecError
    from workbench.transform import EncodingError

    if args.command in ("run", "dryrun") and not getattr(args, "quiet", False):
        from workbench.generators.structure_tree import show_progress

        show_progress()  # structure fits say what they do (public facts only)
    try:
        return int(args.func(args))
    except SpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except EncodingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except RunRefused as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # no input may end in a bare traceback
        print(unexpected_message(args.command, exc), file=sys.stderr)
        return EXIT_FAILED


def unexpected_message(command: str, exc: BaseException) -> str:
    """One line for an unexpected failure; a run's message is withheld (it may quote data).

    >>> unexpected_message("run", ValueError("secret 42"))[:60]
    'error: `workbench run` failed (ValueError) before publishing'
    >>> unexpected_message("describe", ValueError("bad"))
    'error: `workbench describe` failed (ValueError): bad'
    """
    name = type(exc).__name__
    if command == "run":
        return (f"error: `workbench run` failed ({name}) before publishing anything; the "
                "message is withheld because it could quote confidential data. status.json "
                "and the enclave ledger record the failure.")
    if command == "pilot":
        return (f"error: `workbench pilot` failed ({name}); the message is withheld because it "
                "could quote confidential data. The dataset's ledger records what was spent.")
    return f"error: `workbench {command}` failed ({name}): {exc}"


if __name__ == "__main__":
    sys.exit(main())
