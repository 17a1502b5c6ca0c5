"""Row-level constraints: a small, safe predicate language, evaluated on raw and binned data."""

from workbench.constraints.errors import ConstraintSyntaxError
from workbench.constraints.predicate import Predicate, parse
from workbench.constraints.semantics import BinSemantics
from workbench.constraints.validate import validate_columns

__all__ = [
    "BinSemantics",
    "ConstraintSyntaxError",
    "Predicate",
    "parse",
    "validate_columns",
]
