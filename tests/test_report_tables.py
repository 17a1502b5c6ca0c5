"""report.html's tables from factorized columns: the same numbers, labels and order as the
per-row pandas they replace (value_counts, astype(str).value_counts, crosstab(normalize=True)),
and the same values reach the figures."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from workbench.report import html as report_html
from workbench.report.overview import shares
from workbench.report.tables import (
    CodedRelease,
    code_column,
    observed,
    pair_shares,
    text_shares,
    value_shares,
)
from workbench.transform.display import shown_label

ORDERS = {"month": [str(m) for m in range(1, 13)],  # "12" is never drawn below: unobserved
          "age": ["<20", "20-24", "25-29", "30+"],
          "sex": ["F", "M"]}


def release(n: int, seed: int = 0) -> pd.DataFrame:
    """Bin labels as TableCodec.decode gives them (NaN-free text, one column unobserved label)."""
    rng = np.random.default_rng(seed)
    pick = {c: rng.integers(0, len(o) - (c == "month"), n) for c, o in ORDERS.items()}
    return pd.DataFrame({c: np.asarray(ORDERS[c], dtype=object)[pick[c]] for c in ORDERS})


def old_crosstab(frame: pd.DataFrame, a: str, b: str, orders: dict) -> pd.DataFrame:
    table = pd.crosstab(frame[a], frame[b], normalize=True)
    return table.reindex(index=list(orders.get(a, table.index)),
                         columns=list(orders.get(b, table.columns)), fill_value=0)


@pytest.mark.parametrize("n", [1, 2, 5_000])
def test_one_way_shares_equal_value_counts(n: int) -> None:
    frame = release(n)
    coded = CodedRelease(frame)
    for col, order in ORDERS.items():
        want = frame[col].value_counts().reindex(order, fill_value=0) / max(n, 1)
        pd.testing.assert_series_equal(value_shares(coded[col], order, n), want)
        want_text = frame[col].astype(str).value_counts().reindex(order, fill_value=0) / n
        pd.testing.assert_series_equal(text_shares(coded[col], order, n), want_text)
        pd.testing.assert_series_equal(shares(frame[col], order), want_text)
    assert value_shares(coded["month"], ORDERS["month"], n)["12"] == 0.0


@pytest.mark.parametrize("n", [1, 2, 5_000])
def test_pair_shares_equal_crosstab_normalized_and_reindexed(n: int) -> None:
    frame = release(n, seed=1)
    coded = CodedRelease(frame)
    for a, b in itertools.permutations(ORDERS, 2):
        got = pair_shares(coded[a], coded[b], ORDERS[a], ORDERS[b])
        pd.testing.assert_frame_equal(got, old_crosstab(frame, a, b, ORDERS))
        # without a label order: crosstab's own (observed labels, sorted)
        pd.testing.assert_frame_equal(pair_shares(coded[a], coded[b]),
                                      old_crosstab(frame, a, b, {}))
    assert (pair_shares(coded["month"], coded["sex"], ORDERS["month"], ORDERS["sex"])
            .loc["12"] == 0.0).all()


def test_missing_labels_are_left_out_as_pandas_does() -> None:
    frame = pd.DataFrame({"a": ["x", None, "y", "x", "y", None],
                          "b": ["p", "q", None, "q", "p", "p"]})
    coded = CodedRelease(frame)
    pd.testing.assert_frame_equal(pair_shares(coded["a"], coded["b"], ["y", "x", "z"], None),
                                  old_crosstab(frame, "a", "b", {"a": ["y", "x", "z"]}))
    want = frame["a"].value_counts().reindex(["x", "y"], fill_value=0) / len(frame)
    pd.testing.assert_series_equal(value_shares(coded["a"], ["x", "y"], len(frame)), want)
    assert observed(coded["a"]) == ["x", "y"]


def test_text_shares_merge_values_with_one_text_form() -> None:
    labels = pd.Series([1, "1", 2, 2.5, 2], dtype=object, name="parity")
    order = ["1", "2", "2.5", "3"]
    want = labels.astype(str).value_counts().reindex(order, fill_value=0) / len(labels)
    pd.testing.assert_series_equal(shares(labels, order), want)
    assert shares(labels, order)["1"] == pytest.approx(0.4)


def test_codes_are_kept_small() -> None:
    column = code_column(release(1_000)["month"])
    assert column.codes.dtype == np.int8 and column.codes.min() >= 0
    assert len(column.uniques) == 11 and column.counts.sum() == 1_000


def test_marginal_plots_draw_the_pandas_numbers(monkeypatch) -> None:
    """The bars and heatmaps get exactly the numbers value_counts / crosstab gave them."""
    import seaborn as sns

    drawn: dict[str, list] = {"bars": [], "heat": []}
    bar, heat = sns.barplot, sns.heatmap
    monkeypatch.setattr(sns, "barplot", lambda **kw: drawn["bars"].append(kw["y"]) or bar(**kw))
    monkeypatch.setattr(sns, "heatmap",
                        lambda data, **kw: drawn["heat"].append(data.copy()) or heat(data, **kw))
    frame = release(3_000, seed=2)
    figures = report_html.marginal_plots(frame, ORDERS, max_pairs=2)
    assert len(figures) == 3 + 2 and all(f.startswith("<figure><img") for f in figures)
    for col, y in zip(ORDERS, drawn["bars"], strict=True):
        want = frame[col].value_counts().reindex(ORDERS[col], fill_value=0) / len(frame)
        np.testing.assert_array_equal(y, want.to_numpy())
    for (a, b), got in zip([("month", "age"), ("month", "sex")], drawn["heat"], strict=True):
        want = old_crosstab(frame, a, b, ORDERS)
        np.testing.assert_array_equal(got.to_numpy(), want.to_numpy())
        assert list(got.index) == [shown_label(x) for x in ORDERS[a]]
        assert list(got.columns) == [shown_label(x) for x in ORDERS[b]]


def test_a_typed_release_with_categories_gives_the_same_tables() -> None:
    """Categorical columns (release.parquet's types) count as their labels, unused ones 0."""
    text = release(2_000, seed=3)
    typed = pd.DataFrame({c: pd.Categorical(text[c], categories=ORDERS[c]) for c in ORDERS})
    coded = CodedRelease(typed)
    for col, order in ORDERS.items():
        want = text[col].value_counts().reindex(order, fill_value=0) / len(text)
        np.testing.assert_array_equal(value_shares(coded[col], order, coded.n).to_numpy(),
                                      want.to_numpy())
    got = pair_shares(coded["month"], coded["age"], ORDERS["month"], ORDERS["age"])
    np.testing.assert_array_equal(got.to_numpy(),
                                  old_crosstab(text, "month", "age", ORDERS).to_numpy())
