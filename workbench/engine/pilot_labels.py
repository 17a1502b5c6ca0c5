"""Label discovery in the pilot (issue 36): which unknown labels are frequent, and on which side
of its bounds a numeric column's out-of-range values fall — DP, charged and labelled (ε, δ).

``workbench pilot … --discover-labels COL[,COL] --discover-epsilon E --discover-delta D``.
The k named columns get ε_c = E/k each (basic composition); the label columns share D evenly.

* **A column with a domain of labels** (categorical, ordinal): the map label → count of its
  present cells whose value the spec does not declare, released by OpenDP's thresholded
  partition selection (``PrivacyContext.partition_select``: discrete Laplace at b = L1/ε_c on
  each count, a label released only when its noisy count reaches τ, the smallest threshold
  whose δ fits D/k_labels). Each record holds one value per column, so it adds 1 to at most one
  label: under add-remove the map moves by (L0, L1, L∞) = (1, 1, 1), under replace-one by
  (2, 2, 1) (``sensitivity.partition_distance``). A label held by one row passes τ with
  probability at most δ; a label that does not pass is never written or printed.
* **A numeric column with bounds** (integer, continuous): the counts of its present cells below
  the lower bound, above the upper bound, and out of domain otherwise (text, or a fraction in an
  integer column). Each row sits in at most one of the three cells, so the vector is part of a
  histogram: Δ₁ = 2 under replace-one (a row moves from one cell to another; each side count
  alone moves by 1), 1 under add-remove (``sensitivity.histogram``); discrete Laplace, pure ε.

Everything here is post-processed from those releases only: labels sorted by noisy count, side
counts clipped at 0. ``tests/test_pilot_labels.py`` checks both distances on neighbouring
datasets and that a one-row label never appears.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from workbench.engine.rundir import RunRefused
from workbench.privacy import PrivacyContext, sensitivity
from workbench.specification import Spec
from workbench.transform import ColumnSpec
from workbench.transform.raw import out_of_domain

#: The largest --discover-delta accepted: δ is the chance a one-row label is released.
DELTA_MAX = 1e-3


@dataclass(frozen=True)
class Discovery:
    """The columns to discover (public names), the ε and the δ they share."""

    columns: tuple[ColumnSpec, ...]
    epsilon: float
    delta: float

    @property
    def label_columns(self) -> tuple[ColumnSpec, ...]:
        """Columns whose unknown labels are selected (a declared domain of values)."""
        return tuple(c for c in self.columns if c.domain is not None)

    @property
    def epsilon_each(self) -> float:
        return self.epsilon / len(self.columns)

    @property
    def delta_each(self) -> float:
        return self.delta / len(self.label_columns) if self.label_columns else 0.0


def parse_discovery(spec: Spec, columns: Sequence[str], epsilon: float | None,
                    delta: float | None) -> Discovery | None:
    """The --discover-* options checked against the spec; RunRefused names the option."""
    names = [n.strip() for item in columns for n in str(item).split(",") if n.strip()]
    if not names:
        if epsilon is not None or delta is not None:
            raise RunRefused("--discover-epsilon and --discover-delta need --discover-labels")
        return None
    by_name = {c.name: c for c in spec.columns}
    for n in names:
        if n not in by_name:
            raise RunRefused(f"--discover-labels: the spec has no column {n!r}")
    if len(set(names)) != len(names):
        raise RunRefused("--discover-labels: a column is named twice")
    picked = tuple(by_name[n] for n in names)
    if not _positive(epsilon):
        raise RunRefused(f"--discover-epsilon must be a number > 0, got {epsilon!r}")
    labels = [c.name for c in picked if c.domain is not None]
    if labels and not (_positive(delta) and delta <= DELTA_MAX):  # type: ignore[operator]
        raise RunRefused(f"--discover-delta must be a number in (0, {DELTA_MAX:g}] for the "
                         f"label column(s) {', '.join(labels)}, got {delta!r}")
    if not labels and delta is not None:
        raise RunRefused("--discover-delta: no column of --discover-labels has labels (its side "
                         "counts are pure ε); leave it out")
    return Discovery(picked, float(epsilon), float(delta or 0.0))  # type: ignore[arg-type]


def _positive(x: object) -> bool:
    """A finite number > 0 (not a bool)."""
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def _label_text(value: object, numeric: bool) -> str:
    """A cell as the label a spec would declare: numbers without a trailing '.0'."""
    text = str(value).strip()
    if numeric:
        try:
            x = float(text)
        except ValueError:
            return text
        if math.isfinite(x):
            return str(int(x)) if x.is_integer() else repr(x)
    return text


def unknown_labels(frame: pd.DataFrame, column: ColumnSpec) -> list[str]:
    """CONFIDENTIAL: the label text of every present value the spec does not declare, in row
    order (a chunk's list, joined in chunk order, is the whole table's)."""
    cells = frame[column.name][out_of_domain(frame, column)]
    return [_label_text(v, column.numeric) for v in cells.tolist()]


def label_counts(labels: list[str]) -> dict[str, int]:
    """CONFIDENTIAL: label → rows (pandas' value_counts order)."""
    return {k: int(v) for k, v in pd.Series(labels, dtype=object).value_counts().items()}


def unknown_label_counts(frame: pd.DataFrame, column: ColumnSpec) -> dict[str, int]:
    """CONFIDENTIAL: label → rows of the present values the spec does not declare."""
    return label_counts(unknown_labels(frame, column))


def side_counts(frame: pd.DataFrame, column: ColumnSpec) -> np.ndarray:
    """CONFIDENTIAL: (below the lower bound, above the upper bound, other out of domain)."""
    bad = out_of_domain(frame, column)
    x = pd.to_numeric(frame[column.name], errors="coerce").to_numpy(np.float64, na_value=np.nan)
    lo, hi = column.bounds  # type: ignore[misc]
    with np.errstate(invalid="ignore"):
        below, above = bad & (x < lo), bad & (x > hi)
    other = bad & ~below & ~above
    return np.array([below.sum(), above.sum(), other.sum()], dtype=np.int64)


def exact_inputs(frame: pd.DataFrame, discovery: Discovery) -> dict[str, Any]:
    """CONFIDENTIAL: each discovered column's map or side vector (released only with noise)."""
    return finish_inputs(chunk_inputs(frame, discovery))


def chunk_inputs(frame: pd.DataFrame, discovery: Discovery) -> dict[str, Any]:
    """CONFIDENTIAL: one chunk's part of :func:`exact_inputs` (labels listed, sides counted)."""
    return {c.name: unknown_labels(frame, c) if c.domain is not None
            else side_counts(frame, c) for c in discovery.columns}


def add_inputs(total: dict[str, Any], part: dict[str, Any]) -> dict[str, Any]:
    """CONFIDENTIAL: two chunks' parts joined in order (label lists appended, sides summed)."""
    return {k: total[k] + v for k, v in part.items()} if total else part


def finish_inputs(joined: dict[str, Any]) -> dict[str, Any]:
    """CONFIDENTIAL: the joined parts as :func:`release` takes them (labels counted)."""
    return {k: label_counts(v) if isinstance(v, list) else v for k, v in joined.items()}


def release(inputs: dict[str, Any], discovery: Discovery, ctx: PrivacyContext
            ) -> dict[str, Any]:
    """Every column's DP release, as the FACTS file's ``discovered`` section (module doc)."""
    out: list[dict[str, Any]] = []
    eps = discovery.epsilon_each
    for c in discovery.columns:
        if c.domain is not None:
            got = ctx.partition_select(inputs[c.name], epsilon=eps, delta=discovery.delta_each,
                                       purpose=f"pilot label discovery {c.name}")
            rec = got.record
            labels = sorted(got.value.items(), key=lambda kv: (-kv[1], kv[0]))
            out.append({"column": c.name, "kind": "labels", "epsilon": eps,
                        "delta": rec.dp_delta, "mechanism": "laplace_threshold (OpenDP)",
                        "distance": "(L0, L1, L∞) = " + str(sensitivity.partition_distance(
                            ctx.neighbour)), "scale": rec.scale, "threshold": rec.threshold,
                        "labels": [{"label": k, "count": v} for k, v in labels]})
        else:
            delta1 = ctx.histogram_sensitivity()
            got_v = ctx.discrete_laplace(inputs[c.name], sensitivity=delta1, epsilon=eps,
                                         purpose=f"pilot out-of-range sides {c.name}")
            below, above, other = (max(0, int(v)) for v in got_v.value)
            out.append({"column": c.name, "kind": "sides", "epsilon": eps, "delta": 0.0,
                        "mechanism": "discrete_laplace", "sensitivity": delta1,
                        "sigma": got_v.record.sigma, "bounds": list(c.bounds or ()),
                        "below": below, "above": above, "other": other})
    return {"epsilon": discovery.epsilon, "delta": discovery.delta,
            "neighbour": ctx.neighbour,
            "about": ("DP label discovery (workbench pilot --discover-labels): unknown labels "
                      "whose noisy count passed a threshold, with noisy counts, and noisy "
                      "counts of out-of-range values per side. No label below the threshold "
                      "is named."),
            "columns": out}


def format_section(section: dict[str, Any]) -> list[str]:
    """The lines the CLI prints (DP values only)."""
    lines = [f"label discovery (DP, ε = {section['epsilon']:g}, δ = {section['delta']:g} in "
             f"all; {section['neighbour']}):"]
    for col in section["columns"]:
        head = f"  {col['column']:<24} ε = {col['epsilon']:g}, δ = {col['delta']:g}: "
        if col["kind"] == "labels":
            found = ", ".join(f"{d['label']!r} ≈ {d['count']:,}" for d in col["labels"])
            lines.append(head + (f"unknown labels over the threshold {col['threshold']}: "
                                 f"{found}" if found else "no unknown label passed the "
                                 f"threshold {col['threshold']}"))
        else:
            lo, hi = col["bounds"]
            lines.append(head + f"below {lo:g} ≈ {col['below']:,}, above {hi:g} ≈ "
                         f"{col['above']:,}, other out of domain ≈ {col['other']:,} "
                         f"(σ ≈ {col['sigma']:.3g})")
    lines.append("  add the labels you accept to the column's domain (or widen the bounds) in "
                 "the spec; the rest stay out of domain")
    return lines
