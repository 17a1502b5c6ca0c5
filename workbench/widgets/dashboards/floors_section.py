"""The feasibility floors in the spec review (issue 15): a cell beside each threshold and the
note saying what a floor is and at which n (numbers and flag from ``dryrun.floors``)."""

from __future__ import annotations

from workbench.dryrun.floors import Floor, FloorTable
from workbench.specification import Spec
from workbench.widgets.dashboards.pages import badge, esc
from workbench.widgets.model.floors import (
    FLOOR_DRAWS,
    INFEASIBLE,
    TRIVIAL_WHY,
    UNPROTECTIVE,
    against,
    floor_value,
    is_share,
    size_words,
    trivial_value,
)


def floor_cell(spec: Spec, floors: FloorTable, criterion_id: str) -> str:
    """A criterion's floor (n is in the column's header), with the table's own badge."""
    floor = floors.by_id().get(criterion_id)
    if floor is None:
        return "—"
    c = spec.criterion(criterion_id)
    lowered = against(floor, c.threshold)
    return (f"<span class='wb-floor wb-nowrap'>{esc(floor_value(floor, share=is_share(c.kind)))}"
            "</span>" + (f"<br><span class='wb-muted'>{esc(lowered)}</span>" if lowered else "")
            + (f"<br>{badge(INFEASIBLE, 'fail')}" if floor.infeasible else "")
            + trivial_cell(floor))


def trivial_cell(floor: Floor) -> str:
    """The independent-marginals release's value under the floor, and the warning badge."""
    value = trivial_value(floor)
    if not value:
        return ""
    return (f"<br><span class='wb-trivial wb-muted'>{esc(value)}</span>"
            + (f"<br>{badge(UNPROTECTIVE, 'warn')}" if floor.trivial_passes else ""))


def floors_note(spec: Spec, floors: FloorTable | None) -> str:
    """What the floor column means and the n it is computed at."""
    if floors is None:
        return ""
    flagged = floors.infeasible
    return (f"<p class='wb-muted'><b>Floor at n</b>: the value an ideal generator (a bootstrap "
            f"of the public proxy through the synthetic rules and the min_count projection) "
            f"reaches, mean ± SD of {FLOOR_DRAWS} draws, at {esc(size_words(spec, floors.n))}. "
            f"A threshold at or below floor + SD is {INFEASIBLE}, whatever ε.</p>"
            + (f"<p>{badge(INFEASIBLE, 'fail')} {esc(', '.join(flagged))}</p>" if flagged
               else "")
            + (f"<p>{badge(UNPROTECTIVE, 'warn')} {esc(', '.join(floors.unprotective))}: "
               f"{esc(TRIVIAL_WHY)}.</p>" if floors.unprotective else ""))
