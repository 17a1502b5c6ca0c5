"""The Trial (issue 25): one configuration of a spec, resolved once for its four users."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.criteria import kinds
from workbench.engine import run_iteration
from workbench.privacy import PrivacyContext
from workbench.privacy.noise import SeededNoise
from workbench.specification import Spec
from workbench.specification.derived import configuration_epsilon
from workbench.trial import bind


def test_a_trial_holds_what_the_spec_means_for_one_configuration(example_spec) -> None:
    config = next(example_spec.configurations())
    trial = bind(example_spec, config)
    assert trial.configuration == config
    assert trial.domain == example_spec.table_codec(config).domain
    assert trial.epsilon_generator == configuration_epsilon(example_spec, config.params)
    assert trial.plan.epsilon_total == pytest.approx(example_spec.epsilon_total)
    assert [c.id for c in trial.criteria] == [c.id for c in example_spec.criteria]
    for bound in trial.criteria:
        assert bound.kind is kinds.get(bound.criterion.kind)
        assert bound.epsilon == bound.criterion.epsilon
        assert list(bound.cliques) == bound.kind.marginals(example_spec, bound.criterion)
    assert trial.family == config.family and trial.guarantee.is_pure
    # a configuration given as its dict form binds to the same thing
    assert bind(example_spec, config.to_dict()).configuration.key == config.key


def test_an_unknown_alternative_fails_naming_the_column(example_spec) -> None:
    bad = next(example_spec.configurations()).to_dict()
    column = next(iter(bad["transforms"]))
    bad["transforms"][column] = "no-such-binning"
    with pytest.raises(KeyError, match=column):
        bind(example_spec, bad)


@pytest.fixture
def count_codecs(monkeypatch):
    """Call it after the bind: from then on, every table codec built is listed."""
    def start() -> list[str]:
        built: list[str] = []
        original = Spec.table_codec

        def counting(self, configuration):
            built.append(configuration.key)
            return original(self, configuration)

        monkeypatch.setattr(Spec, "table_codec", counting)
        return built

    return start


def test_one_iteration_builds_no_codec_after_the_bind(example_spec, count_codecs) -> None:
    """The codec used to be rebuilt up to five times per iteration; now the Trial holds it."""
    config = next(example_spec.configurations())
    trial = bind(example_spec, config)
    rng = np.random.default_rng(0)
    codes = np.stack([rng.integers(0, s, 400) for s in trial.domain.sizes], axis=1)
    built = count_codecs()
    ctx = PrivacyContext.simulation(0, noise=SeededNoise(0))
    run_iteration(trial, None, ctx, real_codes=codes)
    assert built == []


def test_a_floor_draw_builds_no_codec_after_the_bind(example_spec, proxy_slice,
                                                     count_codecs) -> None:
    """The floors' draws (ideal and trivial generator) sample and evaluate with the Trial's
    codec; each used to rebuild it twice per draw."""
    from workbench.dryrun.floors import floor_draw
    from workbench.evidence.prepare import prepare_proxy

    trial = bind(example_spec, next(example_spec.configurations()))
    codes = trial.encode(prepare_proxy(example_spec, proxy_slice.iloc[:3000]))
    built = count_codecs()
    for generator in ("bootstrap", "independent"):
        exact, thresholds = floor_draw(trial, codes, PrivacyContext.simulation(0),
                                       generator=generator)
        assert set(exact) == set(thresholds) == {c.id for c in trial.criteria}
    assert built == []
