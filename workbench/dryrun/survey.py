"""``workbench dryrun --survey-plots``: the proxy simulation of a survey spec (Merrill ch. 4).

The public proxy plays the population. Samples are drawn by SRS at ``fraction``; the spec's
weighted criteria and weighted counts become estimators (a weighted mean for each
``weighted_mean``, a weighted share for each weighted count and for the first cell of each
``weighted_marginal_error``), run without and with DP at each ε; the paired boxplots, the
per-method boxplots, the what-if tables and the crossover ε (measured and by formula) are
written to ``out_dir``. An optional ``mask(sample, rng) -> keep`` adds a missingness model.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.criteria import kinds
from workbench.sources import column_names
from workbench.specification import Spec
from workbench.survey.design import Design, crossover_epsilon
from workbench.survey.plots import method_boxplots, paired_boxplots, what_if_table
from workbench.survey.simulation import Estimator, Mask, SimulationResult, proportion
from workbench.survey.simulation import simulate as run_simulation
from workbench.survey.whatif import binning_options
from workbench.transform.clean import clean
from workbench.transform.raw import apply_domain_policy, read_raw
from workbench.trial import Trial, bind

EPSILONS = (0.1, 0.5, 1.0, 2.0)


def proxy_population(spec: Spec, proxy: str | Path) -> pd.DataFrame:
    """The cleaned proxy (schema columns, plus the weight column when the file has it)."""
    assert spec.survey is not None
    header = column_names(proxy)  # a CSV's header, or a file's or table's columns
    extra = [spec.survey.weight_column] if spec.survey.weight_column in header else []
    frame = read_raw(proxy, spec.columns, extra=extra)
    return clean(apply_domain_policy(frame, spec.columns), spec).dropna().reset_index(drop=True)


def estimators(spec: Spec, population: pd.DataFrame, w: float
               ) -> tuple[dict[str, Estimator], dict[str, float], dict[str, float],
                          dict[str, str]]:
    """(estimators, population truths, Laplace sensitivities of their weighted sums / N,
    the estimator of each weighted criterion)."""
    assert spec.survey is not None
    est: dict[str, Estimator] = {}
    truth: dict[str, float] = {}
    delta: dict[str, float] = {}
    names: dict[str, str] = {}
    n_pop = len(population)

    def share(name: str, column: str, value: Any) -> None:
        est[name] = proportion(column, value, w, w)
        truth[name] = float((population[column].astype(str) == str(value)).mean())
        delta[name] = w / n_pop

    for q in spec.survey.weighted_counts:
        share(f"share {q.column}={q.value}", q.column, q.value)
    for c in spec.criteria:  # each weighted kind says what it estimates
        made = kinds.get(c.kind).survey_estimand(c, population, w)
        if made is not None:
            name, estimator, true_value, sensitivity = made
            est[name], truth[name], delta[name], names[c.id] = (estimator, true_value,
                                                                sensitivity, name)
    return est, truth, delta, names


def survey_dry_run(spec: Spec, proxy: str | Path, out_dir: str | Path, *,
                   fraction: float = 0.05, reps: int = 50, seed: int = 0,
                   epsilons: Sequence[float] = EPSILONS, mask: Mask | None = None
                   ) -> dict[str, Any]:
    """Simulate, plot and tabulate; returns the result, the tables and the written files."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if spec.survey is None:
        raise ValueError("--survey-plots needs a spec with a survey section")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    population = proxy_population(spec, proxy)
    design = Design(fraction)
    w = 1 / fraction
    est, truth, delta, names = estimators(spec, population, w)
    result: SimulationResult = run_simulation(population, design, est, truth, epsilons, reps,
                                              seed, mask=mask, neighbour=spec.budget.neighbour)
    sampling_sd = {k: float(result.estimates[(result.estimates["estimator"] == k)
                                             & result.estimates["epsilon"].isna()]
                            ["estimate"].std()) for k in est}
    table = what_if_table(result, delta, sampling_sd)
    files = []
    for name in est:
        ax = paired_boxplots(result, name)
        path = out / f"paired_{_slug(name)}.png"
        ax.figure.savefig(path, dpi=90, bbox_inches="tight")
        plt.close(ax.figure)
        files.append(path)
    ax = method_boxplots(result, 1.0 if 1.0 in epsilons else float(epsilons[0]))
    files.append(out / "methods.png")
    ax.figure.savefig(files[-1], dpi=90, bbox_inches="tight")
    plt.close(ax.figure)
    table.to_csv(out / "what_if.csv", index=False)
    binnings = pd.DataFrame(proxy_binning_options(bind(spec, next(spec.configurations())),
                                                  population))
    binnings.to_csv(out / "binning_what_if.csv", index=False)
    crossover = {k: (result.measured_crossover(k), crossover_epsilon(delta[k], sampling_sd[k]))
                 for k in est}
    return {"result": result, "what_if": table, "binnings": binnings, "files": files,
            "crossover": crossover, "criteria_epsilon": _criteria_epsilon(spec, names)}


def proxy_binning_options(trial: Trial, proxy: pd.DataFrame) -> list[dict[str, Any]]:
    """The binning what-if on the whole proxy as the sample the pipeline will see (its weight
    column when it has one, else equal weights N/n); any configuration's ``trial`` bins the
    margin columns alike (they have one alternative)."""
    spec, codec = trial.spec, trial.table
    assert spec.survey is not None
    name = spec.survey.weight_column
    n_pop = float(sum(spec.survey.margins[0].totals))
    bwt = (pd.to_numeric(proxy[name]).to_numpy(dtype=float) if name in proxy.columns
           else np.full(len(proxy), n_pop / max(len(proxy), 1)))
    return binning_options(spec.survey, codec.decode(codec.encode(proxy)), bwt)


def _criteria_epsilon(spec: Spec, names: dict[str, str]) -> dict[str, tuple[str, float]]:
    """Each weighted criterion's estimator and ε, shown next to its crossover ε."""
    return {c.id: (names[c.id], c.epsilon) for c in spec.criteria if c.id in names}


def _slug(name: str) -> str:
    """A file-name-safe version of an estimator name."""
    return "".join(ch if ch.isalnum() else "_" for ch in name).strip("_")


def print_survey_report(report: dict[str, Any]) -> None:
    """The crossover readouts and both what-if tables, for the command line."""
    res: SimulationResult = report["result"]
    print(f"survey simulation: {res.design.name} of the proxy (N = {res.population:,}, "
          f"n = {res.n:,}), {res.estimates['rep'].nunique()} repetitions")
    with pd.option_context("display.width", 140, "display.max_columns", 20):
        print(res.summary().to_string(index=False))
        print("\nwhat-if (noise SD per option; crossover ε* = √2·Δ/SD_sampling):")
        print(report["what_if"].to_string(index=False, float_format=lambda x: f"{x:.4g}"))
        print("\nbinning what-if (selection probability and weighted-count noise SD):")
        print(report["binnings"].to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    for name, (measured, formula) in report["crossover"].items():
        print(f"crossover ε {name}: measured {measured:.4g}, formula {formula:.4g}")
    for cid, (name, eps) in report["criteria_epsilon"].items():
        measured, formula = report["crossover"][name]
        side = "below" if eps < formula else "above"
        print(f"criterion {cid}: ε = {eps:g}, {side} the crossover ε* = {formula:.4g} of "
              f"'{name}' ({'DP noise dominates' if side == 'below' else 'sampling dominates'})")
    print("plots: " + ", ".join(str(f) for f in report["files"]))
