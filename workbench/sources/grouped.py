"""Distinct rows with their counts back into rows: a grouped read (``GROUP BY`` every wanted
column, ``count(*)``) sends each distinct row once, and this repeats it ``count`` times, chunk
by chunk, so the caller sees the table's rows (the same multiset, grouped) with one
group batch and one chunk in memory. Used only when the run cannot tell the rows' order
(``engine.row_order``): for a design binned to a few thousand cells, 4,000,000 rows arrive as
~160,000 distinct ones, so the server sends (and the client decodes) 25× fewer."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pandas as pd

#: The count column's name in a grouped read (made unique against the wanted columns).
COUNT = "workbench_rows"


def count_name(names: Iterable[str]) -> str:
    """A name for the count column that no wanted column has."""
    taken = set(names)
    name = COUNT
    while name in taken:
        name += "_"
    return name


def expanded(groups: Iterable[pd.DataFrame], count: str, rows: int) -> Iterator[pd.DataFrame]:
    """Each group batch's rows repeated by their ``count`` column (dropped), in chunks of at
    most ``rows`` rows, in the order the groups arrive."""
    for batch in groups:
        counts = batch[count].to_numpy(dtype=np.int64)
        body = batch.drop(columns=[count])
        index = np.repeat(np.arange(len(body), dtype=np.intp), counts)
        for start in range(0, len(index), rows):
            yield body.take(index[start:start + rows]).reset_index(drop=True)
