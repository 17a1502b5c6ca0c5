"""Spec review dashboard: what a reviewer must read before signing off a frozen spec.

Shows the hash, columns and transformation alternatives, constraints in plain words, the
criteria with thresholds, ε, σ and false-pass probability, each threshold's feasibility floor
at the expected n when a proxy is given (flagged "infeasible at n"), the budget breakdown, the
search space and, given a dry-run file (``?dryrun=PATH``: what ``workbench dryrun
--write-result`` or ``--records`` writes, read by ``workbench.dryrun.read_pass_rates``), the
expected number of private-selection iterations.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from workbench.constraints.words import rule_sentence
from workbench.criteria import kinds
from workbench.criteria.false_pass import FALSE_PASS_SENTENCE
from workbench.dryrun import PassRates, forecast, read_pass_rates
from workbench.dryrun.floors import FloorTable
from workbench.report.spec_summary import family_words, format_number
from workbench.specification import Configuration, Spec
from workbench.transform.display import shown_label
from workbench.widgets.dashboards.budget_section import budget_html
from workbench.widgets.dashboards.floors_section import floor_cell, floors_note
from workbench.widgets.dashboards.pages import badge, esc, message_page, page, table_html, tabs
from workbench.widgets.model.readouts import Readout

#: P(Lap(b) ≤ −d) = ½·e^(−d/b) = 5% at d = b·ln 10: how far above T a value still passes 5%.
MARGIN_5PCT = math.log(10.0)


# --- criteria ----------------------------------------------------------------------------
@dataclass(frozen=True)
class CriterionReview:
    """One criterion as the reviewer sees it (None where a figure does not apply)."""

    id: str
    kind: str
    measures: str
    threshold: float
    adjusted_threshold: float | None
    epsilon: float
    bounds: tuple[float, float] | None
    stage: str
    sensitivity: float | None
    sigma: float | None
    false_pass: str
    margin: float | None
    note: str


def stage_of(criterion: Any) -> str:
    """Where a criterion's ε is spent: in the loop, once, or not at all."""
    if criterion.once:
        return "once"
    return "loop" if criterion.epsilon > 0 else "release only"


def review_criterion(criterion: Any, readout: Readout | None) -> CriterionReview:
    """Δ and σ from the proxy readout; the false-pass probability from the mechanism."""
    delta = None if readout is None else readout.sensitivity
    sigma = None if readout is None else readout.sigma
    t_prime = None if readout is None else readout.adjusted_threshold
    scale = None if delta is None or criterion.epsilon <= 0 else delta / criterion.epsilon
    margin, note = None, ""
    if criterion.epsilon <= 0:
        false_pass, note = "0", "no noise: computed on the release alone"
    elif kinds.get(criterion.kind).tags.noise_note or delta is None:
        words = kinds.get(criterion.kind).review_false_pass(criterion)
        false_pass, note = words if words is not None else ("—", "")
    else:  # the one definition (criteria.false_pass), as in the co-design readouts
        p = kinds.get(criterion.kind).false_pass_probability(
            criterion, delta, {} if readout is None else readout.details)
        false_pass = "—" if p is None else _percent(p)
        margin = None if scale is None else scale * MARGIN_5PCT
    if readout is not None and readout.note and not note:
        note = readout.note
    return CriterionReview(
        id=criterion.id, kind=criterion.kind,
        measures=criterion.description or kinds.get(criterion.kind).description,
        threshold=criterion.threshold, adjusted_threshold=t_prime, epsilon=criterion.epsilon,
        bounds=criterion.bounds, stage=stage_of(criterion), sensitivity=delta, sigma=sigma,
        false_pass=false_pass, margin=margin, note=note)


def _percent(p: float) -> str:
    """A probability for reading, without alarming exponents.

    >>> _percent(0.0092), _percent(1e-9), _percent(1.0)
    ('0.92%', '<0.01%', '100%')
    """
    if 0 < p < 1e-4:
        return "<0.01%"
    return f"{p:.0%}" if p in (0.0, 1.0) else f"{p:.2%}"


def criterion_reviews(spec: Spec, readouts: Mapping[str, Readout] | None) -> list[CriterionReview]:
    """Every criterion of the spec, in order."""
    readouts = readouts or {}
    return [review_criterion(c, readouts.get(c.id)) for c in spec.criteria]


def _num(x: float | None) -> str:
    """Four significant digits, ``—`` for missing."""
    if x is None:
        return "—"
    return f"{x:.4g}"


def criteria_html(spec: Spec, reviews: Sequence[CriterionReview], delta_source: str,
                  floors: FloorTable | None = None) -> str:
    """The criteria table with the assumptions behind Δ, σ and the false-pass probability, and
    a floor column when a proxy gave the floors."""
    rows = []
    for i, r in enumerate(reviews, 1):
        bounds = "" if r.bounds is None else (
            f"[{format_number(r.bounds[0])}, {format_number(r.bounds[1])}]")
        threshold = format_number(r.threshold)
        if r.adjusted_threshold is not None:
            threshold += f" (T′ = {r.adjusted_threshold:.4g})"
        measures = esc(r.measures) + (f'<br><span class="wb-muted">{esc(r.note)}</span>'
                                      if r.note else "")
        rows.append([str(i), f"<b>{esc(r.id)}</b><br><code class='wb-nowrap'>{esc(r.kind)}</code>",
                     measures, esc(threshold), esc(format_number(r.epsilon)),
                     f"<span class='wb-nowrap'>{esc(bounds)}</span>", esc(r.stage),
                     esc(_num(r.sensitivity)), esc(_num(r.sigma)),
                     f"<span class='wb-nowrap'>{esc(r.false_pass)}</span>", esc(_num(r.margin))])
        if floors is not None:
            rows[-1].insert(4, floor_cell(spec, floors, r.id))
    header = ["#", "criterion", "what it measures", "threshold T", "ε", "[L, U]", "stage",
              "Δ", "σ", "P(false pass)", "5% margin"]
    numeric = (3, 4, 7, 8, 10)
    if floors is not None:
        header.insert(4, f"floor at n = {floors.n:,}")
        numeric = (3, 4, 5, 8, 9, 11)
    assumptions = (
        "<p class='wb-muted'>A criterion passes when its DP value (exact value + Laplace noise "
        f"of scale b = Δ/ε, σ = √2·b) is below T. {esc(FALSE_PASS_SENTENCE)} "
        "<b>5% margin</b> = b·ln 10: a value that exceeds "
        "T by more than this passes with probability below 5%. For the relative 1-way error "
        "the threshold is lowered to T′ so that a value clipped at λ passes with probability "
        f"p. {esc(delta_source)}</p>") + floors_note(spec, floors)
    table = table_html(header, rows, numeric=numeric, raw=tuple(range(len(header))))
    return f"<h3>Acceptance criteria ({len(reviews)})</h3>{table}{assumptions}"


def _space_counts(spec: Spec) -> tuple[int, int, int]:
    """(transformation combinations, hyperparameter sets, min_count values)."""
    return (math.prod(len(t.alternatives) for t in spec.transformations),
            spec.generator.count(), len(spec.min_counts))


def search_space_html(spec: Spec, dryrun: PassRates | None, dryrun_error: str = "") -> str:
    """The size of the search space, selection parameters, and the iteration forecast."""
    n_t, n_h, n_m = _space_counts(spec)
    s = spec.selection
    parts = [
        "<h3>Search space</h3>",
        f"<p class='wb-big'>{spec.configuration_count():,} configurations</p>",
        f"<p>{n_t:,} transformation combinations × {n_h} generator hyperparameter sets × "
        f"{n_m} min_count values = {n_t * n_h * n_m:,}"
        + ("" if s.configurations is None else
           f"; narrowed by the spec to a list of {len(s.configurations)}") + ".</p>",
        table_html(["column", "alternatives"],
                   [[t.column, str(len(t.alternatives))] for t in spec.transformations],
                   numeric=(1,)),
        f"<p>Generator {esc(spec.generator.family)}: "
        + "; ".join(" × ".join(f"{esc(k)} ({len(v)})" for k, v in grid)
                    for grid in spec.generator.grids)
        + f". min_count ∈ {{{', '.join(str(m) for m in spec.min_counts)}}}.</p>",
        f"<p class='wb-muted'>{esc(family_words(spec))}.</p>",
        "<h3>Private selection</h3>",
        f"<p>stop probability γ = {format_number(s.gamma)}, cap T = "
        f"{format_number(s.max_iterations)}, ε₀ = {format_number(s.epsilon_0)}. Each iteration "
        "draws one configuration uniformly at random.</p>",
    ]
    parts.append(_forecast_html(spec, dryrun, dryrun_error))
    return "".join(parts)


def _forecast_html(spec: Spec, dryrun: PassRates | None, error: str) -> str:
    """Expected iterations and P(⊥) from dry-run pass rates (or how to get them)."""
    s = spec.selection
    if dryrun is None:
        examples = [[f"{p:.0%}", _iterations(f.expected_iterations), f"{f.probability_bottom:.1%}"]
                    for p in (0.5, 0.2, 0.1, 0.05, 0.01)
                    for f in [forecast([p], s.gamma, s.max_iterations)]]
        why = (f"<p>{badge('dry-run file unreadable', 'fail')} {esc(error)}</p>" if error
               else "<p>No dry-run results given: pass <code>?dryrun=PATH</code> (or "
               "<code>workbench dashboard spec SPEC --dryrun PATH</code>) for the expected "
               "number of iterations. For reference, by the per-iteration pass probability "
               "p:</p>")
        return ("<h3>Expected iterations</h3>" + why
                + table_html(["p", "E[iterations]", "P(⊥)"], examples, numeric=(0, 1, 2)))
    f = forecast([p_c for _, p_c, _ in dryrun.pass_probabilities], s.gamma, s.max_iterations)
    p, e, bottom = f.p, f.expected_iterations, f.probability_bottom
    space = {c.key for c in spec.configurations()} if spec.configuration_count() <= 200_000 \
        else None
    outside = 0 if space is None else sum(c.key not in space for c, _, _ in
                                          dryrun.pass_probabilities)
    warn = []
    if dryrun.spec_sha256 and dryrun.spec_sha256 != spec.sha256:
        warn.append("the dry run was made with a different spec (hash differs)")
    if outside:
        warn.append(f"{outside} listed configurations are not in this spec's space")
    best = sorted(dryrun.pass_probabilities, key=lambda t: -t[1])[:8]
    rows = [[_config_text(c), f"{p_c:.1%}", "" if n is None else str(n)] for c, p_c, n in best]
    return (
        "<h3>Expected iterations (from dry runs)</h3>"
        + "".join(f"<p>{badge('check', 'warn')} {esc(w)}</p>" for w in warn)
        + f"<p class='wb-big'>E[iterations] = {_iterations(e)}; P(⊥) = {bottom:.1%}</p>"
        f"<p>Mean pass probability p = {p:.1%} over {len(dryrun.pass_probabilities)} of "
        f"{spec.configuration_count():,} configurations"
        + (f" (dry runs on {esc(dryrun.data)})" if dryrun.data else "")
        + ". E = (1 − r^T)/(1 − r) with r = (1 − p)(1 − γ).</p>"
        + "<p>Configurations most likely to pass:</p>"
        + table_html(["configuration", "pass probability", "trials"], rows, numeric=(1, 2)))


def _iterations(e: float) -> str:
    return "∞" if math.isinf(e) else f"{e:,.1f}"


def _config_text(config: Configuration) -> str:
    """A configuration in one line: transforms, hyperparameters, min_count."""
    t = ", ".join(f"{c}={a}" for c, a in config.transforms)
    h = ", ".join(f"{k}={v}" for k, v in config.hyperparameters)
    return f"{t}; {h}; min_count={config.min_count}"


# --- columns and constraints -------------------------------------------------------------
def _labels(codec: Any, limit: int = 14) -> str:
    labels = [shown_label(x) for x in codec.labels]
    shown = ", ".join(labels[:limit])
    return shown + (f", … ({len(labels)} in all)" if len(labels) > limit else "")


def columns_html(spec: Spec) -> str:
    """Every column: declared domain, policies, and each transformation alternative's bins."""
    rows = []
    for col, t in zip(spec.columns, spec.transformations, strict=True):
        declared = (f"[{format_number(col.bounds[0])}, {format_number(col.bounds[1])}]"
                    if col.bounds else f"{len(col.domain or ())} values")
        alts = "<br>".join(f"<b>{esc(a.name)}</b> ({esc(a.kind)}, {a.codec.size}): "
                           f"<span class='wb-muted'>{esc(_labels(a.codec))}</span>"
                           for a in t.alternatives)
        coarse = "" if t.coarse is None else f"{t.coarse.size}: {esc(_labels(t.coarse, 8))}"
        rows.append([f"<b>{esc(col.name)}</b>", esc(col.type), esc(declared),
                     esc(f"missing: {col.missing}; out of domain: {col.out_of_domain}"), alts,
                     coarse])
    return ("<h3>Columns and transformation alternatives</h3>"
            + table_html(["column", "type", "declared", "policies", "alternatives (bins)",
                          "coarse (group-by)"], rows, raw=range(6)))


def constraints_html(spec: Spec) -> str:
    """Cleaning and rejection rules in plain words, with their exact text."""
    c = spec.constraints

    def rows(rules: Sequence[Any], synthetic: bool) -> list[list[str]]:
        return [[f"<b>{esc(r.name)}</b>", esc(rule_sentence(r.predicate.root, synthetic)),
                 f"<code>{esc(r.reject_if)}</code>"] for r in rules]

    partial = ("kept (a rule rejects a bin only when it holds for every value in it)"
               if c.partial_bins == "keep" else
               "rejected (a rule rejects a bin as soon as it holds for some value in it)")
    return (
        f"<h3>Cleaning the confidential data ({len(c.raw)} rules)</h3>"
        + table_html(["rule", "in plain words", "exact rule"], rows(c.raw, False), raw=(0, 1, 2))
        + f"<h3>Rejecting synthetic records ({len(c.synthetic)} rules)</h3>"
        + table_html(["rule", "in plain words", "exact rule"], rows(c.synthetic, True),
                     raw=(0, 1, 2))
        + f"<p>Bins that a rule cuts through are {esc(partial)}. Sampling stops after "
        f"{c.max_sampling_rounds} rounds.</p>")


# --- the dashboard -----------------------------------------------------------------------
def header_html(spec: Spec, source: str) -> str:
    """Title, hash and frozen state, and the figures a reviewer checks first."""
    state = (badge("FROZEN", "pass") if spec.frozen else
             badge("NOT FROZEN: a draft; freeze it before sign-off", "warn"))
    return (
        f"<h2 style='margin:2px 0 6px'>{esc(spec.metadata.title)}</h2>"
        f"<p>Owner: {esc(spec.metadata.owner)} · file <code>{esc(source)}</code></p>"
        f"<p>{state} SHA-256 <code>{esc(spec.sha256)}</code></p>"
        f"<p><span class='wb-big'>ε_total = {esc(format_number(spec.epsilon_total))}</span> · "
        f"{len(spec.criteria)} criteria · {len(spec.columns)} columns · "
        f"{spec.configuration_count():,} configurations</p>")


class SpecReview:
    """The spec review: a header and one tab per topic; ``widget`` is the root."""

    TABS = ("Criteria", "Budget", "Search space", "Columns", "Constraints")

    def __init__(self, spec: Spec, *, source: str = "", readouts: Mapping[str, Readout] | None
                 = None, delta_source: str = "", dryrun: PassRates | None = None,
                 dryrun_error: str = "", floors: FloorTable | None = None) -> None:
        """Render every section once (the spec is immutable)."""
        self.spec = spec
        self.reviews = criterion_reviews(spec, readouts)
        self.floors = floors
        self.header = page(header_html(spec, source), "review-header")
        sections = [criteria_html(spec, self.reviews, delta_source, floors), budget_html(spec),
                    search_space_html(spec, dryrun, dryrun_error), columns_html(spec),
                    constraints_html(spec)]
        self.tabs = tabs(self.TABS, [page(s) for s in sections], "review-tabs")
        self.widget = widgets.VBox([self.header, self.tabs],
                                   layout=widgets.Layout(max_width="1260px")
                                   ).add_class("wb-spec-review")


def spec_review_dashboard(spec_path: Path, proxy_path: Path | None = None,
                          dryrun_path: Path | None = None) -> widgets.Widget:
    """The dashboard for a spec file, or a page saying what is wrong with the inputs."""
    from workbench.specification import SpecError
    from workbench.validation import load_spec

    try:
        spec = load_spec(spec_path)
    except (SpecError, OSError) as exc:
        return message_page("cannot read the spec", f"<code>{esc(spec_path)}</code>: "
                            f"{esc(exc)}", "fail")
    readouts, delta_source, floors = _proxy_figures(spec, proxy_path)
    dryrun, error = None, ""
    if dryrun_path is not None:
        try:
            dryrun = read_pass_rates(dryrun_path)
        except ValueError as exc:
            error = str(exc)
    return SpecReview(spec, source=str(spec_path), readouts=readouts, delta_source=delta_source,
                      dryrun=dryrun, dryrun_error=error, floors=floors).widget


def _proxy_figures(spec: Spec, proxy_path: Path | None
                   ) -> tuple[dict[str, Readout], str, FloorTable | None]:
    """Δ and σ estimated on the public proxy (they depend on n and on the candidate S), and
    the feasibility floors at the expected n (None when they cannot be computed)."""
    if proxy_path is None:
        return {}, ("Δ and σ depend on n and on the candidate S; no proxy was given, so they "
                    "are not shown, nor are the feasibility floors (pass ?proxy=PATH)."), None
    from workbench.transform import EncodingError
    from workbench.transform.raw import read_raw
    from workbench.widgets.model.lab import ProxyLab
    from workbench.widgets.model.sampling import PreviewError

    try:
        lab = ProxyLab(read_raw(proxy_path, spec.columns, spec.file_format))
        readouts = lab.readouts(spec)
        config = lab.configuration(spec)
    except (OSError, EncodingError, PreviewError, ValueError, KeyError, ArithmeticError) as exc:
        return {}, f"Δ and σ could not be estimated on the proxy {proxy_path.name}: {exc}", None
    floors: FloorTable | None = None
    why = ""
    try:
        floors = lab.floors(spec)
    except (PreviewError, ValueError, KeyError, ArithmeticError) as exc:
        why = f" Feasibility floors could not be computed on the proxy: {exc}."
    n = next((r.n for r in readouts.values()), 0)
    return readouts, (
        f"Δ and σ are estimates: they depend on n and on the candidate S, and are computed here "
        f"as the engine does, with the PUBLIC proxy {proxy_path.name} (n = {n:,} after "
        f"cleaning) as R and one quick synthetic sample of the first configuration "
        f"({_config_text(config)}) as S.{why}"), floors
