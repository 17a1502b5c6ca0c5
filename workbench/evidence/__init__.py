"""Public proxy data: aggregate facts from a public US natality sample, and rows sampled from them.

The proxy stands in for the confidential registry during co-design (Hod & Canetti §4.10).
Two kinds: a seeded record sample of the public-domain source (the default, ``records``), and
synthetic rows drawn from low-order frequency tables (``sampler``), for when only published
tables exist.
"""

from workbench.evidence.facts import (
    build_facts,
    default_facts_path,
    load_facts,
    validate_facts,
    write_facts,
)
from workbench.evidence.realism import (
    CLEANING_RULES,
    cleaning_rule_masks,
    removed_shares,
    total_variation,
    weight_bins_100g,
)
from workbench.evidence.records import clean_records, csv_gz_bytes, record_sample
from workbench.evidence.sampler import ProxySampler, sample_proxy
from workbench.evidence.us_natality import PROXY_COLUMNS, read_us_sample, sha256_of, to_schema

__all__ = [
    "CLEANING_RULES",
    "PROXY_COLUMNS",
    "ProxySampler",
    "build_facts",
    "clean_records",
    "cleaning_rule_masks",
    "csv_gz_bytes",
    "default_facts_path",
    "load_facts",
    "read_us_sample",
    "record_sample",
    "removed_shares",
    "sample_proxy",
    "sha256_of",
    "to_schema",
    "total_variation",
    "validate_facts",
    "weight_bins_100g",
    "write_facts",
]
