"""Page support for the bounded-logits page: the checks its prose relies on, and planted faults they catch."""

import math

import numpy as np
import pytest

from attention_scaling.bounded_logits import capped_gradients, largest_weights, qknorm_initial_logits
from attention_scaling.site import bounded_logits as page, glue_fields
from attention_scaling.site.checks import PageCheckError


@pytest.fixture(scope="module")
def gradients():
    return capped_gradients((256, 4096), n_rows=300)


def test_cap_section_values(gradients):
    values = glue_fields(page.cap_section(gradients), "cap")
    assert values["cap_scalar_27b"] == 144 and values["cap_small_scalar"] == 256
    assert values["cap_half"] == pytest.approx(math.log(8191) / 2)
    assert values["cap_gap_at_50"] < 1e-30
    assert values["cap_measured_10_starved_low"] <= values["cap_measured_10_starved"]
    assert all(isinstance(value, (int, float)) for value in values.values())


def test_cap_section_catches_a_cap_that_lowers_the_gradient(gradients):
    # Plant a fault: the cap of 10 measured below no cap at all.
    medians = gradients.medians.copy()
    medians[2, -1, 0] = medians[0, -1, 0] / 10
    broken = type(gradients)(**{**gradients.__dict__, "medians": medians})
    with pytest.raises(PageCheckError, match="never lowers"):
        page.cap_section(broken)


def test_cap_section_catches_a_page_that_would_say_more_of_the_cap_than_was_measured(gradients):
    # Planted faults: the standard scale's median raised above the cap of 10's, and the cap of 10 leaving no row starved.
    reference = gradients.reference.copy()
    reference[-1] = gradients.medians[2, -1, 2] * 2
    with pytest.raises(PageCheckError, match="does no worse than the standard scale"):
        page.cap_section(type(gradients)(**{**gradients.__dict__, "reference": reference}))
    starved = gradients.starved.copy()
    starved[2, -1] = 0.0
    with pytest.raises(PageCheckError, match="still leaves a fraction of rows starved"):
        page.cap_section(type(gradients)(**{**gradients.__dict__, "starved": starved}))


def test_cap_section_catches_a_wrong_configuration(gradients, monkeypatch):
    monkeypatch.setitem(page.GEMMA2, "27B", (4608, 32, 144, 144))
    with pytest.raises(PageCheckError, match="d_model / heads"):
        page.cap_section(gradients)


def test_qknorm_section_catches_a_spread_off_the_theorem():
    logits = qknorm_initial_logits(12.32, (16, 256), n_rows=200)
    values = glue_fields(page.qknorm_section(logits), "qk")
    assert values["qk_g0_low"] == pytest.approx(math.log2(72 * 71))
    assert values["qk_bound_256"] == 16 and values["qk_std_se_16"] > 0
    std = logits.std.copy()
    std[0, 0] *= 1.2
    with pytest.raises(PageCheckError, match="g / sqrt"):
        page.qknorm_section(type(logits)(**{**logits.__dict__, "std": std}))


def test_dispersion_section_catches_a_weight_outside_the_bounds():
    weights = largest_weights((16, 4096), 2.0, n_rows=20)
    assert glue_fields(page.dispersion_section(weights), "dispersion")["dispersion_n_last"] == 4096
    largest = weights.largest.copy()
    largest[-1, 0] = 1.0
    with pytest.raises(PageCheckError, match="within the dispersion bounds"):
        page.dispersion_section(type(weights)(**{**weights.__dict__, "largest": largest}))


def test_the_exercise_checks_refuse_wrong_answers():
    # 1 / (1 + 4095 e^(-2 cap)) = 1/2 at cap = ln(4095) / 2.
    assert glue_fields(page.cap_answer(math.log(4095) / 2, 4096), "ex_cap")["ex_cap_half"] == math.log(4095) / 2
    with pytest.raises(PageCheckError, match="exactly 1/2"):
        page.cap_answer(math.log(4095), 4096)
    g0 = math.log2(512 * 511)
    page.qknorm_answer(g0, g0 / math.sqrt(128), 512, 128)
    with pytest.raises(PageCheckError, match="g0 / sqrt"):
        page.qknorm_answer(g0, g0 / 128, 512, 128)
    bound = math.exp(3) / 10**6
    page.dispersion_answer(bound, bound / 2, 10**6, 3.0)
    with pytest.raises(PageCheckError, match="under the bound"):
        page.dispersion_answer(bound, 2 * bound, 10**6, 3.0)
