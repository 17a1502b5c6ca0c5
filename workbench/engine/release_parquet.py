"""``release.parquet``: the release typed for analysts (``workbench run --format parquet``).

The same records as ``release.csv``, in the same order: a binned or categorical column is a
dictionary (pandas categorical) column whose categories are the column's labels in code order,
so an analyst's tools see the full label set, empty bins included; a column released as a
number stays a number. It is post-processing of the DP release (no data read), written into the
staging folder and listed in the manifest; ``verify`` checks it against ``release.csv``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import numpy as np
import pandas as pd

RELEASE_PARQUET = "release.parquet"
#: Extra release formats the current ``workbench run`` writes (set by the CLI's ``--format``).
_FORMATS: ContextVar[tuple[str, ...]] = ContextVar("release_formats", default=())


@contextmanager
def release_formats(formats: Sequence[str]) -> Iterator[None]:
    """Within the block, bundles also carry the release in these formats (``parquet``)."""
    token = _FORMATS.set(tuple(formats))
    try:
        yield
    finally:
        _FORMATS.reset(token)


def wanted() -> bool:
    """Whether the bundle being written should carry ``release.parquet``."""
    return "parquet" in _FORMATS.get()


def typed_release(release: pd.DataFrame,
                  label_order: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """Label columns as categoricals over their labels in code order; numbers as numbers."""
    out = {}
    for name in release.columns:
        col = release[name]
        if pd.api.types.is_numeric_dtype(col) or name not in label_order:
            out[name] = col
        else:
            out[name] = pd.Categorical(col.astype(str), categories=list(label_order[name]))
    return pd.DataFrame(out)


def write_release_parquet(release: pd.DataFrame, label_order: Mapping[str, Sequence[str]],
                          path: Path) -> None:
    """Write the typed release (pyarrow, no index)."""
    typed_release(release, label_order).to_parquet(path, index=False, engine="pyarrow")


def parquet_problem(root: Path, labels: Mapping[str, Sequence[str]]) -> str | None:
    """Why ``release.parquet`` does not hold ``release.csv``'s records (None if it does):
    same columns in order, same rows, equal values, categories = the column's labels."""
    try:
        typed = pd.read_parquet(root / RELEASE_PARQUET)
    except (OSError, ValueError, ImportError) as exc:
        return f"release.parquet is not readable ({type(exc).__name__})"
    text = pd.read_csv(root / "release.csv", dtype=str, keep_default_na=False)
    if list(typed.columns) != list(text.columns) or len(typed) != len(text):
        return "release.parquet does not have release.csv's columns and rows"
    for name in text.columns:
        col = typed[name]
        if isinstance(col.dtype, pd.CategoricalDtype):
            if name in labels and list(col.cat.categories) != list(labels[name]):
                return f"release.parquet column {name!r}: categories are not its labels"
            same = (col.astype(str).to_numpy() == text[name].to_numpy()).all()
        else:
            csv = pd.to_numeric(text[name], errors="coerce").to_numpy(dtype=np.float64)
            same = np.array_equal(col.to_numpy(dtype=np.float64), csv, equal_nan=True)
        if not same:
            return f"release.parquet column {name!r} differs from release.csv"
    return None
