"""Print Mohapatra et al.'s MCAR amplification examples (φ = (¼, 0, ¼, ¼)) with the exact formula.

The paper's figures are the small-ε limit of ε̄/ε; at finite ε the exact
ε̄ = Σ_G ln(1 + p_G(e^{ε_G} − 1)) is larger, which is why the workbench never uses
the "≈ pε" shortcut.
Run: PYTHONPATH=$PWD python benchmarks/amplification_examples.py
"""

from __future__ import annotations

from workbench.privacy import amplification as amp
from workbench.privacy.amplification import Measure

PHI = {"State": 0.25, "Occupation": 0.0, "Gender": 0.25, "Income": 0.25}
COLUMNS = ("State", "Occupation", "Gender", "Income")


def four(eps: float) -> list[Measure]:
    """Ex. 5.5's M1..M4, ε/4 each."""
    return [Measure(("State",), eps / 4), Measure(("Occupation",), eps / 4),
            Measure(("Gender",), eps / 4), Measure(("Gender", "Income"), eps / 4)]


def three(eps: float) -> list[Measure]:
    """Ex. 5.7's M1, M2, M4, ε/3 each."""
    return [Measure(("State",), eps / 3), Measure(("Occupation",), eps / 3),
            Measure(("Gender", "Income"), eps / 3)]


ROWS = [
    ("Ex. 5.5 complete rows only", "0.421", lambda e: amp.complete_rows(four(e), PHI, COLUMNS)),
    ("Ex. 5.7 disjoint groups", "0.77", lambda e: amp.grouped(three(e), PHI)),
    ("Ex. 5.8 naive", "0.83", lambda e: amp.naive(four(e), PHI)),
    ("Ex. 5.8 grouped (Alg. 4)", "0.81", lambda e: amp.grouped(four(e), PHI)),
    ("Ex. 5.8 cheap bound", "-", lambda e: amp.cheap(four(e), PHI)),
    ("Ex. 5.13 column-wise", "0.9375",
     lambda e: amp.column_wise({c: e / 4 for c in COLUMNS}, PHI)),
]


def main() -> None:
    """One line per example: the paper's figure, ε̄/ε as ε → 0, and exact at ε = 0.1, 1, 3."""
    print(f"{'example':32} {'paper':>7} {'ε→0':>8} {'ε=0.1':>8} {'ε=1':>8} {'ε=3':>8}")
    for name, paper, run in ROWS:
        ratios = [run(e).ratio for e in (1e-9, 0.1, 1.0, 3.0)]
        print(f"{name:32} {paper:>7} " + " ".join(f"{r:8.4f}" for r in ratios))


if __name__ == "__main__":
    main()
