"""Page support of the temperatures section: the numbers the prose states, and the checks that guard them."""

import dataclasses
import math

import numpy as np
import pytest
from matplotlib.figure import Figure

from attention_scaling.long_sequences import needle_weight
from attention_scaling.proofs import entropy_temperature, length_temperatures
from attention_scaling.site import glue_fields, temperatures as page
from attention_scaling.site.checks import PageCheckError
from attention_scaling.site.plots import draw_length_multipliers
from attention_scaling.temperatures import su_multiplier, temperature_sweep


@pytest.fixture(scope="module")
def sweep():
    # The page's lengths with fewer rows: the checks must hold at this size too.
    return temperature_sweep((512, 4096, 32768, 2**20), budget=2**17, min_trials=2)


def test_section_values_hold_every_key_of_the_page(sweep):
    values = page.section_values(length_temperatures(), entropy_temperature(), sweep)
    assert {"thm-length-temperatures", "thm-entropy-temperature", "temp_su_needle_threshold", "temp_freeze_ssmax",
            "temp_h_sqrt_log_long", "temp_pmax_yarn_high", "temp_m_llama4_1048576"} <= set(values)
    assert values["temp_su_needle_threshold"] == pytest.approx(math.log(512))
    assert values["temp_m_llama4_131072"] == pytest.approx(1 + 0.1 * math.log(17))


def test_freezing_lengths_come_from_the_theorem():
    lengths = page.freezing_lengths(entropy_temperature())
    assert lengths.chiang == pytest.approx(math.exp(2))
    assert lengths.ssmax == pytest.approx(math.exp(2 / 0.43**2))
    assert lengths.log10_su == pytest.approx(2 * math.log(512) ** 2 / math.log(10))


def test_a_fixed_scale_that_does_not_spread_is_caught(sweep):
    # Planted fault: the fixed scale's H / ln n reversed, as if the weights concentrated with n.
    fraction = sweep.entropy_fraction.copy()
    fraction[sweep.index("fixed")] = fraction[sweep.index("fixed")][::-1]
    with pytest.raises(PageCheckError, match="rises with n"):
        page.measured_temperatures(dataclasses.replace(sweep, entropy_fraction=fraction))


def test_a_sqrt_log_rule_that_drifts_is_caught(sweep, monkeypatch):
    # Planted fault: the sqrt(ln n) rule's entropies drift by 0.01 across the range.
    fraction = sweep.entropy_fraction.copy()
    row = sweep.index("sqrt-log")
    fraction[row] += np.linspace(0, 0.008, fraction.shape[1])
    with pytest.raises(PageCheckError, match="sqrt"):
        page.measured_temperatures(dataclasses.replace(sweep, entropy_fraction=fraction))


def test_a_decreasing_multiplier_is_caught(monkeypatch):
    # Planted fault: Su's multiplier inverted (1 / log_512 n) falls with n.
    monkeypatch.setattr(page, "multiplier", lambda method, n: 1 / su_multiplier(n) if method == "su" else np.ones(len(n)))
    with pytest.raises(PageCheckError, match="non-decreasing"):
        page.multipliers()


def test_the_exercise_answer_is_checked():
    keys = 10**6
    weights = {m: float(needle_weight(keys, m, su_multiplier(keys))) for m in (5.0, 8.0)}
    values = glue_fields(page.needle_answer(np.log(512), keys, weights), "ex_su")
    assert values["ex_su_weight_8"] > 0.9 > 0.5 > values["ex_su_weight_5"]
    with pytest.raises(PageCheckError, match="ln 512"):
        page.needle_answer(np.log(1024), keys, weights)
    with pytest.raises(PageCheckError, match="explicit scores"):
        page.needle_answer(np.log(512), keys, {5.0: weights[5.0], 8.0: weights[8.0] * 0.99})


def test_the_figure_draws_two_labelled_panels(sweep):
    axes = Figure().subplots(1, 2)
    artists = draw_length_multipliers(axes, sweep)
    assert artists and all(ax.get_xscale() == "log" for ax in axes)
    assert len(axes[0].get_lines()) == len(sweep.methods) and axes[0].get_legend() is not None
    with pytest.raises(ValueError, match="2 Axes"):
        draw_length_multipliers(axes[0], sweep)
    with pytest.raises(TypeError, match="TemperatureSweep"):
        draw_length_multipliers(axes, None)


def test_a_different_order_of_the_largest_weights_is_caught(sweep):
    # Planted fault: the sqrt(ln n) rule's largest weight raised above YaRN's at the longest length.
    top = sweep.max_weight.copy()
    top[sweep.index("sqrt-log"), -1] = 2 * top[sweep.index("yarn"), -1]
    low = sweep.max_weight_low.copy()
    low[sweep.index("sqrt-log"), -1] = top[sweep.index("sqrt-log"), -1]
    with pytest.raises(PageCheckError, match="smallest and YaRN the largest"):
        page.measured_temperatures(dataclasses.replace(sweep, max_weight=top, max_weight_low=low))
