"""The run's progress bar: iterations counted, the current step named, nothing about the data."""

from __future__ import annotations


class RunProgress:
    """A tqdm bar over iterations whose postfix names the current step (or nothing if quiet)."""

    def __init__(self, quiet: bool, total: int | None) -> None:
        self.bar = None
        if not quiet:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="iteration", desc="private selection",
                            dynamic_ncols=True)

    def step(self, name: str) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(name)

    def iteration_done(self) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
