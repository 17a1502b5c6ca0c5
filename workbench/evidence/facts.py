"""The proxy facts file: low-order frequency tables computed from a public sample, and loading them.

A facts file is JSON with a ``provenance`` block, a ``columns`` block, a ``sampling_plan``
(the ancestral order) and ``tables``. Every table has the same shape: a ``child`` column,
``parents`` (each given as integer ``ranges`` or text ``categories``, possibly none) and one
``cell`` per combination of parent groups, in row-major order, holding the observed child
``values`` and their ``counts``. Only counts are stored, never row-level records.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.evidence.realism import removed_shares
from workbench.evidence.us_natality import COLUMN_MAPPING, PROXY_COLUMNS

Facts = dict[str, Any]

FACTS_FORMAT = "workbench.proxy.facts"
FACTS_FORMAT_VERSION = 1
FACTS_FILENAME = "us2019_facts.json"

#: Width of the birth-weight histogram bins inside the (gestation, sex) conditional.
WEIGHT_BIN_G = 10

#: Ancestral order: each table's parents are sampled before its child.
SAMPLING_PLAN: tuple[str, ...] = (
    "birth_month",
    "mother_age",
    "parity_given_mother_age",
    "gestation_week_given_mother_age_parity",
    "birth_sex_given_gestation_week",
    "birth_weight_given_gestation_week_birth_sex",
)

_REQUIRED_PROVENANCE = ("source_file", "source_sha256", "source_rows", "data_period")


class FactsError(ValueError):
    """A FACTS file that cannot be read as written; the message names the fact and field."""


# ----------------------------------------------------------------------------- locating/loading


def default_facts_path() -> Path:
    """The repository's ``data_public/us2019_facts.json`` (the package is installed editable)."""
    here = Path(__file__).resolve().parent
    candidates = (here.parents[1] / "data_public" / FACTS_FILENAME, here / FACTS_FILENAME)
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"no facts file found at {[str(p) for p in candidates]}; "
        "run scripts/build_proxy_facts.py or pass an explicit path"
    )


def read_json(path: str | Path, what: str = "FACTS file") -> tuple[dict[str, Any], str]:
    """The one read of a file of published aggregates: its JSON object and SHA-256; a file
    that cannot be read, is not JSON or holds no object fails naming ``what`` and the path."""
    target = Path(path)
    try:
        raw = target.read_bytes()
        doc = json.loads(raw.decode("utf-8"))
    except OSError as exc:
        raise FactsError(f"cannot read {what} {str(target)!r} ({type(exc).__name__})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FactsError(f"{what} {str(target)!r} is not JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise FactsError(f"{what} {str(target)!r}: the file must hold one JSON object")
    return doc, hashlib.sha256(raw).hexdigest()


def load_facts(path: str | Path | None = None) -> Facts:
    """Read and check a facts file; ``None`` means the repository's bundled US 2019 facts."""
    target = default_facts_path() if path is None else Path(path)
    facts, _ = read_json(target, "facts file")
    validate_facts(facts)
    return facts


def validate_facts(facts: Mapping[str, Any]) -> None:
    """Fail early, naming the problem, when a facts mapping cannot drive the sampler."""
    if facts.get("format") != FACTS_FORMAT:
        raise ValueError(f"facts: format must be {FACTS_FORMAT!r}, got {facts.get('format')!r}")
    if facts.get("format_version") != FACTS_FORMAT_VERSION:
        raise ValueError(f"facts: unsupported format_version {facts.get('format_version')!r}")
    prov = facts.get("provenance", {})
    missing = [k for k in _REQUIRED_PROVENANCE if k not in prov]
    if missing:
        raise ValueError(f"facts: provenance lacks {missing}")
    columns = facts.get("columns", {})
    if tuple(columns) != PROXY_COLUMNS:
        raise ValueError(f"facts: columns must be {PROXY_COLUMNS}, got {tuple(columns)}")
    tables = facts.get("tables", {})
    produced: set[str] = set()
    for name in facts.get("sampling_plan", []):
        if name not in tables:
            raise ValueError(f"facts: sampling_plan names unknown table {name!r}")
        table = tables[name]
        late = [p for p in table["parents"] if p not in produced]
        if late:
            raise ValueError(f"facts: table {name!r} needs {late} before it in sampling_plan")
        expected = int(np.prod([len(_groups(s)) for s in table["parents"].values()]))
        if len(table["cells"]) != expected:
            n_cells = len(table["cells"])
            raise ValueError(f"facts: table {name!r} has {n_cells} cells, not {expected}")
        for i, cell in enumerate(table["cells"]):
            if len(cell["values"]) != len(cell["counts"]) or sum(cell["counts"]) <= 0:
                raise ValueError(f"facts: table {name!r} cell {i} is empty or ragged")
        refine = table.get("refine_with")
        if refine is not None and (refine not in tables or tables[refine]["parents"]):
            raise ValueError(f"facts: table {name!r} must refine with a marginal, not {refine!r}")
        produced.add(table["child"])
    if produced != set(PROXY_COLUMNS):
        raise ValueError(f"facts: sampling_plan produces {sorted(produced)}, not all columns")


def _groups(spec: Mapping[str, Any]) -> list[Any]:
    """The groups of one parent: its integer ranges or its categories."""
    return list(spec["ranges"]) if "ranges" in spec else list(spec["categories"])


def range_group_index(values: np.ndarray, ranges: Sequence[Sequence[int]]) -> np.ndarray:
    """Index of the inclusive range holding each value; values beyond the ends go to the ends."""
    lows = np.asarray([r[0] for r in ranges], dtype=np.int64)
    idx = np.searchsorted(lows, values, side="right") - 1
    return np.clip(idx, 0, len(lows) - 1)


# ----------------------------------------------------------------------------- computing tables


def _singles_with_pooled_tails(lo: int, hi: int, first: int, last: int) -> list[list[int]]:
    """Single-value ranges from ``first`` to ``last``; each sparse tail pooled into one range."""
    ranges = [[v, v] for v in range(max(lo, first), min(hi, last) + 1)]
    if lo < first:
        ranges.insert(0, [lo, first - 1])
    if hi > last:
        ranges.append([last + 1, hi])
    return ranges


def _bands(lo: int, hi: int, inner_edges: Sequence[int]) -> list[list[int]]:
    """Contiguous inclusive ranges covering ``lo..hi``, cut before each of ``inner_edges``."""
    starts = [lo, *[e for e in inner_edges if lo < e <= hi]]
    ends = [s - 1 for s in starts[1:]] + [hi]
    return [[s, e] for s, e in zip(starts, ends, strict=True)]


def _frequency_table(
    child: pd.Series,
    parents: Mapping[str, tuple[pd.Series, dict[str, Any]]],
    *,
    what: str,
    how: str,
    role: str,
) -> dict[str, Any]:
    """Counts of ``child`` per combination of parent groups, as one JSON-ready table."""
    specs = {name: spec for name, (_, spec) in parents.items()}
    codes = []
    for name, (series, spec) in parents.items():
        if "ranges" in spec:
            codes.append(range_group_index(series.to_numpy(dtype=np.int64), spec["ranges"]))
        else:
            lookup = {c: i for i, c in enumerate(spec["categories"])}
            codes.append(series.map(lookup).to_numpy(dtype=np.int64))
        if len(codes[-1]) and codes[-1].min() < 0:
            raise ValueError(f"parent {name!r} has values outside its groups")
    dims = [len(_groups(s)) for s in specs.values()]
    cell = np.ravel_multi_index(codes, dims) if codes else np.zeros(len(child), dtype=np.int64)
    counts = pd.DataFrame({"cell": cell, "value": child.to_numpy()}).value_counts().sort_index()
    cells = []
    for k, combo in enumerate(itertools.product(*[_groups(s) for s in specs.values()])):
        if k not in counts.index.get_level_values(0):
            raise ValueError(f"table for {child.name!r}: parent cell {combo} has no rows")
        sub = counts.loc[k]
        cells.append(
            {
                "given": dict(zip(specs, combo, strict=True)),
                "values": [_plain(v) for v in sub.index],
                "counts": [int(c) for c in sub.to_numpy()],
            }
        )
    return {
        "what": what,
        "how": how,
        "role": role,
        "child": str(child.name),
        "parents": specs,
        "cells": cells,
    }


def _plain(value: Any) -> Any:
    """A numpy scalar as the plain Python value JSON can hold."""
    return value.item() if isinstance(value, np.generic) else value


def compute_tables(df: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """All frequency tables of the facts file, from a frame already mapped onto the schema."""
    col = {c: df[c] for c in PROXY_COLUMNS}
    lo = {c: int(df[c].min()) for c in PROXY_COLUMNS if c != "birth_sex"}
    hi = {c: int(df[c].max()) for c in PROXY_COLUMNS if c != "birth_sex"}
    sex = {"categories": ["F", "M"]}
    age_single = {"ranges": _singles_with_pooled_tails(lo["mother_age"], hi["mother_age"], 15, 45)}
    age_band = {"ranges": _bands(lo["mother_age"], hi["mother_age"], [25, 30, 35, 40])}
    parity_band = {"ranges": _bands(lo["parity"], hi["parity"], [2, 4])}
    gest_single = {
        "ranges": _singles_with_pooled_tails(lo["gestation_week"], hi["gestation_week"], 22, 44)
    }
    weight_bin = (df["birth_weight"] // WEIGHT_BIN_G * WEIGHT_BIN_G).rename("birth_weight")
    count = "exact counts of source rows, no smoothing"

    def marginal(name: str, what: str, role: str = "reference") -> dict[str, Any]:
        return _frequency_table(col[name], {}, what=what, how=count, role=role)

    tables = {
        "birth_month": marginal("birth_month", "marginal of birth month (1..12)", "sampling"),
        "mother_age": marginal("mother_age", "marginal of mother's age in years", "sampling"),
        "birth_sex": marginal("birth_sex", "marginal of birth sex"),
        "parity": marginal("parity", "marginal of parity"),
        "gestation_week": marginal("gestation_week", "marginal of gestation week"),
        "parity_given_mother_age": _frequency_table(
            col["parity"],
            {"mother_age": (col["mother_age"], age_single)},
            what="parity given mother's age (single years; tails pooled)",
            how=f"{count}; ages below 15 and above 45 pooled because they are sparse",
            role="sampling",
        ),
        "gestation_week_given_mother_age_parity": _frequency_table(
            col["gestation_week"],
            {
                "mother_age": (col["mother_age"], age_band),
                "parity": (col["parity"], parity_band),
            },
            what=(
                "gestation week (single weeks, full range) given mother's age band and parity band"
            ),
            how=f"{count}; age bands <=24, 25-29, 30-34, 35-39, >=40; parity bands 1, 2-3, >=4",
            role="sampling",
        ),
        "birth_sex_given_gestation_week": _frequency_table(
            col["birth_sex"],
            {"gestation_week": (col["gestation_week"], gest_single)},
            what="birth sex given gestation week (boys are more often preterm)",
            how=f"{count}; weeks below 22 and above 44 pooled because they are sparse",
            role="sampling",
        ),
        "birth_weight_given_gestation_week_birth_sex": {
            **_frequency_table(
                weight_bin,
                {
                    "gestation_week": (col["gestation_week"], gest_single),
                    "birth_sex": (col["birth_sex"], sex),
                },
                what=(
                    f"birth weight in {WEIGHT_BIN_G} g bins (value = lower edge, grams) given "
                    "gestation week and birth sex, full range including implausible weights"
                ),
                how=(
                    f"{count}; weight floored to {WEIGHT_BIN_G} g; weeks below 22 and above 44 "
                    "pooled (all their rows fail the gestation cleaning rule anyway)"
                ),
                role="sampling",
            ),
            "bin_width": WEIGHT_BIN_G,
            "refine_with": "birth_weight_grams",
        },
        "birth_weight_grams": marginal(
            "birth_weight",
            "marginal of birth weight at 1 g resolution; the gram inside a sampled "
            f"{WEIGHT_BIN_G} g bin is drawn from it restricted to that bin, which keeps the "
            "recorded heaping (pound/ounce conversions such as 3260 g, round tens)",
            "refinement",
        ),
    }
    return tables


def build_facts(df: pd.DataFrame, *, source_file: str, source_sha256: str) -> Facts:
    """The complete facts document (provenance, columns, plan, tables, source checks)."""
    tables = compute_tables(df)
    shares = removed_shares(df)
    facts: Facts = {
        "format": FACTS_FORMAT,
        "format_version": FACTS_FORMAT_VERSION,
        "about": (
            "Aggregate frequency tables (marginals and low-order conditionals) of a public US "
            "natality sample, mapped onto the Israeli live-births schema. They drive a public "
            "PROXY dataset; the proxy rows are synthetic, not real people."
        ),
        "provenance": {
            "source_file": source_file,
            "source_sha256": source_sha256,
            "source_rows": len(df),
            "source_description": (
                "random sample of singleton live births from the US public-use natality file "
                "(National Vital Statistics System, CDC), public domain"
            ),
            "data_period": "births of calendar year 2019 (date_of_birth recorded to the month)",
            "built_by": "scripts/build_proxy_facts.py",
            "column_mapping": dict(COLUMN_MAPPING),
            "method": (
                "each table counts source rows per (parent groups, child value); cells list only "
                "child values that occur; nothing row-level is stored"
            ),
            "smoothing": "none: counts are exact; small cells are kept (public-domain source)",
            "coarsening": [
                f"birth_weight floored to {WEIGHT_BIN_G} g bins in its conditional; the gram "
                "within a bin comes from the 1 g weight marginal",
                "parity | mother_age: ages < 15 and > 45 pooled",
                "gestation_week | (mother_age band, parity band): bands, not single values",
                "birth_sex and birth_weight | gestation_week: weeks < 22 and > 44 pooled",
            ],
            "tails": "implausible values are kept so the proxy triggers the cleaning rules",
            "tables": {name: t["what"] for name, t in tables.items()},
        },
        "columns": {
            c: (
                {"type": "category", "categories": ["F", "M"]}
                if c == "birth_sex"
                else {"type": "integer"}
            )
            for c in PROXY_COLUMNS
        },
        "sampling_plan": list(SAMPLING_PLAN),
        "tables": tables,
        "source_checks": {
            "what": "share of source rows removed by the paper's 9 raw cleaning rules (§4.8.1)",
            "removed_share": {k: round(v, 6) for k, v in shares.items()},
        },
    }
    validate_facts(facts)
    return facts


# ----------------------------------------------------------------------------- writing


_WIDTH = 100


def _is_flat(obj: Any) -> bool:
    """True for scalars and for lists of numbers or short text (they are written on one line)."""
    if isinstance(obj, dict):
        return False
    if isinstance(obj, list):
        return all(_is_flat(x) and not (isinstance(x, str) and len(x) > 40) for x in obj)
    return True


def _dumps(obj: Any, level: int) -> str:
    """Readable JSON: dicts indented, flat lists packed into lines of at most ~100 characters."""
    pad, inner = "  " * level, "  " * (level + 1)
    if _is_flat(obj):
        text = json.dumps(obj, ensure_ascii=False)
        if not isinstance(obj, list) or len(text) + len(inner) <= _WIDTH:
            return text
        lines, line = [], ""
        for item in (json.dumps(x, ensure_ascii=False) for x in obj):
            if line and len(inner) + len(line) + len(item) + 2 > _WIDTH:
                lines.append(line)
                line = ""
            line = f"{line} {item}," if line else f"{item},"
        lines.append(line.rstrip(","))
        return "[\n" + "\n".join(inner + ln for ln in lines) + "\n" + pad + "]"
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f"{inner}{json.dumps(k)}: {_dumps(v, level + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    items = [f"{inner}{_dumps(v, level + 1)}" for v in obj]
    return "[\n" + ",\n".join(items) + "\n" + pad + "]"


def facts_to_json(facts: Mapping[str, Any]) -> str:
    """Deterministic, diff-friendly JSON text of a facts document."""
    return _dumps(dict(facts), 0) + "\n"


def write_facts(facts: Mapping[str, Any], path: str | Path) -> Path:
    """Write a facts document; the same facts always give the same bytes."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(facts_to_json(facts), encoding="utf-8")
    return target
