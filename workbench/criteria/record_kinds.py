"""Record-level criteria: faithfulness 1 − β_max (R vs S) and face-privacy counts (S only)."""

from __future__ import annotations

import numpy as np

from workbench.specification.model import Spec
from workbench.transform import TableCodec
from workbench.transform.cells import PairedCells

FACE_MEASURES = ("unique_rows", "below_min_count")


def faithfulness_error(
    spec: Spec, table: TableCodec, real_codes: np.ndarray, synth_codes: np.ndarray
) -> float:
    """Exact 1 − β_max(R, S) under the spec's cost rule (matching on distinct cells, §3.5.1)."""
    from workbench.faithfulness import FaithfulnessCost, beta_max

    cost = FaithfulnessCost.from_rule(spec.faithfulness, table)
    return 1.0 - float(beta_max(real_codes, synth_codes, cost))


def faithfulness_error_cells(spec: Spec, table: TableCodec, pc: PairedCells) -> float:
    """``faithfulness_error`` from R's and S's counts on their distinct cells (no n rows)."""
    from workbench.faithfulness import FaithfulnessCost
    from workbench.faithfulness.matching import beta_max_cells

    cost = FaithfulnessCost.from_rule(spec.faithfulness, table)
    return 1.0 - float(beta_max_cells(pc.cells, pc.real, pc.synth, cost))


def face_privacy_count(synth_counts: np.ndarray, measure: str, min_count: int) -> int:
    """Rows of S in cells seen once ('unique_rows') or fewer than min_count times (S only).

    >>> face_privacy_count(np.array([1, 2, 3, 1]), "unique_rows", 3)
    2
    >>> face_privacy_count(np.array([1, 2, 3, 1]), "below_min_count", 3)
    4
    """
    counts = np.asarray(synth_counts, dtype=np.int64)
    counts = counts[counts > 0]
    if measure == "unique_rows":
        return int(counts[counts == 1].sum())
    if measure == "below_min_count":
        return int(counts[counts < int(min_count)].sum())
    raise ValueError(f"measure must be one of {FACE_MEASURES}")
