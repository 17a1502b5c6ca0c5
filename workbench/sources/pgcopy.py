"""PostgreSQL rows streamed in chunks: through ADBC (Arrow record batches, C++ end to end) when
``adbc-driver-postgresql`` is installed, else by ``COPY (SELECT …) TO STDOUT`` through psycopg:
the server writes CSV, pandas' C parser turns each block of CHUNK_ROWS rows into typed columns
(psycopg hands COPY over one row at a time, a few µs each: ADBC reads 4M rows about 3× faster).

The stream is consumed as it arrives (a file-like view of psycopg's copy blocks), so memory
holds one chunk of text and one chunk of columns at a time. NULL is written as ``\\N``
(unquoted); a text value spelled exactly ``\\N`` would read as missing (it would lie outside
any declared domain anyway).
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import pandas as pd

from workbench.sources.convert import arrow_frame
from workbench.sources.prefetch import prefetched

NULL = "\\N"


class _CopyStream(io.RawIOBase):
    """A readable byte stream over psycopg's COPY blocks."""

    def __init__(self, blocks: Iterable[Any]) -> None:
        self._blocks = iter(blocks)
        self._rest = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not len(self._rest):
            block = next(self._blocks, None)
            if block is None:
                return 0
            self._rest = memoryview(block)
        n = min(len(buffer), len(self._rest))
        buffer[:n] = self._rest[:n]
        self._rest = self._rest[n:]
        return n


def _joined(blocks: Iterable[Any], size: int = 1 << 20) -> Iterator[bytes]:
    """COPY hands over one row per block: join them into ~1 MB pieces (few Python steps
    per row, so the stream keeps up with the C parser)."""
    parts: list[Any] = []
    held = 0
    for block in blocks:
        parts.append(block)
        held += len(block)
        if held >= size:
            yield b"".join(parts)
            parts, held = [], 0
    if parts:
        yield b"".join(parts)


def copy_chunks(dbapi_connection: Any, select: str, names: list[str],
                kinds: Mapping[str, str], chunk_rows: int) -> Iterator[pd.DataFrame]:
    """Chunks of the SELECT's rows: integer/float columns as float64, text as str objects."""
    dtypes = {n: ("float64" if kinds[n] in ("integer", "float") else object) for n in names}
    sql = f"COPY ({select}) TO STDOUT WITH (FORMAT csv, NULL '{NULL}')"
    with dbapi_connection.cursor() as cursor, cursor.copy(sql) as copy:
        stream = io.BufferedReader(_CopyStream(_joined(copy)), buffer_size=1 << 20)
        yield from pd.read_csv(stream, names=names, header=None, dtype=dtypes,
                               na_values=[NULL], keep_default_na=False, chunksize=chunk_rows,
                               encoding="utf-8")


def adbc_chunks(uri: str, select: str, names: list[str]) -> Iterator[pd.DataFrame]:
    """Chunks of the SELECT's rows as Arrow record batches through ADBC (libpq URI; the
    password, if any, from the URI or libpq's PGPASSFILE/service files). ADBC's low-level
    handles, not its DB-API module, which imports ``pyarrow.dataset`` (≈ 1 s of a read)."""
    import adbc_driver_manager as manager
    import adbc_driver_postgresql
    import pyarrow as pa

    with adbc_driver_postgresql.connect(uri) as database, \
            manager.AdbcConnection(database) as connection, \
            manager.AdbcStatement(connection) as statement:
        statement.set_sql_query(select)
        stream, _ = statement.execute_query()
        reader = pa.RecordBatchReader._import_from_c(stream.address)
        try:
            for batch in prefetched(reader):
                yield arrow_frame(batch, names)
        finally:
            reader.close()
