"""``generator``: a registered family and its search space, checked against the family's own
hyperparameter declaration (:class:`~workbench.generators.family.GeneratorFamily`)."""

from __future__ import annotations

from workbench.generators import COMMON, FAMILIES, family_class
from workbench.specification.errors import join_path
from workbench.specification.space import GeneratorSpace, frozen_value
from workbench.validation.sections.context import BuildContext

FIELD = "generator"


def build(ctx: BuildContext) -> GeneratorSpace:
    """The family and its grids; every value of every grid within its declared constraint."""
    raw = ctx.doc["generator"]
    name = raw["family"]
    if name not in FAMILIES:
        ctx.problem("generator.family",
                    f"unknown family {name!r}; known: {', '.join(sorted(FAMILIES))}")
        return GeneratorSpace(name, ())
    cls = family_class(name)
    declared = {**cls.hyperparameters, **COMMON}
    grids = []
    for i, grid in enumerate(raw["search_space"]):
        path = f"generator.search_space[{i}]"
        for key, values in grid.items():
            if key not in declared:
                ctx.problem(join_path(path, key), f"unknown hyperparameter for '{name}'")
                continue
            for j, value in enumerate(values):
                message = declared[key].problem(value)
                if message:
                    ctx.problem(f"{path}.{key}[{j}]", message)
        for message in cls.group_problems(list(grid)):
            ctx.problem(path, message)
        for where, message in cls.spec_problems(grid, list(ctx.columns)):
            ctx.problem(join_path(path, where), message)
        grids.append(tuple((k, tuple(frozen_value(v) for v in vs)) for k, vs in grid.items()))
    return GeneratorSpace(name, tuple(grids))

