"""The release's guarantee in words: one section shared by the datasheet, report.html,
``describe`` and the dashboards, so a promise that is not pure ε-DP reads the same everywhere.

Inputs are the :class:`~workbench.generators.Guarantee` of the chosen configuration or its
JSON form (``guarantee.json`` in the bundle), and a release's public diagnostics
(``diagnostics.json``: R̂ and ESS of an MCMC release, computed on the released records);
never data.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from workbench.generators import PURE_EPSILON_DP, Guarantee

if TYPE_CHECKING:
    from workbench.specification import Spec

#: Parameter names shown with their mathematical symbol.
_SYMBOLS = {"epsilon": "ε", "delta": "δ", "epsilon_0": "ε₀", "gamma": "γ", "epsilon_pd": "ε_PD",
            "epsilon_criteria": "Σε_criteria"}


def as_guarantee(value: Guarantee | Mapping[str, Any] | None) -> Guarantee:
    """A :class:`Guarantee` from itself, its JSON form, or None (pure ε-DP, the default)."""
    if value is None:
        return PURE_EPSILON_DP
    return value if isinstance(value, Guarantee) else Guarantee.from_dict(value)


def _number(value: Any) -> str:
    """Numbers to 4 significant digits (δ in scientific form when tiny)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, float) and value != 0 and abs(value) < 1e-3:
        return f"{value:.3g}"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def parameters_text(value: Guarantee | Mapping[str, Any] | None) -> str:
    """'ε = 1.405, δ = 5.2e-21, t = …' from the guarantee's parameters ('' if none).

    >>> parameters_text({"kind": "k", "label": "l", "strict": True, "dataset_level": False,
    ...                  "parameters": {"epsilon": 1.405465, "delta": 5.2e-21, "t": 2}})
    'ε = 1.405, δ = 5.2e-21, t = 2'
    """
    g = as_guarantee(value)
    return ", ".join(f"{_SYMBOLS.get(k, k)} = {_number(v)}" for k, v in g.parameters.items())


def guarantee_sentence(value: Guarantee | Mapping[str, Any] | None) -> str:
    """One line: the label, its numbers and what it means.

    >>> guarantee_sentence(None)
    'ε-DP: pure ε-differential privacy for the whole dataset, charged to the budget'
    """
    g = as_guarantee(value)
    numbers = parameters_text(g)
    head = g.label + (f" ({numbers})" if numbers else "")
    return head + (f": {g.explanation}" if g.explanation else "")


def caveats(value: Guarantee | Mapping[str, Any] | None) -> list[str]:
    """What a reader must know when the guarantee is not pure ε-DP over the dataset."""
    g = as_guarantee(value)
    out = []
    if g.opt_in == "allow_asymptotic_dp":
        out.append("This is not a worst-case guarantee: the figure is computed on the data "
                   "itself and holds only asymptotically.")
    if not g.dataset_level:
        out.append("The bound holds for each released record on its own; it is not composed "
                   "over the released dataset, and the release is not ε-DP as a whole.")
    if g.caveat:
        out.append(g.caveat)
    if not g.proven_for_release:
        out.append("No proof covers this release as published, as a whole (guarantee.json: "
                   "proven_for_release false" + (", strict false" if not g.strict else "")
                   + ").")
    return out


def record_loss_text(value: Guarantee | Mapping[str, Any] | None) -> str:
    """A per-record guarantee's figure and its composition in one sentence ('' if none):
    'a released record costs its seed ε = ε_PD + Σε_criteria = 1.129 + 0.0684 = 1.197, …'.

    >>> record_loss_text({"kind": "k", "label": "l", "strict": True, "dataset_level": False,
    ...     "parameters": {"epsilon": 1.2, "delta": 1e-9, "epsilon_pd": 1.1,
    ...                    "epsilon_criteria": 0.1}})[:70]
    'a released record costs its seed ε = ε_PD + Σε_criteria = 1.1 + 0.1 = '
    """
    g = as_guarantee(value)
    p = g.parameters
    if g.dataset_level or not {"epsilon", "delta"} <= set(p):
        return ""
    delta = _number(float(p["delta"]))
    if "epsilon_criteria" not in p:
        return f"each released record: ε = {_number(float(p['epsilon']))}, δ = {delta}"
    return (f"a released record costs its seed ε = ε_PD + Σε_criteria = "
            f"{_number(float(p['epsilon_pd']))} + {_number(float(p['epsilon_criteria']))} = "
            f"{_number(float(p['epsilon']))}, with δ = {delta}: the seed also enters every "
            "criterion evaluated on R, and the release is gated on them (basic composition)")


def diagnostics_text(diagnostics: Mapping[str, Any] | None) -> str:
    """'R̂ = 1.002 (worst parameter), ESS = 5,432 (smallest) …' from ``diagnostics.json``.

    >>> diagnostics_text({"rhat_max": 1.0021, "ess_min": 5432.1, "acceptance": 0.31,
    ...                   "chains": 2, "kept": 20000, "burn_in": 5000}).split("; ")[0]
    'R̂ = 1.0021 (worst parameter), ESS = 5,432 (smallest), acceptance 0.31'
    """
    if not diagnostics:
        return ""
    d = diagnostics
    return (f"R̂ = {float(d['rhat_max']):.4f} (worst parameter), ESS = "
            f"{float(d['ess_min']):,.0f} (smallest), acceptance {float(d['acceptance']):.2g}; "
            f"{int(d['chains'])} chains × {int(d['kept']):,} kept after "
            f"{int(d['burn_in']):,} burn-in, on the released records")


def spec_guarantees(spec: Spec) -> list[Guarantee]:
    """The distinct guarantees the spec's hyperparameter sets declare (for reviews of a spec)."""
    from workbench.generators import make_generator

    found: list[Guarantee] = []
    for params in spec.generator.hyperparameter_sets():
        own = {k: v for k, v in params.items() if k != "epsilon"}
        generator = make_generator(spec.generator.family, **own)
        generator.bind_spec(spec)  # a per-record figure adds the spec's criteria
        g = generator.guarantee()
        if g not in found:
            found.append(g)
    return found


def guarantee_markdown(value: Guarantee | Mapping[str, Any] | None,
                       diagnostics: Mapping[str, Any] | None = None) -> list[str]:
    """The datasheet's "Guarantee of the records" section (Markdown lines)."""
    g = as_guarantee(value)
    numbers = diagnostics_text(diagnostics)
    return ["## Guarantee of the released records",
            f"- **{g.label}**" + (f" ({parameters_text(g)})" if g.parameters else "")
            + (f": {g.explanation}" if g.explanation else ""),
            *[f"- {c}" for c in caveats(g)],
            *([f"- Convergence (diagnostics.json): {numbers}."] if numbers else []), ""]


def guarantee_html(value: Guarantee | Mapping[str, Any] | None, *, heading: str = "h2",
                   diagnostics: Mapping[str, Any] | None = None) -> str:
    """The same section as HTML (class ``wb-guarantee``; the label in ``wb-guarantee-label``,
    an MCMC release's R̂ and ESS in ``wb-guarantee-diagnostics``)."""
    g = as_guarantee(value)
    e = html.escape
    numbers = f" <span>({e(parameters_text(g))})</span>" if g.parameters else ""
    notes = "".join(f"<p class='wb-guarantee-caveat'>{e(c)}</p>" for c in caveats(g))
    if diagnostics:
        notes += (f"<p class='wb-guarantee-diagnostics'>Convergence (diagnostics.json): "
                  f"{e(diagnostics_text(diagnostics))}.</p>")
    return (f"<div class='wb-guarantee'><{heading}>Guarantee of the released records</{heading}>"
            f"<p><b class='wb-guarantee-label'>{e(g.label)}</b>{numbers}"
            + (f": {e(g.explanation)}" if g.explanation else "") + f"</p>{notes}</div>")
