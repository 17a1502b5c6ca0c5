"""The Dask worker plugin that installs a dry-run payload once per worker (imports distributed)."""

from __future__ import annotations

from typing import Any

from distributed import WorkerPlugin

from workbench.dryrun import worker as dryrun_worker
from workbench.dryrun.worker import Payload


class PayloadPlugin(WorkerPlugin):
    """Installs the spec and the proxy frame on each worker, like a pool initializer."""

    def __init__(self, payload: Payload) -> None:
        self.payload = payload

    def setup(self, worker: Any) -> None:
        dryrun_worker.install(self.payload)

    def teardown(self, worker: Any) -> None:
        dryrun_worker.uninstall(self.payload.payload_id)
