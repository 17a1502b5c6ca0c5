"""Audits of the two engine-level releases made before any generator runs: the DP pilot's count
tables (``engine.pilot``) and the DP cleaning-count vector (``engine.cleaning_counts``).

Both read the RAW file, so both run here from public CSV files written to a temporary folder,
through the engine's own reading code, on one tiny design (GXY's columns g ∈ {a, b},
x ∈ {0, 1, 2}, y ∈ {0, 5, 10}; g may be missing and recodes an unknown label to missing; two
raw rules, ``x > 1`` and ``y > 5``). Documented Δ and the worst-case replace-one pairs:

* **Pilot** (``pilot_columns``, ``measured`` over ``fold_raw``'s chunks, ``noisy_tables``): one
  table per column and one per declared pair, each Δ₁ = 2 (a row leaves one cell and enters
  another), ε_t = E/T for T tables. D′ replaces the row (a, 0, 0) by (b, 2, 10): every table moves
  by exactly 2. The T calls share the scale 2/ε_t, so they are audited as the one discrete-Laplace
  release they compose to (Δ₁ = 2T at ε = E; :func:`~workbench.audits.harness.joint_scenario`).
* **Cleaning counts** (``engine.run.load_confidential`` fills the tally, then
  ``cleaning_counts.release``): K = p + r = 3 counts (g's recodings, rows removed by each
  rule), m = p + 1 = 2, Δ₁ = min(K, 2m) = 3. D has the row (zzz, 2, 0): g recoded and removed
  by ``x > 1``; D′ replaces it by (a, 0, 10), removed by ``y > 5``: the vector moves by
  (−1, −1, +1), L1 = 3 = Δ₁. (With more than two rules the bound is loose: a row adds to at
  most one rule count, so the largest move is p + 2 < min(K, 2m) once r > 2 and p ≥ 1.)
"""

from __future__ import annotations

import tempfile
from functools import lru_cache
from pathlib import Path

import pandas as pd

from workbench.audits.harness import Scenario, capture, joint_scenario, scenario
from workbench.criteria.audit_case import GXY, design_document
from workbench.engine import cleaning_counts, pilot_labels
from workbench.engine.cleaning_counts import CleaningTally
from workbench.engine.pilot import SENSITIVITY, measured, noisy_tables, pilot_columns
from workbench.engine.run import load_confidential
from workbench.privacy import PrivacyContext
from workbench.specification import Spec
from workbench.transform import ColumnSpec
from workbench.transform.stream import fold_raw
from workbench.validation import build_spec

#: The pilot's declared pair (with the three column tables: T = 4 tables).
PAIRS = (("g", "x"),)
#: ε_t = 1 per table.
PILOT_EPSILON = 4.0
CLEANING_EPSILON = 1.0

_BASE = [("a", 0, 0), ("a", 1, 5), ("b", 0, 0), ("b", 1, 5), ("a", 1, 0), ("b", 0, 5)]
PILOT_DATA = (_BASE, [("b", 2, 10), *_BASE[1:]])
CLEANING_DATA = ([("zzz", 2, 0), *_BASE[1:]], [("a", 0, 10), *_BASE[1:]])


@lru_cache(maxsize=1)
def audit_spec() -> Spec:
    """GXY with g recoding unknown labels to missing, two raw rules and DP cleaning counts."""
    doc = design_document(GXY, [], title="Pilot and cleaning-count audit design")
    doc.pop("survey", None)
    g = doc["schema"]["columns"][0]
    g |= {"missing": "allow", "max_missing_rate": 0.5, "out_of_domain": "to_missing"}
    doc["constraints"]["raw"] = [{"name": "x_high", "reject_if": "x > 1"},
                                 {"name": "y_high", "reject_if": "y > 5"}]
    doc["cleaning_counts"] = {"release": "dp", "epsilon": CLEANING_EPSILON}
    return build_spec(doc)


def _csv(rows: list[tuple[str, int, int]], folder: Path, name: str) -> Path:
    """A public raw file of (g, x, y) rows."""
    path = folder / name
    pd.DataFrame(rows, columns=["g", "x", "y"]).to_csv(path, index=False)
    return path


def pilot_scenario() -> Scenario:
    """The whole pilot (every table's discrete Laplace, composed) on D and D′."""
    spec = audit_spec()
    columns = pilot_columns(spec)
    calls = []
    with tempfile.TemporaryDirectory(prefix="workbench-audit-") as tmp:
        for which, rows in enumerate(PILOT_DATA):
            read = fold_raw(_csv(rows, Path(tmp), f"d{which}.csv"), spec.columns,
                            spec.file_format, lambda c: measured(c, columns, PAIRS, None))
            tables = read.tables  # the pilot's own chunked read and summed tables
            calls.append(capture(lambda ctx, t=tables: noisy_tables(t, PILOT_EPSILON, ctx)))
    return joint_scenario(
        "pilot tables (T = 4, composed)", "discrete Laplace per table, Δ₁ = 2, ε/T each",
        "row (a, 0, 0) → (b, 2, 10): each of the 3 column tables and the g:x table moves by 2",
        float(SENSITIVITY), (calls[0], calls[1]))


def cleaning_scenario() -> Scenario:
    """The DP cleaning-count vector, read from raw files through the engine, on D and D′."""
    spec = audit_spec()
    with tempfile.TemporaryDirectory(prefix="workbench-audit-") as tmp:
        tallies = []
        for which, rows in enumerate(CLEANING_DATA):
            tally = CleaningTally()
            load_confidential(spec, _csv(rows, Path(tmp), f"c{which}.csv"), tally)
            tallies.append(tally)

    def run(ctx: PrivacyContext, which: int) -> object:
        return cleaning_counts.release(spec, tallies[which], ctx)

    return scenario(
        "cleaning counts (K = 3)", "discrete Laplace on the count vector, Δ₁ = min(K, 2m)",
        "row (zzz, 2, 0) recoded and removed by x > 1 → (a, 0, 10) removed by y > 5: "
        "(−1, −1, +1), L1 = 3", float(cleaning_counts.sensitivity(spec)), run)


#: The discovered numeric column and its replace-one pair (module doc).
SIDES_COLUMN = ColumnSpec("h", "integer", None, (0.0, 10.0), "forbid", "error")
SIDES_DATA = ([-3.0, 2.0, 1.0, 5.0, 7.0], [15.0, 2.0, 1.0, 5.0, 7.0])
SIDES_EPSILON = 1.0


#: The discovered label column, its replace-one pair (module doc), and (ε, δ).
LABEL_COLUMN = ColumnSpec("g", "categorical", ("a", "b"), None, "forbid", "error")
LABEL_DATA = (["a"] * 5 + ["u"] * 60 + ["v"] * 60, ["a"] * 5 + ["u"] * 59 + ["v"] * 61)
LABEL_EPSILON, LABEL_DELTA = 1.0, 1e-6


def label_selection_scenario(documented: float = 2.0) -> Scenario:
    """The pilot's thresholded label selection of one column on D and D′ (replace-one);
    ``documented`` is the Δ the release must have been calibrated for."""
    discovery = pilot_labels.Discovery((LABEL_COLUMN,), LABEL_EPSILON, LABEL_DELTA)
    inputs = [pilot_labels.exact_inputs(pd.DataFrame({"g": rows}), discovery)
              for rows in LABEL_DATA]

    def run(ctx: PrivacyContext, which: int) -> object:
        return pilot_labels.release(inputs[which], discovery, ctx)

    return scenario(
        "pilot label selection (ε, δ)", "OpenDP laplace_threshold, (L0, L1, L∞) = (2, 2, 1)",
        "one row u → v: u 60 → 59, v 60 → 61, L1 = 2", documented, run)


def discovery_scenario() -> Scenario:
    """The pilot's side counts of one numeric column on D and D′ (replace-one, Δ₁ = 2)."""
    discovery = pilot_labels.Discovery((SIDES_COLUMN,), SIDES_EPSILON, 0.0)
    inputs = [pilot_labels.exact_inputs(pd.DataFrame({"h": rows}), discovery)
              for rows in SIDES_DATA]

    def run(ctx: PrivacyContext, which: int) -> object:
        return pilot_labels.release(inputs[which], discovery, ctx)

    return scenario(
        "pilot sides (below, above, other)", "discrete Laplace on the side vector, Δ₁ = 2",
        "row h = −3 (below) → h = 15 (above): (1, 0, 0) → (0, 1, 0), L1 = 2", 2.0, run)
