"""Write examples/israel_births_2014_narrowed.frozen.json: the paper's design, narrowed.

The narrowed search space keeps the transformation the Israeli release chose (mother_age in
ten bins with 35-39, parity in five bins, gestation in six bins) and PrivBayes of degree 2
with the two structure shares that passed most often on the public proxy, for both
min_count values: 4 configurations (paper §4.10 narrows the space the same way). It is the
spec the README's main job runs. Usage: python scripts/narrow_example.py, then record the
dry-run forecast that lets `workbench run` accept its unbounded loop (γ = 0, T = ∞):
workbench dryrun examples/israel_births_2014_narrowed.frozen.json \
    data_public/proxy_sample_166k.csv.gz --repetitions 10 --min-pass 0.1 \
    --write-narrowed examples/israel_births_2014_narrowed.frozen.json
"""

from __future__ import annotations

from pathlib import Path

from workbench.specification.document import read_document
from workbench.validation import save_spec

REPO = Path(__file__).resolve().parents[1]
CHOSEN = {
    "birth_month": "month",
    "mother_age": "ten_bins_35_39",
    "parity": "five_bins",
    "gestation_week": "six_bins",
    "birth_sex": "sex",
    "birth_weight": "grams_100",
}


def narrowed_document() -> dict:
    """The example design with ``selection.configurations`` set to the narrowed list."""
    doc = read_document(REPO / "examples" / "israel_births_2014.json")
    doc["selection"]["configurations"] = [
        {
            "transforms": dict(CHOSEN),
            "generator": {"family": "privbayes", "degree": 2, "epsilon_split": split},
            "min_count": m,
        }
        for split in (0.1, 0.25)
        for m in (2, 3)
    ]
    doc["metadata"]["title"] += " (narrowed search space)"
    return doc


if __name__ == "__main__":
    out = REPO / "examples" / "israel_births_2014_narrowed.frozen.json"
    print(f"{out.relative_to(REPO)}: sha256 {save_spec(narrowed_document(), out)}")
