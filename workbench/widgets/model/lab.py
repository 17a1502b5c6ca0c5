"""Everything the editors compute from the PUBLIC proxy, cached by the spec sections it depends on.

Cleaning, encoding, the quick synthetic sample, paired cells and exact criterion values are
expensive; each is cached under a hash of exactly the spec sections (and preview settings) it
depends on. So an edit of a threshold or an ε reuses everything and only recomputes Δ, σ,
T′ and the pass odds, while an edit of a binning recomputes from the encoding on.

Never give a ProxyLab confidential data: it shows exact, un-noised values.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from workbench.constraints import Predicate
from workbench.criteria import kinds
from workbench.criteria.dispatch import exact_errors
from workbench.dryrun.floors import FloorTable
from workbench.dryrun.forecast import AllPass, all_pass
from workbench.dryrun.noise import noise_source
from workbench.engine.before_loop import release_before_loop
from workbench.faithfulness import FaithfulnessCost, beta_max
from workbench.postprocess import semantics_for
from workbench.privacy import PrivacyContext
from workbench.specification import Configuration, Spec
from workbench.transform import EncodingError
from workbench.transform.cells import PairedCells
from workbench.transform.clean import clean
from workbench.trial import Trial, bind
from workbench.widgets.model.floors import FLOOR_DRAWS, floor_inputs
from workbench.widgets.model.readouts import (
    DEFAULT_SAMPLES,
    Readout,
    average_readouts,
    criterion_readout,
)
from workbench.widgets.model.rule_checks import removed_share
from workbench.widgets.model.sampling import PreviewError, QuickSample, quick_sample

#: Fields of a criterion that do not change its exact value on (R, S).
_NOT_IN_VALUE = ("threshold", "epsilon", "description", "once")


def digest(*parts: Any) -> str:
    """SHA-256 of JSON-like parts (mappings, sequences, numbers, text); the cache key."""
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=_plain)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _plain(value: Any) -> Any:
    """JSON form of read-only mappings and other values a Spec document holds."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, np.generic):
        return value.item()
    return str(value)


class _Cache:
    """A small least-recently-used cache."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[str, Any] = OrderedDict()

    def get(self, key: str, make: Callable[[], Any]) -> Any:
        """The cached value, or ``make()`` stored under ``key``."""
        if key in self.items:
            self.items.move_to_end(key)
            return self.items[key]
        value = make()
        self.items[key] = value
        while len(self.items) > self.size:
            self.items.popitem(last=False)
        return value


@dataclass
class PreviewSettings:
    """Which configuration the proxy readouts use (a public choice, never part of the spec)."""

    transforms: dict[str, str] = field(default_factory=dict)
    hyper_index: int = 0
    min_count: int | None = None
    seed: int = 0
    samples: int = DEFAULT_SAMPLES

    def sample_seed(self, index: int) -> int:
        """The seed of quick sample ``index``: it fixes the generator's rng AND its DP noise."""
        return self.seed * 1000 + index


@dataclass(frozen=True)
class FaithfulnessPreview:
    """β_max between the proxy and the quick sample, and β at increasing cost levels."""

    beta: float
    alpha: float
    threshold: float | None
    levels: tuple[float, ...]
    matched: tuple[float, ...]
    locked: Mapping[str, list[str]]
    n: int

    @property
    def error(self) -> float:
        """The faithfulness criterion's value 1 − β_max."""
        return 1.0 - self.beta

    @property
    def cost_shares(self) -> tuple[float, ...]:
        """Share of S rows first matched at each cost level (a histogram of match costs)."""
        previous = (0.0, *self.matched[:-1])
        return tuple(m - p for m, p in zip(self.matched, previous, strict=True))


class ProxyLab:
    """Caches and computes every proxy-derived quantity the editors show."""

    def __init__(self, proxy: pd.DataFrame, *, seed: int = 0, cache_size: int = 8) -> None:
        """``proxy``: the PUBLIC proxy's raw values (e.g. data_public/proxy_sample_166k.csv.gz)."""
        self.proxy = proxy
        self.preview = PreviewSettings(seed=seed)
        self._cache = {k: _Cache(cache_size) for k in ("clean", "real", "faith", "floors")}
        for k, size in (("sample", 2), ("paired", 2), ("exact", cache_size)):
            self._cache[k] = _Cache(size * DEFAULT_SAMPLES)  # one entry per quick sample
        self._cache["trial"] = _Cache(cache_size)  # the spec bound at a configuration
        self._cache["hist"] = _Cache(64)  # small arrays, one per column and alternative
        self._cache["share"] = _Cache(1024)  # one float per rule text
        self._readouts: tuple[str, dict[str, Readout]] | None = None
        self._runs: list[dict[str, Readout]] = []

    # --- the preview configuration ---------------------------------------------------------
    def configuration(self, spec: Spec) -> Configuration:
        """The preview settings resolved against a spec (unknown choices fall back to the first)."""
        transforms = []
        for t in spec.transformations:
            names = [a.name for a in t.alternatives]
            chosen = self.preview.transforms.get(t.column)
            transforms.append((t.column, chosen if chosen in names else names[0]))
        hyper = list(spec.generator.hyperparameter_sets()) or [{}]
        params = hyper[min(max(self.preview.hyper_index, 0), len(hyper) - 1)]
        mins = spec.min_counts
        min_count = self.preview.min_count if self.preview.min_count in mins else mins[0]
        return Configuration(tuple(transforms), spec.generator.family,
                             tuple(sorted(params.items())), int(min_count))

    def trial(self, spec: Spec, config: Configuration | None = None) -> Trial:
        """The spec bound at ``config`` (default: the preview configuration), resolved once."""
        config = config if config is not None else self.configuration(spec)
        return self._cache["trial"].get(digest("trial", spec.sha256, config.key),
                                        lambda: bind(spec, config))

    # --- keys ------------------------------------------------------------------------------
    def _clean_key(self, spec: Spec) -> str:
        """Cleaning depends on the proxy, the schema (not its expected_n) and the raw rules."""
        doc = spec.document
        schema = {k: v for k, v in doc["schema"].items() if k != "expected_n"}
        return digest("clean", id(self.proxy), schema, doc["constraints"]["raw"])

    def _real_key(self, spec: Spec, config: Configuration) -> str:
        """Encoding adds the chosen alternative of every column."""
        section = spec.document["transformations"]
        chosen = []
        for column, alt in config.transforms:
            alts = section["columns"][column]["alternatives"]
            chosen.append(next(a for a in alts if a["name"] == alt))
        return digest("real", self._clean_key(spec), chosen, section.get("bin_to_number"))

    def _sample_key(self, spec: Spec, config: Configuration, index: int = 0) -> str:
        """The sample adds the configuration, ε_gen, its seed and the synthetic rules."""
        doc = spec.document
        c = doc["constraints"]
        return digest("sample", self._real_key(spec, config), config.key,
                      spec.budget.epsilon_generator, spec.budget.neighbour,
                      self.preview.sample_seed(index),
                      c["synthetic"], c.get("partial_bins"), c.get("max_sampling_rounds"))

    def _exact_key(self, spec: Spec, config: Configuration, index: int = 0) -> str:
        """Exact values add the criteria without threshold and ε, and the cost rule."""
        doc = spec.document
        criteria = []
        for raw in doc["criteria"]:
            kept = {k: v for k, v in raw.items() if k not in _NOT_IN_VALUE}
            if kinds.get(raw["kind"]).exact_reads_threshold(raw.get("params", {})):
                kept["threshold"] = raw["threshold"]  # e.g. λ defaults to the threshold
            criteria.append(kept)
        coarse = {c: t.get("coarse") for c, t in doc["transformations"]["columns"].items()}
        return digest("exact", self._sample_key(spec, config, index), criteria,
                      doc["faithfulness"], coarse)

    # --- data ------------------------------------------------------------------------------
    def cleaned(self, spec: Spec) -> pd.DataFrame:
        """The proxy after the raw rules and the domain policies (the paper's "original data")."""
        return self._cache["clean"].get(self._clean_key(spec), lambda: clean(self.proxy, spec))

    def real_codes(self, spec: Spec, config: Configuration) -> np.ndarray:
        """The cleaned proxy encoded under one configuration (R of the readouts)."""
        return self._cache["real"].get(
            self._real_key(spec, config),
            lambda: self.trial(spec, config).encode(self.cleaned(spec)),
        )

    def sample(self, spec: Spec, config: Configuration, index: int = 0) -> QuickSample:
        """Quick synthetic sample ``index`` (simulation mode; rng and DP noise both seeded)."""
        seed = self.preview.sample_seed(index)
        return self._cache["sample"].get(
            self._sample_key(spec, config, index),
            lambda: quick_sample(spec, config, self.real_codes(spec, config), seed,
                                 noise=noise_source("seeded", seed)),
        )

    def paired(self, spec: Spec, config: Configuration, index: int = 0) -> PairedCells:
        """R and S as counts on their shared cells (what Δ of each criterion reads)."""
        def make() -> PairedCells:
            table = self.trial(spec, config).table
            return PairedCells.from_codes(self.real_codes(spec, config),
                                          self.sample(spec, config, index).codes, table.domain)

        return self._cache["paired"].get(self._sample_key(spec, config, index), make)

    def exact_values(self, spec: Spec, config: Configuration,
                     index: int = 0) -> dict[str, float]:
        """E(R = proxy, S = quick sample) of every criterion, by the engine's exact_errors."""
        def make() -> dict[str, float]:
            seed = self.preview.sample_seed(index)
            ctx = PrivacyContext.simulation(seed, neighbour="replace_one",
                                            noise=noise_source("seeded", seed))
            try:  # a survey's raking and base weights, as the run releases them first
                trial = self.trial(spec, config)
                once = (release_before_loop(trial, self.cleaned(spec), ctx).once
                        if spec.survey is not None else None)
                return exact_errors(spec, config, self.real_codes(spec, config),
                                    self.sample(spec, config, index).codes, ctx,
                                    table=trial.table, once_results=once)
            except (ValueError, KeyError, EncodingError) as exc:
                raise PreviewError(f"exact values on the proxy failed: {exc}") from None

        return self._cache["exact"].get(self._exact_key(spec, config, index), make)

    @property
    def sample_count(self) -> int:
        """How many quick samples the readouts average (at least one)."""
        return max(1, int(self.preview.samples))

    def readouts(self, spec: Spec) -> dict[str, Readout]:
        """Δ, σ, T′, value and pass odds of every criterion, averaged over the quick samples."""
        config = self.configuration(spec)
        n = self.sample_count
        key = digest("readouts", spec.sha256, config.key,
                     [self._sample_key(spec, config, i) for i in range(n)])
        if self._readouts is not None and self._readouts[0] == key:
            return dict(self._readouts[1])
        table = self.trial(spec, config).table
        runs = []
        for i in range(n):
            pc = self.paired(spec, config, i)
            values = self.exact_values(spec, config, i)
            runs.append({c.id: criterion_readout(spec, table, c, pc, values.get(c.id))
                         for c in spec.criteria})
        out = average_readouts(runs)
        self._readouts = (key, out)
        self._runs = runs
        return dict(out)

    def floors(self, spec: Spec, n: int | None = None, draws: int = FLOOR_DRAWS) -> FloorTable:
        """Each criterion's feasibility floor at ``n`` (default: the low end of
        ``schema.expected_n``, else the proxy's size) under the preview configuration, to show
        beside its threshold (``model.floors.floor_words``; ``Floor.infeasible`` flags it).
        Cached by the spec sections a floor reads (``model.floors.floor_inputs``)."""
        from workbench.dryrun import low_end, spec_n
        from workbench.dryrun.floors import feasibility_floors
        from workbench.evidence.core import Evidence

        config = self.configuration(spec)
        size = n if n is not None else low_end(spec_n(spec))
        key = digest("floors", self._clean_key(spec), floor_inputs(spec.document), config.key,
                     size, draws, self.preview.seed)
        return self._cache["floors"].get(key, lambda: feasibility_floors(
            spec, Evidence(spec, self.cleaned(spec)), config, size, draws, self.preview.seed))

    def all_pass(self, spec: Spec) -> AllPass | None:
        """Forecast P(every criterion passes) over the quick samples (the one model,
        :func:`workbench.dryrun.forecast.all_pass`: the kinds' P(pass) without noise)."""
        self.readouts(spec)
        return all_pass([{r.id: r.probability_pass for r in run.values()} for run in self._runs])

    # --- schema and constraints ------------------------------------------------------------
    def histogram_key(self, spec: Spec, column: str, alternative: str) -> str:
        """Identity of one histogram: the cleaned proxy and the column's transformation."""
        return digest("hist", self._clean_key(spec), column, alternative,
                      spec.document["transformations"]["columns"][column])

    def histogram(self, spec: Spec, column: str, alternative: str) -> tuple[list[str], np.ndarray]:
        """Bin labels and proxy counts of one column under one alternative (cleaned proxy)."""
        codec = spec.transform(column).alternative(alternative).codec
        key = self.histogram_key(spec, column, alternative)

        def make() -> tuple[list[str], np.ndarray]:
            codes = codec.encode(self.cleaned(spec)[column])
            codes = codes[codes >= 0]
            return [str(x) for x in codec.labels], np.bincount(codes, minlength=codec.size)

        return self._cache["hist"].get(key, make)

    def share(self, predicate: Predicate, *, cleaned_for: Spec | None = None) -> float:
        """Share of proxy rows a rule rejects: raw proxy, or the cleaned proxy of a spec."""
        if cleaned_for is None:
            key = digest("share", id(self.proxy), "raw", predicate.text)
            return self._cache["share"].get(key, lambda: removed_share(predicate, self.proxy))
        key = digest("share", self._clean_key(cleaned_for), predicate.text)
        return self._cache["share"].get(
            key, lambda: removed_share(predicate, self.cleaned(cleaned_for))
        )

    def binned_share(self, spec: Spec, predicate: Predicate) -> float:
        """Share of encoded proxy rows the rule rejects in bin space (partial bins per the spec)."""
        config = self.configuration(spec)
        key = digest("binned", self._real_key(spec, config), predicate.text,
                     spec.constraints.partial_bins)

        def make() -> float:
            table = self.trial(spec, config).table
            codes = self.real_codes(spec, config)
            by_column = {n: codes[:, j] for j, n in enumerate(table.names)}
            mask = predicate.reject_mask_bins(by_column, semantics_for(table),
                                              spec.constraints.partial_bins)
            return float(np.asarray(mask).mean()) if len(codes) else 0.0

        return self._cache["share"].get(key, make)

    # --- faithfulness ----------------------------------------------------------------------
    def faithfulness_preview(self, spec: Spec, max_levels: int = 6) -> FaithfulnessPreview:
        """β_max(proxy, quick sample) under the rule, and β at the first few cost levels."""
        config = self.configuration(spec)
        key = digest("faith", self._sample_key(spec, config), spec.document["faithfulness"],
                     max_levels)
        return self._cache["faith"].get(key, lambda: self._faithfulness(spec, config, max_levels))

    def _faithfulness(
        self, spec: Spec, config: Configuration, max_levels: int
    ) -> FaithfulnessPreview:
        """Compute :meth:`faithfulness_preview` (one max-flow per cost level)."""
        table = self.trial(spec, config).table
        real, synth = self.real_codes(spec, config), self.sample(spec, config).codes
        rule = spec.faithfulness
        cost = FaithfulnessCost.from_rule(rule, table)
        beta = float(beta_max(real, synth, cost))
        levels = cost_levels(rule, table, max_levels)
        matched = []
        for level in levels:
            if abs(level - rule.alpha) <= 1e-12:
                matched.append(beta)
                continue
            at = FaithfulnessCost.from_rule(dataclasses.replace(rule, alpha=level), table)
            matched.append(float(beta_max(real, synth, at)))
        threshold = next((c.threshold for c in spec.criteria if c.kind == "faithfulness"), None)
        return FaithfulnessPreview(beta, rule.alpha, threshold, tuple(levels), tuple(matched),
                                   cost.locked_labels(table), int(real.shape[0]))


def cost_levels(rule: Any, table: Any, max_levels: int = 6) -> list[float]:
    """The smallest costs c(s, r) the rule can produce (always 0 and α included), ascending."""
    if not rule.distance:
        return [0.0, float(rule.alpha)] if rule.alpha > 0 else [0.0]
    reach = max(float(rule.alpha), float(max(rule.distance.values()))) * 2
    wide = FaithfulnessCost.from_rule(dataclasses.replace(rule, alpha=reach), table)
    costs = np.unique(np.round(np.abs(wide.offsets) @ wide.weights, 12))
    levels = sorted({0.0, float(rule.alpha), *(float(c) for c in costs[:max_levels])})
    return levels[: max(max_levels, levels.index(float(rule.alpha)) + 1)]
