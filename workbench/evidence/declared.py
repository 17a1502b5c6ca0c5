"""Which declared associations a FACTS file cannot carry into a proxy (issue 36).

A proxy fitted to facts without the 2-way table of a declared association's two columns holds
them independent, so a design rehearsed on it never meets that association: ``proxy build``
and ``describe --proxy`` name each such pair in one warning line.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from workbench.criteria.associations import association_columns
from workbench.evidence.fact_list import FactFile, FactsError, load_fact_file

if TYPE_CHECKING:
    from workbench.specification.model import Spec


def missing_pairs(spec: Spec, facts: FactFile) -> list[tuple[str, str]]:
    """The spec's association column pairs that no fact's table spans (both columns)."""
    held = [{a.column for a in f.axes} for f in facts.facts if len(f.axes) >= 2]
    return [(a, b) for a, b in association_columns(spec)
            if not any({a, b} <= cols for cols in held)]


def warning_lines(spec: Spec, facts: FactFile) -> list[str]:
    """One line per declared association pair the FACTS file does not hold."""
    return [f"warning: the spec declares an association of {a} and {b}, but the FACTS file "
            f"{facts.path.name} has no 2-way table of them: a proxy built from it holds "
            f"them independent (`workbench pilot` measures it by default, or with --pairs {a}:{b})"
            for a, b in missing_pairs(spec, facts)]


def spec_pilot_warnings(spec: Spec, spec_path: str | Path) -> list[str]:
    """The warnings for the FACTS file the spec's ``pilot`` names (read as given, else
    beside the spec); none when the spec names no pilot or the file is not at hand."""
    if spec.pilot is None:
        return []
    for candidate in (Path(spec.pilot.facts), Path(spec_path).parent / spec.pilot.facts):
        if candidate.is_file():
            try:
                return warning_lines(spec, load_fact_file(candidate))
            except FactsError:
                return []
    return []
