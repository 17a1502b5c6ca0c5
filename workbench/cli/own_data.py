"""``workbench proxy build`` and ``workbench pilot``: arguments and printing only (issue 27).

The work is ``proxy.build`` (public facts → a proxy) and ``engine.pilot`` (the confidential
file → DP facts, charged to the dataset's budget store).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any


def add_proxy_arguments(p: argparse.ArgumentParser) -> None:
    """``workbench proxy build SPEC FACTS --n N --out FILE``."""
    sub = p.add_subparsers(dest="proxy_command", required=True, metavar="ACTION")
    b = sub.add_parser(
        "build", help="fit the maximum-entropy distribution of a FACTS file and sample a proxy",
        description="Fit the maximum-entropy distribution consistent with the published facts "
        "(docs/facts.md) over the spec's columns and sample a record-level PUBLIC proxy of N "
        "rows, raw values as a run reads them; print how well every fact is met.")
    b.add_argument("spec", help="path to a spec file (draft or frozen): columns and domains")
    b.add_argument("facts", help="path to a FACTS file (list form, or the US 2019 table form)")
    b.add_argument("--n", type=int, required=True, help="rows of the proxy")
    b.add_argument("--out", required=True, help="the proxy CSV to write (.csv or .csv.gz)")
    b.add_argument("--seed", type=int, default=0, help="seed of the sampling (public data)")


def run_proxy(args: argparse.Namespace) -> int:
    """Build, write and report; exit 0 when the proxy's rows meet every fact (rounding, the
    fit's tolerance and the rows' grain), else 1 naming the facts that are not met."""
    from workbench.evidence.build import build_proxy, format_report, write_proxy
    from workbench.evidence.declared import warning_lines
    from workbench.evidence.fact_list import FactsError
    from workbench.validation import load_spec

    spec = load_spec(args.spec)
    try:
        build = build_proxy(spec, args.facts, args.n, args.seed)
        path = write_proxy(build, spec, args.out)
    except FactsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"facts: {args.facts} ({build.facts.form} form, sha256 {build.facts.sha256[:12]}…)")
    for line in warning_lines(spec, build.facts):
        print(line, file=sys.stderr)
    print(format_report(build))
    print(f"proxy written: {path} ({len(build.frame):,} rows, seed {args.seed})")
    if build.all_met:
        return 0
    unmet = [r.fact for r in build.rows if not r.proxy_ok]
    print(f"not met by the proxy's rows: {', '.join(unmet)} (exit 1: check these facts' values "
          "and rounding, or whether they contradict each other)", file=sys.stderr)
    return 1


def add_pilot_arguments(p: argparse.ArgumentParser) -> None:
    """``workbench pilot SPEC DATA --epsilon E --out FACTS``."""
    p.add_argument("spec", help="path to a spec file (draft or frozen) naming metadata.dataset")
    p.add_argument("data", help="path to the CONFIDENTIAL CSV file (may be gzipped)")
    p.add_argument("--epsilon", type=float, required=True,
                   help="ε the pilot spends on the dataset (split evenly over its tables)")
    p.add_argument("--out", required=True, help="the public FACTS file to write (.json)")
    p.add_argument("--pairs", nargs="+", action="extend", default=None, metavar="A:B",
                   help="measure the 2-way tables of these column pairs instead of the default "
                        "(the pairs of the spec's declared associations: metadata.associations "
                        "and the association criteria's exposure/group × outcome); "
                        "--pairs none measures no 2-way table")
    p.add_argument("--spend-again", action="store_true",
                   help="allow a pilot on a dataset that already has spend (cumulative ε)")
    p.add_argument("--budget-store", default=None, metavar="DIR",
                   help="root of the budget store (as for `workbench run`)")
    p.add_argument("--discover-labels", nargs="+", action="extend", default=[],
                   metavar="COL[,COL]",
                   help="also release, with DP, the frequent unknown labels of these label "
                        "columns (thresholded selection) and the out-of-range counts below and "
                        "above the bounds of these numeric columns (docs/facts.md)")
    p.add_argument("--discover-epsilon", type=float, default=None, metavar="E",
                   help="ε of the label discovery, split evenly over its columns, charged on "
                        "top of --epsilon")
    p.add_argument("--discover-delta", type=float, default=None, metavar="D",
                   help="δ of the label discovery (≤ 0.001), split over its label columns: the "
                        "chance that a label held by one row is released")


def pilot_pairs(spec: Any, given: list[str] | None) -> list[str] | None:
    """The 2-way tables to measure, said on stdout: ``--pairs`` as given, none for
    ``--pairs none``, else the declared associations' pairs (a proxy without them holds those
    columns independent); None (exit 2) when 'none' is mixed with pairs."""
    from workbench.criteria.associations import association_columns

    if given is None:
        pairs = [f"{a}:{b}" for a, b in association_columns(spec)]
        print("pairs: the 2-way tables of the spec's declared associations: "
              f"{', '.join(pairs) or 'none declared'} (--pairs A:B replaces them, --pairs none "
              "measures none)")
        return pairs
    if any(p.lower() == "none" for p in given):
        if len(given) > 1:
            print("error: --pairs none cannot be combined with pairs", file=sys.stderr)
            return None
        print("pairs: none (--pairs none): the proxy will hold every column independent")
        return []
    return given


def run_pilot(args: argparse.Namespace) -> int:
    """Run the pilot and print its DP summary and the spec section that names it."""
    from workbench.engine.pilot import pilot
    from workbench.engine.pilot_labels import format_section, parse_discovery
    from workbench.validation import load_spec

    spec = load_spec(args.spec)
    discover = parse_discovery(spec, args.discover_labels, args.discover_epsilon,
                               args.discover_delta)
    pairs = pilot_pairs(spec, args.pairs)
    if pairs is None:
        return 2
    out = pilot(spec, args.data, args.epsilon, args.out, pairs=pairs,
                budget_store=args.budget_store, spend_again=args.spend_again,
                discover=discover)
    delta = f", δ = {out.delta:g}" if out.delta > 0 else ""
    cumulative = f", δ {out.delta_cumulative:g}" if out.delta_cumulative > 0 else ""
    print(f"pilot: ε = {out.epsilon:g}{delta} charged to dataset {out.dataset!r} (budget store "
          f"{out.budget_store}); the dataset's cumulative ε is {out.epsilon_cumulative:g}"
          f"{cumulative}")
    print(f"FACTS written (DP values only): {out.facts_path} (sha256 {out.facts_sha256})")
    print("out-of-domain cells per column (DP counts; no label is named unless "
          "--discover-labels released it):")
    for name, (count, sigma) in out.out_of_domain.items():
        print(f"  {name:<24} {count:>8,}  (σ ≈ {sigma:.3g})")
    if out.discovered is not None:
        print("\n".join(format_section(out.discovered)))
    k = max(1, len(out.forbidden_missing))
    for name, (count, sigma) in out.forbidden_missing.items():
        # Laplace tail (scale σ/√2): pure noise passes this with probability ≤ 0.1% over k columns
        if count > sigma / math.sqrt(2) * math.log(k / 0.002):
            print(f"note: column {name!r} forbids missing values, and the pilot counts about "
                  f"{count:,} missing cells (DP, σ ≈ {sigma:.3g}): add a cleaning rule or allow "
                  "them")
    section = {"pilot": {"facts": str(out.facts_path), "sha256": out.facts_sha256,
                         "epsilon": out.epsilon}}
    if out.delta > 0:
        section["pilot"]["delta"] = out.delta
    print("name the pilot in the spec of the release (describe and the datasheet show it):")
    print("  " + json.dumps(section, ensure_ascii=False))
    print("a later run on this dataset needs --spend-again (the pilot's ε is earlier spend)")
    return 0
