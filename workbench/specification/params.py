"""Parameter declarations shared by the registries: a default, one constraint, and plain words.

Criterion kinds (``workbench.criteria.kinds``) and generator families
(``workbench.generators``) declare each parameter once as a :class:`Param`, in the spirit of
scikit-learn's ``_parameter_constraints``. A constraint is a function of the value alone that
returns ``None`` when the value is fine, or the problem in words ("must be a number > 0"); the
spec validator puts the JSON path in front of it, ``make_generator`` the family and the name.
``control`` names how an editor shows the parameter (see :data:`CONTROLS`); the widgets map
those names to ipywidgets, so nothing here imports a UI.

>>> positive(0), positive(2)
('must be a number > 0', None)
>>> one_of("mean", "max")("sum")
"must be 'mean' or 'max'"
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: value -> None if acceptable, else what is wrong with it.
Check = Callable[[Any], "str | None"]

#: Editor controls a parameter may ask for (``widgets.editors.params`` implements each):
#: ``number`` a float box (shows ``placeholder``, else the default, when unset);
#: ``optional_number`` text, blank = unset; ``number_or_null`` text, blank = null;
#: ``number_or_id`` a number or a criterion id; ``whole_number`` an integer box;
#: ``column`` one schema column; ``columns`` several; ``features`` 'all_other' or a list of
#: columns; ``choice`` one of ``choices``; ``checkbox`` a boolean; ``json`` any JSON value typed
#: as text, blank = unset (e.g. a public weight function); ``text`` a string, blank = unset
#: (e.g. a public file's path). The criteria editor and the
#: co-design Generator tab both draw parameters from these.
CONTROLS = ("number", "optional_number", "number_or_null", "number_or_id", "whole_number",
            "column", "columns", "features", "choice", "checkbox", "json", "text")


@dataclass(frozen=True)
class Param:
    """One declared parameter: its default, its constraint, its words and its editor control."""

    default: Any = None
    check: Check | None = None
    doc: str = ""
    control: str | None = None
    label: str = ""
    placeholder: str = ""
    choices: tuple[Any, ...] = ()

    def problem(self, value: Any) -> str | None:
        """What is wrong with ``value`` (None when nothing, or when there is no constraint)."""
        return None if self.check is None else self.check(value)


def is_number(value: Any) -> bool:
    """A finite int or float, and not a bool."""
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value))


def is_whole(value: Any) -> bool:
    """An int, and not a bool (JSON 2.0 is a float, so it is not whole)."""
    return isinstance(value, int) and not isinstance(value, bool)


def positive(value: Any) -> str | None:
    """A number > 0."""
    return None if is_number(value) and value > 0 else "must be a number > 0"


def non_negative(value: Any) -> str | None:
    """A number >= 0."""
    return None if is_number(value) and value >= 0 else "must be a number >= 0"


def open_interval(low: float, high: float) -> Check:
    """A number strictly between ``low`` and ``high``."""
    message = f"must be a number in ({low:g}, {high:g})"
    return lambda v: None if is_number(v) and low < v < high else message


def whole_at_least(minimum: int) -> Check:
    """A whole number >= ``minimum``."""
    message = f"must be a whole number >= {minimum}"
    return lambda v: None if is_whole(v) and v >= minimum else message


def one_of(*choices: Any) -> Check:
    """One of a few literal values."""
    shown = [repr(c) for c in choices]
    words = " or ".join(shown) if len(shown) <= 2 else "one of " + ", ".join(shown)
    return lambda v: None if any(v == c and type(v) is type(c) for c in choices) else (
        f"must be {words}")


def optional(check: Check) -> Check:
    """``check``, or None (the parameter left unset)."""
    return lambda v: None if v is None else check(v)


def name_list(value: Any) -> str | None:
    """A non-empty list of distinct column names."""
    ok = (isinstance(value, list | tuple) and len(value) > 0
          and all(isinstance(x, str) for x in value) and len(set(value)) == len(value))
    return None if ok else "must be a non-empty list of distinct column names"
