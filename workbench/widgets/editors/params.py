"""Editor controls of declared parameters (:class:`workbench.specification.params.Param`): one
widget per
``control`` name of :data:`workbench.specification.params.CONTROLS`, with how it parses and shows
the
draft's value. The criteria editor (a kind's ``params``) and the Generator tab (a family's
``hyperparameters``) both draw their fields here, so a registered kind or family needs no edit
in the widgets.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from workbench.specification.params import Param
from workbench.widgets.editors.fields import (
    DELETE,
    float_or,
    number,
    optional_number,
    show_list,
    show_number,
)
from workbench.widgets.model.paths import MISSING


def _number_or_null(text: Any) -> Any:
    """Blank → null (e.g. max_way: all ways), else a number."""
    return None if str(text).strip() == "" else number(text)


def _features(text: Any) -> Any:
    """``all_other`` or a list of column names."""
    t = str(text).strip()
    return "all_other" if t in ("", "all_other") else [p.strip() for p in t.split(",") if p.strip()]


def _number_or_id(text: Any) -> Any:
    """The resize slack: a number, a criterion id, or blank for the default."""
    t = str(text).strip()
    if not t:
        return DELETE
    try:
        return number(t)
    except ValueError:
        return t


def _json_value(text: Any) -> Any:
    """Any JSON value typed as text; blank removes the key (its default applies)."""
    t = str(text).strip()
    if not t:
        return DELETE
    try:
        return json.loads(t)
    except ValueError:
        raise ValueError(f"not JSON: {t[:40]!r}") from None


def _show_json(value: Any) -> str:
    """A draft value as compact JSON (blank when unset)."""
    return "" if value is MISSING or value is None else json.dumps(value, ensure_ascii=False)


def _choice(options: Callable[[], list[str]]) -> Callable[[Any], Any]:
    """Formatter for dropdowns: the value when it is an option, else no selection."""
    return lambda v: v if v in options() else None


def _or_default(param: Param) -> Callable[[Any], Any]:
    """Formatter: the draft's value, or the declared default when it is missing."""
    return lambda v: param.default if v is MISSING else v


def _suggested(param: Param) -> float:
    """What an unset number box shows: its placeholder, else its default, else 0."""
    for value in (param.placeholder, param.default):
        try:
            return float(value)
        except (TypeError, ValueError):
            continue
    return 0.0


def _text(text: Any) -> Any:
    """A string (a file path, a digest); blank removes the key (its default applies)."""
    t = str(text).strip()
    return t if t else DELETE


#: Text-box controls: (parse, format) of the draft value.
TEXT_CONTROLS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "optional_number": (optional_number, show_number),
    "number_or_null": (_number_or_null, show_number),
    "number_or_id": (_number_or_id, show_number),
    "features": (_features, lambda v: show_list(v) if isinstance(v, list) else "all_other"),
    "json": (_json_value, _show_json),
    "text": (_text, lambda v: "" if v is MISSING or v is None else str(v)),
}


def param_widget(param: Param, name: str,
                 columns: Callable[[], list[str]]) -> tuple[widgets.Widget, dict[str, Any]] | None:
    """The widget and field options of one declared parameter (None: not editable here)."""
    label, control = param.label or name, param.control
    if control in TEXT_CONTROLS:
        parse, show = TEXT_CONTROLS[control]
        return (widgets.Text(description=label, placeholder=param.placeholder,
                             continuous_update=False, layout=widgets.Layout(width="220px")),
                {"parse": parse, "format": show})
    if control == "number":
        return (widgets.FloatText(description=label, step=0.01,
                                  layout=widgets.Layout(width="160px")),
                {"parse": number, "format": float_or(_suggested(param))})
    if control == "whole_number":
        return (widgets.IntText(description=label, layout=widgets.Layout(width="160px")),
                {"format": _or_default(param)})
    if control == "choice":
        return (widgets.Dropdown(options=list(param.choices), description=label),
                {"format": _or_default(param)})
    if control == "checkbox":
        return (widgets.Checkbox(description=label, indent=False),
                {"format": lambda v: param.default if v is MISSING else bool(v)})
    if control == "column":
        return (widgets.Dropdown(options=columns(), description=label),
                {"format": _choice(columns)})
    if control == "columns":
        return (widgets.SelectMultiple(options=columns(), description=label,
                                       rows=min(6, max(2, len(columns())))),
                {"parse": list, "format": lambda v: tuple(v) if isinstance(v, list) else ()})
    return None
