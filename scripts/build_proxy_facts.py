"""Build data_public/us2019_facts.json: aggregate frequency tables of the public US 2019 sample.

Usage: python scripts/build_proxy_facts.py [SOURCE_CSV_GZ] [--out PATH]

Only counts leave this script; the source rows are never written anywhere.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.evidence.facts import FACTS_FILENAME, build_facts, write_facts
from workbench.evidence.us_natality import read_us_sample
from workbench.specification.document import file_sha256

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = REPO.parent / "shared" / "data" / "us_births_2019_singleton_sample200k.csv.gz"
DEFAULT_OUT = REPO / "data_public" / FACTS_FILENAME


def build(source: Path = DEFAULT_SOURCE, out: Path = DEFAULT_OUT) -> Path:
    """Compute the facts from ``source`` and write them to ``out``."""
    df = read_us_sample(source)
    facts = build_facts(df, source_file=source.name, source_sha256=file_sha256(source))
    write_facts(facts, out)
    shares = facts["source_checks"]["removed_share"]
    print(f"wrote {out} from {source.name} ({len(df):,} rows)")
    for rule, share in shares.items():
        print(f"  removed by {rule:<45s} {100 * share:7.4f}%")
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
