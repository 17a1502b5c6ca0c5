"""Stand-in registries unlike the shipped proxy (issue 26, "a transfer check set").

Built at benchmark time from the public files in ``../shared/data`` (never committed as data),
seeded, each with a one-line description. ``standin(name)`` returns one, ``names()`` lists them;
other benchmarks import this module (``benchmarks/`` is their ``sys.path[0]``).

US births (the 160k sample of the US 2019 public-use natality file, mapped onto the Israeli
schema and cleaned by the lean example's raw rules, as a run cleans: 158,500 records), each at
two sizes, 95,000 and 158,500 records:

* ``us_sample_*``: the sample itself (95,000 drawn without replacement; 158,500 is all of it);
* ``us_reweighted_*``: a DECLARED scenario, not another year's published figures (this machine
  has no network): weights raked so that the coarse mother's-age shares (≤24, 25–29, 30–34,
  ≥35) move by −3, −2, +1, +4 points and the parity shares (1, 2–3, ≥4) by −3, +1, +2 points,
  then a seeded systematic sample with expected counts ∝ weights (a row copied only when its
  expected count exceeds 1: copies are clumps no registry has); the realised 1-way shares are
  checked to be within ±0.5 points of the declared targets (the tolerance) or the build fails;
* ``us_thinned_*`` / ``us_thickened_*``: the rows in a rare 1-way cell — a cell under 1% of its
  column under the lean design's bins (mother's age 43–44 and 45+, parity 11+, gestation < 32
  weeks, birth weight < 2300 g and 4300–4499 g; 6.5% of the rows) — weighted as the robust
  forecast's rare scenarios weight them (``workbench.evidence.core.RARE_WEIGHTS``: 0.5 thinned,
  1.5 thickened; the rows found by ``evidence.population.rare_rows``), then the same systematic
  sample (the description says how many rows are copies).

A HOLD-OUT group (issue 37, session 45), declared in this docstring and in code before any
design was run on them: no design may be tuned on them, and the default lists of
``transfer.py`` and ``peers.py`` leave them out (ask for them with ``--standins``;
:func:`holdout_names` lists them). Each at 95,000 and 158,500, built and checked like
``us_reweighted`` (the same seeded systematic sample; the build fails unless every declared
share is realised within ±0.5 points):

* ``us_high_parity_*``: parity 1/2–3/≥4 shares −6/−4/+10 points (≥4 from 12.6% to 22.6%,
  towards an Israeli-like registry's fifth or more), mother's-age shares held at the sample's;
* ``us_older_*``: mother's age ≤24/25–29/30–34/≥35 −8/−4/+2/+10 points (2.5 × the ≥35 shift of
  ``us_reweighted``), parity shares held at the sample's;
* ``us_preterm_*``: rows born before 37 weeks or under 2,500 g weighted ×2 (their share
  13.1% → 23.2%, the target 2s / (1 + s)).

UCI Adult (``adult/adult_train.csv.gz``, read with ``skipinitialspace``, ``?`` missing):
``adult_third`` (10,853 rows) and ``adult_half`` (16,280 rows), seeded draws without
replacement, as read (not cleaned: each example cleans with its own spec). ``write_csv`` writes
any stand-in to a CSV a spec reads (Adult with ``?`` markers).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
US_SAMPLE = SHARED / "us_births_2019_singleton_sample160k.csv.gz"
ADULT = SHARED / "adult" / "adult_train.csv.gz"
LEAN = REPO / "examples" / "israel_births_2014_lean_designed.frozen.json"
SEED = 26
SIZES = {"95k": 95_000, "158k": 158_500}
#: A 1-way cell is rare under this share of its column (the lean design's bins).
RARE_SHARE = 0.01
#: Declared shifts of the coarse 1-way shares, in percentage points (edges are upper bounds).
AGE_GROUPS = {"<=24": 24, "25-29": 29, "30-34": 34, ">=35": 99}
PARITY_GROUPS = {"1": 1, "2-3": 3, ">=4": 99}
AGE_SHIFT = {"<=24": -3.0, "25-29": -2.0, "30-34": 1.0, ">=35": 4.0}
PARITY_SHIFT = {"1": -3.0, "2-3": 1.0, ">=4": 2.0}
TOLERANCE = 0.5  # points
#: The hold-out group (declared before any result on them; no design may be tuned on them).
HOLDOUT = ("us_high_parity", "us_older", "us_preterm")
NO_AGE_SHIFT = dict.fromkeys(AGE_GROUPS, 0.0)
NO_PARITY_SHIFT = dict.fromkeys(PARITY_GROUPS, 0.0)
#: Declared (age shift, parity shift) of each raked scenario, in points.
RAKED = {"reweighted": (AGE_SHIFT, PARITY_SHIFT),
         "high_parity": (NO_AGE_SHIFT, {"1": -6.0, "2-3": -4.0, ">=4": 10.0}),
         "older": ({"<=24": -8.0, "25-29": -4.0, "30-34": 2.0, ">=35": 10.0}, NO_PARITY_SHIFT)}
#: us_preterm: the weight of a row born before PRETERM_WEEKS weeks or under LOW_WEIGHT grams.
PRETERM_WEEKS, LOW_WEIGHT, PRETERM_FACTOR = 37, 2500, 2.0
#: The cross-tables a natality report publishes: births by mother's age and birth order, and
#: by gestation week and birth weight.
PUBLISHED_PAIRS = (("mother_age", "parity"), ("gestation_week", "birth_weight"))


@dataclass(frozen=True)
class StandIn:
    """A stand-in registry: its records, one line saying what it is, and its public source."""

    name: str
    description: str
    frame: pd.DataFrame
    source: Path


def names() -> tuple[str, ...]:
    """Every stand-in's name, US births first."""
    us = [f"us_{kind}_{size}" for kind in ("sample", "reweighted", "thinned", "thickened")
          for size in SIZES]
    return (*us, "adult_third", "adult_half")


def holdout_names() -> tuple[str, ...]:
    """The hold-out stand-ins' names (kept out of :func:`names`, so no default list holds them)."""
    return tuple(f"{kind}_{size}" for kind in HOLDOUT for size in SIZES)


def standin(name: str) -> StandIn:
    """The stand-in called ``name`` (built on first use, cached)."""
    if name not in names() + holdout_names():
        raise KeyError(f"no stand-in {name!r}; known: {', '.join(names() + holdout_names())}")
    return _build(name)


def standins(which: Iterable[str] | None = None) -> dict[str, StandIn]:
    """Several stand-ins by name (all by default)."""
    return {n: standin(n) for n in (which or names())}


def write_csv(item: StandIn, path: Path) -> Path:
    """Write a stand-in as a CSV its example spec reads (Adult: ``?`` marks a missing value)."""
    item.frame.to_csv(path, index=False, na_rep="?" if item.source == ADULT else "")
    return path


@functools.cache
def _build(name: str) -> StandIn:
    """Build one stand-in (see the module docstring)."""
    if name.startswith("adult_"):
        return _adult(name)
    kind, size = name.removeprefix("us_").rsplit("_", 1)
    n = SIZES[size]
    base = us_base()
    if kind == "sample":
        frame = base if n >= len(base) else base.sample(n=n, random_state=SEED, replace=False)
        words = "the 160k US 2019 sample, cleaned by the lean spec's raw rules"
        how = "all records" if n >= len(base) else "drawn without replacement"
        return _us(name, frame, f"{words}, {how}")
    if kind in RAKED:
        age, parity = RAKED[kind]
        frame = _resample(base, _raked_weights(base, age, parity), n)
        _check_shifts(base, frame, age, parity)
        older = "mothers older " if kind == "reweighted" else ""
        return _us(name, frame, f"DECLARED scenario (not published figures): {older}(age "
                   f"≤24/25–29/30–34/≥35 {_points(age)}), parity 1/2–3/≥4 {_points(parity)}, "
                   f"realised within ±{TOLERANCE:g} pts; systematic sample ∝ weights")
    if kind == "preterm":
        flagged = preterm_rows(base)
        frame = _resample(base, np.where(flagged, PRETERM_FACTOR, 1.0), n)
        _check_preterm(base, frame)
        return _us(name, frame, f"DECLARED scenario: rows born before {PRETERM_WEEKS} weeks or "
                   f"under {LOW_WEIGHT:,} g ({flagged.mean():.1%} of rows) weighted "
                   f"{PRETERM_FACTOR:g}, share realised within ±{TOLERANCE:g} pts of "
                   f"{preterm_target(base):.1f}%; systematic sample ∝ weights")
    from workbench.evidence.core import RARE_WEIGHTS

    rare = rare_rows(base)
    factor = RARE_WEIGHTS[f"rare {kind}"]
    weights = np.where(rare, factor, 1.0)
    return _us(name, _resample(base, weights, n),
               f"rows in rare 1-way cells (< 1% of their column, {rare.mean():.1%} of rows) "
               f"weighted {factor:g}; systematic sample ∝ weights")


@functools.lru_cache(maxsize=1)
def us_base() -> pd.DataFrame:
    """The 160k US sample mapped onto the schema and cleaned as a run cleans (158,500 rows)."""
    from workbench.evidence.prepare import prepare_proxy
    from workbench.evidence.us_natality import read_us_sample
    from workbench.validation import load_spec

    return prepare_proxy(load_spec(LEAN), read_us_sample(US_SAMPLE)).reset_index(drop=True)


def rare_rows(frame: pd.DataFrame, share: float = RARE_SHARE) -> np.ndarray:
    """Rows in a 1-way cell under ``share`` of its column, under the lean design's bins."""
    from workbench.evidence.population import rare_rows as rows_in_rare_cells
    from workbench.validation import load_spec

    spec = load_spec(LEAN)
    return rows_in_rare_cells(spec.table_codec(next(spec.configurations())).encode(frame), share)


def published_document(item: StandIn, spec_path: Path, step: float | None = None) -> dict:
    """The stand-in's own tables as its statistics office publishes them: births per cell of
    the design (the spec's first configuration), exact (``step`` None, the default, as annual
    abstracts print counts), with the two cross-tables every natality report prints
    (:data:`PUBLISHED_PAIRS`); or 1-way shares alone rounded to ``step`` (0.001: one decimal of a
    percentage, which publishes a rare cell of 26 in 95,000 as 0). Public for a real
    registry; here made from the stand-in, which is what a stand-in of a registry's
    published year is."""
    from workbench.validation import load_spec

    spec = load_spec(spec_path)
    table = spec.table_codec(next(spec.configurations()))
    codes = table.encode(item.frame)
    counts = {name: np.bincount(codes[:, j], minlength=size)
              for j, (name, size) in enumerate(zip(spec.column_names, table.domain.sizes,
                                                   strict=True))}
    if step is None:
        index = {name: j for j, name in enumerate(spec.column_names)}
        pairs = {}
        for a, b in PUBLISHED_PAIRS:
            sizes = (table.domain.sizes[index[a]], table.domain.sizes[index[b]])
            cross = np.zeros(sizes, dtype=np.int64)
            np.add.at(cross, (codes[:, index[a]], codes[:, index[b]]), 1)
            pairs[f"{a}|{b}"] = cross.tolist()
        return {"source": f"{item.name}: its own 1-way tables and the cross-tables "
                f"{', '.join(' × '.join(p) for p in PUBLISHED_PAIRS)} (births per cell)",
                "counts": {name: [int(x) for x in c] for name, c in counts.items()},
                "pairs": pairs}
    columns = {name: [round(round(float(x) / len(codes) / step) * step, 6) for x in c]
               for name, c in counts.items()}
    return {"source": f"{item.name}: its own 1-way tables, rounded to {step:g}", "step": step,
            "columns": columns}


def _us(name: str, frame: pd.DataFrame, words: str) -> StandIn:
    """A US stand-in with its size, copied share and seed in its description."""
    copied = float(frame.index.duplicated().mean())
    frame = frame.reset_index(drop=True)
    return StandIn(name, f"{words}; {len(frame):,} records ({copied:.1%} copies of another "
                   f"row), seed {SEED}", frame, US_SAMPLE)


def _resample(frame: pd.DataFrame, weights: np.ndarray, n: int) -> pd.DataFrame:
    """About ``n`` rows with expected counts ∝ ``weights``, a row copied only when its expected
    count exceeds 1 (the one sampler, `workbench.evidence.population`, seeded): a resample
    with replacement copies rows everywhere, clumps no registry has, which alone failed the
    lean design's faithfulness on the US sample at 95,000 (0.047 → 0.055)."""
    from workbench.evidence.population import population_rows

    return frame.iloc[population_rows(len(frame), n, np.random.default_rng(SEED), weights)]


def _groups(values: pd.Series, edges: Mapping[str, int]) -> np.ndarray:
    """The coarse group index of each value (edges: inclusive upper bounds, in order)."""
    return np.searchsorted(np.array(list(edges.values())), values.to_numpy(), side="left")


def _shares(frame: pd.DataFrame, weights: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Coarse age and parity shares (weighted), in points."""
    w = np.ones(len(frame)) if weights is None else weights
    out = {}
    for col, edges in (("mother_age", AGE_GROUPS), ("parity", PARITY_GROUPS)):
        g = _groups(frame[col], edges)
        out[col] = 100 * np.bincount(g, weights=w, minlength=len(edges)) / w.sum()
    return out


def _points(shift: Mapping[str, float]) -> str:
    """A declared shift as the description prints it ("−3/−2/+1/+4 pts"; "held" when 0)."""
    if not any(shift.values()):
        return "held at the sample's shares"
    return "/".join(f"{v:+g}".replace("-", "−") for v in shift.values()) + " pts"


def preterm_rows(frame: pd.DataFrame) -> np.ndarray:
    """Rows born before ``PRETERM_WEEKS`` weeks or under ``LOW_WEIGHT`` grams."""
    return ((frame["gestation_week"] < PRETERM_WEEKS)
            | (frame["birth_weight"] < LOW_WEIGHT)).to_numpy()


def preterm_target(base: pd.DataFrame) -> float:
    """us_preterm's declared share of flagged rows, in points: f·s / (f·s + 1 − s)."""
    s = float(preterm_rows(base).mean())
    return 100 * PRETERM_FACTOR * s / (PRETERM_FACTOR * s + 1 - s)


def _check_preterm(base: pd.DataFrame, frame: pd.DataFrame) -> None:
    """The realised preterm/low-weight share is within the tolerance of its declared target."""
    miss = abs(100 * float(preterm_rows(frame).mean()) - preterm_target(base))
    if miss > TOLERANCE:
        raise RuntimeError(f"preterm/low-weight share misses its declared target by {miss:.2f} "
                           f"points (tolerance {TOLERANCE:g})")


def _targets(base: pd.DataFrame, age: Mapping[str, float] = AGE_SHIFT,
             parity: Mapping[str, float] = PARITY_SHIFT) -> dict[str, np.ndarray]:
    """The declared target shares (points): the base shares plus the declared shifts."""
    now = _shares(base)
    return {"mother_age": now["mother_age"] + np.array(list(age.values())),
            "parity": now["parity"] + np.array(list(parity.values()))}


def _raked_weights(base: pd.DataFrame, age: Mapping[str, float] = AGE_SHIFT,
                   parity: Mapping[str, float] = PARITY_SHIFT, sweeps: int = 100) -> np.ndarray:
    """Record weights whose coarse age and parity shares hit the declared targets (the one
    IPF, ``survey.raking.rake_rows``)."""
    from workbench.survey.raking import rake_rows

    targets = _targets(base, age, parity)
    return rake_rows(np.ones(len(base)), [
        (_groups(base["mother_age"], AGE_GROUPS), targets["mother_age"] / 100),
        (_groups(base["parity"], PARITY_GROUPS), targets["parity"] / 100)], sweeps=sweeps)


def _check_shifts(base: pd.DataFrame, frame: pd.DataFrame,
                  age: Mapping[str, float] = AGE_SHIFT,
                  parity: Mapping[str, float] = PARITY_SHIFT) -> None:
    """The realised coarse shares are within the declared tolerance of the targets."""
    targets, got = _targets(base, age, parity), _shares(frame)
    for col in targets:
        worst = float(np.abs(got[col] - targets[col]).max())
        if worst > TOLERANCE:
            raise RuntimeError(f"{col}: realised shares miss the declared targets by "
                               f"{worst:.2f} points (tolerance {TOLERANCE:g})")


def _adult(name: str) -> StandIn:
    """A seeded split of the Adult training file at a third or a half of its rows."""
    full = pd.read_csv(ADULT, skipinitialspace=True, na_values=["?"], keep_default_na=False)
    part = {"adult_third": 3, "adult_half": 2}[name]
    n = len(full) // part
    frame = full.sample(n=n, random_state=SEED, replace=False).reset_index(drop=True)
    # a 1/part subsample of a weighted sample: each record stands for part × as many people
    # (Horvitz–Thompson), so its design weights sum to the population again
    frame["fnlwgt"] = frame["fnlwgt"] * part
    return StandIn(name, f"UCI Adult training file, a seeded 1/{part} split without "
                   f"replacement (as read, '?' missing; fnlwgt × {part}, the subsample's design "
                   f"weight); {n:,} records, seed {SEED}", frame, ADULT)


def encoder(encode: Callable[[pd.DataFrame], np.ndarray]) -> Callable[[str], np.ndarray]:
    """Each stand-in's codes under one design's encoding, built and encoded once per process."""
    codes: dict[str, np.ndarray] = {}

    def codes_of(name: str) -> np.ndarray:
        if name not in codes:
            codes[name] = encode(standin(name).frame)
        return codes[name]
    return codes_of
