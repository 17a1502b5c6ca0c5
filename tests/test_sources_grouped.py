"""Issue 38, a grouped PostgreSQL read: when the run cannot tell the rows' order
(``engine.row_order``), the server sends each distinct row once with its count and the client
repeats it; the rows are the plain read's, in another order, and far fewer cross the wire."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from sources_helpers import DATABASE, MAIN_SPEC, load_postgres, proxy

from workbench.sources import grouped
from workbench.sources.grouped import count_name, expanded


def test_expanded_repeats_each_row_by_its_count_in_bounded_chunks() -> None:
    batch = pd.DataFrame({"a": [1.0, 2.0, 3.0], "s": pd.array(["x", None, "y"], dtype="string"),
                          "n": [3.0, 1.0, 4.0]})
    chunks = list(expanded([batch, batch.iloc[:1]], "n", rows=3))
    assert [len(c) for c in chunks] == [3, 3, 2, 3]
    joined = pd.concat(chunks, ignore_index=True)
    assert list(joined.columns) == ["a", "s"]
    assert joined["a"].tolist() == [1.0] * 3 + [2.0] + [3.0] * 4 + [1.0] * 3
    assert joined["s"].isna().sum() == 1 and str(joined["s"].dtype) == "string"


def test_count_column_name_avoids_the_wanted_columns() -> None:
    assert count_name(["a", "b"]) == "workbench_rows"
    assert count_name(["workbench_rows", "workbench_rows_"]) == "workbench_rows__"


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows in one canonical order (the multiset)."""
    return frame.sort_values(list(frame.columns), ignore_index=True)


def test_grouped_postgres_read_is_the_plain_read_reordered(
        postgres_cluster: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.engine.run import extra_columns
    from workbench.transform.raw import read_raw
    from workbench.transform.stream import raw_chunks
    from workbench.validation import load_spec

    load_postgres(postgres_cluster, proxy())
    spec = load_spec(MAIN_SPEC)
    url = postgres_cluster.url(DATABASE, query="table=births")
    plain = read_raw(url, spec.columns, spec.file_format)
    sent: list[int] = []
    original = grouped.expanded

    def counting(groups: Any, count: str, rows: int) -> Any:
        """The group batches as the server sent them, their sizes noted."""
        return original((sent.append(len(b)) or b for b in groups), count, rows)

    monkeypatch.setattr(grouped, "expanded", counting)
    chunks = raw_chunks(url, spec.columns, spec.file_format, extra_columns(spec),
                        any_order=True)
    by_groups = pd.concat(list(chunks), ignore_index=True)
    assert len(by_groups) == len(plain) == len(proxy())
    pd.testing.assert_frame_equal(_sorted(by_groups), _sorted(plain))
    assert 0 < sum(sent) < len(plain) // 2  # distinct rows only crossed the wire
    assert sorted(by_groups["birth_sex"].dropna().unique()) == ["F", "M"]  # code-table labels
