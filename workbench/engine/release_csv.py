"""``release.csv`` written and read back at registry scale (issue 38: 4,000,000 records).

Writing: the bytes are exactly ``release.to_csv(path, index=False, lineterminator="\\n")``.
A release has few distinct records (each appears at least ``min_count`` times), so pandas
renders each distinct record once and the file is those lines repeated in record order, written
in chunks (bounded memory: the file is never one string). A frame this cannot render exactly
(dates, extension numbers, few repeated records) is written by pandas as before.

Reading (``verify``): each column of the configuration is read as a Categorical over its
labels, so 4,000,000 labels are a few codes each rather than Python strings; a column holding
any value outside its labels is read again as text, exactly as ``dtype=str`` reads it, so its
verdict (and the error naming it) is the same as before.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from workbench.privacy.fingerprint import first_seen_groups
from workbench.transform import TableCodec

#: Records per write; a chunk of lines is joined then written (bounded memory).
CHUNK_ROWS = 1 << 16
#: The distinct-lines path pays off when records repeat: at most this share may be distinct.
_MAX_DISTINCT_SHARE = 0.25
_QUOTE, _NEWLINE = ord('"'), ord("\n")
#: pandas 3 warns (pandas 4 may refuse) when a read value is outside a dtype's categories.
_OUTSIDE = "Constructing a Categorical with a dtype and values containing"


def write_release_csv(release: pd.DataFrame, path: str | Path) -> None:
    """Write ``release`` as pandas' ``to_csv(index=False, lineterminator="\\n")`` would."""
    rendered = _distinct_lines(release)
    if rendered is None:
        release.to_csv(path, index=False, lineterminator="\n")
        return
    header, lines, inverse = rendered
    with open(path, "wb") as fh:
        fh.write(header)
        for start in range(0, len(inverse), CHUNK_ROWS):
            fh.write(b"".join(lines[inverse[start:start + CHUNK_ROWS]]))


def _distinct_lines(release: pd.DataFrame) -> tuple[bytes, np.ndarray, np.ndarray] | None:
    """(header line, each distinct record's line, each record's distinct index), or None when
    the frame is better (or only exactly) written by pandas itself."""
    n, d = release.shape
    if n == 0 or d == 0:
        return None
    try:  # one column's codes at a time (bounded memory)
        inverse, first = first_seen_groups(_shifted_codes(release), n)
    except _Unrenderable:
        return None
    if len(first) > _MAX_DISTINCT_SHARE * n:
        return None
    header = _split_records(_csv(release.iloc[:0], header=True))
    lines: list[bytes] = []
    for start in range(0, len(first), CHUNK_ROWS):
        got = _split_records(_csv(release.iloc[first[start:start + CHUNK_ROWS]], header=False))
        if got is None or len(got) != len(first[start:start + CHUNK_ROWS]):
            return None
        lines += got
    if header is None or len(header) != 1:
        return None
    return header[0], np.array(lines, dtype=object), inverse


class _Unrenderable(Exception):
    """A column whose printed fields codes cannot vouch for: pandas writes the file."""


def _shifted_codes(release: pd.DataFrame) -> Iterator[tuple[np.ndarray, int]]:
    """Each column's codes from 0 (missing first) and how many there are, column by column."""
    for j in range(release.shape[1]):
        codes = _render_codes(release.iloc[:, j])
        if codes is None:
            raise _Unrenderable
        codes += 1  # from -1 (missing): a fresh array, shifted in place
        yield codes, int(codes.max()) + 1


def _csv(frame: pd.DataFrame, *, header: bool) -> bytes:
    """pandas' own CSV text of ``frame`` (the release's options), as UTF-8."""
    return frame.to_csv(index=False, header=header, lineterminator="\n").encode("utf-8")


def _render_codes(column: pd.Series) -> np.ndarray | None:
    """Codes equal exactly where pandas prints the same field (None: a dtype whose printing
    depends on the other values, e.g. dates, or that this does not vouch for)."""
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        cats = dtype.categories.dtype
        ok = cats.kind in "iub" or pd.api.types.is_string_dtype(cats)
        return column.cat.codes.to_numpy().astype(np.int64) if ok else None
    if isinstance(dtype, np.dtype) and dtype.kind in "iub":
        return pd.factorize(column.to_numpy())[0]
    if isinstance(dtype, np.dtype) and dtype.kind == "f" and dtype.itemsize in (4, 8):
        bits = column.to_numpy().view(f"i{dtype.itemsize}")  # by bits: -0.0 prints unlike 0.0
        return pd.factorize(bits)[0]
    text = isinstance(dtype, pd.StringDtype) or (
        isinstance(dtype, np.dtype) and dtype.kind == "O"
        and pd.api.types.infer_dtype(column, skipna=True) in ("string", "empty"))
    if text:  # strings compare as printed; every missing value prints empty
        return pd.factorize(column)[0]
    return None


def _split_records(text: bytes) -> list[bytes] | None:
    """CSV text cut at its record ends: a newline outside quotes (an even number of '"' before
    it: every quote pandas writes opens, closes or doubles one inside a quoted field)."""
    data = np.frombuffer(text, dtype=np.uint8)
    quotes = np.cumsum(data == _QUOTE)
    ends = np.flatnonzero((data == _NEWLINE) & (quotes % 2 == 0)) + 1
    if len(data) and (not len(ends) or ends[-1] != len(data)):
        return None
    starts = np.r_[0, ends[:-1]]
    return [text[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]


def read_release_labels(path: str | Path, table: TableCodec) -> pd.DataFrame:
    """release.csv as ``pd.read_csv(path, dtype=str, keep_default_na=False)`` reads it, but
    each configuration column whose values are all labels as a Categorical over its labels."""
    names = pd.read_csv(path, nrows=0, dtype=str, keep_default_na=False).columns
    labelled = {}
    for name, codec in table.codecs:
        labels = pd.Index(list(codec.labels), dtype="str")
        if name in names and labels.is_unique:
            labelled[name] = pd.CategoricalDtype(labels)
    dtypes = {name: labelled.get(name, str) for name in names}
    with warnings.catch_warnings():  # a value outside the labels is read as missing, and
        warnings.filterwarnings("ignore", message=_OUTSIDE)  # its column read again below
        try:
            frame = pd.read_csv(path, dtype=dtypes, keep_default_na=False)
        except (TypeError, ValueError):  # a pandas that refuses such values: all as text
            return pd.read_csv(path, dtype=str, keep_default_na=False)
    other = [name for name in labelled if (frame[name].cat.codes.to_numpy() < 0).any()]
    if other:  # a value outside the labels (or no value): that column exactly as text
        text = pd.read_csv(path, usecols=other, dtype=str, keep_default_na=False)
        for name in other:
            frame[name] = text[name]
    return frame
