"""Issue 38 must-show 2: a whole lean iteration at 4,000,000 rows (the 166k proxy tiled) read
from CSV, DuckDB and PostgreSQL — peak RSS and wall time of each, in one run.

Each source runs in its own fresh process (so its peak RSS, VmHWM, is its own): read
and clean the data as a run does (``engine.run.load_confidential`` → ``transform.stream``:
chunks read, cleaned and compacted one at a time; "read peak" is the peak RSS once the data
are in), then one iteration of the lean design
(examples/israel_births_2014_lean.json) in simulation mode, as
``benchmarks/_lean_iteration.py`` runs it. PostgreSQL is a throw-away cluster (tests/pg_server.py:
Debian's binaries, a temporary directory, 127.0.0.1 only).

    python benchmarks/data_sources.py [--rows 4000000] [--sources csv duckdb postgresql]
                                      [--read-only]
"""

from __future__ import annotations

import argparse
import io
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LEAN = REPO / "examples" / "israel_births_2014_lean.json"
PROXY = REPO / "data_public" / "proxy_sample_166k.csv.gz"


def tiled(rows: int):
    """The proxy tiled to ``rows`` records (public data)."""
    import pandas as pd

    base = pd.read_csv(PROXY)
    reps = -(-rows // len(base))
    return pd.concat([base] * reps, ignore_index=True).head(rows)


def one_source(data: str, read_only: bool) -> dict:
    """In this process: read + clean DATA, then one lean iteration; times and peak RSS."""
    from workbench.criteria import release_once
    from workbench.engine import run_iteration
    from workbench.engine.run import load_confidential
    from workbench.privacy import PrivacyContext
    from workbench.trial import bind
    from workbench.validation import load_spec

    spec = load_spec(LEAN)
    steps: list[tuple[str, float]] = [("imports", _peak_gb())]
    live: list[tuple[str, float]] = [("imports", _live_gb())]
    t0 = time.perf_counter()
    frame = load_confidential(spec, data)
    read = time.perf_counter() - t0
    read_rss = _peak_gb()
    steps.append(("read", read_rss))
    live.append(("read", _live_gb()))
    iteration = 0.0
    if not read_only:
        config = next(iter(spec.configurations()))
        t1 = time.perf_counter()
        ctx = PrivacyContext.simulation(seed=1)
        codes = spec.table_codec(config).encode(frame, narrow=True)  # as run_iteration does
        steps.append(("encode", _peak_gb()))
        live.append(("encode", _live_gb()))
        once = release_once(spec, config, codes, ctx) if spec.epsilon_once else None
        # each step's name is recorded as it starts: the peak so far is the previous step's
        run_iteration(bind(spec, config), frame, ctx, once_results=once, real_codes=codes,
                      progress=lambda name: (steps.append((name, _peak_gb())),
                                             live.append((name, _live_gb()))))
        iteration = time.perf_counter() - t1
    rss = _peak_gb()
    steps.append(("end", rss))
    live.append(("end", _live_gb()))
    return {"rows": len(frame), "read_s": read, "iteration_s": iteration,
            "total_s": read + iteration, "read_rss_gb": read_rss, "peak_rss_gb": rss,
            "steps": steps, "live": live, "reader": _reader(data)}


def _reader(data: str) -> str:
    """Which client read a PostgreSQL source's rows (psql, adbc or psycopg), else ''."""
    if not data.startswith("postgres"):
        return ""
    from workbench.sources.location import parse
    from workbench.sources.sql import PostgresSource

    return PostgresSource(parse(data)).reader()


def _live_gb() -> float:
    """This process's resident memory now in GB (VmRSS): what each step keeps."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 2**20
    return float("nan")


def _peak_gb() -> float:
    """This process's peak RSS so far in GB: VmHWM of /proc/self/status. Not ``ru_maxrss``,
    which Linux carries across fork and exec: a child started by a parent holding the tiled
    frame began at the parent's ~0.57 GB, which was all the "read peak" showed before."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 2**20  # kB → GB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB → GB


def prepare(rows: int, kinds: list[str], folder: Path) -> tuple[dict[str, str], object]:
    """Write the tiled proxy as CSV, into DuckDB and into a PostgreSQL table."""
    frame = tiled(rows)
    out: dict[str, str] = {}
    cluster = None
    if "csv" in kinds:
        frame.to_csv(folder / "births.csv", index=False)
        out["csv"] = str(folder / "births.csv")
    if "duckdb" in kinds:
        import duckdb

        with duckdb.connect(str(folder / "registry.duckdb")) as con:
            con.register("frame", frame)
            con.execute("CREATE TABLE births AS SELECT * FROM frame")
        out["duckdb"] = f"duckdb:///{folder / 'registry.duckdb'}?table=births"
    if "postgresql" in kinds:
        sys.path.insert(0, str(REPO / "tests"))
        from pg_server import start

        cluster = start(Path(tempfile.mkdtemp(prefix="workbench-pg-bench-")) / "cluster")
        with cluster.connect() as con:
            con.execute("CREATE TABLE births (birth_month smallint, mother_age smallint, "
                        "parity smallint, gestation_week smallint, birth_sex text, "
                        "birth_weight integer)")
            text = io.StringIO()
            frame.to_csv(text, index=False, header=False)
            with con.cursor().copy("COPY births FROM STDIN WITH (FORMAT csv)") as copy:
                copy.write(text.getvalue())
            # a registry's table is not freshly bulk-loaded: set hint bits and statistics now,
            # so the timed read does not pay the first scan's one-off page writes
            con.execute("VACUUM (FREEZE, ANALYZE) births")
        out["postgresql"] = cluster.url(query="table=births")
    return out, cluster


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--sources", nargs="+", default=["csv", "duckdb", "postgresql"])
    parser.add_argument("--read-only", action="store_true", help="skip the iteration")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)  # child process
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(one_source(args.one, args.read_only)))
        return
    with tempfile.TemporaryDirectory(prefix="workbench-bench-sources-") as tmp:
        t = time.perf_counter()
        data, cluster = prepare(args.rows, args.sources, Path(tmp))
        print(f"prepared {args.rows:,} rows in {time.perf_counter() - t:.0f} s "
              "(not part of the figures)", flush=True)
        try:
            print(f"{'source':<11} {'rows':>10} {'read+clean s':>12} {'iteration s':>11} "
                  f"{'total s':>8} {'read peak GB':>12} {'peak RSS GB':>11}")
            results: dict[str, dict] = {}
            for kind in args.sources:
                cmd = [sys.executable, __file__, "--one", data[kind]]
                cmd += ["--read-only"] if args.read_only else []
                done = subprocess.run(cmd, capture_output=True, text=True, check=True,
                                      env={**_env(), "PYTHONPATH": str(REPO)})
                r = json.loads(done.stdout.strip().splitlines()[-1])
                print(f"{kind:<11} {r['rows']:>10,} {r['read_s']:>12.1f} "
                      f"{r['iteration_s']:>11.1f} {r['total_s']:>8.1f} "
                      f"{r['read_rss_gb']:>12.2f} {r['peak_rss_gb']:>11.2f}"
                      + (f"  (rows by {r['reader']})" if r.get("reader") else ""), flush=True)
                results[kind] = r
            _verdict(results)
            _steps(results)
        finally:
            if cluster is not None:
                from pg_server import remove

                remove(cluster)


#: Issue 38's bar: the lean design's CSV path measured 0.96 GB peak RSS at 4,000,000 rows.
TARGET_GB = 0.96


def _verdict(results: dict[str, dict]) -> None:
    """Each source against the issue's bar (peak under 0.96 GB) and against the CSV path."""
    csv = results.get("csv")
    for kind, r in results.items():
        peak = "under" if r["peak_rss_gb"] < TARGET_GB else "OVER"
        line = f"{kind}: peak {r['peak_rss_gb']:.2f} GB {peak} {TARGET_GB} GB"
        if csv is not None and kind != "csv" and not r.get("read_only"):
            line += (f"; vs CSV: peak {r['peak_rss_gb'] - csv['peak_rss_gb']:+.2f} GB, "
                     f"whole run {r['total_s'] - csv['total_s']:+.1f} s")
        print(line, flush=True)


def _steps(results: dict[str, dict]) -> None:
    """Where the memory goes: the peak RSS reached before each step of the iteration starts
    (``transform`` is reached after once-statistics; ``end`` is the whole run's peak)."""
    for kind, r in results.items():
        marks = " · ".join(f"{name} {gb:.2f}" for name, gb in r["steps"])
        print(f"{kind} peak RSS (GB) before each step: {marks}", flush=True)
        held = " · ".join(f"{name} {gb:.2f}" for name, gb in r.get("live", []))
        print(f"{kind} live RSS (GB) as each step starts: {held}", flush=True)


def _env() -> dict[str, str]:
    """This process's environment (the child inherits PATH, HOME, thread settings)."""
    import os

    return dict(os.environ)


if __name__ == "__main__":
    main()
