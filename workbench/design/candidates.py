"""The candidates of ``workbench design --families``: parsed, completed and made into specs.

A candidate is ``FAMILY[:NAME=VALUE,...]`` (a value is JSON, else the bare word); a bad one
fails naming ``--families[i]`` and the field. It becomes the spec with only its ``generator``
section replaced, at the spec's ε_gen (:func:`candidate_document`). Hyperparameters it leaves
out come from the spec when it is the spec's own family, else from :data:`COMPLETE` (derived
from the PUBLIC spec and proxy), else from the family's declared defaults.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from workbench.criteria.kinds._distribution import StatisticError
from workbench.generators.registry import family_class
from workbench.specification import Spec, SpecError
from workbench.transform import NumberCodec
from workbench.trial import Trial, bind
from workbench.validation import build_spec

OPTION = "--families"


@dataclass(frozen=True)
class Candidate:
    """One family to compare, with the hyperparameters given for it (one value each)."""

    family: str
    params: Mapping[str, Any]
    text: str
    index: int = 0

    @property
    def field(self) -> str:
        """How an error names it: ``--families[1] 'perturbed_histogram:number_bins=0'``."""
        return f"{OPTION}[{self.index}] {self.text!r}"


def _split(text: str) -> list[str]:
    """Split at commas outside brackets and quotes (a JSON list may hold commas)."""
    parts, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in "[{":
            depth += 1
        elif not quoted and ch in "]}":
            depth -= 1
        elif not quoted and depth == 0 and ch == ",":
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def _value(text: str) -> Any:
    """A JSON value (number, list, object, true/false/null), else the bare word."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_candidates(texts: Sequence[str]) -> list[Candidate]:
    """``FAMILY[:NAME=VALUE,...]`` each; a bad one fails naming ``--families[i]`` and the field.

    >>> [(c.family, dict(c.params)) for c in parse_candidates(
    ...     ["bayesian", "perturbed_histogram:number_bins=136"])]
    [('bayesian', {}), ('perturbed_histogram', {'number_bins': 136})]
    """
    if not texts:
        raise ValueError(f"{OPTION}: name at least one generator family")
    out: list[Candidate] = []
    for i, text in enumerate(texts):
        family, _, rest = str(text).partition(":")
        where = f"{OPTION}[{i}] {text!r}"
        try:
            cls = family_class(family.strip())
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        params: dict[str, Any] = {}
        for item in _split(rest) if rest.strip() else []:
            name, eq, raw = item.partition("=")
            name = name.strip()
            if not eq or not name:
                raise ValueError(f"{where}: {item!r} is not NAME=VALUE")
            if name == "epsilon":
                raise ValueError(f"{where}: epsilon is not a candidate's own: every candidate "
                                 "is compared at the spec's ε_gen (equal ε)")
            if name not in cls.hyperparameters:
                raise ValueError(f"{where}: unknown hyperparameter {name!r} of {cls.name} "
                                 f"(known: {', '.join(cls.hyperparameters)})")
            if name in params:
                raise ValueError(f"{where}: {name!r} is given twice")
            params[name] = _value(raw.strip())
        out.append(Candidate(cls.name, params, str(text), i))
    seen: dict[tuple[str, str], int] = {}
    for c in out:
        key = (c.family, json.dumps(dict(c.params), sort_keys=True))
        if key in seen:
            raise ValueError(f"{c.field}: the same candidate as {OPTION}[{seen[key]}]")
        seen[key] = c.index
    return out


# --- hyperparameters a candidate leaves out ------------------------------------------------
Complete = Callable[[Trial, dict[str, Any], pd.DataFrame, Candidate], dict[str, Any]]


def _number_columns(trial: Trial) -> dict[str, NumberCodec]:
    return {n: c for n, c in trial.table.codecs if isinstance(c, NumberCodec)}


def _histogram(trial: Trial, params: dict[str, Any], proxy: pd.DataFrame,
               candidate: Candidate) -> dict[str, Any]:
    """``number_bins``: bins of width T/2, T the tightest threshold in a number column's units
    (an error of the mean or a quantile): uniform placement inside a bin moves a quantile by
    at most the bin's width, so binning takes at most half the margin. Public: spec only."""
    numbers = _number_columns(trial)
    if "number_bins" in params or not numbers:
        return params
    bins = []
    for name, codec in numbers.items():
        limits = [b.criterion.threshold for b in trial.criteria
                  if isinstance(b.kind, StatisticError)
                  and b.criterion.params.get("column") == name]
        if limits:
            grid = codec.numbers()
            bins.append(math.ceil((float(max(grid)) - float(min(grid))) / (min(limits) / 2)))
    if not bins:
        raise ValueError(f"{candidate.field}: give number_bins (no criterion in a number "
                         "column's units to derive it from)")
    return params | {"number_bins": max(bins)}


def _bayesian(trial: Trial, params: dict[str, Any], proxy: pd.DataFrame,
              candidate: Candidate) -> dict[str, Any]:
    """The target (the one number column) and its predictors (every other column); Censor_w's
    weight function fitted on the PUBLIC proxy when not given."""
    spec, out = trial.spec, dict(params)
    if "target" not in out:
        numbers = list(_number_columns(trial))
        if len(numbers) != 1:
            raise ValueError(f"{candidate.field}: give target (the spec releases "
                             f"{len(numbers)} columns as numbers)")
        out["target"] = numbers[0]
    out.setdefault("predictors", [c.name for c in spec.columns if c.name != out["target"]])
    if out.get("mechanism") == "censor_w" and out.get("weight_function") is None:
        public = {k: v for k, v in out.items() if k not in ("mechanism", "weight_function")}
        doc = _with_generator(spec, "bayesian", public | {"mechanism": "censor_uw"})
        spec_ = build_spec(doc)  # its own configuration: the interim Censor_uw generator
        interim = bind(spec_, next(iter(spec_.configurations())))
        out["weight_function"] = interim.generator().proxy_weight_function(
            interim.encode(proxy), interim.domain)
    return out


#: Per family, how the hyperparameters a candidate leaves out are derived from the public spec
#: and proxy (families not listed take their declared defaults).
COMPLETE: dict[str, Complete] = {"perturbed_histogram": _histogram, "bayesian": _bayesian}


def _with_generator(spec: Spec, family: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """The spec's document with one generator configuration, at the spec's ε_gen."""
    doc = spec.to_document()
    grid = {k: [json.loads(json.dumps(v))] for k, v in params.items()}  # tuples → JSON lists
    grid["epsilon"] = [float(spec.budget.epsilon_generator)]
    doc["generator"] = {"family": family, "search_space": [grid]}
    for key in ("epsilon_generator", "epsilon_criteria"):
        doc["budget"].pop(key, None)
    selection = doc.setdefault("selection", {})
    selection.pop("configurations", None)
    selection.pop("forecast", None)
    doc.pop("frozen", None)
    return doc


def candidate_document(spec: Spec, candidate: Candidate, proxy: pd.DataFrame
                       ) -> dict[str, Any]:
    """The spec with only its generator replaced by the candidate (valid, else ValueError
    naming the candidate and the JSON path)."""
    trial = bind(spec, next(iter(spec.configurations())))
    config = trial.configuration
    own = config.generator_params if candidate.family == config.family else {}
    params = {k: v for k, v in own.items() if v is not None} | dict(candidate.params)
    complete = COMPLETE.get(candidate.family)
    if complete is not None:
        params = complete(trial, params, proxy, candidate)
    doc = _with_generator(spec, candidate.family, params)
    try:
        build_spec(doc)
    except SpecError as exc:
        raise ValueError(f"{candidate.field}: {exc}") from None
    return doc
