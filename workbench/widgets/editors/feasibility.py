"""Feasibility: the public dry run inside the co-design app, and narrowing the search space.

It calls the same ``workbench.dryrun`` functions as ``workbench dryrun`` with the same
options (configuration choice, repetitions, seed, workers or a Dask scheduler, noise mode, and
the size ``n``: blank = ``schema.expected_n``, else the proxy's own size), so for the same seeds
the widget and the command line produce the same records. A range is rehearsed at both ends;
the low end counts for narrowing and the forecast, as in ``workbench dryrun --n LOW:HIGH``.
While it runs, a moving bar and the elapsed time show it is working before the first task
finishes (a task is one whole iteration, which can take minutes at a large n); the counted bar
advances as tasks finish. A result belongs to the design it ran on (:meth:`result_for`).
"""

from __future__ import annotations

import html
import threading
import time
from typing import Any

import ipywidgets as widgets

from workbench.dryrun import DryRunResult, make_executor, select_configurations
from workbench.dryrun.size import parse_n, spec_n
from workbench.dryrun.sized import SizedDryRun, dry_run_at
from workbench.specification import Spec
from workbench.widgets.editors.base import EditorBase, heading, hidden, note, png_image
from workbench.widgets.editors.plots import to_png
from workbench.widgets.model.lab import ProxyLab
from workbench.widgets.model.session import Change, Session

#: An indeterminate bar (CSS only, no script): shown while no task has finished yet.
WORKING_BAR = (
    "<style>@keyframes wb-slide{from{background-position:0 0}to{background-position:40px 0}}"
    "</style><div style='height:8px;width:360px;border-radius:4px;background:repeating-linear-"
    "gradient(45deg,#2f81f7 0 10px,#9ec5fe 10px 20px);background-size:40px 8px;"
    "animation:wb-slide 1s linear infinite'></div>")


def elapsed_words(done: int, total: int, seconds: float) -> str:
    """What the running line says.

    >>> elapsed_words(0, 4, 75.2)
    'running: 0 of 4 tasks finished, 1:15 elapsed (a task is one whole iteration on the proxy)'
    """
    minutes, secs = divmod(int(seconds), 60)
    return (f"running: {done} of {total} tasks finished, {minutes}:{secs:02d} elapsed"
            + (" (a task is one whole iteration on the proxy)" if done == 0 else ""))


class FeasibilityPanel(EditorBase):
    """Dry-run controls, progress, the sorted table, the heat map, narrowing and the forecast."""

    title = "Feasibility"

    def __init__(self, session: Session, lab: ProxyLab | None = None) -> None:
        super().__init__(session, lab)
        self.which = widgets.Dropdown(options=[("spec's list or full space", "auto"),
                                               ("full space", "all"),
                                               ("narrowed list", "narrowed")],
                                      value="auto", description="configurations",
                                      style={"description_width": "initial"},
                                      layout=widgets.Layout(width="360px"))
        self.limit = widgets.IntText(value=6, description="at most")
        self.repetitions = widgets.IntText(value=2, description="repetitions")
        self.seed = widgets.IntText(value=0, description="seed")
        self.workers = widgets.IntText(value=2, description="workers")
        self.scheduler = widgets.Text(value="", description="Dask",
                                      placeholder="tcp://host:port (optional)")
        self.noise = widgets.Dropdown(options=["opendp", "seeded"], value="opendp",
                                      description="noise")
        self.n = widgets.Text(value="", description="n", continuous_update=False,
                              placeholder="expected n, or N or LOW:HIGH",
                              layout=widgets.Layout(width="300px"))
        for box in (self.limit, self.repetitions, self.seed, self.workers, self.scheduler,
                    self.noise, self.n):
            box.style.description_width = "initial"  # full labels, never cut
        self.run_button = widgets.Button(description="Run dry run",
                                         layout=widgets.Layout(width="auto"))
        self.progress = widgets.IntProgress(value=0, min=0, max=1, description="tasks")
        self.working = widgets.HTML(WORKING_BAR, layout=widgets.Layout(display="none")
                                    ).add_class("wb-feasibility-working")
        self.running = widgets.HTML().add_class("wb-feasibility-running")
        self.status = widgets.HTML()
        self.table = widgets.HTML(layout=widgets.Layout(overflow="auto", max_width="100%")
                                  ).add_class("wb-feasibility-table")
        self.heatmap = png_image().add_class("wb-feasibility-heatmap")  # hidden until a run
        self.min_pass = widgets.FloatSlider(value=0.1, min=0.0, max=1.0, step=0.05,
                                            description="keep if P ≥", readout_format=".2f",
                                            style={"description_width": "initial"})
        self.forecast = widgets.HTML()
        self.narrow_button = widgets.Button(description="Narrow the spec",
                                            layout=widgets.Layout(width="auto"))
        self.sized: SizedDryRun | None = None
        self.ran_on: str | None = None  # SHA-256 of the design the result belongs to
        self.run_button.on_click(lambda _b: self.run())
        self.narrow_button.on_click(lambda _b: self.apply_narrowing())
        self.min_pass.observe(lambda _c: self.show_forecast(), names="value")
        self.widget = widgets.VBox([
            heading("Feasibility on the public proxy"),
            widgets.HTML(note("Each task runs the enclave's own iteration on the proxy, in a "
                              "public simulation context. Keep the configurations passing often "
                              "enough (the paper kept ≥ 10%), then read the forecast for "
                              "private selection.")),
            widgets.HBox([self.which, self.limit, self.repetitions, self.n]),
            widgets.HBox([self.seed, self.workers, self.noise]),
            widgets.HBox([self.scheduler, self.run_button]),
            widgets.HBox([self.progress, self.working]), self.running, self.status,
            self.table, self.heatmap,
            widgets.HBox([self.min_pass, self.narrow_button]), self.forecast,
        ])

    def refresh(self, change: Change | None = None) -> None:
        """A new spec makes earlier results stale (the cache keeps them for a re-run)."""
        if change is not None and self.result is not None:
            self.status.value = note("the design changed: run again (unchanged parts come "
                                     "from the cache)")

    def run(self) -> DryRunResult | None:
        """Run the dry run with the panel's options on the session's proxy."""
        spec = self.session.spec
        if spec is None or self.session.proxy is None:
            self.status.value = "<b>needs a valid design and the proxy</b>"
            return None
        which = None if self.which.value == "auto" else self.which.value
        try:
            n = parse_n(self.n.value) if self.n.value.strip() else spec_n(spec)
            configs = select_configurations(spec, which, self.limit.value or None,
                                            self.seed.value)
            executor = make_executor(self.workers.value, self.scheduler.value.strip() or None)
        except (ValueError, ImportError) as exc:
            self.status.value = f"<b>{html.escape(str(exc))}</b>"
            return None
        self.progress.max = max(1, len(configs) * self.repetitions.value)
        self.progress.value = 0
        self.status.value = f"running {len(configs)} configurations × {self.repetitions.value}"
        start, stop = time.monotonic(), threading.Event()

        def show() -> None:
            done = self.progress.value
            self.running.value = html.escape(elapsed_words(done, self.progress.max,
                                                           time.monotonic() - start))
            hidden(self.working, done > 0)

        def tick(done: int, total: int) -> None:
            self.progress.max, self.progress.value = max(1, total), done
            show()

        def beat() -> None:  # the elapsed time, every second, while tasks run
            while not stop.wait(1.0):
                show()

        show()
        threading.Thread(target=beat, daemon=True).start()
        try:
            self.sized = dry_run_at(spec, self.session.proxy, configs, n=n,
                                    repetitions=self.repetitions.value, seed=self.seed.value,
                                    executor=executor, cache=True, progress=tick,
                                    noise=self.noise.value)
        finally:
            stop.set()
            hidden(self.working, True)
            self.running.value = ""
        self.ran_on = spec.sha256
        self.show_result()
        return self.result

    def result_for(self, spec: Spec | None) -> DryRunResult | None:
        """The last result when it was made for exactly ``spec`` (else None: stale)."""
        if spec is None or self.ran_on != spec.sha256:
            return None
        return self.result

    @property
    def result(self) -> DryRunResult | None:
        """The last dry run at the low end of n: what the table, narrowing and forecast use."""
        return None if self.sized is None else self.sized.result

    def show_result(self) -> None:
        """The sorted table, the heat map and the forecast of the last result."""
        sized = self.sized
        if sized is None:
            return
        r, sizes = sized.result, sized.sizes
        self.status.value = html.escape(
            f"{len(r.records)} tasks at n = {' and '.join(f'{k:,}' for k in sizes)}: "
            f"{r.computed} computed, {r.cached} from the cache, {r.seconds:.1f} s"
            + ("; the table, narrowing and the forecast use the low end"
               if len(sizes) > 1 else ""))
        table = r.table.drop(columns=["key"], errors="ignore").to_html(
            float_format=lambda v: f"{v:.2f}", border=0)
        if len(sizes) > 1:  # P(all pass) at both ends of the expected range, side by side
            table = sized.pass_table().to_html(float_format=lambda v: f"{v:.2f}",
                                               border=0) + table
        self.table.value = (f"<div style='overflow-x:auto;max-width:100%;font-size:85%'>{table}"
                            "</div>")
        self.heatmap.value = to_png(r.heatmap(), tight=True)  # long labels are never clipped
        self.show_forecast()

    def show_forecast(self) -> dict[str, Any] | None:
        """Expected iterations and P(⊥) for the configurations kept at the slider's level."""
        r, spec = self.result, self.session.spec
        if r is None or spec is None:
            return None
        kept = r.narrow(self.min_pass.value)
        if not kept:
            self.forecast.value = "<b>no configuration passes that often</b>"
            return None
        f = r.selection_forecast(spec.selection.gamma, spec.selection.max_iterations,
                                 self.min_pass.value)
        self.forecast.value = html.escape(f"{len(kept)} configuration(s) kept; {f.summary()}")
        return {"kept": len(kept), "forecast": f}

    def apply_narrowing(self) -> bool:
        """Write the kept configurations into the draft's ``selection.configurations``."""
        if self.result is None or self.session.spec is None:
            return False
        try:
            document = self.result.narrowed_document(self.session.spec, self.min_pass.value)
        except ValueError as exc:
            self.status.value = f"<b>{html.escape(str(exc))}</b>"
            return False
        return self.session.apply("selection.configurations",
                                  document["selection"]["configurations"],
                                  label="narrow the search space")
