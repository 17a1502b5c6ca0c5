"""Issue 37, task 3: workload variants' faithfulness beside AIM's and MST's at equal ε.

For a frozen design (``--design``, default the frugal one) its generator (the workload family)
is refitted as VARIANTS that change only some hyperparameters (``--variants``; ``shipped`` is
the design as frozen, any other ``NAME=VALUE,...`` overrides those hyperparameters, parsed as
``workbench design --families`` parses a candidate, so a variant here is a candidate there).
``public_measurements=joint`` without a proxy takes the shipped one
(``data_public/proxy_sample_166k.csv.gz``, pinned by its SHA-256).

Each variant is fitted on every US stand-in (``_standins.py``) at each size, at the design's
replace-one ε_gen times each ``--epsilon-scale`` (1 and 0.5), and scored exactly as
``peers.py`` scores (``_scoring.score_iteration``: the engine's post-processing, the criteria
with seeded noise, seed ``--seed`` + run for every generator). Printed per (stand-in, n, ε):
each variant's median exact faithfulness (range), P(all pass) on true values and with the DP
decisions, beside AIM's, MST's and the workbench's from the peers records of the same design
(``--peer-results``, read only, through ``_peer_records``; "no record" where a cell has none).
Then a summary per variant and ε: the median over cells of the cell medians, the cells where
it is at most AIM's, its runs paired by seed with the design's own generator (median Δ, in how
many it is lower) and the runs that passed all criteria. A structure option that the design's
workload leaves nothing to add to is reported as refused and not run (its fit would refuse
before spending anything). The shared proxy is US 2019 records, like the stand-ins, so
``joint``'s figures here are optimistic for a registry of another population.

Resumable (``--results FILE``): one JSON line per finished (variant, stand-in, n, ε, run) cell,
as ``peers.py`` writes them (``_peer_records``; the generator is the variant's label).

Run: nice -n 5 python benchmarks/faithfulness_peers.py [--design FROZEN.json]
     [--peer-results benchmarks/results/peers_frugal.jsonl] [--results FILE.jsonl]
     [--variants shipped sampling=iid ...] [--runs 2] [--sizes 95000 158500]
     [--standins us_sample ...] [--epsilon-scale 1 0.5] [--max-minutes M]
About 20–25 minutes with the defaults on 2 shared cores. ``algorithm=aim`` (fit 3–4 min at
95,000 records under load: 7 model fits) and ``faithfulness_cliques=3`` (≈ 30 s) are not in the
defaults (:data:`SLOW`); give them with ``--variants`` and fewer cells, or resume with
``--results`` and ``--max-minutes``.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _peer_records as records
from _scoring import RunRow
from peers import STANDINS, _sizes, run_grid

from workbench.design.candidates import parse_candidates
from workbench.generators.model_limit import ModelLimit
from workbench.generators.public_proxy import file_hash
from workbench.generators.structure_selection import structure_epsilon
from workbench.specification.document import content_of
from workbench.trial import Trial, bind
from workbench.validation import build_spec

REPO = Path(__file__).resolve().parents[1]
FRUGAL = REPO / "examples" / "israel_births_2014_frugal.frozen.json"
PROXY = "data_public/proxy_sample_166k.csv.gz"
SHIPPED = "shipped"
#: The variants run by default: the design as frozen, then one change each.
VARIANTS = (SHIPPED, "sampling=iid", "public_measurements=joint,one_way_share=0.25",
            "faithfulness_weight=2", "structure=pairs", "structure=pairs_triples",
            "structure=tree", "structure=junction")
#: Variants left out of the default run for their cost (name them with ``--variants``): the
#: pure-ε AIM port refits after each of its rounds, 3-way cliques fit a much larger model.
SLOW = ("algorithm=aim", "faithfulness_cliques=3")
#: The peers records of the shipped designs (``peers.py --results``), by design file name.
PEER_RESULTS = {"israel_births_2014_frugal.frozen.json": "peers_frugal.jsonl",
                "israel_births_2014_lean_robust.frozen.json": "peers_lean_robust.jsonl"}
PEER_ROWS = ("AIM", "MST", "workbench")
FAITH = "faithfulness"


@dataclass(frozen=True)
class Variant:
    """One variant of the design's generator: its label and the hyperparameters it changes."""

    label: str
    params: Mapping[str, Any]


def parse_variants(texts: Sequence[str], family: str) -> list[Variant]:
    """``shipped`` or ``NAME=VALUE,...`` each (checked as a ``--families`` candidate of the
    design's family); ValueError naming ``--variants[i]`` for a bad or repeated one."""
    out: list[Variant] = []
    for i, text in enumerate(texts):
        if text.strip() == SHIPPED:
            params: dict[str, Any] = {}
        else:
            try:
                (candidate,) = parse_candidates([f"{family}:{text}"])
            except ValueError as exc:
                raise ValueError(f"--variants[{i}] {text!r}: "
                                 f"{str(exc).split(': ', 1)[-1]}") from None
            if not candidate.params:
                raise ValueError(f"--variants[{i}] {text!r}: give NAME=VALUE or 'shipped'")
            params = dict(candidate.params)
        if params.get("public_measurements") == "joint" and "public_proxy" not in params:
            params |= {"public_proxy": PROXY, "public_proxy_sha256": file_hash(REPO / PROXY)}
        if any(v.params == params for v in out):
            raise ValueError(f"--variants[{i}] {text!r}: the same variant as an earlier one")
        out.append(Variant(text.strip(), params))
    return out


def variant_document(document: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
    """The design without its freeze record, its generator's grid and configurations changed
    by ``params`` only (every other section, ε_gen and min_count as frozen)."""
    out = copy.deepcopy(content_of(document))
    plain = json.loads(json.dumps(dict(params)))
    for grid in out["generator"]["search_space"]:
        grid.update({k: [v] for k, v in plain.items()})
    for config in out.get("selection", {}).get("configurations", []):
        config["generator"].update(plain)
    out.get("selection", {}).pop("forecast", None)  # the design's rehearsal, not the variant's
    return out


def refusal(trial: Trial) -> str | None:
    """Why the variant's fit would refuse before spending anything (its ``structure`` adds no
    unnamed clique to this design's workload), or None; public: spec and sizes only."""
    generator = trial.generator()
    try:
        structure_epsilon(generator.structure, generator.structure_share, trial.domain,
                          generator.workload, 1.0, ModelLimit.of(trial.spec))
    except ValueError as exc:
        return str(exc)
    return None


def variant_trials(document: Mapping[str, Any], variants: Sequence[Variant]
                   ) -> dict[str, Trial]:
    """Each variant's trial (ValueError naming the variant when the validator refuses it)."""
    out = {}
    for v in variants:
        try:
            spec = build_spec(variant_document(document, v.params))
            out[v.label] = bind(spec, next(spec.configurations()))
        except ValueError as exc:
            raise ValueError(f"--variants {v.label!r}: {exc}") from None
    return out


@dataclass
class Row:
    """One generator's runs in one (stand-in, ε scale) cell."""

    generator: str
    runs: list[RunRow]
    source: str  # "run here" or "peers record"
    seeds: list[int] = field(default_factory=list)  # each run's seed, to pair runs


def rows_of(recs: Sequence[Mapping[str, Any]], generator: str, standin: str, scale: float,
            source: str) -> Row:
    """The records of one generator in one cell, in run order."""
    mine = sorted((r for r in recs if r["generator"] == generator and r["standin"] == standin
                   and float(r["scale"]) == float(scale)), key=lambda r: r["run"])
    return Row(generator, [records.row_of(r) for r in mine], source,
               [int(r["seed"]) for r in mine])


def cell_line(row: Row) -> str:
    """One table row: median exact faithfulness (range), P(all pass) true and DP, fit s."""
    if not row.runs:
        return f"| {row.generator} | {row.source} | no record | | | |"
    faith = [r.exact[FAITH] for r in row.runs]
    med, lo, hi = statistics.median(faith), min(faith), max(faith)
    k = len(row.runs)
    fit = statistics.median(r.fit_seconds for r in row.runs)
    return (f"| {row.generator} | {row.source} | {med:.4f}"
            + ("" if lo == hi else f" ({lo:.4f}–{hi:.4f})")
            + f" | {sum(r.exact_pass for r in row.runs)} of {k} | "
            f"{sum(r.dp_pass for r in row.runs)} of {k} | {fit:.1f} |")


def cell_table(rows: Sequence[Row], threshold: float) -> list[str]:
    """The markdown table of one (stand-in, n, ε) cell."""
    return ["| generator | source | exact faithfulness, median (range) | P(all pass) true | "
            "P(all pass) DP | fit s |", "|---|---|---|---|---|---|",
            f"| threshold (effective) | | {threshold:.4g} | | | |",
            *(cell_line(r) for r in rows)]


def _paired(mine: Row, base: Row) -> list[float]:
    """Faithfulness differences, ``mine`` minus ``base``, of the runs with the same seed."""
    of = {seed: r.exact[FAITH] for seed, r in zip(base.seeds, base.runs, strict=True)}
    return [r.exact[FAITH] - of[seed] for seed, r in zip(mine.seeds, mine.runs, strict=True)
            if seed in of]


def summary(cells: Mapping[tuple[str, float], Sequence[Row]], scales: Sequence[float],
            epsilon_gen: float) -> list[str]:
    """Per generator and ε: the median over cells of its cell medians, the cells where it is at
    most AIM's, the variants' runs paired by seed with the design's own generator (``shipped``
    run here, else the peers records' workbench: the same fit at the same seed; the peers'
    own noise is not seeded, so they are not paired) and all-pass runs (true values)."""
    names: list[str] = []
    for rows in cells.values():
        names += [r.generator for r in rows if r.generator not in names]
    base_name = SHIPPED if SHIPPED in names else "workbench"
    out = ["| generator | replace-one ε_gen | cells | median faithfulness over cells | "
           f"≤ AIM's (cells with AIM) | vs {base_name} (same seeds): median Δ, lower in | "
           "P(all pass) true, runs |", "|---|---|---|---|---|---|---|"]
    for scale in scales:
        for name in names:
            meds, at_most, with_aim, k, total, deltas = [], 0, 0, 0, 0, []
            for (_, s), rows in cells.items():
                if s != scale:
                    continue
                mine = next((r for r in rows if r.generator == name and r.runs), None)
                if mine is None:
                    continue
                med = statistics.median(r.exact[FAITH] for r in mine.runs)
                meds.append(med)
                k += sum(r.exact_pass for r in mine.runs)
                total += len(mine.runs)
                aim = next((r for r in rows if r.generator == "AIM" and r.runs), None)
                if aim is not None and name != "AIM":
                    with_aim += 1
                    at_most += med <= statistics.median(r.exact[FAITH] for r in aim.runs)
                base = next((r for r in rows if r.generator == base_name and r.runs), None)
                if base is not None and mine.source == "run here" and name != base_name:
                    deltas += _paired(mine, base)
            if not meds:
                out.append(f"| {name} | {epsilon_gen * scale:g} | 0 | no record | | | |")
                continue
            versus = f"{at_most} of {with_aim}" if with_aim else "no AIM record"
            paired = (f"{statistics.median(deltas):+.4f}, {sum(d < 0 for d in deltas)} of "
                      f"{len(deltas)}" if deltas else "")
            out.append(f"| {name} | {epsilon_gen * scale:g} | {len(meds)} | "
                       f"{statistics.median(meds):.4f} | "
                       f"{versus if name != 'AIM' else ''} | {paired} | {k} of {total} |")
    return out


def peer_records(path: Path | None, design: Path) -> tuple[list[dict], str]:
    """The peers records of this design (none when there is no file) and where they came from;
    RecordsError naming the file for a bad line or another design's records."""
    if path is None:
        return [], "no --peer-results"
    if not path.exists():
        return [], f"{path} (no such file)"
    return records.load(path, records.design_hash(design))[0], str(path)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--design", type=Path, default=FRUGAL, help="a frozen design (JSON)")
    ap.add_argument("--peer-results", type=Path, default=None,
                    help="peers.py's records of this design (read only; default: "
                         "benchmarks/results/ file of a shipped design)")
    ap.add_argument("--results", type=Path, default=None,
                    help="JSON lines of this benchmark's finished cells: read, skipped, appended")
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS))
    ap.add_argument("--runs", type=int, default=2, help="seeded runs per variant cell")
    ap.add_argument("--sizes", nargs="+", default=["95000", "158500"])
    ap.add_argument("--standins", nargs="+", default=list(STANDINS), choices=STANDINS)
    ap.add_argument("--epsilon-scale", nargs="+", type=float, default=[1.0, 0.5])
    ap.add_argument("--seed", type=int, default=1000, help="run i uses seed + i (as peers.py)")
    ap.add_argument("--max-minutes", type=float, default=None,
                    help="start no cell that would end past this (0: only print the tables)")
    args = ap.parse_args(argv)
    if not args.design.is_file():
        ap.error(f"--design: no file {args.design}")
    if any(not (s > 0) for s in args.epsilon_scale):
        ap.error("--epsilon-scale: every scale must be > 0")
    if args.runs < 1:
        ap.error("--runs: at least 1")
    if args.max_minutes is not None and not (args.max_minutes >= 0):
        ap.error("--max-minutes: must be >= 0")
    sizes = _sizes(args.sizes, ap)
    document = json.loads(args.design.read_text(encoding="utf-8"))
    family = document.get("generator", {}).get("family")
    if family != "workload":
        ap.error(f"--design: generator.family is {family!r}; the variants are of 'workload'")
    peer_path = args.peer_results
    if peer_path is None and args.design.name in PEER_RESULTS:
        peer_path = REPO / "benchmarks" / "results" / PEER_RESULTS[args.design.name]
    sha = records.design_hash(args.design)
    try:
        variants = parse_variants(args.variants, family)
        trials = variant_trials(document, variants)
    except ValueError as exc:
        ap.error(str(exc))
    try:
        peers, peer_source = peer_records(peer_path, args.design)
    except records.RecordsError as exc:
        ap.error(str(exc).replace("--results", "--peer-results"))
    try:
        mine = records.load(args.results, sha)[0] if args.results else []
    except records.RecordsError as exc:
        ap.error(str(exc))
    import _standins

    base = trials[SHIPPED] if SHIPPED in trials else next(iter(trials.values()))
    eps = base.epsilon_generator
    print(f"design {args.design.name}: replace-one ε_gen {eps:g}, ε_total "
          f"{base.spec.epsilon_total:.4g}; variants of its workload generator at ε_gen × "
          f"{', '.join(f'{s:g}' for s in args.epsilon_scale)}, scored as peers.py scores "
          f"(seeds {args.seed}+run, the same for every generator); peers from {peer_source}",
          flush=True)
    refused = {v.label: why for v in variants if (why := refusal(trials[v.label]))}
    for v in variants:
        changed = ", ".join(f"{k}={v.params[k]}" for k in v.params
                            if k != "public_proxy_sha256") or "as frozen"
        print(f"  {v.label}: {changed}" + (f" — not run, its fit refuses: {refused[v.label]}"
                                             if v.label in refused else ""))
    variants = [v for v in variants if v.label not in refused]
    named = {n: k for k, n in _standins.SIZES.items()}
    items = [(f"{which}_{named[n]}", n) for which in args.standins for n in sizes]
    todo = records.plan([v.label for v in variants], items, args.epsilon_scale,
                        {v.label: args.runs for v in variants}, args.seed,
                        (records.cell_of(r).key() for r in mine))
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    log(f"{len(mine)} records read, {len(todo)} cells to run")
    commit = records.code_commit(REPO)
    codes_of = _standins.encoder(base.encode)

    save = records.saver(mine, args.results, design=args.design.name, design_sha=sha,
                         commit=commit, epsilon_of=lambda cell: eps * cell.scale,
                         neighbour_of=lambda cell: "replace-one")
    slowest = records.slowest(mine)
    run_grid(base, todo, codes_of, save,
             None if args.max_minutes is None else args.max_minutes * 60, slowest, log,
             factories={v.label: trials[v.label].generator for v in variants})
    cells: dict[tuple[str, float], list[Row]] = {}
    for name, _n in items:
        for scale in args.epsilon_scale:
            rows = [rows_of(mine, v.label, name, scale, "run here") for v in variants]
            rows += [rows_of(peers, g, name, scale, "peers record") for g in PEER_ROWS]
            cells[(name, scale)] = rows
            threshold = statistics.median(
                r.effective[FAITH] for row in rows for r in row.runs) if any(
                row.runs for row in rows) else float("nan")
            print(f"\n## {name}, replace-one ε_gen {eps * scale:g} (AIM, MST at add/remove "
                  f"{eps * scale / 2:g})")
            print("\n".join(cell_table(rows, threshold)), flush=True)
    print("\n## summary (true values; a cell is a stand-in and size)")
    print("\n".join(summary(cells, args.epsilon_scale, eps)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
