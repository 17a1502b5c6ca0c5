"""Where dry-run tasks execute: in this process, in a local process pool, or on a Dask cluster.

Every executor installs the payload (spec document + proxy frame) once per worker, then sends
only small tasks, and yields records as they finish. With ``noise="seeded"`` the records of
the same tasks are identical whichever executor ran them.
"""

from __future__ import annotations

import multiprocessing
import pickle
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Protocol

from workbench.dryrun import worker
from workbench.dryrun.tasks import Task, TaskRecord
from workbench.dryrun.worker import Payload


class Executor(Protocol):
    """Runs tasks against a payload and yields their records in completion order."""

    def run(self, payload: Payload, tasks: Sequence[Task]) -> Iterator[TaskRecord]: ...


class InlineExecutor:
    """Runs the tasks one by one in this process (debugging, tiny dry runs, widgets)."""

    def run(self, payload: Payload, tasks: Sequence[Task]) -> Iterator[TaskRecord]:
        worker.install(payload)
        try:
            for task in tasks:
                yield worker.run_task(task)
        finally:
            worker.uninstall(payload.payload_id)


class LocalExecutor:
    """A pool of ``workers`` processes, spawned (safe from notebooks and threaded programs).

    As with any spawned pool, a script must start the dry run under
    ``if __name__ == "__main__":``.
    """

    def __init__(self, workers: int = 2) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError("workers must be an integer >= 1")
        self.workers = workers

    def run(self, payload: Payload, tasks: Sequence[Task]) -> Iterator[TaskRecord]:
        if not tasks:
            return
        if getattr(multiprocessing.current_process(), "_inheriting", False):
            # A spawned worker is re-running an unguarded main script: stop here, loudly,
            # instead of spawning workers from a worker (multiprocessing's own check, earlier).
            raise RuntimeError(
                "a dry run with LocalExecutor must be started under "
                "`if __name__ == \"__main__\":` in a script"
            )
        with tempfile.TemporaryDirectory(prefix="workbench-dryrun-") as tmp:
            # The payload goes through a file: a large pickle in initargs would be written
            # down the spawn pipe, which blocks forever if a worker dies while starting.
            path = Path(tmp) / "payload.pickle"
            with open(path, "wb") as fh:
                pickle.dump(payload, fh, protocol=pickle.HIGHEST_PROTOCOL)
            pool = ProcessPoolExecutor(
                max_workers=min(self.workers, len(tasks)),
                mp_context=_context(),
                initializer=worker.install_from_file,
                initargs=(str(path),),
            )
            try:
                futures = [pool.submit(worker.run_task, task) for task in tasks]
                for fut in as_completed(futures):
                    yield fut.result()
            finally:
                pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor:
    """Tasks on a dask.distributed cluster; needs the optional extra ``cluster``.

    Give a scheduler address (``tcp://host:port``) or an existing ``distributed.Client``.
    The payload travels once per worker in a worker plugin; the proxy frame goes with it, so
    the workers need no access to the proxy file.
    """

    def __init__(self, scheduler_address: str | None = None, *, client: Any = None) -> None:
        if (scheduler_address is None) == (client is None):
            raise ValueError("give exactly one of scheduler_address and client")
        self.scheduler_address = scheduler_address
        self.client = client

    def run(self, payload: Payload, tasks: Sequence[Task]) -> Iterator[TaskRecord]:
        distributed = _distributed()
        from workbench.dryrun.dask_plugin import PayloadPlugin

        client = self.client or distributed.Client(self.scheduler_address)
        name = f"workbench-dryrun-{payload.payload_id[:16]}"
        try:
            client.register_plugin(PayloadPlugin(payload), name=name)
            futures = client.map(worker.run_task, list(tasks), pure=False)
            try:
                for fut in distributed.as_completed(futures):
                    yield fut.result()
            finally:
                client.cancel(futures)
                client.unregister_worker_plugin(name)
        finally:
            if self.client is None:
                client.close()


def make_executor(workers: int, scheduler: str | None = None) -> Executor:
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
