"""Build data_public/proxy_facts_166k.csv.gz: 166,000 synthetic proxy rows from the facts file.

The facts-based proxy, for when only published tables exist; the default proxy is the record
sample built by scripts/build_proxy_sample.py.

Usage: python scripts/build_proxy_data.py [--facts PATH] [--out PATH]

The seed and row count are fixed and gzip's header timestamp is zeroed, so re-running the
script on the same facts reproduces the committed file byte for byte.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from workbench.evidence.facts import load_facts
from workbench.evidence.realism import removed_shares
from workbench.evidence.records import csv_gz_bytes
from workbench.evidence.sampler import sample_proxy

REPO = Path(__file__).resolve().parents[1]
DEFAULT_FACTS = REPO / "data_public" / "us2019_facts.json"
DEFAULT_OUT = REPO / "data_public" / "proxy_facts_166k.csv.gz"

#: Rows in the bundled proxy (the Israeli release had n = 165,915).
N_ROWS = 166_000
#: Seed of the bundled proxy; changing it changes the committed file.
SEED = 2014


def build_proxy_frame(facts_path: str | Path | None = DEFAULT_FACTS) -> pd.DataFrame:
    """The bundled proxy as a DataFrame, exactly as the committed CSV should hold it."""
    return sample_proxy(N_ROWS, seed=SEED, facts=load_facts(facts_path))


def build(facts_path: Path = DEFAULT_FACTS, out: Path = DEFAULT_OUT) -> Path:
    """Sample the proxy and write it to ``out``."""
    df = build_proxy_frame(facts_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(csv_gz_bytes(df))
    print(f"wrote {out} ({len(df):,} rows, seed {SEED})")
    for rule, share in removed_shares(df).items():
        print(f"  removed by {rule:<45s} {100 * share:7.4f}%")
    return out


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=Path, default=DEFAULT_FACTS)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    build(args.facts, args.out)


if __name__ == "__main__":
    main()
