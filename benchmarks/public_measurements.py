"""Must-show 4 of issue 26: public data inside the generator, at equal replace-one ε.

On stand-in registries unlike the shipped proxy (``_standins.py``), the designed lean example
(``examples/israel_births_2014_lean_designed.frozen.json``: ε_gen 2, replace-one) is run with
four generators at the same ε_gen:

* ``plain``: the workload family as designed (``one_way_share`` 0);
* ``plain_1way``: the same with ``one_way_share`` 0.25 and no public data (what the 1-way
  measurements alone do, so that ``joint``'s gain from the proxy shows on its own);
* ``joint``: the same with ``public_measurements: joint`` — the shipped proxy
  (``data_public/proxy_sample_166k.csv.gz``, pinned by its SHA-256) as free measurements where
  a DP choice prefers them, the 1-way marginals kept private where the proxy disagrees —
  and ``one_way_share`` 0.25 (the family's default; 'joint' needs 1-way candidates);
* ``jam_pgm``: the JAM-PGM baseline (``_baselines.JamPgm``, pure-ε parts, same proxy);
* ``aim``: OpenDP's AIM (``_baselines.OpenDPAim``, add/remove ε = ε_gen/2).

Every candidate goes through the engine's own post-processing (synthetic rules, min_count
projection) and the spec's 8 criteria: released with DP (seeded noise; the once-statistic
afresh each run, as a new run would) and exact (``workbench.criteria.exact_errors``). The table
gives, per stand-in and generator, P(all 8 pass) with the DP decisions and on the exact values
(against each criterion's effective threshold), the median exact value of each criterion, and
the median time per iteration (fit, sample, project, evaluate) with the fit's share. Runs are
seeded (``PrivacyContext.simulation(seed, noise=SeededNoise(seed))``), except AIM's own noise.

Run: nice -n 10 python benchmarks/public_measurements.py [--standins NAME ...] [--runs 8]
     [--baseline-runs 3] [--methods plain plain_1way joint jam_pgm aim] [--jam-rounds 30]
(about an hour on 2 shared cores: JAM-PGM's 30 refits and AIM's fit dominate).
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
from pathlib import Path

import _standins
from _baselines import JamPgm, OpenDPAim
from _scoring import RunRow, score_iteration

from workbench.generators.public_proxy import file_hash, proxy_counts
from workbench.specification.document import content_of
from workbench.trial import Trial, bind
from workbench.validation import build_spec

REPO = Path(__file__).resolve().parents[1]
LEAN = REPO / "examples" / "israel_births_2014_lean_designed.frozen.json"
PROXY = "data_public/proxy_sample_166k.csv.gz"
METHODS = ("plain", "plain_1way", "joint", "jam_pgm", "aim")
OWN = ("plain", "plain_1way", "joint")
DEFAULT_STANDINS = ("us_sample_95k", "us_reweighted_95k", "us_thinned_95k", "us_thickened_95k")


def specs(one_way_share: float, selection_share: float) -> dict[str, object]:
    """The lean design as frozen ('plain'), with a 1-way share ('plain_1way') and with the
    public option ('joint')."""
    doc = content_of(json.loads(LEAN.read_text(encoding="utf-8")))

    def variant(extra: dict[str, object]) -> object:
        out = copy.deepcopy(doc)
        for grid in out["generator"]["search_space"]:
            grid.update({k: [v] for k, v in extra.items()})
        for config in out["selection"]["configurations"]:
            config["generator"].update(extra)
        return build_spec(out)

    return {"plain": build_spec(doc),
            "plain_1way": variant({"one_way_share": one_way_share}),
            "joint": variant({"public_measurements": "joint", "public_proxy": PROXY,
                              "public_proxy_sha256": file_hash(REPO / PROXY),
                              "one_way_share": one_way_share,
                              "public_selection_share": selection_share})}


def make_generator(method: str, trials: dict[str, Trial], args: argparse.Namespace):
    """An unfitted generator of ``method`` (the baselines on the plain trial's workload)."""
    if method in OWN:
        return trials[method].generator()
    workload = trials["plain"].generator().workload
    if method == "aim":
        return OpenDPAim(workload)
    joint = trials["joint"]
    public = proxy_counts(joint.spec, joint.table, PROXY, file_hash(REPO / PROXY))
    return JamPgm([item.clique for item in workload.items if item.weight > 0], public,
                  rounds=args.jam_rounds)


def one_run(method: str, trials: dict[str, Trial], codes, seed: int,
            args: argparse.Namespace) -> RunRow:
    """Fit, post-process and evaluate once; DP decisions and exact values (``_scoring``)."""
    trial = trials["plain"]  # criteria, codec and post-processing are the same for all
    return score_iteration(trial, lambda: make_generator(method, trials, args), codes,
                           trial.epsilon_generator, seed)


def table(name: str, rows: dict[str, list[RunRow]], ids: list[str]) -> None:
    """Print one stand-in's comparison."""
    short = {i: i.replace("regression_", "reg_").replace("mean_", "m_")[:12] for i in ids}
    head = f"{'generator':<10} {'runs':>4} {'P(DP)':>6} {'P(ex)':>6} " + " ".join(
        f"{short[i]:>12}" for i in ids) + f" {'s/iter':>7} {'fit s':>6}"
    print(head)
    ref = next(iter(rows.values()))
    print(f"{'threshold':<10} {'':>4} {'':>6} {'':>6} " + " ".join(
        f"{statistics.median(r.effective[i] for r in ref):>12.4g}" for i in ids))
    for method, runs in rows.items():
        k = len(runs)
        print(f"{method:<10} {k:>4} {sum(r.dp_pass for r in runs) / k:>6.2f} "
              f"{sum(r.exact_pass for r in runs) / k:>6.2f} "
              + " ".join(f"{statistics.median(r.exact[i] for r in runs):>12.4g}" for i in ids)
              + f" {statistics.median(r.seconds for r in runs):>7.1f}"
              f" {statistics.median(r.fit_seconds for r in runs):>6.1f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--standins", nargs="+", default=list(DEFAULT_STANDINS))
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--runs", type=int, default=8, help="seeded runs of plain(_1way), joint")
    ap.add_argument("--baseline-runs", type=int, default=3, help="runs of jam_pgm and aim")
    ap.add_argument("--jam-rounds", type=int, default=30)
    ap.add_argument("--one-way-share", type=float, default=0.25)
    ap.add_argument("--selection-share", type=float, default=0.05)
    args = ap.parse_args()
    built = specs(args.one_way_share, args.selection_share)
    trials = {k: bind(s, next(s.configurations())) for k, s in built.items()}
    ids = [c.id for c in built["plain"].criteria]
    print(f"lean design {LEAN.name}: ε_gen {trials['plain'].epsilon_generator:g} (replace-one) "
          f"for every generator; public proxy {PROXY}; P(DP) = all {len(ids)} criteria pass "
          "with their DP values, P(ex) = on their exact values; medians of exact values; "
          "seconds per iteration (fit + sample + project + evaluate)")
    for name in args.standins:
        item = _standins.standin(name)
        codes = trials["plain"].encode(item.frame)
        print(f"\n{name}: {item.description}")
        rows: dict[str, list[RunRow]] = {}
        for method in args.methods:
            runs = args.runs if method in OWN else args.baseline_runs
            rows[method] = [one_run(method, trials, codes, 1000 + i, args) for i in range(runs)]
        table(name, rows, ids)


if __name__ == "__main__":
    main()
