"""The preview configuration: which point of the search space the proxy readouts are computed for.

It is a public co-design choice, not part of the spec: a transformation alternative per
column, one generator hyperparameter set, a min_count and the seed of the simulation run.
"""

from __future__ import annotations

import html
from collections.abc import Callable

import ipywidgets as widgets

from workbench.widgets.editors.base import note
from workbench.widgets.model.lab import ProxyLab, digest
from workbench.widgets.model.readouts import samples_label
from workbench.widgets.model.sampling import PreviewError
from workbench.widgets.model.session import Change, Session


def _hyper_label(params: dict) -> str:
    """``epsilon_split=0.1, theta=2``."""
    return ", ".join(f"{k}={v}" for k, v in params.items()) or "(none)"


class PreviewPanel:
    """Dropdowns for the preview configuration; tells listeners when it changes."""

    def __init__(self, session: Session, lab: ProxyLab) -> None:
        self.session = session
        self.lab = lab
        self.alternatives: dict[str, widgets.Dropdown] = {}
        self.hyperparameters = widgets.Dropdown(description="generator",
                                                layout=widgets.Layout(width="420px"))
        self.min_count = widgets.Dropdown(description="min_count",
                                          layout=widgets.Layout(width="200px"))
        self.seed = widgets.IntText(value=lab.preview.seed, description="seed",
                                    layout=widgets.Layout(width="160px")).add_class("wb-seed")
        self.samples = widgets.BoundedIntText(
            value=lab.preview.samples, min=1, max=20, description="samples",
            layout=widgets.Layout(width="170px")).add_class("wb-samples")
        self.status = widgets.HTML()
        self.alt_box = widgets.HBox(layout=widgets.Layout(flex_flow="row wrap"))
        self._listeners: list[Callable[[], None]] = []
        self._structure = ""
        self._updating = False
        for w in (self.hyperparameters, self.min_count, self.seed, self.samples):
            w.observe(lambda _c: self._changed(), names="value")
        self.widget = widgets.VBox([
            widgets.HTML(note("Proxy readouts are computed for this configuration (R = cleaned "
                              "proxy, S = quick DP samples in simulation mode; the seed fixes "
                              "their records and their noise, the readouts average them).")),
            self.alt_box,
            widgets.HBox([self.hyperparameters, self.min_count, self.seed, self.samples],
                         layout=widgets.Layout(flex_flow="row wrap")),
            self.status,
        ])
        session.observe(self._on_session)
        self._rebuild()

    def on_change(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` whenever the preview configuration changes."""
        self._listeners.append(callback)

    def _on_session(self, change: Change) -> None:
        """Offer the alternatives and hyperparameters of the last valid design."""
        if self.session.spec is None:
            return
        spec = self.session.spec
        structure = digest([[a.name for a in t.alternatives] for t in spec.transformations],
                           list(spec.generator.hyperparameter_sets()), list(spec.min_counts),
                           spec.generator.family)
        if structure != self._structure:
            self._rebuild()
        elif change.valid:
            self.describe()  # e.g. ε_gen changed: the sample the readouts use changed too

    def _rebuild(self) -> None:
        """Recreate the dropdowns from the last valid design, keeping current choices."""
        spec = self.session.spec
        if spec is None:
            return
        self._structure = digest([[a.name for a in t.alternatives] for t in spec.transformations],
                                 list(spec.generator.hyperparameter_sets()),
                                 list(spec.min_counts), spec.generator.family)
        config = self.lab.configuration(spec)
        self._updating = True
        try:
            self.alternatives = {}
            for t in spec.transformations:
                dd = widgets.Dropdown(options=[a.name for a in t.alternatives],
                                      value=config.transform_of(t.column), description=t.column,
                                      layout=widgets.Layout(width="330px"),
                                      style={"description_width": "110px"})
                dd.observe(lambda _c: self._changed(), names="value")
                self.alternatives[t.column] = dd
            self.alt_box.children = list(self.alternatives.values())
            hyper = list(spec.generator.hyperparameter_sets()) or [{}]
            self.hyperparameters.options = [(_hyper_label(h), i) for i, h in enumerate(hyper)]
            self.hyperparameters.value = min(max(self.lab.preview.hyper_index, 0), len(hyper) - 1)
            self.min_count.options = list(spec.min_counts)
            self.min_count.value = config.min_count
        finally:
            self._updating = False
        self._changed()

    def _changed(self) -> None:
        """Copy the choices into the lab and notify listeners."""
        if self._updating:
            return
        preview = self.lab.preview
        preview.transforms = {c: dd.value for c, dd in self.alternatives.items()}
        preview.hyper_index = int(self.hyperparameters.value or 0)
        preview.min_count = self.min_count.value
        preview.seed = int(self.seed.value)
        preview.samples = int(self.samples.value)
        for callback in list(self._listeners):
            callback()
        self.describe()

    def describe(self) -> None:
        """One line on the sample the readouts use."""
        spec = self.session.spec
        if spec is None:
            self.status.value = ""
            return
        config = self.lab.configuration(spec)
        try:
            sample = self.lab.sample(spec, config)
        except PreviewError as exc:
            self.status.value = f'<span style="color:#b00020">{html.escape(str(exc))}</span>'
            return
        extra = f" — {sample.note}" if sample.note else ""
        n = self.lab.sample_count
        self.status.value = note(
            f"S: {config.family}({_hyper_label(config.params)}), ε_gen = "
            f"{sample.epsilon:g}, n = {sample.codes.shape[0]:,}; readouts "
            f"{samples_label(n)} (seed {self.lab.preview.seed}){extra}"
        )
