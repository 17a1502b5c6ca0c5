"""``workbench design``: arguments and printing only (the derivation is ``design.design``)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The command's options (kept here so the CLI module stays a list of commands)."""
    p.add_argument("spec", help="path to a spec file: criteria, thresholds, generator")
    p.add_argument("proxy", help="path to the PUBLIC proxy CSV (may be gzipped)")
    p.add_argument("--n", default=None, metavar="N|LOW:HIGH",
                   help="the registry's expected size after cleaning (default: the low end "
                   "of schema.expected_n, else the proxy's size); a range counts at its low end")
    p.add_argument("--target-p", type=float, default=0.6,
                   help="forecast P(all criteria pass) the design must reach (default 0.6)")
    p.add_argument("--eps-gen", type=float, nargs="+", default=[1.5, 2.0, 2.5],
                   help="ε_gen alternatives to try")
    p.add_argument("--divisors", type=float, nargs="+", default=None,
                   help="noise rule σ ≤ margin/K: the K to try (default 2 3 4 6 10)")
    p.add_argument("--criterion-divisors", nargs="+", default=None, metavar="ID=K",
                   help="the least K of these criteria's noise rule (σ ≤ margin/max(K, K_id)): "
                   "more ε for a cheap criterion whose margin on a proxy scenario is thin")
    p.add_argument("--repetitions", type=int, default=4, help="candidates per ε_gen")
    p.add_argument("--check-repetitions", type=int, default=10,
                   help="dry-run iterations per proxy scenario when a draft is rehearsed as "
                   "frozen (its recorded forecast)")
    p.add_argument("--confidence", type=float, default=None, metavar="LEVEL",
                   help="accept a draft only when the Wilson lower bound (two-sided LEVEL, "
                   "e.g. 0.95) of its low-end scenario's pass rate reaches --target-p, not its "
                   "point estimate (default: the point estimate, as the shipped examples were "
                   "derived); refused when --check-repetitions is too few to ever show it")
    p.add_argument("--draws", type=int, default=10,
                   help="DP releases per candidate for the regression criteria's forecast")
    p.add_argument("--families", nargs="+", default=None, metavar="FAMILY[:NAME=VALUE,...]",
                   help="first choose the generator family: rehearse the spec with each of "
                   "these generators instead of its own, at its ε (equal ε_total), keep the "
                   "one that passes its criteria with the strongest guarantee, then design it "
                   "(e.g. bayesian bayesian:mechanism=censor_w perturbed_histogram)")
    p.add_argument("--published-tables", default=None, metavar="TABLES.json",
                   help="the registry's own published tables (as for `workbench dryrun "
                   "--robust --published-tables`): every draft is rehearsed on the proxy "
                   "raked to them, and the recorded forecast says so")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=2,
                   help="local worker processes for the drafts' rehearsals, as `workbench "
                   "dryrun --workers` (0: run in this process); the seeded results are the same")
    p.add_argument("--scheduler", default=None,
                   help="dask.distributed scheduler address, tcp://host:port (needs the "
                   "'cluster' extra); replaces --workers")
    p.add_argument("--out", default=None, metavar="DRAFT.json",
                   help="write the draft spec here (and --freeze also frozen); only when its "
                   "recorded forecast reaches --target-p at the low end (else exit 2, nothing "
                   "written)")
    p.add_argument("--freeze", default=None, metavar="OUT.frozen.json",
                   help="also write the draft frozen, with its SHA-256 (same condition)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")


def run_command(args: argparse.Namespace) -> int:
    """Derive, print the tables, write the draft; 0 when its recorded forecast reaches the
    target at the low end, else 2 with the best draft, its binding criterion and what to relax
    (nothing written)."""
    from workbench.design.assistant import design
    from workbench.design.rehearse import bound_words, lower_bound, repetitions_needed
    from workbench.dryrun.executors import make_executor
    from workbench.dryrun.size import low_end, parse_n
    from workbench.evidence.prepare import as_evidence
    from workbench.evidence.published import read_published_tables
    from workbench.specification.document import write_document
    from workbench.validation import load_spec, save_spec

    confidence = getattr(args, "confidence", None)
    if confidence is not None:
        if not (0 < confidence < 1) or not (0 < args.target_p < 1):
            print("error: --confidence and --target-p must lie in (0, 1)", file=sys.stderr)
            return 2
        need = repetitions_needed(args.target_p, confidence)
        if args.check_repetitions < need:
            r = args.check_repetitions
            print(f"error: --check-repetitions {r} cannot show P(all pass) ≥ {args.target_p:g} "
                  f"at --confidence {confidence:g}: even {r} of {r} has a lower bound of "
                  f"{lower_bound(1.0, max(r, 1), confidence):.2f}; use at least {need}",
                  file=sys.stderr)
            return 2
    try:
        spec = load_spec(args.spec)
        from workbench.generators.model_size_advice import check_model_size

        check_model_size(spec)  # before any candidate is fitted (issue 36's size guards)
        n = low_end(parse_n(args.n)) if args.n is not None else None
        kwargs = {} if args.divisors is None else {"divisors": tuple(args.divisors)}
        if getattr(args, "criterion_divisors", None):
            kwargs["criterion_divisors"] = _criterion_divisors(args.criterion_divisors)
        executor = make_executor(args.workers, args.scheduler)
        kwargs |= {"target_p": args.target_p, "epsilon_generators": tuple(args.eps_gen),
                   "repetitions": args.repetitions, "draws": args.draws, "seed": args.seed,
                   "check_repetitions": args.check_repetitions, "executor": executor,
                   "confidence": confidence,
                   "progress": None if args.quiet else lambda m: print(m, file=sys.stderr)}
        from workbench.design.families import design_families, parse_candidates

        candidates = parse_candidates(args.families) if args.families else None
        tables = getattr(args, "published_tables", None)
        evidence = as_evidence(spec, args.proxy,
                               read_published_tables(spec, tables) if tables else None)
        from workbench.design.proposals import propose_associations

        proposals = propose_associations(spec, evidence, n, args.seed)  # issue 36
        spec = proposals.spec
        for line in proposals.lines:
            print(line)
        choice = None
        with executor:  # one pool for the families, every fit and every rehearsal
            if candidates:
                outcome = design_families(spec, evidence, n, candidates, **kwargs)
                choice, result = outcome.choice, outcome.design
            else:
                result = design(spec, evidence, n, **kwargs)
    except (ValueError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if choice is not None:
        print(f"generator families compared at equal ε (the spec's), n = {choice.n:,}")
        print(choice.table())
        print(choice.why() + "\n")
    print(f"design at n = {result.n:,} on {args.proxy}, target P(all pass) ≥ {args.target_p:g}")
    print(result.table())
    c = result.chosen
    print(f"\nchosen: ε_gen {c.epsilon_generator:g}, K {c.divisor:g}, {c.mode}, model "
          f"p = {c.p:.3f}, {c.plan.formula()}")
    if result.forecast is not None:
        print(f"recorded forecast (a seeded dry run of the draft as frozen, at n = "
              f"{result.n:,}): {result.forecast.words()}")
    print("\n" + result.criteria_table(spec))
    if result.forecast is not None:
        print(bound_words(result.forecast, args.target_p, confidence or 0.95))
    low = recorded_low(result.document)
    if not result.reached or low is None or low < args.target_p:
        lines = result.shortfall(spec)
        if confidence is not None and low is not None and low >= args.target_p:
            lines[0] = (f"target not reached: no rehearsed draft's low end has a "
                        f"{confidence:.0%} lower bound ≥ {args.target_p:g} (--confidence), "
                        "so nothing was written or frozen")
        for line in lines:
            print(line)
        print(f"error: target not reached (best draft {result.best_draft()}); nothing "
              "written", file=sys.stderr)
        return 2
    sure = "" if confidence is None else f", and its {confidence:.0%} lower bound too"
    print(f"target reached: the draft's recorded forecast has low end {low:.2f} ≥ "
          f"{args.target_p:g}{sure}")
    # staged beside their targets and moved in together: nothing half-written
    staged: list[tuple[str, str]] = []
    digest = None
    try:
        if args.out:
            staged.append((f"{args.out}.partial", args.out))
            write_document(result.document, staged[-1][0])
        if args.freeze:
            staged.append((f"{args.freeze}.partial", args.freeze))
            digest = save_spec(result.document, staged[-1][0])
    except OSError as exc:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        print(f"error: could not write the draft ({exc.strerror}: {exc.filename}); nothing "
              "written", file=sys.stderr)
        return 2
    for tmp, final in staged:
        os.replace(tmp, final)
    if args.out:
        print(f"draft spec written: {args.out}")
    if args.freeze:
        print(f"frozen: {args.freeze} (sha256 {digest})")
    if not (args.out or args.freeze):
        print("nothing written: give --out and/or --freeze to keep the draft")
    return 0


def recorded_low(document: dict) -> float | None:
    """The low end of the document's recorded forecast (its range, else its p); None if it
    records none: what ``design`` checks before it writes or freezes anything."""
    forecast = (document.get("selection") or {}).get("forecast") or {}
    low = (forecast.get("range") or {}).get("low", forecast.get("p"))
    return None if low is None else float(low)


def _criterion_divisors(items: list[str]) -> dict[str, float]:
    """``ID=K`` pairs of --criterion-divisors (a ValueError naming the bad one)."""
    out = {}
    for item in items:
        cid, _, k = item.partition("=")
        try:
            out[cid] = float(k)
        except ValueError:
            raise ValueError(f"--criterion-divisors {item!r}: expected ID=K, K a number") from None
    return out
