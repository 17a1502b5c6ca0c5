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
Last, issue 37's test per stand-in (``verdict``): the workbench's true-value P(all pass) at
least AIM's at equal privacy, and at the smallest ε scale at least AIM's at the largest, as
rates of k of R runs, with a count of stand-ins below and without records.

Resumable (``--results FILE``, ``_peer_records.py``): one JSON line per finished cell (generator,
stand-in, size, ε, run) with its scores, fit time, the ε handed to the generator, the design's
hash, the commit and the date, appended atomically; a rerun skips finished cells and prints the
tables from every record (a cell's "k of R": R its runs so far). The work is ordered so that
every cell gets its first run before any gets a second, the workbench's and MST's cells first
in each run; ``--max-minutes`` starts no cell that would end past the limit (by the generator's
slowest recorded iteration) and then prints the tables. ``--max-minutes 0`` only prints them.

Run: nice -n 10 python benchmarks/peers.py --design FROZEN.json [--results FILE.jsonl]
     [--max-minutes M] [--sizes 95000 158500] [--runs 4] [--own-runs R]
     [--standins us_sample us_reweighted us_thinned us_thickened] [--peers aim mst]
     [--epsilon-scale 1 0.5]
AIM's fit takes 40–620 s per run at 95,000 records: the default grid (4 stand-ins × 2 sizes ×
2 ε × 4 runs × 3 generators) is hours on 2 cores, hence the results file.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import _peer_records as records
import numpy as np
from _baselines import OpenDPAim, OpenDPMst, OpenDPPeer, add_remove_epsilon
from _peer_records import Cell
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
    """One markdown table: ``on`` is 'true' (exact values) or 'dp' (DP values and decisions);
    a generator with no run yet has a row saying so."""
    if on not in ("true", "dp"):
        raise ValueError(f"on: 'true' or 'dp', not {on!r}")
    head = columns(ids)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    first = next((s.runs for s in scored if s.runs), [])
    thresholds = [f"{statistics.median(r.effective[i] for r in first):.4g}" if first else ""
                  for i in ids]
    lines.append("| threshold (effective, median) | | | | " + " | ".join(thresholds) + " | | |")
    for s in scored:
        if not s.runs:
            cells = [s.generator, f"{s.epsilon_gen:g}", f"{s.neighbour} {s.epsilon_run:g}",
                     "0 of 0 (not run yet)", *([""] * len(ids)), "", ""]
            lines.append("| " + " | ".join(cells) + " |")
            continue
        k = sum(r.exact_pass if on == "true" else r.dp_pass for r in s.runs)
        values = [statistics.median((r.exact if on == "true" else r.dp_values)[i]
                                    for r in s.runs) for i in ids]
        cells = [s.generator, f"{s.epsilon_gen:g}", f"{s.neighbour} {s.epsilon_run:g}",
                 f"{k} of {len(s.runs)}", *(f"{v:.4g}" for v in values),
                 _span([r.fit_seconds for r in s.runs], ".1f"),
                 f"{statistics.median(r.seconds for r in s.runs):.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _rate(s: Scored | None) -> tuple[float | None, str]:
    """True-value P(all pass) as a rate and as 'k of R' ('no record' before a first run)."""
    if s is None or not s.runs:
        return None, "no record"
    k = sum(r.exact_pass for r in s.runs)
    return k / len(s.runs), f"{k} of {len(s.runs)}"


def _at_least(a: float | None, b: float | None) -> str:
    """'yes' / 'NO' for a ≥ b on true-value pass rates, '?' while a side has no run."""
    return "?" if a is None or b is None else ("yes" if a >= b else "NO")


def verdict(by_standin: Mapping[str, Sequence[Scored]], peer: str = "AIM") -> list[str]:
    """Issue 37's test on true values, per stand-in: the workbench's P(all pass) ≥ the peer's at
    equal privacy (every scale), and at the smallest scale ≥ the peer's at the largest."""
    scales = sorted({s.epsilon_gen for ss in by_standin.values() for s in ss}, reverse=True)
    if len(scales) < 2:
        return []
    full, half = scales[0], scales[-1]
    head = ["stand-in", f"{OWN} ε_gen {full:g}", f"{peer} ε_gen {full:g}",
            f"{OWN} ε_gen {half:g}", f"{peer} ε_gen {half:g}", "≥ at equal ε",
            f"{OWN} at {half:g} ≥ {peer} at {full:g}"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    tally = {"equal": [], "half": []}
    for name, scored in by_standin.items():
        find = {(s.generator, s.epsilon_gen): s for s in scored}
        (wf, wf_t), (pf, pf_t) = _rate(find.get((OWN, full))), _rate(find.get((peer, full)))
        (wh, wh_t), (ph, ph_t) = _rate(find.get((OWN, half))), _rate(find.get((peer, half)))
        equal = [_at_least(wf, pf), _at_least(wh, ph)]
        equal_word = "NO" if "NO" in equal else ("?" if "?" in equal else "yes")
        half_word = _at_least(wh, pf)
        tally["equal"].append(equal_word)
        tally["half"].append(half_word)
        lines.append("| " + " | ".join([name, wf_t, pf_t, wh_t, ph_t, equal_word, half_word])
                     + " |")
    for key, words in (("equal", "at equal privacy"),
                       ("half", f"at ε_gen {half:g} against {peer} at {full:g}")):
        got = tally[key]
        lines.append(f"{words}: the workbench's P(all pass) ≥ {peer}'s on {got.count('yes')} of "
                     f"{len(got)} stand-ins ({got.count('NO')} below, {got.count('?')} without "
                     "a record on both sides)")
    return lines


def from_records(recs: Sequence[dict], standin: str, epsilon_gen: float,
                 scales: Sequence[float], generators: Sequence[str]) -> list[Scored]:
    """Every generator at every ε scale on one stand-in (name with size), from the records:
    all their runs so far, in run order."""
    out = []
    for scale in scales:
        for name in generators:
            gen = label(name)
            mine = sorted((r for r in recs if r["standin"] == standin and r["generator"] == gen
                           and float(r["scale"]) == float(scale)), key=lambda r: r["run"])
            ran = {float(r["epsilon_run"]) for r in mine}
            if len(ran) > 1:
                raise records.RecordsError(f"{gen} on {standin} at scale {scale:g}: records at "
                                           f"different ε {sorted(ran)}")
            own = name == OWN
            eps = epsilon_gen * scale
            as_run = ran.pop() if ran else (eps if own else add_remove_epsilon(eps))
            out.append(Scored(gen, eps, as_run, "replace-one" if own else "add/remove",
                              [records.row_of(r) for r in mine]))
    return out


def run_grid(trial: Trial, cells: Sequence[Cell], codes_of: Callable[[str], np.ndarray],
             save: Callable[[Cell, RunRow], None], max_seconds: float | None = None,
             slowest: dict[str, float] | None = None, log=None,
             factories: dict[str, Callable[[], object]] | None = None) -> int:
    """Work ``cells`` in order, saving each when it finishes; stop before a cell that would end
    past ``max_seconds`` (judged by its generator's slowest iteration so far, ``slowest``).
    ``factories``: the generator of each label (default: the design's own or a peer).
    Returns how many cells finished."""
    start, done = time.monotonic(), 0
    slowest = dict(slowest or {})
    names = {label(n): n for n in (*PEERS, OWN)}
    for cell in cells:
        elapsed = time.monotonic() - start
        if max_seconds is not None and elapsed + slowest.get(cell.generator, 0.0) >= max_seconds:
            if log is not None:
                log(f"--max-minutes: stopping after {elapsed / 60:.1f} min, {done} cells done, "
                    f"{len(cells) - done} left (next: {cell.generator} {cell.standin})")
            break
        eps = trial.epsilon_generator * cell.scale
        factory = (factories[cell.generator] if factories is not None
                   else make(names[cell.generator], trial))
        row = score_iteration(trial, factory, codes_of(cell.standin), eps, cell.seed)
        save(cell, row)
        done += 1
        slowest[cell.generator] = max(slowest.get(cell.generator, 0.0), row.seconds)
        if log is not None:
            log(f"    {cell.generator} {cell.standin} ε_gen {eps:g} run {cell.run + 1}: fit "
                f"{row.fit_seconds:.1f} s, all pass (true) {row.exact_pass} "
                f"[{done} of {len(cells)}]")
    return done


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
    ap.add_argument("--results", type=Path, default=None,
                    help="JSON lines of finished cells: read, skipped, appended to")
    ap.add_argument("--max-minutes", type=float, default=None,
                    help="start no cell that would end past this (0: only print the tables)")
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
    if args.max_minutes is not None and not (args.max_minutes >= 0):
        ap.error("--max-minutes: must be >= 0")
    if args.results is not None and args.results.is_dir():
        ap.error(f"--results: {args.results} is a directory")
    sizes = _sizes(args.sizes, ap)
    sha = records.design_hash(args.design)
    try:
        recs = records.load(args.results, sha)[0] if args.results else []
    except records.RecordsError as err:
        ap.error(str(err))
    import _standins

    spec = load_spec(args.design)
    trial = bind(spec, next(spec.configurations()))
    ids = [c.id for c in spec.criteria]
    print("\n".join(header(args.design, trial)), flush=True)
    generators = [*args.peers, OWN]
    named = {n: k for k, n in _standins.SIZES.items()}
    items = [(f"{which}_{named[n]}", n) for which in args.standins for n in sizes]
    runs = {label(g): (args.own_runs or args.runs) if g == OWN else args.runs
            for g in generators}
    todo = records.plan(list(runs), items, args.epsilon_scale, runs, args.seed,
                        (records.cell_of(r).key() for r in recs))
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    log(f"{len(recs)} records read, {len(todo)} cells to run")
    commit = records.code_commit(Path(__file__).resolve().parents[1])

    save = records.saver(
        recs, args.results, design=args.design.name, design_sha=sha, commit=commit,
        epsilon_of=lambda cell: trial.epsilon_generator * cell.scale,
        neighbour_of=lambda cell: "replace-one" if cell.generator == OWN else "add/remove")
    slowest = records.slowest(recs)
    codes_of = _standins.encoder(trial.encode)

    run_grid(trial, todo, codes_of, save,
             None if args.max_minutes is None else args.max_minutes * 60, slowest, log)
    by_standin: dict[str, list[Scored]] = {}
    for name, _n in items:
        item = _standins.standin(name)
        print(f"\n## {item.name}: {item.description}", flush=True)
        scored = from_records(recs, name, trial.epsilon_generator, args.epsilon_scale,
                              generators)
        by_standin[name] = scored
        for on, words in (("true", "true values"), ("dp", "DP decisions")):
            print(f"\n{item.name}, {len(item.frame):,} records, {words}:")
            print("\n".join(table(scored, ids, on)), flush=True)
    if "aim" in args.peers:
        lines = verdict(by_standin)
        if lines:
            print("\n## The workbench against AIM, P(all pass) on true values (k of R runs)\n")
            print("\n".join(lines), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
