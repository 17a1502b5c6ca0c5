"""Post-processing of generated rows (no budget): constraint sampling, face-privacy projection."""

from workbench.postprocess.projection import distinct_rows, project_counts, project_min_count
from workbench.postprocess.rejection import (
    SamplingError,
    reject_counts,
    sample_valid,
    sample_valid_for,
    semantics_for,
)

__all__ = [
    "SamplingError",
    "distinct_rows",
    "project_counts",
    "project_min_count",
    "reject_counts",
    "sample_valid",
    "sample_valid_for",
    "semantics_for",
]
