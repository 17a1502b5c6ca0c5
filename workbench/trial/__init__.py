"""A Trial: one configuration of a spec, bound once for the engine, dry run, design and widgets.

See :mod:`workbench.trial.bind`.
"""

from workbench.trial.bind import BoundCriterion, Trial, bind

__all__ = ["BoundCriterion", "Trial", "bind"]
