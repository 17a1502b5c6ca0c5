"""PostgreSQL rows through ``psql``, libpq's C client, as a child process: ``COPY (SELECT …) TO
STDOUT (FORMAT csv)`` written to a pipe and parsed by Arrow's streaming CSV reader (C++, typed by
the catalog's column types), so no row passes through Python. At 4M rows the client's CPU is
≈ 0.5 s (psql) + ≈ 0.6 s (Arrow) against ≈ 2 s in ADBC's row loop (issue 38).

Credentials: psql's argv (visible in ``ps``) holds the URL without its password; a password in
the URL (user info or ``?password=``) goes to the child's environment as ``PGPASSWORD``, so
``PGPASSFILE``, ``~/.pgpass`` and ``?service=`` work as libpq's own. psql never prompts (``-w``)
and reports a server error as its SQLSTATE only (``VERBOSITY=sqlstate``): its stderr is parsed
for that code and never shown. CSV's NULL is an unquoted empty field and an empty text a quoted
one, so NULL and ``''`` stay apart. The last batch is handed on only once psql has exited 0: a
stream cut short (a dropped connection) raises :class:`PsqlFailed`, never a truncated row.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

import pandas as pd

from workbench.sources.convert import arrow_frame
from workbench.sources.prefetch import prefetched

#: Bytes of CSV per Arrow batch (≈ 240k rows of six small columns, near CHUNK_ROWS).
BLOCK_BYTES = 4 << 20
#: A server error as psql prints it under VERBOSITY=sqlstate: the level and the code only.
_SQLSTATE = re.compile(r"^(?:ERROR|FATAL|PANIC):\s+([0-9A-Z]{5})\s*$", re.MULTILINE)
#: Catalog type names Arrow parses as numbers: straight to float64, the dtype the frame keeps
#: (no cast per batch; an integer's text parses to the double an int64 would be cast to).
#: Anything else arrives as text (a numeric's is parsed by ``convert``, as ADBC's is).
_NUMBERS = frozenset({"int2", "int4", "int8", "float4", "float8"})


class PsqlFailed(Exception):
    """psql exited non-zero: its SQLSTATE if the server sent one, its exit code, how many rows
    had arrived, and whether the connection was lost (exit 2, or killed by a signal); the
    driver's text is not kept."""

    def __init__(self, sqlstate: str, exit_code: int, rows: int) -> None:
        super().__init__(f"psql exited {exit_code} [SQLSTATE {sqlstate or 'none'}]")
        self.sqlstate = sqlstate
        self.exit_code = exit_code
        self.rows = rows
        self.lost = exit_code == 2 or exit_code < 0


def program() -> str | None:
    """The psql on PATH, or None (then ADBC or psycopg reads the rows). Debian's
    ``pg_wrapper`` is looked through to the newest ``/usr/lib/postgresql/*/bin/psql``: from
    a local cluster's configuration it may set PGHOST/PGPORT, and a URL without a host would
    then reach another server than the catalog's connection did."""
    found = shutil.which("psql")
    if found is None or os.path.basename(os.path.realpath(found)) != "pg_wrapper":
        return found
    binaries = glob.glob("/usr/lib/postgresql/*/bin/psql")
    return max(binaries, key=_major) if binaries else None


def _major(path: str) -> tuple[int, ...]:
    """The version of a ``/usr/lib/postgresql/<version>/bin`` binary, for ordering."""
    name = os.path.basename(os.path.dirname(os.path.dirname(path)))
    return tuple(int(p) for p in name.split(".") if p.isdigit())


def split_password(uri: str) -> tuple[str, str | None]:
    """The libpq URI without its password (user info or ``password`` parameter), and that
    password (None if the URI has none: libpq then finds it as it would in-process)."""
    parts = urlsplit(uri)
    netloc, password = parts.netloc, None
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            user, secret = userinfo.split(":", 1)
            password = unquote(secret)
            netloc = f"{user}@{host}" if user else host
    kept = []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key == "password":
            password = value
        else:
            kept.append((key, value))
    if password is None:
        return uri, None
    query = urlencode(kept, quote_via=quote)
    # written out, not urlunsplit, which drops an empty host's "//" (postgresql:///db)
    return f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else ""), password


def usable(uri: str) -> bool:
    """Whether psql can read this URI without a secret on its command line (an
    ``sslpassword`` has no environment variable: ADBC reads such a URI)."""
    return "sslpassword" not in {k.lower() for k, _ in parse_qsl(urlsplit(uri).query)}


def command(psql: str, uri: str, select: str) -> tuple[list[str], dict[str, str]]:
    """psql's argv (no password in it) and its environment (the password, if any, as
    PGPASSWORD; UTF-8 whatever the locale; a 10 s connect timeout unless one is set)."""
    public, password = split_password(uri)
    argv = [psql, "-X", "-q", "-w", "-v", "ON_ERROR_STOP=1", "-v", "VERBOSITY=sqlstate",
            "-d", public, "-c", "SET extra_float_digits = 3",  # floats exactly, whatever PGOPTIONS
            "-c", f"COPY ({select}) TO STDOUT WITH (FORMAT csv)"]
    env = {**os.environ, "PGCLIENTENCODING": "UTF8"}
    if password is not None:
        env["PGPASSWORD"] = password
    if "connect_timeout" not in uri:
        env.setdefault("PGCONNECT_TIMEOUT", "10")
    return argv, env


def _options(names: list[str], natives: Mapping[str, str]) -> dict[str, object]:
    """Arrow's CSV options: no header, the catalog's types, NULL = an unquoted empty field."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    types = {n: pa.float64() if natives[n] in _NUMBERS else pa.string() for n in names}
    return {"read_options": pcsv.ReadOptions(column_names=names, block_size=BLOCK_BYTES),
            "parse_options": pcsv.ParseOptions(newlines_in_values=True),
            "convert_options": pcsv.ConvertOptions(
                column_types=types, null_values=[""], strings_can_be_null=True,
                quoted_strings_can_be_null=False)}


def _failure(child: subprocess.Popen, errors: object, rows: int) -> PsqlFailed | None:
    """psql's outcome once its stdout has ended: None if it exited 0, else what failed."""
    try:
        code = child.wait(timeout=5)
    except subprocess.TimeoutExpired:  # still streaming after a parse error: stop it
        child.kill()
        child.wait()
        return None
    if code == 0:
        return None
    errors.seek(0)  # type: ignore[attr-defined]
    found = _SQLSTATE.findall(errors.read().decode("utf-8", "replace"))  # type: ignore
    return PsqlFailed(found[-1] if found else "", code, rows)


def psql_chunks(psql: str, uri: str, select: str, names: list[str],
                natives: Mapping[str, str]) -> Iterator[pd.DataFrame]:
    """The SELECT's rows as ``arrow_frame`` chunks; raises :class:`PsqlFailed` if psql fails
    (before the last batch is handed on), or Arrow's ValueError for rows it cannot parse."""
    import pyarrow.csv as pcsv

    argv, env = command(psql, uri, select)
    with tempfile.TemporaryFile() as errors:
        child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=errors, env=env, bufsize=BLOCK_BYTES)
        rows, held, batches = 0, None, None
        try:
            if not child.stdout.peek(1):  # type: ignore[union-attr]  # no row, or a failure
                failed = _failure(child, errors, 0)
                if failed is not None:
                    raise failed
                return
            try:
                batches = prefetched(pcsv.open_csv(child.stdout, **_options(names, natives),
                                                   memory_pool=_pool()))
                for batch in batches:
                    if held is not None:
                        yield arrow_frame(held, names)
                    held, rows = batch, rows + batch.num_rows
            except (ValueError, OSError):  # a row cut short by a dropped connection, or bad
                failed = _failure(child, errors, rows)
                if failed is not None:
                    raise failed from None
                raise
            failed = _failure(child, errors, rows)
            if failed is not None:
                raise failed
            if held is not None:
                yield arrow_frame(held, names)
        finally:
            if child.poll() is None:  # the consumer stopped early: end psql (and its query)
                child.kill()
            if batches is not None:
                batches.close()
            child.wait()
            child.stdout.close()  # type: ignore[union-attr]
            _release()


def _pool():
    """The system allocator's pool for the parse: its freed blocks go back to glibc, which the
    read's end hands back to the system (``transform.stream``); mimalloc's default pool kept
    ≈ 30 MB of them resident even after ``release_unused`` (measured at 4M rows)."""
    import pyarrow as pa

    return pa.system_memory_pool()


def _release() -> None:
    """Give the freed parse buffers back: Arrow's allocator (mimalloc) kept ≈ 0.1 GB of them
    resident after a 4M-row read, which the run's later peak then carried (issue 38's bar)."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
