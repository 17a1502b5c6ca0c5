"""Validation of a spec document, collecting every problem with its JSON path, then building Spec.

Two passes: JSON Schema for shape and types, then semantic checks (cross
references, binnings, rule syntax, criteria parameters, budget arithmetic and
the private-selection theorem's condition). A document that passes both is
turned into the immutable :class:`~workbench.spec.model.Spec`.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Callable, Mapping
from functools import lru_cache
from importlib import resources
from typing import Any

import jsonschema

from workbench.constraints import ConstraintSyntaxError, parse, validate_columns
from workbench.spec.budget_rules import ADD_REMOVE_REFUSED
from workbench.spec.document import FROZEN_KEY, freeze_value, spec_hash
from workbench.spec.errors import Problem, SpecError, join_path
from workbench.spec.model import (
    S_ONLY_KINDS,
    Alternative,
    Budget,
    ColumnSpec,
    ColumnTransform,
    Constraints,
    Criterion,
    FaithfulnessRule,
    Metadata,
    Rule,
    Selection,
    Spec,
)
from workbench.spec.space import Configuration, GeneratorSpace
from workbench.transform import BinsCodec, GroupsCodec, IdentityCodec, coarse_lookup


@lru_cache(maxsize=1)
def json_schema() -> dict[str, Any]:
    """The packaged JSON Schema of spec documents."""
    text = resources.files("workbench.spec").joinpath("spec.schema.json").read_text("utf-8")
    return json.loads(text)


def _schema_path(error: jsonschema.ValidationError) -> str:
    path = ""
    for part in error.absolute_path:
        path = join_path(path, part)
    return path


def _schema_message(error: jsonschema.ValidationError) -> str:
    v = error.validator
    if v == "required":
        return error.message.replace("is a required property", "is required")
    if v == "additionalProperties":
        return error.message.replace("Additional properties are not allowed", "unknown field(s)")
    if v == "exclusiveMinimum":
        return f"must be > {error.validator_value}"
    if v == "minimum":
        return f"must be >= {error.validator_value}"
    if v == "exclusiveMaximum":
        return f"must be < {error.validator_value}"
    if v == "maximum":
        return f"must be <= {error.validator_value}"
    if v == "enum":
        return f"must be one of {', '.join(json.dumps(x) for x in error.validator_value)}"
    if v == "const":
        return f"must be {json.dumps(error.validator_value)}"
    if v == "type":
        return f"must be of type {error.validator_value}"
    return error.message


def schema_problems(document: Any) -> list[Problem]:
    """Shape and type problems found by the JSON Schema."""
    validator = jsonschema.Draft202012Validator(json_schema())
    problems = []
    for error in validator.iter_errors(document):
        problems.append(Problem(_schema_path(error), _schema_message(error)))
    return sorted(set(problems))


# --- known generator families and their hyperparameters --------------------------------


def _in_open_unit(v: Any) -> str | None:
    return None if _is_number(v) and 0 < v < 1 else "must be a number in (0, 1)"


def _positive(v: Any) -> str | None:
    return None if _is_number(v) and v > 0 else "must be a number > 0"


def _positive_int(v: Any) -> str | None:
    return (
        None
        if isinstance(v, int) and not isinstance(v, bool) and v >= 1
        else ("must be a whole number >= 1")
    )


def _non_negative(v: Any) -> str | None:
    return None if _is_number(v) and v >= 0 else "must be a number >= 0"


def _workload_algorithm(v: Any) -> str | None:
    return None if v in ("fixed", "aim") else "must be 'fixed' or 'aim'"


def _column_list(v: Any) -> str | None:
    ok = isinstance(v, list | tuple) and v and all(isinstance(x, str) for x in v)
    return None if ok else "must be a non-empty list of column names"


#: Family -> hyperparameter -> check; and the groups of which exactly one must be set.
GENERATOR_FAMILIES: dict[str, dict[str, Callable[[Any], str | None]]] = {
    "privbayes": {"epsilon_split": _in_open_unit, "theta": _positive, "degree": _positive_int},
    "independent": {},
    "perturbed_histogram": {"columns": _column_list},
    # 'aim' is a pure-ε port of AIM (workbench.generators.workload_generator).
    "workload": {
        "algorithm": _workload_algorithm,
        "one_way_share": _in_open_unit,
        "regression_weight": _non_negative,
        "mean_weight": _non_negative,
        "marginal_weight": _non_negative,
        "faithfulness_weight": _non_negative,
        "iters": _positive_int,
        "rounds": _positive_int,
    },
}
#: Hyperparameters every family accepts: 'epsilon' makes ε_gen itself an alternative, so the
#: dry run can rank it; the selection is charged for the largest selectable value.
COMMON_HYPERPARAMETERS: dict[str, Callable[[Any], str | None]] = {"epsilon": _positive}
EXCLUSIVE_HYPERPARAMETERS: dict[str, tuple[str, ...]] = {"privbayes": ("theta", "degree")}
REQUIRED_HYPERPARAMETERS: dict[str, tuple[str, ...]] = {
    "privbayes": ("epsilon_split",),
    "perturbed_histogram": ("columns",),
}

CRITERION_PARAMS: dict[str, frozenset[str]] = {
    "max_marginal_error": frozenset({"max_way"}),
    "relative_one_way": frozenset({"lambda", "false_pass_probability", "smoothing"}),
    "conditional_mean": frozenset(
        {"target", "group_by", "include_overall", "resize_slack", "pad_value"}
    ),
    "regression_coefficients": frozenset({"target", "features", "norm", "statistic_weights"}),
    "regression_mae": frozenset({"target", "features"}),
    "faithfulness": frozenset(),
    "max_ecdf": frozenset({"column"}),
    "tv_marginals": frozenset({"way", "aggregate"}),
    "face_privacy_count": frozenset({"measure"}),
}
UNIT_BOUNDS_KINDS = frozenset({"max_marginal_error", "faithfulness", "max_ecdf", "tv_marginals"})


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


class _ColumnTable(dict):
    """Column lookup where a non-string (a list or dict from a malformed spec) is simply unknown."""

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and dict.__contains__(self, key)


class _Builder:
    """Walks a schema-valid document, records problems, and assembles the sections."""

    def __init__(self, doc: Mapping[str, Any]):
        self.doc = doc
        self.problems: list[Problem] = []
        self.columns: dict[str, ColumnSpec] = _ColumnTable()

    def problem(self, path: str, message: str) -> None:
        self.problems.append(Problem(path, message))

    def unknown_column(self, path: str, name: Any) -> None:
        hint = difflib.get_close_matches(str(name), list(self.columns), n=1)
        extra = f" (did you mean {hint[0]!r}?)" if hint else ""
        self.problem(path, f"unknown column {str(name)!r}{extra}")

    # --- schema ------------------------------------------------------------------
    def build_columns(self) -> tuple[ColumnSpec, ...]:
        out = []
        for i, raw in enumerate(self.doc["schema"]["columns"]):
            path = f"schema.columns[{i}]"
            name, ctype = raw["name"], raw["type"]
            if name in self.columns:
                self.problem(join_path(path, "name"), f"duplicate column name {name!r}")
                continue
            domain = tuple(raw["domain"]) if "domain" in raw else None
            bounds = tuple(float(b) for b in raw["bounds"]) if "bounds" in raw else None
            if ctype in {"categorical", "ordinal"}:
                if domain is None:
                    self.problem(path, f"a {ctype} column needs a 'domain' list")
                elif len({json.dumps(v) for v in domain}) != len(domain):
                    self.problem(join_path(path, "domain"), "values must be unique")
                if bounds is not None:
                    self.problem(
                        join_path(path, "bounds"), f"a {ctype} column takes a domain, not bounds"
                    )
            else:
                if bounds is None:
                    self.problem(path, f"an {ctype} column needs 'bounds' [lower, upper]")
                elif not bounds[0] < bounds[1]:
                    self.problem(join_path(path, "bounds"), "lower bound must be below upper bound")
                elif ctype == "integer" and not all(float(b).is_integer() for b in bounds):
                    self.problem(
                        join_path(path, "bounds"), "an integer column needs whole-number bounds"
                    )
                if domain is not None:
                    self.problem(
                        join_path(path, "domain"), f"an {ctype} column takes bounds, not a domain"
                    )
            policy = raw.get("out_of_domain", "error")
            col = ColumnSpec(
                name, ctype, domain, bounds, raw["missing"], policy, raw.get("description", "")
            )
            if policy == "clip" and ctype not in {"integer", "continuous"}:
                self.problem(
                    join_path(path, "out_of_domain"), "'clip' needs an integer or continuous column"
                )
            if (
                ctype == "ordinal"
                and domain is not None
                and col.numeric
                and list(domain) != sorted(domain)
            ):
                self.problem(
                    join_path(path, "domain"),
                    "an ordinal domain must be listed in increasing order",
                )
            self.columns[name] = col
            out.append(col)
        return tuple(out)

    # --- transformations ---------------------------------------------------------
    def build_transformations(self) -> tuple[ColumnTransform, ...]:
        section = self.doc["transformations"]["columns"]
        for name in section:
            if name not in self.columns:
                self.unknown_column(f"transformations.columns.{name}", name)
        out = []
        for col in self.columns.values():
            path = f"transformations.columns.{col.name}"
            if col.name not in section:
                self.problem(
                    "transformations.columns", f"column {col.name!r} has no transformation"
                )
                continue
            entry = section[col.name]
            alts = []
            names: set[str] = set()
            for j, raw in enumerate(entry["alternatives"]):
                apath = f"{path}.alternatives[{j}]"
                if raw["name"] in names:
                    self.problem(
                        join_path(apath, "name"), f"duplicate alternative name {raw['name']!r}"
                    )
                names.add(raw["name"])
                codec = self.build_codec(col, raw, apath)
                if codec is not None:
                    alts.append(Alternative(raw["name"], raw["kind"], codec))
            coarse = None
            if "coarse" in entry:
                coarse = self.build_coarse(col, entry["coarse"], alts, f"{path}.coarse")
            out.append(ColumnTransform(col.name, tuple(alts), coarse))
        return tuple(out)

    def build_codec(self, col: ColumnSpec, raw: Mapping[str, Any], path: str) -> Any:
        kind = raw["kind"]
        allowed = {
            "identity": {"categorical", "ordinal"},
            "groups": {"categorical", "ordinal"},
            "bins": {"integer", "continuous", "ordinal"},
        }[kind]
        if col.type not in allowed:
            self.problem(join_path(path, "kind"), f"'{kind}' does not apply to a {col.type} column")
            return None
        extra = {
            "identity": {"edges", "open_below", "open_above", "labels", "clip", "groups"},
            "groups": {"edges", "open_below", "open_above", "labels", "clip"},
            "bins": {"groups"},
        }[kind] & set(raw)
        if extra:
            self.problem(path, f"fields {sorted(extra)} do not apply to kind '{kind}'")
        try:
            if kind == "identity":
                return IdentityCodec(tuple(col.domain or ()))
            if kind == "groups":
                return self.build_groups(col, raw, path)
            if col.type == "ordinal" and not col.numeric:
                self.problem(join_path(path, "kind"), "'bins' needs numeric values")
                return None
            if "edges" not in raw:
                self.problem(path, "'bins' needs 'edges'")
                return None
            codec = BinsCodec(
                tuple(raw["edges"]),
                integer=col.type != "continuous",
                open_below=raw.get("open_below", True),
                open_above=raw.get("open_above", True),
                labels=tuple(raw.get("labels", ())),
                clip=tuple(raw["clip"]) if "clip" in raw else None,  # type: ignore[arg-type]
            )
        except ValueError as exc:
            field, _, msg = str(exc).partition(": ")
            self.problem(join_path(path, field) if msg else path, msg or str(exc))
            return None
        self.check_cover(col, codec, path)
        return codec

    def build_groups(
        self, col: ColumnSpec, raw: Mapping[str, Any], path: str
    ) -> GroupsCodec | None:
        groups = raw.get("groups")
        if not groups:
            self.problem(path, "'groups' needs a 'groups' mapping of label -> values")
            return None
        domain = {json.dumps(v) for v in col.domain or ()}
        members = [json.dumps(m) for ms in groups.values() for m in ms]
        for m in members:
            if m not in domain:
                self.problem(join_path(path, "groups"), f"value {m} is not in the column's domain")
        if domain - set(members):
            self.problem(join_path(path, "groups"), "every domain value must belong to a group")
        return GroupsCodec(tuple((k, tuple(v)) for k, v in groups.items()))

    def check_cover(self, col: ColumnSpec, codec: BinsCodec, path: str) -> None:
        """Closed ends must cover the declared bounds, or valid values would have no bin."""
        if col.type == "ordinal":
            lo, hi = float(min(col.domain or [0])), float(max(col.domain or [0]))
        elif col.bounds is not None:
            lo, hi = col.bounds
        else:
            return
        if codec.clip is not None:
            lo, hi = max(lo, codec.clip[0]), min(hi, codec.clip[1])
        if not codec.open_below and codec.edges[0] > lo:
            self.problem(
                join_path(path, "edges"),
                f"first edge {codec.edges[0]:g} is above the lowest allowed value {lo:g} "
                "and the binning is closed below",
            )
        top_ok = codec.edges[-1] > hi  # bins are [a, b): the top value needs an edge above it
        if not codec.open_above and not top_ok:
            self.problem(
                join_path(path, "edges"),
                f"last edge {codec.edges[-1]:g} does not exceed the highest allowed value "
                f"{hi:g} and the binning is closed above",
            )

    def build_coarse(
        self, col: ColumnSpec, raw: Mapping[str, Any], alts: list[Alternative], path: str
    ) -> BinsCodec | None:
        try:
            coarse = BinsCodec(
                tuple(raw["edges"]),
                integer=False,
                open_below=raw.get("open_below", True),
                open_above=raw.get("open_above", True),
                labels=tuple(raw.get("labels", ())),
            )
        except ValueError as exc:
            field, _, msg = str(exc).partition(": ")
            self.problem(join_path(path, field) if msg else path, msg or str(exc))
            return None
        for alt in alts:
            try:
                coarse_lookup(alt.codec, coarse)
            except ValueError as exc:
                self.problem(path, f"alternative {alt.name!r}: {exc}")
        return coarse

    # --- constraints -------------------------------------------------------------
    def build_rules(self, key: str) -> tuple[Rule, ...]:
        types = {
            c.name: c.type if c.numeric or c.type == "categorical" else "categorical"
            for c in self.columns.values()
        }
        out, names = [], set()
        for i, raw in enumerate(self.doc["constraints"][key]):
            path = f"constraints.{key}[{i}]"
            if raw["name"] in names:
                self.problem(join_path(path, "name"), f"duplicate rule name {raw['name']!r}")
            names.add(raw["name"])
            try:
                pred = parse(raw["reject_if"])
            except ConstraintSyntaxError as exc:
                self.problem(join_path(path, "reject_if"), str(exc))
                continue
            for msg in validate_columns(pred, types):
                self.problem(path, msg)
            out.append(Rule(raw["name"], raw["reject_if"], pred, raw.get("description", "")))
        return tuple(out)

    # --- criteria ----------------------------------------------------------------
    def build_criteria(self) -> tuple[Criterion, ...]:
        out: list[Criterion] = []
        ids: dict[str, str] = {}
        for i, raw in enumerate(self.doc["criteria"]):
            path = f"criteria[{i}]"
            cid, kind = raw["id"], raw["kind"]
            if cid in ids:
                self.problem(join_path(path, "id"), f"duplicate criterion id {cid!r}")
            ids[cid] = kind
            params = dict(raw.get("params", {}))
            unknown = set(params) - CRITERION_PARAMS[kind]
            for u in sorted(unknown):
                self.problem(
                    join_path(join_path(path, "params"), u), f"unknown parameter for kind '{kind}'"
                )
            eps = float(raw.get("epsilon", 0.0))
            threshold = raw["threshold"]
            if kind in S_ONLY_KINDS:
                if eps != 0:
                    self.problem(
                        join_path(path, "epsilon"),
                        f"a '{kind}' criterion is computed on the release only; its ε must be 0",
                    )
                if threshold < 0:
                    self.problem(join_path(path, "threshold"), "must be >= 0")
            else:
                if eps <= 0:
                    self.problem(
                        join_path(path, "epsilon"),
                        "must be > 0 (the criterion reads confidential data)",
                    )
                if threshold <= 0:
                    self.problem(join_path(path, "threshold"), "must be > 0")
            bounds = tuple(float(b) for b in raw["bounds"]) if "bounds" in raw else None
            bounds = self.check_criterion(kind, params, bounds, threshold, path)
            once = bool(raw.get("once", False))
            if once:
                self.check_once(kind, params, path)
            out.append(
                Criterion(
                    cid,
                    kind,
                    float(threshold),
                    eps,
                    bounds,  # type: ignore[arg-type]
                    freeze_value(params),
                    once,
                    raw.get("description", ""),
                )
            )
        self.criterion_kinds = ids
        for i, c in enumerate(out):
            slack = c.params.get("resize_slack")
            if isinstance(slack, str) and ids.get(slack) != "max_marginal_error":
                self.problem(
                    f"criteria[{i}].params.resize_slack",
                    f"{slack!r} is not the id of a max_marginal_error criterion",
                )
        return tuple(out)

    def _numeric_column(self, path: str, name: Any) -> bool:
        if name not in self.columns:
            self.unknown_column(path, name)
            return False
        if not self.columns[name].numeric:
            self.problem(path, f"column {name!r} is not numeric")
            return False
        return True

    def _features(self, params: Mapping[str, Any], path: str) -> list[str]:
        target = params.get("target")
        feats = params.get("features", "all_other")
        if feats == "all_other":
            return [c for c in self.columns if c != target]
        if not isinstance(feats, list) or not feats:
            self.problem(
                join_path(path, "features"), "must be 'all_other' or a non-empty list of columns"
            )
            return []
        for j, f in enumerate(feats):
            if f not in self.columns:
                self.unknown_column(f"{path}.features[{j}]", f)
            elif f == target:
                self.problem(f"{path}.features[{j}]", "the target cannot also be a feature")
        return list(feats)

    def _statistic_weights(self, params: Mapping[str, Any], path: str) -> None:
        """Per-entry budget weights of the DP regression: names of its columns, weights > 0."""
        wpath = join_path(path, "statistic_weights")
        weights = params["statistic_weights"]
        if not isinstance(weights, Mapping) or not weights:
            self.problem(wpath, "must be a non-empty mapping from entry name to weight")
            return
        named = [params.get("target"), *self._features(params, path)]
        allowed = {c for c in named if isinstance(c, str)}
        for name, value in weights.items():
            epath = join_path(wpath, str(name))
            if not _is_number(value) or value <= 0:
                self.problem(epath, "must be a number > 0")
            factors = str(name).removesuffix("^2").split("*")
            for factor in factors:
                column, _, label = factor.partition("=")
                if column not in allowed:
                    self.problem(
                        epath,
                        f"{column!r} is not the target or a feature of this regression",
                    )
                elif label and label not in [str(v) for v in self.columns[column].domain or ()]:
                    self.problem(epath, f"{label!r} is not a value of column {column!r}")

    def check_criterion(
        self, kind: str, params: dict[str, Any], bounds: Any, threshold: float, path: str
    ) -> tuple[float, float] | None:
        ppath = join_path(path, "params")
        if bounds is not None and not bounds[0] < bounds[1]:
            self.problem(join_path(path, "bounds"), "lower bound must be below upper bound")
        if kind in UNIT_BOUNDS_KINDS:
            if bounds is not None and bounds != (0.0, 1.0):
                self.problem(join_path(path, "bounds"), f"a '{kind}' value lies in [0, 1]")
            bounds = (0.0, 1.0)
        if kind == "max_marginal_error":
            mw = params.get("max_way")
            if mw is not None and not (isinstance(mw, int) and 1 <= mw <= len(self.columns)):
                self.problem(
                    join_path(ppath, "max_way"),
                    f"must be null or a whole number 1..{len(self.columns)}",
                )
        elif kind == "relative_one_way":
            lam = params.get("lambda", threshold)
            p = params.get("false_pass_probability")
            if not _is_number(lam) or lam <= 1:
                self.problem(join_path(ppath, "lambda"), "must be a number > 1")
            elif lam < threshold:
                self.problem(join_path(ppath, "lambda"), f"must be >= the threshold {threshold:g}")
            if not (_is_number(p) and 0 < p < 0.5):
                self.problem(
                    join_path(ppath, "false_pass_probability"), "must be a number in (0, 0.5)"
                )
            sm = params.get("smoothing", 1)
            if not (_is_number(sm) and sm > 0):
                self.problem(join_path(ppath, "smoothing"), "must be a number > 0")
            if _is_number(lam) and lam > 1:
                if bounds is not None and bounds != (1.0, float(lam)):
                    self.problem(join_path(path, "bounds"), f"must be [1, lambda] = [1, {lam:g}]")
                bounds = (1.0, float(lam))
        elif kind == "conditional_mean":
            if bounds is None:
                self.problem(path, "'bounds' [L, U] are required for a conditional mean")
            target = params.get("target")
            self._numeric_column(join_path(ppath, "target"), target)
            gb = params.get("group_by", [])
            if not isinstance(gb, list):
                self.problem(join_path(ppath, "group_by"), "must be a list of columns")
                gb = []
            if not gb and not params.get("include_overall", True):
                self.problem(ppath, "needs group_by columns or include_overall")
            for j, g in enumerate(gb):
                gpath = f"{ppath}.group_by[{j}]"
                if g not in self.columns:
                    self.unknown_column(gpath, g)
                elif g == target:
                    self.problem(gpath, "the target cannot be its own group-by column")
                else:
                    t = self.doc["transformations"]["columns"].get(g, {})
                    if "coarse" not in t and len(t.get("alternatives", [])) > 1:
                        self.problem(
                            gpath,
                            f"column {g!r} has several alternatives but no coarse "
                            "binning, so its groups would change with the configuration",
                        )
            slack = params.get("resize_slack", 0.0)
            if not isinstance(slack, str) and not (_is_number(slack) and 0 <= slack < 1):
                self.problem(
                    join_path(ppath, "resize_slack"),
                    "must be a number in [0, 1) or the id of a max_marginal_error criterion",
                )
            pad = params.get("pad_value")
            if (
                pad is not None
                and bounds is not None
                and not (_is_number(pad) and bounds[0] <= pad <= bounds[1])
            ):
                self.problem(
                    join_path(ppath, "pad_value"), "must lie within the criterion's bounds"
                )
        elif kind in {"regression_coefficients", "regression_mae"}:
            self._numeric_column(join_path(ppath, "target"), params.get("target"))
            self._features(params, ppath)
            if kind == "regression_mae" and bounds is None:
                self.problem(path, "'bounds' [L, U] for clipping predictions are required")
            if params.get("norm", "l1") != "l1":
                self.problem(join_path(ppath, "norm"), "must be 'l1'")
            if "statistic_weights" in params:
                self._statistic_weights(params, ppath)
        elif kind == "max_ecdf":
            self._numeric_column(join_path(ppath, "column"), params.get("column"))
        elif kind == "tv_marginals":
            way = params.get("way", 2)
            if not (isinstance(way, int) and 1 <= way <= len(self.columns)):
                self.problem(
                    join_path(ppath, "way"), f"must be a whole number 1..{len(self.columns)}"
                )
            if params.get("aggregate", "mean") not in ("mean", "max"):
                self.problem(join_path(ppath, "aggregate"), "must be 'mean' or 'max'")
        elif kind == "face_privacy_count" and params.get("measure", "unique_rows") not in (
            "unique_rows",
            "below_min_count",
        ):
            self.problem(join_path(ppath, "measure"), "must be 'unique_rows' or 'below_min_count'")
        return bounds

    def check_once(self, kind: str, params: Mapping[str, Any], path: str) -> None:
        """Only a statistic of R alone, under a fixed transformation, can leave the loop."""
        if kind != "regression_coefficients":
            self.problem(
                join_path(path, "once"),
                f"a '{kind}' criterion compares R with the candidate, so it must run in the loop",
            )
            return
        section = self.doc["transformations"]["columns"]
        cols = [params.get("target"), *self._features(params, join_path(path, "params"))]
        varying = [
            f"{c}: {len(section[c]['alternatives'])}"
            for c in cols
            if c in section and len(section[c]["alternatives"]) > 1
        ]
        if varying:
            self.problem(
                join_path(path, "once"),
                "the regression columns have several transformation alternatives ("
                + ", ".join(varying)
                + "), so the statistic depends on the configuration",
            )

    # --- faithfulness, generator, budget, selection ----------------------------
    def build_faithfulness(self, transforms: tuple[ColumnTransform, ...]) -> FaithfulnessRule:
        raw = self.doc["faithfulness"]
        exact, dist = list(raw["exact"]), dict(raw["distance"])
        for j, c in enumerate(exact):
            if c not in self.columns:
                self.unknown_column(f"faithfulness.exact[{j}]", c)
        for c in dist:
            if c not in self.columns:
                self.unknown_column(f"faithfulness.distance.{c}", c)
            elif c in exact:
                self.problem(
                    f"faithfulness.distance.{c}", "a column cannot be both exact and distance"
                )
            elif not self.columns[c].numeric:
                self.problem(
                    f"faithfulness.distance.{c}", "bin distance needs an ordered (numeric) column"
                )
        missing = [c for c in self.columns if c not in exact and c not in dist]
        if missing:
            self.problem(
                "faithfulness", f"every column needs a rule; missing: {', '.join(missing)}"
            )
        must = []
        for j, m in enumerate(raw.get("must_match", [])):
            if m["column"] not in dist:
                self.problem(
                    f"faithfulness.must_match[{j}].column",
                    f"{m['column']!r} must be one of the distance columns",
                )
            must.append((m["column"], float(m["value"])))
        return FaithfulnessRule(tuple(exact), freeze_value(dist), float(raw["alpha"]), tuple(must))

    def build_generator(self) -> GeneratorSpace:
        raw = self.doc["generator"]
        family = raw["family"]
        if family not in GENERATOR_FAMILIES:
            self.problem(
                "generator.family",
                f"unknown family {family!r}; known: {', '.join(sorted(GENERATOR_FAMILIES))}",
            )
            return GeneratorSpace(family, ())
        checks = {**GENERATOR_FAMILIES[family], **COMMON_HYPERPARAMETERS}
        grids = []
        for i, grid in enumerate(raw["search_space"]):
            path = f"generator.search_space[{i}]"
            for name, values in grid.items():
                if name not in checks:
                    self.problem(join_path(path, name), f"unknown hyperparameter for '{family}'")
                    continue
                for j, v in enumerate(values):
                    msg = checks[name](v)
                    if msg:
                        self.problem(f"{path}.{name}[{j}]", msg)
            excl = [k for k in EXCLUSIVE_HYPERPARAMETERS.get(family, ()) if k in grid]
            if EXCLUSIVE_HYPERPARAMETERS.get(family) and len(excl) != 1:
                self.problem(
                    path, f"set exactly one of {', '.join(EXCLUSIVE_HYPERPARAMETERS[family])}"
                )
            for req in REQUIRED_HYPERPARAMETERS.get(family, ()):
                if req not in grid:
                    self.problem(path, f"'{req}' is required for '{family}'")
            grids.append(tuple((k, tuple(v)) for k, v in grid.items()))
        return GeneratorSpace(family, tuple(grids))

    def build_budget(self, criteria: tuple[Criterion, ...]) -> Budget:
        raw = self.doc["budget"]
        total = sum(c.epsilon for c in criteria)
        if not math.isclose(raw["epsilon_criteria"], total, rel_tol=1e-9, abs_tol=1e-12):
            self.problem(
                "budget.epsilon_criteria",
                f"{raw['epsilon_criteria']:g} does not equal the sum of the criteria's ε "
                f"({total:g})",
            )
        if raw["neighbour"] == "add_remove":
            self.problem("budget.neighbour", ADD_REMOVE_REFUSED)
        return Budget(
            float(raw["epsilon_generator"]),
            float(raw["epsilon_criteria"]),
            raw["neighbour"],
            raw.get("epsilon_total_max"),
            raw.get("epsilon_lifetime_max"),
        )

    def build_selection(self) -> Selection:
        from workbench.privacy import check_selection_parameters

        raw = self.doc["selection"]
        try:
            check_selection_parameters(raw["gamma"], raw["max_iterations"], raw["epsilon_0"])
        except ValueError as exc:
            self.problem("selection", str(exc))
        configs = None
        if "configurations" in raw:
            configs = []
            for i, c in enumerate(raw["configurations"]):
                try:
                    configs.append(Configuration.from_dict(c))
                except (KeyError, TypeError, ValueError, AttributeError):
                    self.problem(
                        f"selection.configurations[{i}]",
                        "must have 'transforms', 'generator' (with 'family') and 'min_count'",
                    )
            configs = tuple(configs)
        return Selection(
            float(raw["gamma"]), raw["max_iterations"], float(raw["epsilon_0"]), configs
        )

    def check_generator_epsilon(self, spec: Spec) -> None:
        """With ε_gen alternatives, the budget's ε_gen is the largest selectable (the charge)."""
        if not any(name == "epsilon" for grid in spec.generator.grids for name, _ in grid):
            return  # no alternatives: every configuration uses the budget's ε_gen
        selectable = (
            spec.selection.configurations
            if spec.selection.configurations is not None
            else _full_space(spec)
        )
        values = {spec.generator_epsilon(c) for c in selectable}
        budget = spec.budget.epsilon_generator
        if not math.isclose(max(values), budget, rel_tol=1e-9):
            self.problem(
                "budget.epsilon_generator",
                f"must equal the largest selectable generator 'epsilon' ({max(values):g}): "
                "private selection is charged for the largest",
            )

    def check_configurations(self, spec: Spec) -> None:
        """A narrowed list may only hold points of the declared space."""
        if spec.selection.configurations is None:
            return
        if not spec.selection.configurations:
            self.problem("selection.configurations", "must not be empty")
        space = {c.key for c in _full_space(spec)}
        for i, c in enumerate(spec.selection.configurations):
            if c.key not in space:
                self.problem(
                    f"selection.configurations[{i}]", "is not in the spec's configuration space"
                )


def _full_space(spec: Spec) -> list[Configuration]:
    from workbench.spec.space import iter_configurations

    return list(iter_configurations(spec))


def _metadata(raw: Mapping[str, Any]) -> Metadata:
    return Metadata(
        raw["title"],
        raw["owner"],
        raw["description"],
        tuple(raw.get("intended_uses", ())),
        tuple(raw.get("unintended_uses", ())),
        raw.get("privacy_unit", "one record"),
        raw.get("n_policy", ""),
        raw.get("contact", ""),
        raw.get("dataset"),
    )


def build_spec(document: Mapping[str, Any], *, require_frozen: bool = False) -> Spec:
    """Validate a document into an immutable Spec; one SpecError lists every problem."""
    problems = schema_problems(document)
    if problems:
        raise SpecError(problems)
    try:
        return _build(document, require_frozen)
    except SpecError:
        raise
    except Exception as exc:  # a validator bug must still surface as a SpecError, never a traceback
        raise SpecError(
            [
                Problem(
                    "", f"internal validation error ({type(exc).__name__}); please report this spec"
                )
            ]
        ) from exc


def _build(document: Mapping[str, Any], require_frozen: bool) -> Spec:
    b = _Builder(document)
    columns = b.build_columns()
    transforms = b.build_transformations()
    constraints = Constraints(
        b.build_rules("raw"),
        b.build_rules("synthetic"),
        document["constraints"].get("partial_bins", "keep"),
        document["constraints"].get("max_sampling_rounds", 20),
    )
    criteria = b.build_criteria()
    faith = b.build_faithfulness(transforms)
    generator = b.build_generator()
    budget = b.build_budget(criteria)
    selection = b.build_selection()
    digest = spec_hash(document)
    frozen = FROZEN_KEY in document
    if frozen and document[FROZEN_KEY]["sha256"] != digest:
        b.problem(
            "frozen.sha256",
            "does not match the spec's content (the spec was changed after freezing)",
        )
    if require_frozen and not frozen:
        b.problem("frozen", "the spec is not frozen; freeze it before a confidential run")
    if b.problems:
        raise SpecError(sorted(set(b.problems)))
    spec = Spec(
        freeze_value(dict(document)),
        digest,
        frozen,
        _metadata(document["metadata"]),
        columns,
        transforms,
        constraints,
        criteria,
        faith,
        tuple(document["face_privacy"]["min_count"]),
        generator,
        budget,
        selection,
    )
    b.check_configurations(spec)
    b.check_generator_epsilon(spec)
    if (
        spec.budget.epsilon_total_max is not None
        and spec.epsilon_total > spec.budget.epsilon_total_max
    ):
        b.problem(
            "budget.epsilon_total_max",
            f"ε_total {spec.epsilon_total:g} exceeds the cap {spec.budget.epsilon_total_max:g}",
        )
    lifetime = spec.budget.epsilon_lifetime_max
    if lifetime is not None and spec.epsilon_total > lifetime:
        b.problem(
            "budget.epsilon_lifetime_max",
            f"ε_total {spec.epsilon_total:g} of one run exceeds the dataset's lifetime cap "
            f"{lifetime:g}: no run could ever start",
        )
    if b.problems:
        raise SpecError(sorted(set(b.problems)))
    return spec
