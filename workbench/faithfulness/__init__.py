"""Record-level faithfulness (Hod & Canetti §3.5.1, §4.5.5): β_max by max flow on distinct cells."""

from workbench.faithfulness.cost import FaithfulnessCost
from workbench.faithfulness.matching import (
    beta_max,
    cell_graph,
    max_matching,
    max_matching_per_row,
    row_edges,
    sensitivity,
)

__all__ = [
    "FaithfulnessCost",
    "beta_max",
    "cell_graph",
    "max_matching",
    "max_matching_per_row",
    "row_edges",
    "sensitivity",
]
