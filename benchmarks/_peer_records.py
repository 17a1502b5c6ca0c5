"""The peers grid's records (``peers.py --results FILE``): one JSON line per finished cell.

A cell is one seeded iteration of one generator on one stand-in at one size and one ε
(:class:`Cell`); its record holds the cell, its scores (``_scoring.RunRow``), the fit time, the
ε the generator itself was given (an OpenDP peer's add/remove ε), the design's file hash, the
code's commit and the UTC date. A rerun reads the file, skips every finished cell and prints
the tables from every record, so that runs accumulate over sessions.

Writes are atomic: each append writes the whole file (the complete lines read, then the new
one) to a temporary file beside it, fsyncs it and renames it over the old one, so a kill leaves
either the old file or the new one, never half a line. A file that ends in a torn line (written
by anything else) is read without it, and the next append drops it. One writer per file.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from pathlib import Path

from _scoring import RunRow

#: The order cells of one run index are worked in: the cheap generators first.
CHEAP_FIRST = ("workbench", "MST", "AIM")


class RecordsError(ValueError):
    """A results file that cannot be read as this design's records (names the file and line)."""


@dataclass(frozen=True)
class Cell:
    """One seeded iteration: generator, stand-in (e.g. ``us_sample_95k``), ε scale, run index."""

    generator: str
    standin: str
    n: int
    scale: float
    run: int
    seed: int

    def key(self) -> tuple:
        """What identifies a finished cell in a results file."""
        return (self.generator, self.standin, self.n, float(self.scale), self.run, self.seed)


def design_hash(path: Path) -> str:
    """The design file's SHA-256: records of one results file belong to one design."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def code_commit(repo: Path) -> str:
    """The commit the code ran at (``-dirty`` when the worktree has changes), or 'unknown'."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                              check=True).stdout.strip()

    try:
        head = git("rev-parse", "--short=12", "HEAD")
        return head + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def record(cell: Cell, row: RunRow, *, design: str, design_sha: str, epsilon_gen: float,
           neighbour: str, commit: str, date: str | None = None) -> dict:
    """The JSON record of one finished cell."""
    return {"design": design, "design_sha256": design_sha, **asdict(cell),
            "epsilon_gen": epsilon_gen, "neighbour": neighbour, **asdict(row),
            "commit": commit, "date": date or datetime.now(UTC).isoformat(timespec="seconds")}


def cell_of(rec: dict) -> Cell:
    """The cell a record finished."""
    return Cell(**{f.name: rec[f.name] for f in fields(Cell)})


def row_of(rec: dict) -> RunRow:
    """The scores a record holds, as the tables read them."""
    return RunRow(**{f.name: rec[f.name] for f in fields(RunRow)})


def load(path: Path, design_sha: str | None = None) -> tuple[list[dict], list[str]]:
    """Every complete record in ``path`` (none if it does not exist) and the raw complete lines.

    A last line without its newline is a torn write and is left out; any other unreadable
    line, or a record of another design than ``design_sha``, is an error naming the line.
    """
    if not path.exists():
        return [], []
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    complete = lines[:-1]  # the part after the last newline is '' or a torn line
    records, kept = [], []
    for number, line in enumerate(complete, start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            cell_of(rec), row_of(rec)
        except (json.JSONDecodeError, KeyError, TypeError) as err:
            raise RecordsError(f"--results {path}: line {number} is not a peers record "
                               f"({type(err).__name__})") from None
        if design_sha is not None and rec["design_sha256"] != design_sha:
            raise RecordsError(f"--results {path}: line {number} is a record of another design "
                               f"({rec['design']}); use one results file per design")
        records.append(rec)
        kept.append(line)
    return records, kept


def append(path: Path, rec: dict) -> None:
    """Add one record atomically (whole file to a temporary file, fsync, rename)."""
    _, kept = load(path)
    line = json.dumps(rec, ensure_ascii=False, sort_keys=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write("".join(f"{x}\n" for x in (*kept, line)))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def plan(generators: Sequence[str], items: Sequence[tuple[str, int]], scales: Sequence[float],
         runs: dict[str, int], seed: int, done: Iterable[tuple]) -> list[Cell]:
    """The unfinished cells in the order to work them: run index first (every cell gets its
    first run before any gets a second), then the cheap generators (:data:`CHEAP_FIRST`), then
    stand-in and size (``items``: name with the size, e.g. ``us_sample_95k``, and its record
    count) and ε scale. Run ``i`` uses seed ``seed + i`` for every generator."""
    finished = set(done)
    order = sorted(generators, key=lambda g: CHEAP_FIRST.index(g) if g in CHEAP_FIRST else 99)
    out = []
    for i in range(max(runs.values(), default=0)):
        for gen in order:
            if i >= runs[gen]:
                continue
            for name, n in items:
                for scale in scales:
                    cell = Cell(gen, name, n, float(scale), i, seed + i)
                    if cell.key() not in finished:
                        out.append(cell)
    return out


def saver(recs: list[dict], path: Path | None, *, design: str, design_sha: str, commit: str,
          epsilon_of: Callable[[Cell], float], neighbour_of: Callable[[Cell], str]
          ) -> Callable[[Cell, RunRow], None]:
    """What a grid calls when a cell finishes: its record kept in ``recs`` and appended to
    ``path`` (if any) at once, so a kill loses no finished cell."""
    def save(cell: Cell, row: RunRow) -> None:
        rec = record(cell, row, design=design, design_sha=design_sha,
                     epsilon_gen=epsilon_of(cell), neighbour=neighbour_of(cell), commit=commit)
        recs.append(rec)
        if path is not None:
            append(path, rec)
    return save


def slowest(recs: Iterable[dict]) -> dict[str, float]:
    """Each generator's slowest recorded iteration (what ``--max-minutes`` judges a cell by)."""
    out: dict[str, float] = {}
    for r in recs:
        out[r["generator"]] = max(out.get(r["generator"], 0.0), float(r["seconds"]))
    return out
