"""Plain-text lines about a spec's survey section for ``workbench describe`` and reviews."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.privacy.sampling import domain_partition_epsilon, sampling_figure
from workbench.survey.weight_check import false_refusal

if TYPE_CHECKING:
    from workbench.specification.survey import Survey


def survey_lines(survey: Survey, epsilon_total: float) -> list[str]:
    """Weight, design, margins, ε_w + ε₁ + ε₂ + ε₃, the weight check, the secondary figure."""
    lo, hi = survey.weight_bounds
    out = ["Survey:",
           f"  weight column            {survey.weight_column} in [{lo:g}, {hi:g}] (public bounds)",
           f"  design                   {survey.design}"
           + (f", strata {', '.join(survey.strata)}" if survey.strata else "")]
    for m in survey.margins:
        choices = ", ".join(m.binnings)
        out.append(f"  margin {m.name:<17} {' x '.join(m.columns)}: {len(m.cells)} cells, "
                   f"total {sum(m.totals):.6g}; candidate binnings: {choices}")
    out.append(f"  epsilon weight check + binning + table + weighted counts = "
               f"{survey.weight_check_epsilon:g} + {survey.epsilon_binning:g} + "
               f"{survey.epsilon_table:g} + {survey.epsilon_counts:g} = {survey.epsilon:g} "
               f"({len(survey.weighted_counts)} weighted counts, gamma {survey.gamma:g})")
    out.append(f"  weight check             DP total of the clipped weights within 1 +/- "
               f"{survey.weight_check_tolerance:g} of every margin's N, before the loop; "
               f"refuses correct weights with probability about {false_refusal(survey):.2g}")
    out.append(f"  neighbours {survey.neighbour}: a partition of the domain at epsilon 1 costs "
               f"{domain_partition_epsilon(1.0, survey.neighbour):g}; a random partition "
               "costs the max over its pieces")
    if survey.sampling_fraction is not None and survey.sampling_fraction < 1:
        fig = sampling_figure(epsilon_total, survey.sampling_fraction)
        out.append(f"  secondary: {fig.text()}".replace("ε", "epsilon").replace("β", "beta")
                   .replace("′", "'"))
    return out
