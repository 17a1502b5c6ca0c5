"""One BLAS thread for rehearsals and dry-run tasks, so their float sums agree bit for bit.

Parallelism in a dry run comes from its workers, and a BLAS library sums in an order that
depends on its thread count: with one thread everywhere, a dry-run task, the same task on a
Dask worker and a `workbench run --rehearse` of the same seed compute identical values.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any


def single_threaded_blas() -> AbstractContextManager[Any]:
    """A context with BLAS limited to one thread (threadpoolctl; without it, values may differ
    in their last bits between executors)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional
        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")
