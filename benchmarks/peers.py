"""Issue 37, must-show 1: OpenDP's AIM and MST beside the workbench at the privacy of a design.

For a frozen design (``--design``), each US stand-in registry (``_standins.py``) and size, every
generator is fitted at the design's replace-one ε_gen times each ``--epsilon-scale`` (1 and 0.5
by default) and scored on the design's criteria (``_scoring.score_iteration``: the engine's
post-processing, then the criteria with DP decisions and on exact values):

* ``workbench``: the design's own generator (its first configuration), replace-one ε_gen as is;
* ``AIM``, ``MST``: OpenDP 0.16's ``dp.mbi.AIM`` (on the design's workload cliques) and
  ``dp.mbi.MST`` (``_baselines.OpenDPAim`` / ``OpenDPMst``), pure ε-DP under add/remove at
  **ε = replace-one ε_gen / 2** (a replacement is one removal and one addition:
  ``_baselines.add_remove_epsilon``), sampled with **``method="sample"``** (``"round"`` gave
  near-independent rows on this design). Their noise is OpenDP's own and cannot be seeded.

The criteria's own releases (ε as the design prices them, the once-statistic afresh each run)
use seeded noise, the same seeds for every generator (common random numbers). Two tables per
stand-in and size: **true values** (every criterion's exact E(R, S) against the effective
threshold its DP release used; P(all pass) as k of R runs, each criterion's median) and **DP
decisions** (the workbench's pass decisions on the DP values; P(all pass), each criterion's
median DP value). Fit time is the generator's fit (median, min–max); s/iter is fit + sample +
projection + criteria.

Run: nice -n 10 python benchmarks/peers.py --design FROZEN.json [--sizes 95000 158500]
     [--runs 4] [--standins us_sample us_reweighted us_thinned us_thickened] [--peers aim mst]
     [--epsilon-scale 1 0.5] [--own-runs R]
AIM's fit takes 40–140 s per run at 95,000 records: the default grid is hours on 2 cores.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import numpy as np
from _baselines import OpenDPAim, OpenDPMst, OpenDPPeer
from _scoring import RunRow, score_iteration

from workbench.trial import Trial, bind
from workbench.validation import load_spec

STANDINS = ("us_sample", "us_reweighted", "us_thinned", "us_thickened")
SIZES = (95_000, 158_500)
PEERS: dict[str, type[OpenDPPeer]] = {"aim": OpenDPAim, "mst": OpenDPMst}
OWN = "workbench"


@dataclass
class Scored:
    """Every run of one generator at one ε on one stand-in."""

    generator: str
    epsilon_gen: float  # replace-one
    epsilon_run: float  # the ε the generator itself ran at (RunRow.epsilon_run)
    neighbour: str
    runs: list[RunRow]


def make(name: str, trial: Trial):
    """A factory of an unfitted generator: the design's own or an OpenDP peer."""
    if name == OWN:
        return trial.generator
    cls = PEERS[name]
    workload = trial.generator().workload
    return lambda: cls(workload)


def score(trial: Trial, codes: np.ndarray, generators: Sequence[str], scales: Sequence[float],
          runs: int, own_runs: int, seed: int = 1000, log=None) -> list[Scored]:
    """Every generator at every ε scale, ``runs`` seeded iterations each (``own_runs`` for the
    workbench), on one stand-in's codes."""
    out = []
    for scale in scales:
        eps = trial.epsilon_generator * scale
        for name in generators:
            own = name == OWN
            rows = []
            for i in range(own_runs if own else runs):
                rows.append(score_iteration(trial, make(name, trial), codes, eps, seed + i))
                if log is not None:
                    log(f"    {label(name)} ε_gen {eps:g} run {i + 1}: fit "
                        f"{rows[-1].fit_seconds:.1f} s, all pass (true) {rows[-1].exact_pass}")
            ran = {r.epsilon_run for r in rows}  # what the generator itself was given
            if len(ran) != 1:
                raise RuntimeError(f"{label(name)}: runs at different ε {sorted(ran)}")
            out.append(Scored(label(name), eps, ran.pop(),
                              "replace-one" if own else "add/remove", rows))
    return out


def label(name: str) -> str:
    """The printed name of a generator."""
    return OWN if name == OWN else PEERS[name].label


def columns(ids: Sequence[str]) -> list[str]:
    """The table's column heads, one per criterion between P(all pass) and the times."""
    return ["generator", "replace-one ε_gen", "ε as run", f"P(all {len(ids)} pass)", *ids,
            "fit s", "s/iter"]


def _span(values: Sequence[float], fmt: str) -> str:
    """Median with the range when the values differ."""
    med, lo, hi = statistics.median(values), min(values), max(values)
    return (f"{med:{fmt}}" if lo == hi else f"{med:{fmt}} ({lo:{fmt}}–{hi:{fmt}})")


def table(scored: Sequence[Scored], ids: Sequence[str], on: str) -> list[str]:
    """One markdown table: ``on`` is 'true' (exact values) or 'dp' (DP values and decisions)."""
    if on not in ("true", "dp"):
        raise ValueError(f"on: 'true' or 'dp', not {on!r}")
    head = columns(ids)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    first = scored[0].runs
    thresholds = [f"{statistics.median(r.effective[i] for r in first):.4g}" for i in ids]
    lines.append("| threshold (effective, median) | | | | " + " | ".join(thresholds) + " | | |")
    for s in scored:
        k = sum(r.exact_pass if on == "true" else r.dp_pass for r in s.runs)
        values = [statistics.median((r.exact if on == "true" else r.dp_values)[i]
                                    for r in s.runs) for i in ids]
        cells = [s.generator, f"{s.epsilon_gen:g}", f"{s.neighbour} {s.epsilon_run:g}",
                 f"{k} of {len(s.runs)}", *(f"{v:.4g}" for v in values),
                 _span([r.fit_seconds for r in s.runs], ".1f"),
                 f"{statistics.median(r.seconds for r in s.runs):.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def header(design: Path, trial: Trial) -> list[str]:
    """What was run and how ε was converted."""
    spec = trial.spec
    criteria = ", ".join(f"{c.id} ε {c.epsilon:g}" for c in spec.criteria)
    return [f"design {design.name}: ε_total {spec.epsilon_total:.4g}, replace-one ε_gen "
            f"{trial.epsilon_generator:g}; criteria {criteria}",
            f"peers: OpenDP {version('opendp')} dp.mbi AIM (on the design's workload cliques) "
            "and MST, pure ε under add/remove at ε = replace-one ε_gen / 2 (a replacement is a "
            "removal and an addition), synthesize(method=\"sample\") (\"round\" gave "
            "near-independent rows here); the workbench at replace-one ε_gen",
            "criteria released with seeded noise, the same seeds for every generator; true "
            "values: exact E(R, S) against each effective threshold; DP decisions: the "
            "workbench's pass decisions on the DP values; medians over runs"]


def _sizes(values: Sequence[str], parser: argparse.ArgumentParser) -> list[int]:
    """--sizes as record counts (95000, 158500, or the stand-ins' 95k / 158k)."""
    from _standins import SIZES as NAMED

    out = []
    for v in values:
        n = NAMED.get(v) or (int(v) if v.isdigit() else None)
        if n not in NAMED.values():
            parser.error(f"--sizes: {v!r} is not a stand-in size "
                         f"({', '.join(f'{x}' for x in NAMED.values())})")
        out.append(n)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--design", type=Path, required=True, help="a frozen design (JSON)")
    ap.add_argument("--sizes", nargs="+", default=[str(n) for n in SIZES])
    ap.add_argument("--runs", type=int, default=4, help="seeded runs of each peer")
    ap.add_argument("--own-runs", type=int, default=None,
                    help="seeded runs of the workbench (default: --runs)")
    ap.add_argument("--standins", nargs="+", default=list(STANDINS), choices=STANDINS)
    ap.add_argument("--peers", nargs="+", default=list(PEERS), choices=list(PEERS))
    ap.add_argument("--epsilon-scale", nargs="+", type=float, default=[1.0, 0.5])
    ap.add_argument("--seed", type=int, default=1000)
    args = ap.parse_args(argv)
    if not args.design.is_file():
        ap.error(f"--design: no file {args.design}")
    if any(not (s > 0) for s in args.epsilon_scale):
        ap.error("--epsilon-scale: every scale must be > 0")
    if args.runs < 1 or (args.own_runs is not None and args.own_runs < 1):
        ap.error("--runs / --own-runs: at least 1")
    sizes = _sizes(args.sizes, ap)
    import _standins

    spec = load_spec(args.design)
    trial = bind(spec, next(spec.configurations()))
    ids = [c.id for c in spec.criteria]
    print("\n".join(header(args.design, trial)), flush=True)
    generators = [*args.peers, OWN]
    named = {n: k for k, n in _standins.SIZES.items()}
    for which in args.standins:
        for n in sizes:
            item = _standins.standin(f"{which}_{named[n]}")
            codes = trial.encode(item.frame)
            print(f"\n## {item.name}: {item.description}", flush=True)
            scored = score(trial, codes, generators, args.epsilon_scale, args.runs,
                           args.own_runs or args.runs, args.seed,
                           log=lambda line: print(line, file=sys.stderr, flush=True))
            for on, words in (("true", "true values"), ("dp", "DP decisions")):
                print(f"\n{item.name}, {len(codes):,} records, {words}:")
                print("\n".join(table(scored, ids, on)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
