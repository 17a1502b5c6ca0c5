"""The run-once executor: guards, one iteration of the scheme, private selection, the bundle.

``run`` is the confidential path (frozen spec, CSPRNG, accountant, ledger); ``run_iteration``
is shared with public dry runs; ``verify_bundle`` checks a published bundle.
"""

from workbench.engine.iteration import run_iteration
from workbench.engine.run import run
from workbench.engine.rundir import RunRefused
from workbench.engine.verify import verify_bundle

__all__ = [
    "RunRefused",
    "run",
    "run_iteration",
    "verify_bundle",
]
