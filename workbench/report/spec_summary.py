"""A plain-text summary of a spec, for `workbench describe` and for sign-off documents."""

from __future__ import annotations

import math
import textwrap

from workbench.generators import Guarantee, records_plan
from workbench.report.amplification import amplification_figure
from workbench.report.own_data import cleaning_describe_line, pilot_describe_lines
from workbench.specification import Spec
from workbench.specification.derived import configuration_epsilon, selectable_epsilons


def format_number(x: float | None) -> str:
    """Compact number for tables: no trailing zeros, ∞ for None/inf."""
    if x is None or (isinstance(x, float) and math.isinf(x)):
        return "∞"
    return f"{x:.6g}"


def _table(rows: list[list[str]], header: list[str]) -> list[str]:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return [fmt.format(*header).rstrip(), fmt.format(*["-" * w for w in widths]).rstrip()] + [
        fmt.format(*r).rstrip() for r in rows
    ]


def _family_lines(spec: Spec) -> list[str]:
    """What the generator family adds per hyperparameter set (its ``describe`` hook; the
    workload family shows the marginals it derives from the criteria)."""
    from workbench.generators import make_generator
    from workbench.report.guarantee import guarantee_sentence

    out: list[str] = []
    for i, params in enumerate(spec.generator.hyperparameter_sets(), 1):
        own = {k: v for k, v in params.items() if k != "epsilon"}
        eps = configuration_epsilon(spec, params)
        generator = make_generator(spec.generator.family, **own)
        generator.bind_spec(spec)
        shown = ", ".join(f"{k}={v}" for k, v in sorted(params.items())) or "defaults"
        out += generator.describe(f"{i} ({shown})", eps)
        promise = generator.guarantee()
        if not promise.is_pure:  # say it wherever a release is not plain ε-DP
            out.append(f"  {i} ({shown}) guarantee: {guarantee_sentence(promise)}")
    return out


def _record_parts(spec: Spec) -> list[Guarantee]:
    """Every distinct per-record guarantee the hyperparameter sets declare."""
    from workbench.report.guarantee import spec_guarantees

    return [g for g in spec_guarantees(spec)
            if not g.dataset_level and {"epsilon", "delta"} <= set(g.parameters)]


def family_words(spec: Spec) -> str:
    """The generator family in plain words, and the declared defaults no grid overrides."""
    from workbench.generators import family_class

    family = family_class(spec.generator.family)
    named = [k for grid in spec.generator.grids for k, _ in grid]
    unset = ", ".join(f"{k} = {v}" for k, v in family.defaults_outside(named).items())
    return family.description + (f"; not in the search space, at their defaults: {unset}"
                                 if unset else "")


def describe_spec(spec: Spec) -> str:
    """Columns, domain sizes, configuration count, criteria table and ε_total."""
    out: list[str] = []
    md = spec.metadata
    out.append(f"Spec: {md.title}")
    out.append(f"Owner: {md.owner}")
    out.append(f"SHA-256: {spec.sha256} ({'frozen' if spec.frozen else 'not frozen'})")
    if spec.expected_n is not None:
        out.append(f"Expected n after cleaning (public estimate): {spec.expected_n.label()}"
                   + (" (dry runs rehearse at the low end)" if spec.expected_n.is_range else ""))
    out.append("")
    rows = []
    for col, t in zip(spec.columns, spec.transformations, strict=True):
        declared = (
            f"[{format_number(col.bounds[0])}, {format_number(col.bounds[1])}]"
            if col.bounds
            else f"{len(col.domain or ())} values"
        )
        alts = ", ".join(f"{a.name}: {a.codec.size}" for a in t.alternatives)
        coarse = str(t.coarse.size) if t.coarse is not None else "-"
        rows.append([col.name, col.type, declared, alts, coarse])
    out.append(f"Columns ({len(spec.columns)}), with the domain size of every alternative:")
    out += [
        "  " + line
        for line in _table(rows, ["column", "type", "declared", "alternatives", "coarse"])
    ]
    out.append("")
    c = spec.constraints
    out.append(
        f"Constraints: {len(c.raw)} raw cleaning rules, {len(c.synthetic)} synthetic rejection "
        f"rules (partial bins: {c.partial_bins})"
    )
    out.append(f"Face privacy: min_count in {{{', '.join(str(m) for m in spec.min_counts)}}}")
    n_transforms = math.prod(len(t.alternatives) for t in spec.transformations)
    n_hyper = spec.generator.count()
    out.append(f"Generator: {spec.generator.family}, {n_hyper} hyperparameter sets")
    full = n_transforms * n_hyper * len(spec.min_counts)
    out.append(
        f"Configurations: {n_transforms} transformation combinations x {n_hyper} hyperparameter "
        f"sets x {len(spec.min_counts)} min_count values = {full}"
    )
    if spec.selection.configurations is not None:
        out.append(f"Narrowed search space: {len(spec.selection.configurations)} configurations")
    out += _family_lines(spec)
    out.append("")
    rows = []
    for i, cr in enumerate(spec.criteria, 1):
        bounds = (
            f"[{format_number(cr.bounds[0])}, {format_number(cr.bounds[1])}]" if cr.bounds else "-"
        )
        stage = "once" if cr.once else ("loop" if cr.epsilon > 0 else "release only")
        rows.append(
            [
                str(i),
                cr.id,
                cr.kind,
                format_number(cr.threshold),
                format_number(cr.epsilon),
                bounds,
                stage,
            ]
        )
    out.append(f"Acceptance criteria ({len(spec.criteria)}):")
    out += [
        "  " + line
        for line in _table(rows, ["#", "id", "kind", "threshold", "epsilon", "[L, U]", "stage"])
    ]
    out.append("")
    b, s = spec.budget, spec.selection
    in_loop = spec.budget_plan().epsilon_criteria_loop
    out.append("Budget:")
    declared = [b.epsilon_generator if v is None else v for v in selectable_epsilons(spec.document)]
    alternatives = sorted(set(declared))
    shown = (
        f" (largest of the alternatives {', '.join(map(format_number, alternatives))})"
        if len(alternatives) > 1
        else ""
    )
    out.append(f"  generator epsilon        {format_number(b.epsilon_generator)}{shown}")
    out.append(f"  criteria epsilon in loop {format_number(round(in_loop, 12))}")
    out.append(f"  statistics computed once {format_number(round(spec.epsilon_once, 12))}")
    out.append(
        f"  private selection        gamma = {format_number(s.gamma)}, "
        f"T = {format_number(s.max_iterations)}, epsilon_0 = {format_number(s.epsilon_0)}"
    )
    out.append(f"  neighbour relation       {b.neighbour}")
    plan = spec.budget_plan()
    out.append(f"  {plan.formula(ascii=True)}")
    for g in _record_parts(spec):  # the second part, never added to the first
        out.append(f"  {records_plan(plan, g).records_text(ascii=True)}")
    figure = amplification_figure(spec)
    if figure is not None:
        out += [textwrap.fill(line, width=96, initial_indent="  ", subsequent_indent="    ")
                for line in figure.lines(ascii=True)[1:]]
    if spec.survey is not None:
        from workbench.survey.describe import survey_lines

        out += survey_lines(spec.survey, plan.epsilon_total)
    out += cleaning_describe_line(spec)
    out += pilot_describe_lines(spec, plan.epsilon_total)
    if b.epsilon_lifetime_max is not None:
        out.append(f"  lifetime cap on the dataset: epsilon <= "
                   f"{format_number(b.epsilon_lifetime_max)} over every run")
    out.append(f"  dataset                  {spec.metadata.dataset or '(not set: a run needs it)'}")
    out.append(textwrap.fill(plan.retry_text(ascii=True), width=96, initial_indent="  ",
                             subsequent_indent="    "))
    return "\n".join(out)
