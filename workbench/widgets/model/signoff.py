"""The Markdown sign-off summary written next to a frozen spec: what each stakeholder signs,
including the forecast they sign off on (P(all criteria pass), its source, P(a release)) and,
when it is below the target or unknown, the designer's explicit acknowledgement."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from workbench.report import describe_spec
from workbench.specification import Spec
from workbench.widgets.model.forecast import DEFAULT_TARGET, Forecast, percent
from workbench.widgets.model.readouts import Readout

ROLES = ("Data owner", "Privacy officer", "Data users' representative", "Release engineer")


def _num(x: float | None, pct: bool = False) -> str:
    """A readout for the table (— when it does not apply)."""
    if x is None:
        return "—"
    return f"{x:.2%}" if pct else f"{x:.4g}"


def readout_table(readouts: Mapping[str, Readout]) -> list[str]:
    """Markdown table of the proxy readouts at sign-off time."""
    lines = [
        "| criterion | threshold | ε | Δ | σ | T′ | value on proxy | P(false pass) "
        "| P(false fail) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in readouts.values():
        lines.append(
            f"| {r.id} | {r.threshold:g} | {r.epsilon:g} | {_num(r.sensitivity)} | "
            f"{_num(r.sigma)} | {_num(r.adjusted_threshold)} | {_num(r.value)} | "
            f"{_num(r.false_pass, True)} | {_num(r.false_fail, True)} |"
        )
    return lines


def forecast_lines(spec: Spec, forecast: Forecast | None, target: float,
                   acknowledged: bool) -> list[str]:
    """The "Forecast" section: the number signed off on, its source, the target, and the
    acknowledgement when the export went ahead below it (or without a forecast)."""
    recorded = spec.selection.forecast
    lines = ["## Forecast", ""]
    if forecast is None:
        lines.append("- No forecast: no public proxy readouts were available at export.")
    else:
        words = forecast.words(target)
        lines.append(f"- {words[0].upper()}{words[1:]}.")
    if recorded is not None:
        lines.append(f"- Forecast recorded in the spec (selection.forecast): p = "
                     f"{recorded.p:g} from {recorded.repetitions} repetitions"
                     + (f" at n = {recorded.n:,}" if recorded.n else "") + ".")
    low = forecast is None or (forecast.criteria > 0 and forecast.below(target))
    lines.append(f"- Target P(all criteria pass) per attempt: {percent(target)} — "
                 + ("**not met**." if low else "met."))
    if low:
        lines.append("- **Acknowledged at export**: the designer exported this design "
                     + ("without a forecast" if forecast is None else "below the target")
                     + " and accepts that a run may end with no release (⊥) and spend its ε."
                     if acknowledged else "- Not acknowledged.")
    return [*lines, ""]


def signoff_markdown(
    spec: Spec,
    spec_file: str,
    readouts: Mapping[str, Readout] | None = None,
    proxy_note: str = "",
    roles: Sequence[str] = ROLES,
    *,
    forecast: Forecast | None = None,
    target: float = DEFAULT_TARGET,
    acknowledged: bool = False,
) -> str:
    """Title, hash, the plain-text summary, the forecast, proxy readouts and a signature
    table."""
    frozen = spec.document.get("frozen", {})
    lines = [
        f"# Sign-off: {spec.metadata.title}",
        "",
        f"- Spec file: `{spec_file}`",
        f"- SHA-256: `{spec.sha256}`",
        f"- Frozen at: {frozen.get('frozen_at', '—')} "
        f"(workbench {frozen.get('tool_version', '?')})",
        f"- Owner: {spec.metadata.owner}",
        f"- ε_total: {spec.epsilon_total:g}",
        "",
        "Signing confirms the design below. Any change to the spec changes its SHA-256, and "
        "the confidential run refuses a spec whose hash does not match.",
        "",
        "## Design summary",
        "",
        "```text",
        describe_spec(spec),
        "```",
        "",
        *forecast_lines(spec, forecast, target, acknowledged),
    ]
    if readouts:
        lines += ["## Readouts on the public proxy", ""]
        if proxy_note:
            lines += [proxy_note, ""]
        lines += [*readout_table(readouts), ""]
    lines += ["## Signatures", "", "| role | name | date | signature |", "|---|---|---|---|"]
    lines += [f"| {role} | | | |" for role in roles]
    return "\n".join(lines) + "\n"
