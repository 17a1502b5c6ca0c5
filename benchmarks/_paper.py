"""What the benchmarks share about the paper's design: its chosen transformation, read once.

The Israeli release chose mother_age ten_bins_35_39, parity five_bins, gestation_week six_bins;
the narrowed example (written by scripts/narrow_example.py) holds exactly that transformation.
"""

from __future__ import annotations

from pathlib import Path

from workbench.validation import load_spec

REPO = Path(__file__).resolve().parents[1]
NARROWED = REPO / "examples" / "israel_births_2014_narrowed.frozen.json"
CHOSEN_TRANSFORMS: dict[str, str] = dict(
    next(load_spec(NARROWED).configurations()).transforms
)
