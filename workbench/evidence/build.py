"""``workbench proxy build SPEC FACTS --n N --out FILE``: a record-level proxy for any schema.

List-form facts: fit the maximum-entropy distribution over the spec's atoms
(:mod:`workbench.evidence.maxent`, mbi), draw n rows along its junction tree with every
conditional's counts rounded per parent group (``generators.mbi_model``, Private-PGM's
``round``: the proxy's tables sit on the fitted ones), then values inside bins
(:mod:`workbench.evidence.draw`). Table-form facts (the US 2019 file): the ancestral sampler
(:class:`~workbench.evidence.sampler.ProxySampler`), whose product of conditionals is the
maximum-entropy distribution of those nested tables; with the births spec, ``--n 166000
--seed 2014`` rewrites ``data_public/proxy_facts_166k.csv.gz`` byte for byte.

The proxy holds raw values as a run reads them: the spec's columns under their file names
(``source``), missing values as the first declared missing marker. Everything here is public:
the facts are published (or DP) aggregates and the randomness is a seeded numpy Generator.
"""

from __future__ import annotations

import gzip
import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.evidence.draw import BinGrid
from workbench.evidence.fact_list import FactFile, FactsError, load_fact_file
from workbench.evidence.maxent import (
    Problem,
    build_problem,
    column_masses,
    describe_constraint,
    empirical_marginal,
    fit,
    fitted_values,
)

if TYPE_CHECKING:
    from workbench.specification.model import Spec


#: The fit's tolerance, a fraction of a fact's half-rounding. Mirror descent stops after a
#: finite number of steps, and a fact at the edge of what the model can reach (a missing rate
#: of 0.0000: a maximum-entropy model gives every atom some mass) is approached from outside,
#: landing a hair beyond ± (issue 36: 0.0000 fitted as 0.0005 against ±0.0005 was "NO").
#: A tenth of the half-rounding is below every stated digit, so no fact is met more loosely
#: than its rounding can show.
FIT_TOLERANCE = 0.1


def within(value: float | np.ndarray, target: float | np.ndarray, half: float,
           grain: float = 0.0) -> bool:
    """Whether every value meets its target within the rounding, the fit's tolerance and a grain."""
    gap = np.abs(np.asarray(value, dtype=np.float64) - np.asarray(target, dtype=np.float64))
    return bool(np.all(gap <= half * (1 + FIT_TOLERANCE) + grain))


@dataclass(frozen=True)
class FitRow:
    """How one fact is met: its worst cell's target, fitted and proxy values, and the verdict."""

    fact: str
    cell: str
    target: float
    fitted: float
    proxy: float
    tolerance: float
    fit_ok: bool
    proxy_ok: bool


@dataclass
class ProxyBuild:
    """The proxy (spec column names) and the fit report."""

    frame: pd.DataFrame
    rows: list[FitRow]
    facts: FactFile
    notes: list[str] = field(default_factory=list)

    @property
    def all_met(self) -> bool:
        """Every fact met by the proxy's rows, the file a user gets (what the exit code reports);
        in the table form by the plan, since its rows are an i.i.d. sample (sampling noise)."""
        if self.facts.form == "tables":
            return all(r.fit_ok for r in self.rows)
        return all(r.proxy_ok for r in self.rows)


def build_proxy(spec: Spec, facts: str | os.PathLike[str] | FactFile, n: int,
                seed: int = 0) -> ProxyBuild:
    """Fit the facts and draw ``n`` proxy rows (module doc); FactsError names a bad fact."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise FactsError(f"--n must be a whole number >= 1, got {n!r}")
    loaded = facts if isinstance(facts, FactFile) else load_fact_file(facts)
    rng = np.random.default_rng(seed)
    if loaded.form == "tables":
        return _from_tables(spec, loaded, int(n), rng)
    problem = build_problem(spec.columns, loaded.facts)
    model = fit(problem, float(n))
    from workbench.generators.mbi_model import sampling_plan

    codes = sampling_plan(problem.domain, model).sample(int(n), rng, "rounded")
    frame, mean_rows = _decode(problem, model, codes, rng)
    rows = _share_rows(problem, model, codes, float(n)) + mean_rows
    return ProxyBuild(frame, rows, loaded, list(problem.notes))


def _decode(problem: Problem, model: Any, codes: np.ndarray,
            rng: np.random.Generator) -> tuple[pd.DataFrame, list[FitRow]]:
    """Atoms to raw values (inside bins for numeric columns), and the mean facts' rows."""
    data: dict[str, Any] = {}
    rows = []
    for j, (name, atoms) in enumerate(problem.atoms.items()):
        col = codes[:, j]
        missing = col >= atoms.observed
        if atoms.values is not None:
            values = np.asarray(atoms.values, dtype=object)[np.where(missing, 0, col)]
            values[missing] = None
            data[name] = values
            continue
        grid = BinGrid.of(atoms.bins or (), atoms.spec.type == "integer")
        lam = 0.0
        fact = problem.means.get(name)
        if fact is not None:
            masses = column_masses(model, name)[:atoms.observed]
            lam, fitted = grid.solve(masses, float(fact.value or 0.0))
        drawn = grid.draw(np.where(missing, -1, col), lam, rng)
        if fact is not None:
            target, half = float(fact.value or 0.0), 0.5 * fact.rounding
            got = float(np.nanmean(drawn)) if (~missing).any() else float("nan")
            rows.append(FitRow(fact.name, "mean", target, fitted, got, half,
                               within(fitted, target, half), within(got, target, half)))
        data[name] = pd.array(drawn, dtype="Int64") if atoms.spec.type == "integer" else drawn
    return pd.DataFrame(data), rows


def _share_rows(problem: Problem, model: Any, codes: np.ndarray, n: float) -> list[FitRow]:
    """One row per shares or missing-rate fact, at its worst cell in the proxy."""
    rows = []
    domain = problem.domain
    judged = fitted_values(problem, model, n, tolerance=FIT_TOLERANCE)
    for c, (fitted, fit_ok) in zip(problem.constraints, judged, strict=True):
        got = c.value(empirical_marginal(codes, domain, c.clique), n)
        target = np.asarray([c.rate]) if c.rate is not None else np.asarray(c.fact.shares)
        cell, worst = describe_constraint(c, got)
        half = 0.5 * c.fact.share_rounding
        grain = 1.0 / n  # a proxy of n rows holds shares in steps of 1/n
        proxy_ok = within(got, target, half, grain)
        name = c.fact.name if c.fact.index >= 0 else f"missing_rate [{c.clique[0]}] (assumed 0)"
        rows.append(FitRow(name, cell, float(target[worst]), float(fitted[worst]),
                           float(got[worst]), half, fit_ok, proxy_ok))
    return rows


def _from_tables(spec: Spec, facts: FactFile, n: int, rng: np.random.Generator) -> ProxyBuild:
    """The table form: the ancestral sampler, and each table's worst cell in the proxy."""
    from workbench.evidence.sampler import ProxySampler

    have = set(facts.document["columns"])
    absent = [c.name for c in spec.columns if (c.source or c.name) not in have]
    if absent:
        raise FactsError(f"the facts have no table for column(s) {absent}")
    frame = ProxySampler(facts.document).sample(n, rng)
    rows = [_table_row(name, table, frame) for name, table in facts.document["tables"].items()]
    note = ("table form: the fit is the product of the plan's conditionals, which meets every "
            "table exactly; the proxy is an i.i.d. sample of it, so its cells differ by "
            "sampling noise (about sqrt(share/n))")
    return ProxyBuild(frame, rows, facts, [note])


def _table_row(name: str, table: dict[str, Any], frame: pd.DataFrame) -> FitRow:
    """One table of the table form against the proxy: its worst cell's joint share."""
    from workbench.evidence.facts import range_group_index

    n = len(frame)
    parents = list(table["parents"].items())
    keys = [range_group_index(frame[col].to_numpy(np.int64), groups["ranges"])
            if "ranges" in groups else frame[col].to_numpy() for col, groups in parents]
    child = frame[table["child"]].to_numpy()
    if table.get("bin_width"):
        child = child // int(table["bin_width"]) * int(table["bin_width"])
    got = pd.Series(np.ones(n)).groupby([*keys, child]).sum() / n
    want: dict[Any, float] = {}
    for cell in table["cells"]:
        given = [_group_key(groups, cell["given"][col]) for col, groups in parents]
        for v, count in zip(cell["values"], cell["counts"], strict=True):
            want[tuple([*given, v]) if parents else v] = count
    total = float(sum(want.values()))
    gaps = {key: abs(float(got.get(key, 0.0)) - c / total) for key, c in want.items()}
    worst = max(gaps, key=lambda k: gaps[k])
    half = 0.5 / total  # exact counts of the source: a rounding of one record
    return FitRow(name, str(worst), want[worst] / total, want[worst] / total,
                  float(got.get(worst, 0.0)), half, True, gaps[worst] <= half + 1.0 / n)


def _group_key(groups: dict[str, Any], given: Any) -> Any:
    """A parent cell's key as the proxy's grouping computes it (range index, or the value)."""
    if "ranges" in groups:
        return [list(r) for r in groups["ranges"]].index(list(given))
    return given


# ----------------------------------------------------------------------------- output


def raw_frame(build: ProxyBuild, spec: Spec) -> pd.DataFrame:
    """The proxy as a data file holds it: file names (``source``) of the spec's columns."""
    if build.facts.form == "tables":
        return build.frame
    return build.frame.rename(columns={c.name: c.source or c.name for c in spec.columns})


def missing_marker(spec: Spec) -> str:
    """How the proxy writes a missing value: the first declared marker, else an empty field."""
    fmt = spec.file_format
    if fmt.declared:
        if not fmt.missing_markers:
            return ""
        return fmt.missing_markers[0]
    return ""


def write_proxy(build: ProxyBuild, spec: Spec, out: str | os.PathLike[str]) -> Path:
    """Write the proxy CSV (gzip, mtime 0, when the name ends in .gz): same inputs, same bytes."""
    frame = raw_frame(build, spec)
    marker = missing_marker(spec)
    if spec.file_format.declared and not spec.file_format.missing_markers and \
            frame.isna().any().any():
        raise FactsError("the proxy has missing values but schema.file_format declares no "
                         "missing marker to write them with")
    text = frame.to_csv(index=False, lineterminator="\n", na_rep=marker).encode("utf-8")
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.name.endswith(".gz"):
        buf = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
            gz.write(text)
        text = buf.getvalue()
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_bytes(text)
    tmp.replace(target)
    return target


def _fmt(x: float) -> str:
    return f"{x:.4f}" if abs(x) < 10 else f"{x:.4g}"


def format_report(build: ProxyBuild) -> str:
    """The fit table: every fact at its worst cell, target, fitted, proxy, ± and the verdicts."""
    header = ["fact", "worst cell", "target", "fitted", "proxy", "±", "fit within", "proxy within"]
    body = [[r.fact, r.cell[:40], _fmt(r.target), _fmt(r.fitted), _fmt(r.proxy),
             f"{r.tolerance:.2g}", "yes" if r.fit_ok else "NO", "yes" if r.proxy_ok else "NO"]
            for r in build.rows]
    widths = [max(len(x[i]) for x in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(row, widths, strict=True)).rstrip()
             for row in [header, ["-" * w for w in widths], *body]]
    fit = sum(r.fit_ok for r in build.rows)
    proxy = sum(r.proxy_ok for r in build.rows)
    lines.append(f"{fit} of {len(build.rows)} facts met by the fitted distribution within their "
                 f"stated rounding (± is half of it, plus the fit's tolerance, "
                 f"{FIT_TOLERANCE:g} of ±); {proxy} of {len(build.rows)} by the proxy's "
                 f"{len(build.frame):,} rows (allowing their grain, 1/n)")
    lines += [f"note: {note}" for note in build.notes]
    return "\n".join(lines)
