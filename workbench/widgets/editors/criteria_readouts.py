"""The criteria editor's readout row: Δ, σ, T′, the value on the proxy and the pass odds of one
criterion, rounded for reading (the exact numbers stay on ``CriterionRow.readout``)."""

from __future__ import annotations

from workbench.criteria.false_pass import FALSE_PASS_SENTENCE
from workbench.widgets.editors.base import note
from workbench.widgets.model.readouts import Readout, samples_label


def _fmt(x: float | None, pct: bool = False) -> str:
    """A readout number for reading (— when it does not apply; tiny odds as bounds)."""
    if x is None:
        return "—"
    if pct:
        if 0 < x < 1e-4:
            return "&lt;0.01%"
        if 1 - 1e-4 < x < 1:
            return "&gt;99.99%"
        return f"{x:.2%}"
    return f"{x:.4g}"


def _spread(x: float | None, span: tuple[float, float] | None, pct: bool = False) -> str:
    """The mean with the range over the quick samples beneath it."""
    if x is None or span is None or span[0] == span[1]:
        return _fmt(x, pct)
    return (f"{_fmt(x, pct)}<br><span class='wb-spread' style='color:#57606a;font-size:85%'>"
            f"{_fmt(span[0], pct)} – {_fmt(span[1], pct)}</span>")


def readout_html(r: Readout | None, stale: bool = False) -> str:
    """One table row of readouts (numbers rounded for reading; exact ones are on ``readout``)."""
    if r is None:
        return note("no readout (no proxy, or the criterion is not in the last valid design)")
    cells = [
        ("Δ", _fmt(r.sensitivity)),
        ("σ", _fmt(r.sigma)),
        ("T′", _fmt(r.adjusted_threshold)),
        ("value on proxy", _spread(r.value, r.value_range)),
        ("P(pass)", _spread(r.probability_pass, r.pass_range, pct=True)),
        ("P(false pass)", _fmt(r.false_pass, pct=True)),
        ("P(false fail)", _fmt(r.false_fail, pct=True)),
    ]
    head = "".join(f"<th style='padding:0 8px'>{k}</th>" for k, _ in cells)
    body = "".join(f"<td style='padding:0 8px;text-align:right;vertical-align:top'>{v}</td>"
                   for _, v in cells)
    extra = [f"value and P(pass): mean {samples_label(r.samples)} (range beneath)"]
    extra += [r.note] if r.note else []
    if r.false_pass is not None:
        extra.append(FALSE_PASS_SENTENCE)
    if stale:
        extra.append("the draft is invalid: these readouts are for the last valid design")
    notes = "".join(f"<br>{note(t)}" for t in extra)
    return f"<table style='font-size:90%'><tr>{head}</tr><tr>{body}</tr></table>{notes}"
