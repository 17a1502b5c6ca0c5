"""The design's cells when configurations differ in their transforms: which codec the evidence,
the association proposals and the reversal check use, decided in one place.

Configurations of a spec may bin a column differently (two alternatives of its transformation).
Three users need "the design's cells" of public proxy rows, and each needs a different answer:

* **One codec, picked** (:func:`design_codec`): the evidence (``evidence.core.Evidence.codes``)
  rakes the proxy to published tables and thins rare cells in one set of cells, and published
  tables are read in the same one (``evidence.published.design_table``). The pick is the
  transforms of the spec's first configuration in ``Spec.configurations()`` order — each column's
  first listed alternative, or the first entry of a narrowed ``selection.configurations``. The
  weights it yields belong to the rows, so every configuration sees the same re-weighted proxy;
  the pick only fixes which labels published tables use.
* **Every set, iterated** (:func:`transform_sets`): the reversal check and the association
  proposals evaluate criteria, whose values depend on the cells, so they run once per distinct
  set of transforms a release can come from (the first configuration holding it stands for it;
  the other configurations of the set differ only in hyperparameters and min_count).
"""

from __future__ import annotations

from workbench.specification import Configuration, Spec
from workbench.transform import TableCodec


def transform_sets(spec: Spec) -> tuple[Configuration, ...]:
    """The first configuration of each distinct set of transforms, in ``configurations()``
    order (a narrowed selection's list when present): the cells a release can be made in."""
    seen: dict[tuple[tuple[str, str], ...], Configuration] = {}
    for config in spec.configurations():
        seen.setdefault(config.transforms, config)
    return tuple(seen.values())


def design_configuration(spec: Spec) -> Configuration:
    """The configuration whose transforms are the design's cells: the first of
    :func:`transform_sets` (module doc)."""
    return transform_sets(spec)[0]


def design_codec(spec: Spec) -> TableCodec:
    """The design's cells (module doc): the codec of :func:`design_configuration`."""
    return spec.table_codec(design_configuration(spec))


def transforms_words(config: Configuration) -> str:
    """'mother_age: bins, parity: five_bins' — a transform set, named for messages."""
    return ", ".join(f"{column}: {alt}" for column, alt in config.transforms)


__all__ = ["design_codec", "design_configuration", "transform_sets", "transforms_words"]
