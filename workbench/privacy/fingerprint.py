"""The keyed content fingerprint of a cleaned table, at registry scale (issue 38).

The bytes hashed are those of the first implementation (kept in the tests as the reference):
columns by sorted name; numeric columns as float64 (``-0.0`` as ``0.0``, NaN as pandas gives
it); other columns as text with NaN as ``"\\x00"``; rows sorted lexicographically on every
column (NaN last; text in code-point order), so the value survives re-encoding and row order.
Budget stores on disk hold such values: a changed byte would warn "content fingerprint changed".

The first implementation sorted a frame of 4,000,000 rows with text as Python objects (7 s).
Here each column becomes an order-preserving integer rank (text ranked over its few distinct
values or a Categorical's categories, never row by row), the rank rows are packed and grouped
into distinct rows with counts, the few distinct rows are sorted, and each column's sorted
values are those rows repeated by their counts, fed to the HMAC in bounded chunks.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable, Iterator

import numpy as np
import pandas as pd

#: Rows of text joined per HMAC update (bounded memory whatever the table's size).
_TEXT_CHUNK = 1 << 18
#: Packed keys stay below this, so ``word * size + rank`` cannot overflow int64.
_PACK_MAX = 1 << 62
#: NumPy's NaN (the bits ``to_numpy(na_value=np.nan)`` writes); others are kept in row order.
_NAN_BITS = np.float64(np.nan).view(np.uint64)


def table_fingerprint(frame: pd.DataFrame, key: bytes) -> str:
    """HMAC-SHA256 of a cleaned table in canonical form; without the key it reveals nothing.

    Canonical form: columns sorted by name; numeric columns as float64 (so '3' and '3.0', or a
    CSV and its gzip, agree); other columns as text; rows sorted on every column.
    """
    names = sorted(str(c) for c in frame.columns)
    columns = [_Column.of(frame[name]) for name in names]
    n = len(frame)
    mac = hmac.new(key, digestmod=hashlib.sha256)
    mac.update(json.dumps({"columns": names, "rows": n}).encode())
    order = _sorted_order(columns, n, exact_rows=any(c.odd_nan for c in columns))
    for column in columns:
        for piece in column.sorted_bytes(order):
            mac.update(piece)
        mac.update(b"\x1e")
    return mac.hexdigest()


class _Column:
    """One column as codes (0 for missing), each code's rank in the canonical values' order,
    and what to hash for each code (``numbers``: float64; ``texts``: UTF-8) or, when NaN
    payloads differ, for each row (``rows``)."""

    def __init__(self, codes: np.ndarray, rank: np.ndarray, *, numbers: np.ndarray | None = None,
                 texts: list[bytes] | None = None, rows: np.ndarray | None = None) -> None:
        """Codes are int32 (4 bytes a row); the per-code tables are as small as the values."""
        self.codes, self.rank = codes, rank
        self.numbers, self.texts, self.rows = numbers, texts, rows

    @property
    def size(self) -> int:
        """How many codes the column has (the missing one included)."""
        return len(self.rank)

    @property
    def odd_nan(self) -> bool:
        """Whether rows equal in code may differ in bytes (then order must be row-stable)."""
        return self.rows is not None

    @classmethod
    def of(cls, series: pd.Series) -> _Column:
        """Rank a numeric column by value (NaN last), a text column by its distinct strings."""
        if pd.api.types.is_numeric_dtype(series):
            values = series.to_numpy(dtype=np.float64, na_value=np.nan) + 0.0  # -0.0 → 0.0
            codes, uniques = pd.factorize(values)  # NaN → -1
            rank = np.empty(len(uniques) + 1, dtype=np.int64)
            rank[0] = len(uniques)  # NaN last, as pandas sorts
            rank[1 + np.argsort(uniques, kind="stable")] = np.arange(len(uniques))
            nan = codes < 0
            odd = bool(nan.any()) and bool((values[nan].view(np.uint64) != _NAN_BITS).any())
            return cls(_shifted(codes), rank, numbers=np.r_[np.nan, uniques],
                       rows=values if odd else None)
        if isinstance(series.dtype, pd.CategoricalDtype):
            # the categories as text the way the whole column would convert (Categorical.astype)
            every = pd.Categorical.from_codes(np.arange(len(series.cat.categories)),
                                              dtype=series.dtype)
            labels = pd.Series(every).astype("string").tolist()
            codes = series.cat.codes.to_numpy()
        else:
            codes, uniques = pd.factorize(series.astype("string"))  # missing → -1
            labels = list(uniques)
        labels.insert(0, "\x00")  # the missing value's text (code -1, shifted to 0)
        distinct = sorted(set(labels))
        position = {text: k for k, text in enumerate(distinct)}
        rank = np.array([position[text] for text in labels], dtype=np.int64)
        return cls(_shifted(codes), rank, texts=[text.encode("utf-8") for text in labels])

    def sorted_bytes(self, order: _Order) -> Iterator[bytes]:
        """The column's values in sorted row order, as the reference implementation hashes."""
        if self.rows is not None:
            yield np.ascontiguousarray(order.values(self.rows), dtype="<f8").tobytes()
            return
        codes = order.values(self.codes)
        if self.numbers is not None:
            yield np.ascontiguousarray(self.numbers[codes], dtype="<f8").tobytes()
            return
        assert self.texts is not None
        texts = np.array(self.texts, dtype=object)
        for start in range(0, len(codes), _TEXT_CHUNK):
            if start:
                yield b"\x1f"
            yield b"\x1f".join(texts[codes[start:start + _TEXT_CHUNK]])


def _shifted(codes: np.ndarray) -> np.ndarray:
    """Codes from -1 (missing) as int32 from 0: half the memory of int64 at 4,000,000 rows."""
    out = codes.astype(np.int32)
    out += 1
    return out


class _Order:
    """The rows' sorted order: distinct rows (first row of each) repeated by their counts, or,
    when rows equal in rank may differ in bytes (NaN payloads), an explicit stable order."""

    def __init__(self, first: np.ndarray, counts: np.ndarray | None) -> None:
        """``counts`` None: ``first`` is the full stable permutation of the rows."""
        self.first, self.counts = first, counts

    def values(self, column: np.ndarray) -> np.ndarray:
        """``column`` (one value per row) in sorted row order."""
        picked = column[self.first]
        return picked if self.counts is None else np.repeat(picked, self.counts)


def _sorted_order(columns: list[_Column], n: int, *, exact_rows: bool) -> _Order:
    """Group equal code rows (packed mixed radix, re-factorized before overflow), then sort
    the distinct rows lexicographically on their ranks (first column most significant)."""
    group, first = first_seen_groups(((c.codes, c.size) for c in columns), n)
    keys = [c.rank[c.codes[first]] for c in reversed(columns)]  # lexsort: last key is primary
    sort = np.lexsort(keys) if keys else np.arange(len(first))
    if exact_rows:
        position = np.empty(len(first), dtype=np.int64)
        position[sort] = np.arange(len(first))
        return _Order(np.argsort(position[group], kind="stable"), None)
    return _Order(first[sort], np.bincount(group, minlength=len(first))[sort])


def first_seen_groups(columns: Iterable[tuple[np.ndarray, int]], n: int
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Each of ``n`` rows' group (rows equal in every column's codes, each in ``[0, size)``,
    share one; ids in order of first appearance) and the first row of each group: the codes
    packed mixed radix into one int64 (re-factorized before it could overflow), one factorize.
    Shared by the fingerprint and ``engine.release_csv``'s distinct lines."""
    group = np.zeros(n, dtype=np.int64)
    span = 1
    for codes, size in columns:
        if span * size >= _PACK_MAX:
            group, uniques = pd.factorize(group)
            span = max(len(uniques), 1)
        group = group * size + codes
        span *= size
    group, _ = pd.factorize(group)  # ids in order of first appearance
    if not n:
        return group, group
    seen = np.maximum.accumulate(group)
    return group, np.flatnonzero(np.r_[True, seen[1:] > seen[:-1]])
