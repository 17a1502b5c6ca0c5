"""Text rendering of a public-data cleaning profile (`workbench profile`)."""

from __future__ import annotations

from workbench.specification import Spec
from workbench.transform.clean import CleaningProfile


def format_profile(spec: Spec, prof: CleaningProfile) -> str:
    """Per-column domain shares and per-rule removal shares, as percentages."""
    lines = [f"Profile of {prof.n_rows} rows of PUBLIC data (exact figures, not private)", ""]
    lines.append(f"{'column':<16}{'out of domain':>15}{'missing':>10}  alternatives (domain sizes)")
    for col, t in zip(spec.columns, spec.transformations, strict=True):
        sizes = ", ".join(f"{a.name}: {a.codec.size}" for a in t.alternatives)
        lines.append(
            f"{col.name:<16}{prof.out_of_domain[col.name]:>14.3%}{prof.missing[col.name]:>10.3%}"
            f"  {sizes}"
        )
    for col in spec.columns:
        text = (prof.non_numeric or {}).get(col.name, 0.0)
        if text:
            action = {"drop": "removes those rows", "error": "refuses the file",
                      "clip": "refuses the file (text cannot be clipped)"}[col.out_of_domain]
            lines.append(f"data problem: {text:.3%} of the cells of {col.name!r} are not "
                         f"numbers; its out_of_domain policy {col.out_of_domain!r} {action}")
    lines += ["", f"{'cleaning rule':<28}{'removes':>10}"]
    for name, share in prof.removed_by_rule.items():
        lines.append(f"{name:<28}{share:>10.3%}")
    lines.append(f"{'all rules together':<28}{prof.removed_total:>10.3%}")
    return "\n".join(lines)
