"""The release's datasheet and Table-2 criteria table, built only from public release parts.

Inputs are the spec, the chosen configuration, the DP criterion results (dicts as written to
``criteria.json``) and the budget breakdown; never the confidential data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from workbench.generators import MCMC_KIND
from workbench.report.guarantee import as_guarantee, guarantee_markdown, record_loss_text
from workbench.report.own_data import cleaning_markdown, pilot_markdown
from workbench.report.spec_summary import format_number
from workbench.specification import Spec
from workbench.specification.n_policy import NPolicy, n_statement, relation_words, unit_clause

TABLE2_COLUMNS = (
    ("#", "index"),
    ("type", "kind"),
    ("metric", "metric"),
    ("threshold", "threshold"),
    ("DP result", "value"),
    ("passed", "passed"),
    ("ε", "epsilon"),
    ("mechanism", "mechanism"),
    ("[L, U]", "bounds"),
    ("Δ", "sensitivity"),
    ("σ", "sigma"),
)


def _cell(key: str, row: Mapping[str, Any]) -> str:
    """One table cell, formatted for people (numbers to 4 significant digits)."""
    value = row.get(key)
    if key == "bounds":
        return "" if not value else f"[{format_number(value[0])}, {format_number(value[1])}]"
    if key == "passed":
        return "yes" if value else "no"
    effective = row.get("effective_threshold")
    if key == "threshold" and effective is not None and effective != value:
        return f"{_num(effective)} (limit {_num(value)})"
    if isinstance(value, float | int) and not isinstance(value, bool):
        return _num(value)
    return "" if value is None else str(value)


def _num(x: float) -> str:
    """Four significant digits; tiny values as <0.001 like the paper's Table 2."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    if x != 0 and abs(x) < 0.001:
        return "<0.001" if x > 0 else f"{x:.2g}"
    return f"{x:.4g}"


def criteria_rows(results: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """Rows of the Table-2-shaped criteria table."""
    rows = []
    for i, r in enumerate(results, start=1):
        row = {"index": i, "metric": r.get("metric") or r.get("id"), **r}
        rows.append([_cell(key, row) if key != "index" else str(i) for _, key in TABLE2_COLUMNS])
    return rows


def criteria_markdown(results: Sequence[Mapping[str, Any]]) -> str:
    """The criteria table in Markdown (the layout of the paper's Table 2)."""
    header = [h for h, _ in TABLE2_COLUMNS]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |"
              for r in criteria_rows(results)]
    return "\n".join(lines)


def plain_epsilon(epsilon: float, policy: NPolicy | None = None) -> str:
    """A plain-language reading of ε under the scheme's replace-one neighbours: the bound on
    how much any one record's values can shift beliefs (the number of records is public, so
    the words are never the add/remove "whether or not that record is in the data").

    >>> "whatever that one record's values are" in plain_epsilon(1.0)
    True
    """
    factor = math.exp(epsilon)
    return (
        f"ε = {format_number(epsilon)} means that for any single record, the probability of "
        f"any release outcome changes by at most a factor of e^ε ≈ {factor:,.0f} whatever "
        f"that one record's values are {unit_clause(policy or NPolicy())}. This is a "
        "worst-case bound over all outcomes and all adversaries; most "
        "outcomes shift far less. Values of ε between 1 and 10 are common in "
        "official-statistics releases of microdata."
    )


def neighbour_words(neighbour: str, policy: NPolicy | None = None) -> str:
    """The neighbour relation in words (what it says about n:
    :mod:`workbench.specification.n_policy`).

    >>> neighbour_words("replace_one").split(" (")[0], neighbour_words("add_remove")
    ('replace-one', 'add-remove')
    """
    if neighbour == "replace_one":
        return relation_words(policy or NPolicy())
    return neighbour.replace("_", "-")


#: What the datasheet says about time (the bundle's files are stamped 1980-01-01 00:00 UTC).
TIMING_NOTE = (
    "Nothing in this bundle tells time: no ledger line carries a timestamp, the run's start "
    "and the number of private-selection iterations stay in the enclave, the spec is published "
    "without its freeze time, and every file's modification time is set to 1 January 1980, "
    "00:00 UTC. The one timing channel left is the moment of publication: a run takes longer "
    "the more candidates it rejects, and private selection's guarantee covers the released "
    "candidate, not the number of attempts. Blunt it by publishing at a time fixed before the "
    "run (a pre-announced date, late enough for any run to have ended), not as soon as the "
    "run ends."
)


def prior_spend_lines(budget: Mapping[str, Any]) -> list[str]:
    """The dataset's earlier spend, when there was any (the release's cumulative privacy loss)."""
    if not budget.get("epsilon_earlier_runs"):
        return []
    return [
        f"- Earlier runs on dataset `{budget.get('dataset', '')}` spent ε = "
        f"{format_number(float(budget['epsilon_earlier_runs']))}; this run charged ε = "
        f"{format_number(float(budget['epsilon_charged']))}; the dataset's cumulative privacy "
        f"loss is ε = {format_number(float(budget['epsilon_cumulative']))}."
    ]


def total_loss_line(eps: float, guarantee: Mapping[str, Any] | None) -> str:
    """ε_total, and what it covers when the records carry another guarantee than pure ε-DP."""
    g = as_guarantee(guarantee)
    if g.is_pure:
        return f"Total privacy loss: ε_total = {format_number(eps)} (pure ε-DP, δ = 0)."
    if g.kind == MCMC_KIND:
        return (f"Total privacy loss: ε_total = {format_number(eps)} (δ = 0) if the posterior "
                "draw were exact; it is released from MCMC (see the guarantee above).")
    records = record_loss_text(g)
    return (f"Pure ε-DP part: ε_total = {format_number(eps)} (δ = 0) covers the generator's "
            "model and the acceptance criteria (and private selection, for a loop); the "
            f"released records also carry {g.label} (see the guarantee above), which is not "
            "added to ε_total" + (f": {records}." if records else "."))


def epsilon_words(eps: float, guarantee: Mapping[str, Any] | None,
                  policy: NPolicy | None = None) -> str:
    """ε in plain words, saying what it covers when the records carry another guarantee."""
    g = as_guarantee(guarantee)
    if g.is_pure:
        return plain_epsilon(eps, policy)
    if g.kind == MCMC_KIND:
        return f"For an exact posterior draw: {plain_epsilon(eps, policy)}"
    records = record_loss_text(g)
    return ("For the pure ε-DP part only (model and criteria — not the released "
            f"records): {plain_epsilon(eps, policy)}" + (f" For the released records, {records}."
                                                         if records else ""))


def datasheet_markdown(
    spec: Spec,
    configuration: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]],
    budget: Mapping[str, Any],
    n_rows: int,
    guarantee: Mapping[str, Any] | None = None,
    cleaning: Mapping[str, Any] | None = None,
    diagnostics: Mapping[str, Any] | None = None,
) -> str:
    """The datasheet for README.md: uses, accuracy guarantees, guarantee of the records,
    privacy unit, ε in words (``guarantee``: ``guarantee.json``'s form; None = pure ε-DP;
    ``diagnostics``: ``diagnostics.json``'s, R̂ and ESS of an MCMC release), the DP pilot the
    design came from and what cleaning did (``cleaning``: ``cleaning.json``)."""
    md = spec.metadata
    eps = float(budget["epsilon_total"])
    out = [
        f"# {md.title}",
        "",
        f"Owner: {md.owner}",
        "",
        md.description,
        "",
        "## What this release is",
        f"- {n_rows:,} synthetic records over the columns "
        f"{', '.join(spec.column_names)}, decoded to the spec's bin labels (an open top bin "
        "of whole numbers reads `20+`: 20 and above; `<18`: below 18).",
        "- Made once, by the spec with SHA-256 "
        f"`{spec.sha256}`, under private selection (all criteria below passed with DP).",
        f"- {n_statement(spec.n_policy)}",
        "",
        "## Intended uses",
        *[f"- {u}" for u in md.intended_uses],
        "",
        "## Queries with accuracy guarantees",
        "Each acceptance criterion was evaluated with differential privacy on the confidential "
        "data and passed (its DP result below its threshold; the layout of the paper's "
        "Table 2, also in `criteria.md`):",
        "",
        criteria_markdown(results),
        "",
        "## Queries without guarantees",
        "Anything not listed above, in particular:",
        *[f"- {u}" for u in md.unintended_uses],
        "- cells, combinations or subgroups finer than the released bins",
        "",
        *guarantee_markdown(guarantee, diagnostics),
        "## Privacy",
        f"- Privacy unit: {md.privacy_unit}.",
        f"- Neighbouring datasets: {neighbour_words(spec.budget.neighbour, spec.n_policy)}.",
        f"- {total_loss_line(eps, guarantee)}",
        *prior_spend_lines(budget),
        *pilot_markdown(spec),
        f"- {epsilon_words(eps, guarantee, spec.n_policy)}",
        "",
        *cleaning_markdown(cleaning, spec),
        "## Time",
        TIMING_NOTE,
        "",
        "## Configuration chosen",
        "```json",
        _json(configuration),
        "```",
        "",
        "## Budget",
        *[f"- {k}: {format_number(v) if isinstance(v, float | int) else v}"
          for k, v in budget.items()],
        "",
    ]
    return "\n".join(line for line in out if line is not None)


def _json(value: Any) -> str:
    """Pretty JSON for the datasheet."""
    import json

    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
