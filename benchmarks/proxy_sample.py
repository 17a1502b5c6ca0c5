"""Benchmark: wall time of sample_proxy for the bundled size (166k) and a large run (4M)."""

from __future__ import annotations

import time

from workbench.evidence.facts import load_facts
from workbench.evidence.sampler import ProxySampler, sample_proxy


def time_sample(n: int, repeats: int = 3) -> float:
    """Best-of-``repeats`` seconds for one full ``sample_proxy`` call (load, compile, draw)."""
    best = float("inf")
    for seed in range(repeats):
        start = time.perf_counter()
        df = sample_proxy(n, seed=seed)
        best = min(best, time.perf_counter() - start)
        assert len(df) == n
    return best


def main() -> None:
    """Print the timings."""
    facts = load_facts()
    start = time.perf_counter()
    ProxySampler(facts)
    print(f"compile facts          : {time.perf_counter() - start:8.3f} s")
    for n in (166_000, 4_000_000):
        print(f"sample_proxy n={n:>9,}: {time_sample(n):8.3f} s (best of 3)")


if __name__ == "__main__":
    main()
