"""The budget as a reviewer reads it: every part of ε_total, the formula, the cap (both reviews)."""

from __future__ import annotations

from workbench.report.datasheet import neighbour_words, plain_epsilon
from workbench.report.guarantee import guarantee_html, spec_guarantees
from workbench.report.spec_summary import format_number
from workbench.specification import Spec
from workbench.specification.derived import budget_parts
from workbench.widgets.dashboards.pages import badge, esc, table_html


def budget_rows(spec: Spec) -> list[tuple[str, float, float]]:
    """(part, ε, how many times it counts) for every part of ε_total (the one derivation,
    :func:`workbench.specification.derived.budget_parts`, as the co-design bar)."""
    return [(p.label, p.epsilon, p.weight) for p in budget_parts(spec.to_document())]


def budget_html(spec: Spec) -> str:
    """The budget breakdown, the cap if any, and ε_total in plain words."""
    rows = [[part, format_number(eps), f"× {times:g}", format_number(round(eps * times, 12))]
            for part, eps, times in budget_rows(spec)]
    rows.append(["ε_total", "", "", format_number(spec.epsilon_total)])
    cap = spec.budget.epsilon_total_max
    cap_text = "" if cap is None else (
        f"<p>Cap: ε_total ≤ {format_number(cap)} "
        f"{badge('within the cap', 'pass') if spec.epsilon_total <= cap else badge('OVER', 'fail')}"
        "</p>")
    return (
        f"<h3>Budget</h3><p class='wb-big'>{esc(spec.budget_plan().formula())}</p>"
        "<p class='wb-muted'>Private selection (Liu &amp; Talwar; paper Thm. 3) doubles the ε "
        "spent in each iteration, however many iterations run; statistics computed once "
        "outside the loop count once.</p>"
        + table_html(["part", "ε", "counted", "contributes"], rows, numeric=(1, 3))
        + cap_text
        + "<p>Neighbouring datasets: "
        f"{esc(neighbour_words(spec.budget.neighbour, spec.n_policy))}; pure "
        "ε-DP (δ = 0).</p>"
        f"<p class='wb-muted'>{esc(plain_epsilon(spec.epsilon_total, spec.n_policy))}</p>"
        + "".join(guarantee_html(g, heading="h4") for g in spec_guarantees(spec)
                  if not g.is_pure))
