"""``workbench pilot SPEC DATA --epsilon E --out FACTS``: a DP pilot when no public table exists.

It measures the confidential file once, through a confidential :class:`PrivacyContext`
(OpenDP noise, the dataset's fsynced ledger), and writes a public FACTS file
(``docs/facts.md``, list form) that ``workbench proxy build`` reads.

**What is measured.** Every spec column is read raw (the spec's columns only, its declared
file format; no domain policy, no cleaning), in chunks (``transform.stream.fold_raw``: each
chunk's tables are added to the running sums before the next chunk is read, so the peak holds
one raw chunk, and the sums are the whole table's counts), and each cell coded as one of: a
declared value (categorical, ordinal) or a bin (integer, continuous: the finest ``bins``
alternative of its transformations cut to the declared bounds, else ten equal bins),
*missing*, or *out of domain* (any value the spec does not declare, including text in a
numeric column). Then:

* one count table per column over those cells (the 1-way marginal, the missing count and the
  out-of-domain count in one table);
* one count table per declared pair ``a:b`` over the product of the two columns' cells.

**Sensitivity.** Each row falls in exactly one cell of each table, so replacing one row moves
one unit out of one cell and into another: Δ₁ = 2 for every table (replace-one;
``tests/test_pilot.py`` checks it on neighbouring datasets).

**Split of E.** The k column tables and the |P| pair tables get ε_t = E / (k + |P|) each,
discrete Laplace(Δ/ε_t) on every cell; by sequential composition the pilot is E-DP. It is
charged to the dataset's budget store like a run: its measurements are 'once' lines in the
dataset's ledger, so the lifetime cap counts them, and a second pilot or a later run on the
dataset is refused without ``--spend-again`` (``engine.guard.check_pilot_budget``).

**What is written** (post-processing only, :mod:`workbench.engine.pilot_facts`): the noisy
tables are made consistent by Private-PGM's estimate (``generators.mbi_model``), then each
column's shares among its declared values, its missing rate and its out-of-domain count
(never the labels: they are not measured), and each pair's shares; every number rounded to
0.01% or a whole count. Nothing exact about the data leaves the pilot: not n, not a label.
With ``--discover-labels`` the pilot also releases, at its own ε and δ, the frequent unknown
labels of label columns and the side (below, above) of numeric columns' out-of-range values
(:mod:`workbench.engine.pilot_labels`), in the FACTS file's ``discovered`` section; the pilot
is then (E + ε_d, δ)-DP and its ledger lines carry δ. What a later run publishes about n is
the spec's ``metadata.n_policy``, in the words of
:func:`workbench.specification.n_policy.pilot_words` (the pilot's help says it too).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.engine import pilot_labels
from workbench.engine.guard import check_pilot_budget, dataset_budget
from workbench.engine.pilot_labels import Discovery
from workbench.engine.rundir import RunRefused, write_json_atomic
from workbench.privacy import Accountant, Ledger, PrivacyContext
from workbench.privacy.budget_store import BudgetStoreError
from workbench.sources import exists, public_name
from workbench.specification import Spec
from workbench.transform import ColumnSpec, EncodingError
from workbench.transform.codecs import BinsCodec
from workbench.transform.raw import out_of_domain
from workbench.transform.stream import fold_raw

#: Δ₁ of every pilot table under replace-one (module doc).
SENSITIVITY = 2
#: Bins of a numeric column without a ``bins`` alternative.
DEFAULT_BINS = 10


@dataclass(frozen=True)
class PilotColumn:
    """One column's cells: its values or bins (public, from the spec), then missing, then
    out of domain."""

    spec: ColumnSpec
    values: tuple[Any, ...] | None
    bins: tuple[tuple[float, float], ...] | None

    @property
    def observed(self) -> int:
        return len(self.values if self.values is not None else self.bins or ())

    @property
    def size(self) -> int:
        return self.observed + 2  # + missing + out of domain

    def codes(self, frame: pd.DataFrame) -> np.ndarray:
        """Each row's cell (CONFIDENTIAL: only tables of these codes are measured, with noise)."""
        series = frame[self.spec.name]
        missing = series.isna().to_numpy()
        ood = out_of_domain(frame, self.spec)
        code = np.full(len(frame), self.observed, dtype=np.int64)
        ok = ~missing & ~ood
        if self.values is not None:
            if self.spec.numeric:
                x = pd.to_numeric(series, errors="coerce").to_numpy(np.float64, na_value=np.nan)
                lookup = {float(v): i for i, v in enumerate(self.values)}
                code[ok] = [lookup[v] for v in x[ok]]
            else:
                lookup = {str(v): i for i, v in enumerate(self.values)}
                code[ok] = series[ok].astype("string").map(lookup).to_numpy(np.int64)
        else:
            x = pd.to_numeric(series, errors="coerce").to_numpy(np.float64, na_value=np.nan)
            lows = np.asarray([b[0] for b in self.bins or ()])
            code[ok] = np.clip(np.searchsorted(lows, x[ok], side="right") - 1, 0, len(lows) - 1)
        code[ood] = self.observed + 1
        return code


def pilot_columns(spec: Spec) -> list[PilotColumn]:
    """Every spec column's cells, from public spec parameters only."""
    out = []
    for col in spec.columns:
        if col.domain is not None:
            out.append(PilotColumn(col, tuple(col.domain), None))
        else:
            out.append(PilotColumn(col, None, _bins(spec, col)))
    return out


def _bins(spec: Spec, col: ColumnSpec) -> tuple[tuple[float, float], ...]:
    """The finest ``bins`` alternative cut to the bounds, else equal bins (docs/facts.md)."""
    lo, hi = col.bounds  # type: ignore[misc]
    integer = col.type == "integer"
    edges: list[float] = []
    for alt in spec.transform(col.name).alternatives:
        codec = getattr(alt.codec, "base", alt.codec)
        if isinstance(codec, BinsCodec):
            inner = [e for e in codec.edges if lo < e <= hi]
            edges = inner if len(inner) > len(edges) else edges
    if not edges:
        edges = list(np.unique(np.linspace(lo, hi + (1 if integer else 0), DEFAULT_BINS + 1)
                               [1:-1].round() if integer else
                               np.linspace(lo, hi, DEFAULT_BINS + 1)[1:-1]))
    starts = [lo, *edges]
    ends = [e - 1 if integer else e for e in edges] + [hi]
    return tuple((float(a), float(b)) for a, b in zip(starts, ends, strict=True) if a <= b)


def exact_tables(frame: pd.DataFrame, columns: Sequence[PilotColumn],
                 pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, ...], np.ndarray]:
    """The CONFIDENTIAL count tables the pilot measures (Δ₁ = 2 each; module doc)."""
    codes = {c.spec.name: c.codes(frame) for c in columns}
    sizes = {c.spec.name: c.size for c in columns}
    tables: dict[tuple[str, ...], np.ndarray] = {}
    for name, code in codes.items():
        tables[(name,)] = np.bincount(code, minlength=sizes[name]).astype(np.int64)
    for a, b in pairs:
        flat = codes[a] * sizes[b] + codes[b]
        tables[(a, b)] = np.bincount(flat, minlength=sizes[a] * sizes[b]).astype(
            np.int64).reshape(sizes[a], sizes[b])
    return tables


def parse_pairs(spec: Spec, raw: Sequence[str]) -> list[tuple[str, str]]:
    """``a:b`` pairs of distinct spec columns (each once)."""
    out: list[tuple[str, str]] = []
    for item in raw:
        parts = item.split(":")
        if len(parts) != 2 or parts[0] == parts[1]:
            raise RunRefused(f"--pairs {item!r}: give two different columns as a:b")
        for p in parts:
            if p not in spec.column_names:
                raise RunRefused(f"--pairs {item!r}: the spec has no column {p!r}")
        if tuple(parts) in out or tuple(reversed(parts)) in out:
            raise RunRefused(f"--pairs {item!r}: declared twice")
        out.append((parts[0], parts[1]))
    return out


def noisy_tables(tables: dict[tuple[str, ...], np.ndarray], epsilon: float,
                 ctx: PrivacyContext) -> dict[tuple[str, ...], tuple[np.ndarray, float]]:
    """Every table with discrete Laplace at Δ₁ = 2 and ε/(k + |P|) each (module doc): the
    pilot's only noise, kept apart so ``workbench.audits.pilot`` audits this very call."""
    each = epsilon / len(tables)
    noisy = {}
    for clique, table in tables.items():
        what = "1-way" if len(clique) == 1 else "2-way"
        got = ctx.discrete_laplace(table.ravel(), sensitivity=SENSITIVITY, epsilon=each,
                                   purpose=f"pilot {what} {':'.join(clique)}")
        noisy[clique] = (np.asarray(got.value, dtype=np.float64).reshape(table.shape),
                         got.record.sigma)
    return noisy


@dataclass(frozen=True)
class PilotOutcome:
    """What the operator learns: the FACTS file, its SHA-256, ε charged and the dataset's ε."""

    facts_path: Path
    facts_sha256: str
    epsilon: float
    epsilon_cumulative: float
    dataset: str
    budget_store: Path
    out_of_domain: dict[str, tuple[int, float]]  # DP count and its σ, per column
    forbidden_missing: dict[str, tuple[int, float]]  # DP missing counts of 'forbid' columns
    delta: float = 0.0  # δ of the label discovery (0: the pilot is pure ε-DP)
    delta_cumulative: float = 0.0  # the dataset's δ after the pilot
    discovered: dict[str, Any] | None = None  # the FACTS file's ``discovered`` section


def pilot(spec: Spec, data_path: str | os.PathLike[str], epsilon: float,
          out: str | os.PathLike[str], *, pairs: Sequence[str] = (),
          budget_store: str | os.PathLike[str] | None = None,
          spend_again: bool = False, discover: Discovery | None = None) -> PilotOutcome:
    """Measure, charge and write the FACTS file (module doc); refusals spend nothing.
    ``discover`` adds label discovery (:mod:`workbench.engine.pilot_labels`) at its own ε, δ."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float) or \
            not (np.isfinite(epsilon) and epsilon > 0):
        raise RunRefused(f"--epsilon must be a number > 0, got {epsilon!r}")
    declared = parse_pairs(spec, pairs)
    book = dataset_budget(spec, budget_store)
    if not exists(data_path):  # a database URL is checked when it is opened
        raise RunRefused(f"data file {os.fspath(data_path)!r} does not exist")
    try:
        with book.locked():
            extra = discover.epsilon if discover is not None else 0.0
            prior = check_pilot_budget(spec, book, float(epsilon) + extra, spend_again)
            columns = pilot_columns(spec)
            read = fold_raw(data_path, spec.columns, spec.file_format,
                            lambda chunks: measured(chunks, columns, declared, discover))
            if read.rows == 0:
                raise EncodingError(f"the data {public_name(data_path)!r} has a header but "
                                    "no records; nothing was run and no budget was spent")
            return _measure(spec, columns, read, float(epsilon), Path(out), declared, book,
                            prior, discover)
    except BudgetStoreError as exc:
        raise RunRefused(str(exc)) from None


@dataclass
class Measured:
    """CONFIDENTIAL: the raw row count, the exact tables and the discovery inputs of a read."""

    rows: int
    tables: dict[tuple[str, ...], np.ndarray]
    inputs: dict[str, Any]


def measured(chunks: Iterable[pd.DataFrame], columns: Sequence[PilotColumn],
             pairs: Sequence[tuple[str, str]], discover: Discovery | None) -> Measured:
    """The exact tables summed over the raw chunks (each row counts in its own chunk only, so
    the sums are the whole table's counts) and the discovery inputs joined in chunk order."""
    rows, tables, joined = 0, {}, {}  # type: ignore[var-annotated]
    for chunk in chunks:
        rows += len(chunk)
        for key, table in exact_tables(chunk, columns, pairs).items():
            tables[key] = tables[key] + table if key in tables else table
        if discover is not None:
            joined = pilot_labels.add_inputs(joined, pilot_labels.chunk_inputs(chunk, discover))
        del chunk
    return Measured(rows, tables, pilot_labels.finish_inputs(joined) if discover else {})


def _measure(spec: Spec, columns: list[PilotColumn], read: Measured, epsilon: float, out: Path,
             pairs: list[tuple[str, str]], book: Any, prior: float,
             discover: Discovery | None) -> PilotOutcome:
    """Under the dataset's lock: the ledger, the noisy tables, the FACTS file."""
    from workbench.engine.pilot_facts import facts_document

    tables, inputs = read.tables, read.inputs
    del read  # from here on only the tables, then only their noisy versions
    extra_eps, extra_delta = (discover.epsilon, discover.delta) if discover else (0.0, 0.0)
    prior_delta = book.delta_spent()
    ledger = Ledger(book.ledger_path, run_id=uuid.uuid4().hex)
    ledger.event("pilot_start", spec_sha256=spec.sha256, dataset=book.dataset,
                 epsilon_planned=epsilon + extra_eps, delta_planned=extra_delta,
                 pairs=[f"{a}:{b}" for a, b in pairs],
                 discover=[c.name for c in discover.columns] if discover else [])
    try:
        accountant = Accountant(prior + epsilon + extra_eps, prior_spent=prior,
                                delta_budget=prior_delta + extra_delta, prior_delta=prior_delta)
        ctx = PrivacyContext.confidential(accountant=accountant, ledger=ledger,
                                          neighbour=spec.budget.neighbour)
        each = epsilon / len(tables)
        noisy = noisy_tables(tables, epsilon, ctx)
        del tables
        doc, summary = facts_document(spec, columns, noisy, epsilon, each, pairs)
        discovered = pilot_labels.release(inputs, discover, ctx) if discover else None
        del inputs
        if discovered is not None:
            doc["discovered"] = discovered
            doc["pilot"] |= {"epsilon": epsilon + extra_eps, "epsilon_tables": epsilon,
                             "delta": extra_delta}
            doc["about"] = doc["about"].replace("never named.", "named only in 'discovered', "
                                                "by (ε, δ)-DP thresholded selection.")
        out.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(out, doc)
        from workbench.specification.document import file_sha256

        digest = file_sha256(out)
        spent = ctx.epsilon_recorded()
        delta = accountant.delta_spent() - prior_delta
        ledger.event("pilot_end", status="complete", facts_sha256=digest, epsilon=spent,
                     **({"delta": delta} if delta > 0 else {}))
    except BaseException as exc:
        ledger.event("pilot_end", status="failed", error=type(exc).__name__)
        raise
    finally:
        ledger.close()
    return PilotOutcome(out, digest, spent, prior + spent, book.dataset, book.root,
                        summary["out_of_domain"], summary["forbidden_missing"], delta,
                        prior_delta + delta, discovered)
