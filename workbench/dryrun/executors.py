"""Where dry-run tasks (and a design's candidate fits) execute: in this process, in a local
process pool, or on a Dask cluster.

Every executor sends a shared object (a dry run's payload: spec document + proxy frame) once
per worker, then only small items, and yields results as they finish. With ``noise="seeded"``
the records of the same tasks are identical whichever executor ran them.

An executor opened as a context manager (``with make_executor(2) as ex: …``) keeps its
workers until the block ends, so a design's many dry runs (scenarios × drafts) and its
candidate fits share one pool: each worker imports and compiles JAX once, and same-shape fits
recompile nothing. Unopened, each call starts and stops its own workers. The block ends them
cleanly: on an error, or Ctrl-C, in the parent or in a task, the workers are terminated
before the exception goes on (no orphan processes).
"""

from __future__ import annotations

import hashlib
import multiprocessing
import pickle
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, TypeVar

from workbench.dryrun import worker
from workbench.dryrun.tasks import Task, TaskRecord
from workbench.dryrun.worker import Payload

R = TypeVar("R")
Fn = Callable[[Any, Any], Any]


class Executor(Protocol):
    """Runs tasks against a payload and yields their records in completion order."""

    def run(self, payload: Payload, tasks: Sequence[Task]) -> Iterator[TaskRecord]: ...


class _Session(ABC):
    """What the executors share: ``run`` as a ``map``, and the workers' lifetime (the
    outermost ``with`` block, else one call)."""

    _depth = 0

    def __enter__(self) -> _Session:
        self._depth += 1
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._depth -= 1
        if self._depth == 0:
            self._close(abort=kind is not None)

    @abstractmethod
    def _close(self, abort: bool) -> None:
        """Stop the workers: wait for them (normal end) or terminate them (an error)."""

    @abstractmethod
    def _map(self, fn: Fn, shared: Any, items: list[Any]) -> Iterator[tuple[int, Any]]:
        """``(i, fn(shared, items[i]))`` for every item, on this executor's workers."""

    def map(self, fn: Fn, shared: Any, items: Sequence[Any]) -> Iterator[tuple[int, Any]]:
        """``(i, fn(shared, items[i]))`` in completion order; ``fn`` is a module-level function
        (picklable), ``shared`` travels once per worker."""
        items = list(items)
        if not items:
            return
        self._depth += 1
        ok = False
        try:
            yield from self._map(fn, shared, items)
            ok = True
        finally:
            self._depth -= 1
            if self._depth == 0:
                self._close(abort=not ok)

    def run(self, payload: Payload, tasks: Sequence[Task]) -> Iterator[TaskRecord]:
        """The dry run's tasks of one payload, records in completion order."""
        for _i, record in self.map(worker.run_payload_task, payload, tasks):
            yield record


class InlineExecutor(_Session):
    """Runs the tasks one by one in this process (debugging, tiny dry runs, widgets)."""

    def _map(self, fn: Fn, shared: Any, items: list[Any]) -> Iterator[tuple[int, Any]]:
        for i, item in enumerate(items):
            yield i, fn(shared, item)

    def _close(self, abort: bool) -> None:
        """No workers to stop: every item ran in this process."""
        return None


class LocalExecutor(_Session):
    """A pool of ``workers`` processes, from a forkserver (safe from notebooks and threaded
    programs), kept for the outermost ``with`` block.

    As with any spawned pool, a script must start the dry run under
    ``if __name__ == "__main__":``.
    """

    def __init__(self, workers: int = 2) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError("workers must be an integer >= 1")
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        self._dir: tempfile.TemporaryDirectory[str] | None = None

    def worker_pids(self) -> list[int]:
        """The pool's worker processes now (none before the first task or after the block)."""
        return sorted((self._pool._processes or {}) if self._pool is not None else ())

    def _start(self) -> ProcessPoolExecutor:
        if self._pool is None:
            if getattr(multiprocessing.current_process(), "_inheriting", False):
                # A spawned worker is re-running an unguarded main script: stop here, loudly,
                # instead of spawning workers from a worker.
                raise RuntimeError("a dry run with LocalExecutor must be started under "
                                   "`if __name__ == \"__main__\":` in a script")
            self._dir = tempfile.TemporaryDirectory(prefix="workbench-dryrun-")
            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=_context(),
                                             initializer=worker.ignore_interrupts)
        return self._pool

    def _map(self, fn: Fn, shared: Any, items: list[Any]) -> Iterator[tuple[int, Any]]:
        pool = self._start()
        assert self._dir is not None
        # The shared object goes through a file: a large pickle down the pool's pipes would be
        # written once per task, and blocks forever if a worker dies while reading it.
        data = pickle.dumps(shared, protocol=pickle.HIGHEST_PROTOCOL)
        key = hashlib.sha256(data).hexdigest()[:32]
        path = Path(self._dir.name) / f"{key}.pickle"
        path.write_bytes(data)
        del data
        futures = {pool.submit(worker.call_shared, fn, key, str(path), item): i
                   for i, item in enumerate(items)}
        try:
            for fut in as_completed(futures):
                yield futures[fut], fut.result()
        finally:
            for fut in futures:
                fut.cancel()
            if all(f.done() for f in futures):
                path.unlink(missing_ok=True)

    def _close(self, abort: bool) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            if abort:  # an error or Ctrl-C: do not wait for the tasks still running
                processes = list((pool._processes or {}).values())
                pool.shutdown(wait=False, cancel_futures=True)
                for p in processes:
                    p.terminate()
                for p in processes:
                    p.join(timeout=10)
                    if p.is_alive():
                        p.kill()
                        p.join()
            else:
                pool.shutdown(wait=True, cancel_futures=True)
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None


class DaskExecutor(_Session):
    """Tasks on a dask.distributed cluster; needs the optional extra ``cluster``.

    Give a scheduler address (``tcp://host:port``) or an existing ``distributed.Client``. The
    shared object travels once per worker (a broadcast scatter); the proxy frame goes with it,
    so the workers need no access to the proxy file. A client this executor opened is kept for
    the outermost ``with`` block.
    """

    def __init__(self, scheduler_address: str | None = None, *, client: Any = None) -> None:
        if (scheduler_address is None) == (client is None):
            raise ValueError("give exactly one of scheduler_address and client")
        self.scheduler_address = scheduler_address
        self.client = client
        self._own: Any = None

    def _map(self, fn: Fn, shared: Any, items: list[Any]) -> Iterator[tuple[int, Any]]:
        distributed = _distributed()
        client = self.client
        if client is None:
            if self._own is None:
                self._own = distributed.Client(self.scheduler_address)
            client = self._own
        scattered = client.scatter(shared, broadcast=True, hash=False)
        futures = {client.submit(fn, scattered, item, pure=False): i
                   for i, item in enumerate(items)}
        try:
            for fut in distributed.as_completed(list(futures)):
                yield futures[fut], fut.result()
        finally:
            client.cancel([*futures, scattered])

    def _close(self, abort: bool) -> None:
        own, self._own = self._own, None
        if own is not None:
            own.close()


def map_tasks(executor: Any, fn: Fn, shared: Any, items: Sequence[Any]
              ) -> Iterator[tuple[int, Any]]:
    """``executor.map`` when it has one, else in this process (an executor written against
    the older protocol, ``run`` only)."""
    if hasattr(executor, "map"):
        return executor.map(fn, shared, items)
    return InlineExecutor().map(fn, shared, items)


def session(executor: Any) -> AbstractContextManager[Any]:
    """``executor`` opened for a block (one pool across it) when it can be, else as it is."""
    return executor if hasattr(executor, "__enter__") else nullcontext(executor)


def make_executor(workers: int, scheduler: str | None = None) -> InlineExecutor | \
        LocalExecutor | DaskExecutor:
    """Dask when a scheduler address is given, else ``workers`` local processes (0: inline).

    >>> type(make_executor(0)).__name__, make_executor(3).workers
    ('InlineExecutor', 3)
    """
    if scheduler:
        return DaskExecutor(scheduler)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise ValueError("the number of worker processes must be an integer >= 0 "
                         "(0 runs the tasks in this process)")
    return InlineExecutor() if workers == 0 else LocalExecutor(workers)


def _context() -> multiprocessing.context.BaseContext:
    """A forkserver that has imported the worker module once (later pools start at once),
    or spawn where there is no forkserver. Never plain fork: the caller may have threads."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload([worker.__name__])
        return ctx
    return multiprocessing.get_context("spawn")


def _distributed() -> Any:
    """Import dask.distributed, or explain how to install it."""
    try:
        import distributed
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            'DaskExecutor needs dask.distributed: pip install "release-workbench[cluster]"'
        ) from exc
    return distributed
