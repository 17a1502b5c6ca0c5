"""Issue 38 (memory at registry scale): narrow unsigned code matrices give the int64 results.

The engine's iteration encodes R in the domain's smallest unsigned dtype, the workload family
fits on it and samples S in it, and the criteria that read rows work on the paired cell counts;
every value must be the one the int64 codes give (a uint8 wrap would change one).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.criteria import release_once
from workbench.criteria.evaluation_state import Evaluation
from workbench.criteria.marginals import marginal_errors_by_subset, marginal_errors_from_cells
from workbench.engine import run_iteration
from workbench.engine.blas import single_threaded_blas
from workbench.faithfulness import FaithfulnessCost, beta_max
from workbench.faithfulness.matching import beta_max_cells
from workbench.privacy import PrivacyContext
from workbench.privacy.noise import rehearsal_noise
from workbench.transform import Domain
from workbench.transform.cells import CellCounts, PairedCells
from workbench.transform.table import code_dtype
from workbench.trial import bind
from workbench.validation import load_spec

REPO = Path(__file__).resolve().parents[1]
LEAN = REPO / "examples" / "israel_births_2014_lean.json"
PROXY = REPO / "data_public" / "proxy_sample_166k.csv.gz"

pytest.importorskip("mbi")


def test_code_dtype_holds_the_largest_code() -> None:
    """256 codes fit uint8 (largest 255), 257 need uint16; beyond uint32, int64."""
    assert code_dtype((2, 256)) == np.uint8
    assert code_dtype((257, 3)) == np.uint16
    assert code_dtype((65_537,)) == np.uint32
    assert code_dtype((2**32 + 1,)) == np.int64


def _codes(sizes: tuple[int, ...], rows: int, seed: int) -> np.ndarray:
    """Skewed random codes touching each column's largest code (public test data)."""
    rng = np.random.default_rng(seed)
    cols = [np.minimum(rng.geometric(0.08, rows) - 1, s - 1) for s in sizes]
    out = np.stack(cols, axis=1)
    out[0] = np.asarray(sizes) - 1
    return out


@pytest.mark.parametrize("sizes", [(12, 6, 5, 256), (40, 256, 256, 30, 64)])
def test_cell_counts_marginals_match_on_narrow_codes(sizes) -> None:
    """Max marginal errors from the paired cells of uint8 codes equal the row computation on
    int64 codes, on a dense and on a sparse joint domain (the latter past the bincount cap)."""
    domain = Domain(tuple(f"c{j}" for j in range(len(sizes))), sizes)
    real, synth = _codes(sizes, 30_000, 1), _codes(sizes, 30_000, 2)
    narrow_r, narrow_s = real.astype(code_dtype(sizes)), synth.astype(code_dtype(sizes))
    assert narrow_r.dtype == np.uint8
    pc = PairedCells.from_codes(narrow_r, narrow_s, domain)
    assert pc.cells.dtype == np.int64
    rows = marginal_errors_by_subset(real, synth, domain)
    cells = marginal_errors_from_cells(pc.cells, pc.real, pc.synth, domain, n=30_000)
    assert cells == rows and max(rows.values()) > 0
    for way in (1, 2):
        assert marginal_errors_from_cells(pc.cells, pc.real, pc.synth, domain, max_way=way,
                                          n=30_000) == marginal_errors_by_subset(
            real, synth, domain, max_way=way)
    counts = CellCounts.from_codes(narrow_r, domain)
    wide = CellCounts.from_codes(real, domain)
    assert counts.cells.dtype == np.int64 and np.array_equal(counts.cells, wide.cells)
    assert np.array_equal(counts.marginal(("c0", "c3")), wide.marginal(("c0", "c3")))


def test_faithfulness_from_cells_is_the_row_matching() -> None:
    """β_max from the paired cell counts equals the row-based one under the lean spec's rule,
    and a shifted S (fewer matches) changes both alike."""
    spec = load_spec(LEAN)
    config = next(iter(spec.configurations()))
    table = spec.table_codec(config)
    cost = FaithfulnessCost.from_rule(spec.faithfulness, table)
    frame = pd.read_csv(PROXY).head(20_000)
    from workbench.transform.clean import clean
    from workbench.transform.raw import apply_domain_policy

    cleaned = clean(apply_domain_policy(frame, spec.columns, {}), spec, {}, check=False)
    real = table.encode(cleaned)
    synth = real[np.random.default_rng(3).permutation(len(real))].copy()
    synth[:4000, 0] = (synth[:4000, 0] + 5) % table.domain.sizes[0]
    narrow = table.encode(cleaned, narrow=True)
    assert narrow.dtype == np.uint8 and np.array_equal(narrow, real)
    pc = PairedCells.from_codes(narrow, synth.astype(np.uint8), table.domain)
    rows = beta_max(real, synth, cost)
    assert beta_max_cells(pc.cells, pc.real, pc.synth, cost) == rows < 1.0


def test_evaluation_widens_rows_only_when_asked() -> None:
    """An Evaluation keeps the narrow codes it was given and hands int64 rows to the kinds
    that read them (the same values), made once."""
    spec = load_spec(LEAN)
    config = next(iter(spec.configurations()))
    table = spec.table_codec(config)
    real = _codes(table.domain.sizes, 2_000, 5).astype(np.uint8)
    synth = _codes(table.domain.sizes, 2_000, 6).astype(np.uint8)
    ev = Evaluation(spec, config, real, synth, PrivacyContext.simulation(1), {}, table)
    assert ev.real_codes.dtype == np.uint8 and ev.real_codes is real
    assert ev.real.dtype == np.int64 and np.array_equal(ev.real, real)
    assert ev.synth.dtype == np.int64 and ev.real is ev.real  # widened once, kept
    wide = PairedCells.from_codes(real.astype(np.int64), synth.astype(np.int64), table.domain)
    assert np.array_equal(ev.pc.cells, wide.cells) and np.array_equal(ev.pc.real, wide.real)


def test_a_lean_iteration_on_narrow_codes_is_the_int64_one() -> None:
    """The whole seeded iteration — workload fit, sampling, projection, every criterion — gives
    the same release values and the same DP results from uint8 as from int64 codes."""
    spec = load_spec(LEAN)
    config = next(iter(spec.configurations()))
    frame = pd.read_csv(PROXY).head(40_000)
    from workbench.transform.clean import clean
    from workbench.transform.raw import apply_domain_policy

    cleaned = clean(apply_domain_policy(frame, spec.columns, {}), spec, {}, check=False)
    trial = bind(spec, config)
    out = {}
    for narrow in (False, True):
        ctx = PrivacyContext.simulation(7, noise=rehearsal_noise(7))  # seeded noise too
        codes = trial.encode(cleaned, narrow=narrow)
        with single_threaded_blas():  # float sums in one order, as a rehearsal's
            once = release_once(spec, config, codes, ctx)
            out[narrow] = run_iteration(trial, cleaned, ctx, once_results=once,
                                        real_codes=codes)
    wide, thin = out[False], out[True]
    assert thin.codes.dtype == np.uint8 and wide.codes.dtype == np.int64
    assert np.array_equal(thin.codes, wide.codes) and len(thin.codes) == len(cleaned)
    assert [(r.id, r.value, r.passed) for r in thin.results] == [
        (r.id, r.value, r.passed) for r in wide.results]
    assert len(thin.results) == len(spec.criteria)
