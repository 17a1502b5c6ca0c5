"""Build data_public/proxy_sample_166k.csv.gz, the default proxy: 166,000 real public records.

Usage: python scripts/build_proxy_sample.py [SOURCE_CSV_GZ] [--out PATH]

Source: the 200k sample of the US 2019 public-use natality file (NVSS, CDC; public domain) in
``../shared/data``. Steps: map onto the six schema columns (``evidence.us_natality.to_schema``:
month of ``date_of_birth``, ``"F"``/``"M"`` from ``is_female``, the rest as recorded); drop the
rows removed by the paper's nine raw cleaning rules (§4.8.1); draw 166,000 of the remaining
rows without replacement with ``numpy.random.default_rng(2019)``. The seed and row count are
fixed and gzip's header timestamp is zeroed, so re-running reproduces the file byte for byte.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.evidence.records import clean_records, csv_gz_bytes, record_sample
from workbench.evidence.us_natality import read_us_sample
from workbench.specification.document import file_sha256

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = REPO.parent / "shared" / "data" / "us_births_2019_singleton_sample200k.csv.gz"
DEFAULT_OUT = REPO / "data_public" / "proxy_sample_166k.csv.gz"

#: Rows in the default proxy (the Israeli release had n = 165,915).
N_ROWS = 166_000
#: Seed of the draw; changing it changes the committed file.
SEED = 2019


def build(source: Path = DEFAULT_SOURCE, out: Path = DEFAULT_OUT) -> Path:
    """Draw the record sample from ``source`` and write it to ``out``."""
    raw = read_us_sample(source)
    df = record_sample(raw, N_ROWS, SEED)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(csv_gz_bytes(df))
    print(f"wrote {out} ({len(df):,} of {len(clean_records(raw)):,} cleaned rows of "
          f"{len(raw):,}, seed {SEED}; source sha256 {file_sha256(source)})")
    return out


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", nargs="?", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    build(args.source, args.out)


if __name__ == "__main__":
    main()
