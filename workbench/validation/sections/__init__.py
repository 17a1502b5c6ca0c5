"""The spec's sections, each validated by its own module into its own immutable model object.

A section module has ``FIELD`` (the :class:`~workbench.specification.model.Spec` keyword it fills)
and ``build(ctx)``, which checks its part of the document, records every problem with its
JSON path on ``ctx`` and returns the model object. :data:`SECTIONS` is the build order: a
section may read what earlier ones built (``ctx.columns``, ``ctx.built``).
"""

from __future__ import annotations

from workbench.validation.sections import (
    budget,
    cleaning_counts,
    columns,
    constraints,
    criteria,
    expected_n,
    face_privacy,
    faithfulness,
    file_format,
    generator,
    metadata,
    n_policy,
    pilot,
    selection,
    survey,
    transformations,
)
from workbench.validation.sections.context import BuildContext

SECTIONS = (metadata, columns, expected_n, transformations, constraints, criteria, faithfulness,
            face_privacy, generator, selection, budget, survey, file_format, pilot,
            cleaning_counts, n_policy)

__all__ = ["SECTIONS", "BuildContext"]
