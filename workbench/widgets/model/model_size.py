"""The Budget tab's model-size line: the estimate of ``generators.model_size`` and a warning
above ``generator.model_limit`` (the CLI refuses such a design; the tab says so first)."""

from __future__ import annotations

import html

from workbench.generators.model_size import ModelLimit, model_size
from workbench.generators.model_size_advice import size_refusal
from workbench.specification import Spec


def model_size_html(spec: Spec | None) -> str:
    """One muted line with the estimate, or a red warning with what to change above the limit."""
    if spec is None:
        return ""
    try:
        size = model_size(spec)
    except (ValueError, KeyError, TypeError) as exc:  # a draft whose generator cannot bind yet
        return f"<span class='wb-muted'>model size: not estimated ({html.escape(str(exc))})</span>"
    problem = size_refusal(spec, size)
    if problem is None:
        return f"<span class='wb-muted'>{html.escape(size.words(ModelLimit.of(spec)))}</span>"
    return ("<span class='wb-model-size-over' style='color:#b00020'><b>model too large</b>: "
            f"{html.escape(problem)}</span>")
