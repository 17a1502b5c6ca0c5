"""A source's Arrow batches read one step ahead on a helper thread, so waiting on a database
(the ADBC/DuckDB/Parquet fetch, which releases the GIL) overlaps the cleaning of the chunk
before. Only Arrow batches cross the thread (their memory is Arrow's pool): the pandas frames
are made on the consumer's thread, so no second malloc arena holds freed chunks (peak RSS).

At most ``depth`` chunks wait in the queue, plus the one being read and the one being cleaned:
memory stays a few chunks. An exception from the reader is re-raised in the consumer as it
was (the source's own, value-free message). When the consumer stops early (a refusal while
cleaning, or the generator closed), the helper is told to stop and the reader is closed on its
own thread (its connection with it) before the consumer's generator returns.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import TypeVar

T = TypeVar("T")

_END = object()


def prefetched(chunks: Iterator[T], depth: int = 1) -> Iterator[T]:
    """``chunks`` in order, each read on a helper thread while the previous one is used."""
    box: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: object) -> bool:
        """Hand one item over unless the consumer has gone (then: False)."""
        while not stop.is_set():
            try:
                box.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for chunk in chunks:
                if not put((chunk, None)):
                    break
            else:
                put((_END, None))
        except BaseException as exc:  # re-raised in the consumer, as it was
            put((_END, exc))
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()

    helper = threading.Thread(target=work, name="workbench-source-prefetch", daemon=True)
    helper.start()
    try:
        while True:
            item, error = box.get()
            if error is not None:
                raise error
            if item is _END:
                return
            yield item
            del item
    finally:
        stop.set()
        helper.join()
