"""Benchmark the OpenDP noise primitives: per-call overhead and per-element cost.

Run: python benchmarks/privacy_mechanisms.py [--n 1000000] [--calls 2000]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from workbench.privacy import PrivacyContext


def seconds(call: Callable[[], object]) -> float:
    """Wall time of one call."""
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def main() -> None:
    """Print the timings (simulation context: no ledger fsync, the noise is the same)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1_000_000, help="length of the vector")
    parser.add_argument("--calls", type=int, default=2000, help="calls for the overhead")
    args = parser.parse_args()
    ctx = PrivacyContext.simulation()
    counts = np.full(args.n, 100, dtype=np.int64)
    values = counts.astype(np.float64)
    dl = seconds(lambda: ctx.discrete_laplace(counts, sensitivity=2, epsilon=1.0, purpose="b"))
    print(f"discrete Laplace, {args.n:>9,} counts: {dl:8.3f} s ({dl / args.n * 1e6:.2f} µs each)")
    lap = seconds(lambda: ctx.laplace(values, sensitivity=2.0, epsilon=1.0, purpose="b"))
    print(f"Laplace,          {args.n:>9,} values: {lap:8.3f} s ({lap / args.n * 1e6:.2f} µs each)")
    one = np.array([100])
    per_call = seconds(
        lambda: [
            ctx.discrete_laplace(one, sensitivity=1, epsilon=1.0, purpose="b")
            for _ in range(args.calls)
        ]
    )
    print(f"discrete Laplace, 1 count per call  : {per_call / args.calls * 1e3:8.3f} ms per call")
    scores = np.arange(10, dtype=np.float64)
    em = seconds(
        lambda: [
            ctx.exponential(scores, sensitivity=1.0, epsilon=1.0, purpose="b")
            for _ in range(args.calls)
        ]
    )
    print(f"noisy max over 10 scores            : {em / args.calls * 1e3:8.3f} ms per call")


if __name__ == "__main__":
    main()
