"""``benchmarks/_standins.py``'s hold-out group (issue 37): declared scenarios no design saw,
built from the public US sample and checked against their declared targets, and kept out of
every default list (so no benchmark's results or must-shows change and no design is tuned on
them by accident)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import shared_csv

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))


@pytest.fixture(scope="module")
def standins():
    """The module, with the shared US sample present (else skipped outside CI)."""
    shared_csv("us_births_2019_singleton_sample160k.csv.gz")
    import _standins

    return _standins


def test_the_hold_out_group_is_in_no_default_list(standins) -> None:
    """transfer.py's and peers.py's defaults and ``names()`` are what they were."""
    import peers
    import transfer

    defaults = {transfer.STANDINS, peers.STANDINS}
    assert defaults == {("us_sample", "us_reweighted", "us_thinned", "us_thickened")}
    assert not set(standins.holdout_names()) & set(standins.names())
    assert standins.holdout_names() == tuple(
        f"{k}_{s}" for k in ("us_high_parity", "us_older", "us_preterm") for s in ("95k", "158k"))
    for age, parity in standins.RAKED.values():  # shifts of shares sum to zero points
        assert sum(age.values()) == 0 and sum(parity.values()) == 0


@pytest.mark.parametrize("kind", ["us_high_parity", "us_older"])
def test_raked_hold_outs_meet_their_declared_shares(standins, kind: str) -> None:
    """Every coarse age and parity share within ±0.5 points of the base plus the declared
    shift (a held column: of the base), at both sizes."""
    base = standins.us_base()
    age, parity = standins.RAKED[kind.removeprefix("us_")]
    targets = standins._targets(base, age, parity)
    for size, n in standins.SIZES.items():
        item = standins.standin(f"{kind}_{size}")
        assert len(item.frame) == n
        got = standins._shares(item.frame)
        for col in ("mother_age", "parity"):
            assert np.abs(got[col] - targets[col]).max() <= standins.TOLERANCE
        moved = "parity" if kind == "us_high_parity" else "mother_age"
        assert got[moved][-1] - standins._shares(base)[moved][-1] >= 9.5  # ≥4 / ≥35: +10


def test_preterm_hold_out_doubles_its_rows_weight(standins) -> None:
    """Preterm or low-weight rows: 13.1% of the base, 2s / (1 + s) = 23.2% of each stand-in."""
    base = standins.us_base()
    s = standins.preterm_rows(base).mean()
    assert standins.preterm_target(base) == pytest.approx(100 * 2 * s / (1 + s))
    for size, n in standins.SIZES.items():
        frame = standins.standin(f"us_preterm_{size}").frame
        assert len(frame) == n
        share = 100 * standins.preterm_rows(frame).mean()
        assert abs(share - standins.preterm_target(base)) <= standins.TOLERANCE
        assert share - 100 * s >= 9.5


def test_a_missed_declared_target_fails_the_build(standins) -> None:
    """The check is not vacuous: the base sample misses the high-parity targets."""
    base = standins.us_base()
    age, parity = standins.RAKED["high_parity"]
    with pytest.raises(RuntimeError, match="parity: realised shares miss"):
        standins._check_shifts(base, base, age, parity)
    with pytest.raises(RuntimeError, match="preterm/low-weight share misses"):
        standins._check_preterm(base, base)
