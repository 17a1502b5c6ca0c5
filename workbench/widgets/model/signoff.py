"""The Markdown sign-off summary written next to a frozen spec: what each stakeholder signs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from workbench.report import describe_spec
from workbench.spec import Spec
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


def signoff_markdown(
    spec: Spec,
    spec_file: str,
    readouts: Mapping[str, Readout] | None = None,
    proxy_note: str = "",
    roles: Sequence[str] = ROLES,
) -> str:
    """Title, hash, the plain-text summary, proxy readouts and a signature table."""
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
    ]
    if readouts:
        lines += ["## Readouts on the public proxy", ""]
        if proxy_note:
            lines += [proxy_note, ""]
        lines += [*readout_table(readouts), ""]
    lines += ["## Signatures", "", "| role | name | date | signature |", "|---|---|---|---|"]
    lines += [f"| {role} | | | |" for role in roles]
    return "\n".join(lines) + "\n"
