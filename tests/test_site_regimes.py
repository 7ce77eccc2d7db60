"""Page support of docs/regimes.md: the numbers the prose quotes, and the checks that guard them."""

import dataclasses

import numpy as np
import pytest

from attention_scaling import regimes, simulate
from attention_scaling.site import glue_fields, regimes as page_support
from attention_scaling.site.checks import PageCheckError


@pytest.fixture(scope="module")
def page():
    """The page's data, computed once with the page's (default) arguments."""
    return {
        "variance": simulate.variance_vs_dk_data(),
        "scores": simulate.logit_histograms_data(),
        "regimes": regimes.three_regimes_data(),
        "patterns": regimes.temperature_patterns_data(),
    }


def within(variance):
    return np.abs(variance.variance - variance.d_k) <= 3 * variance.variance_se


def test_variance_numbers(page):
    numbers = page_support.variance_numbers(page["variance"], within(page["variance"]))
    assert glue_fields(numbers, "variance") == {"variance_sizes": 13, "variance_within": 13, "variance_n_samples": 4000}


def test_variance_check_fails_when_the_simulation_is_off(monkeypatch):
    # Planted fault: components with variance 1.1 instead of 1 make Var[q.k] = 1.21 d_k.
    draw = simulate.dot_product_samples
    monkeypatch.setattr(simulate, "dot_product_samples", lambda *args, **kwargs: 1.1 * draw(*args, **kwargs))
    variance = simulate.variance_vs_dk_data(n_samples=4000)
    with pytest.raises(PageCheckError, match="regimes.md, section regimes-variance: check failed: the proved variance d_k lies within 3"):
        page_support.variance_numbers(variance, within(variance))


def test_variance_numbers_needs_one_flag_per_dimension(page):
    with pytest.raises(ValueError, match=r"within must have one entry per head dimension, shape \(13,\); got shape \(2,\)"):
        page_support.variance_numbers(page["variance"], [True, True])


def test_histogram_numbers(page):
    values = glue_fields(page_support.histogram_numbers(page["scores"]), "hist")
    assert values["hist_d_k"] == 64
    assert values["hist_unscaled_range"] == pytest.approx(71.22, abs=0.01)
    assert values["hist_scaled_range"] == pytest.approx(values["hist_unscaled_range"] / 8)


def test_histogram_check_fails_when_the_scaled_scores_are_not_the_same_draws(page):
    scores = page["scores"]
    wrong = dataclasses.replace(scores, scaled=scores.unscaled / scores.d_k)  # divided by d_k, not its root
    with pytest.raises(PageCheckError, match="scaled scores are the unscaled ones divided by sqrt"):
        page_support.histogram_numbers(wrong)


def test_regimes_numbers(page):
    numbers = page_support.regimes_numbers(page["regimes"])
    values = glue_fields(numbers, "regimes")
    assert (values["regimes_n_keys"], values["regimes_n_queries"], values["regimes_widest"]) == (16, 128, 4096)
    expected = {"none": (0.979, 0.021, 1.07, 0.034), "sqrt": (0.239, 0.857, 10.88, 0.304),
                "linear": (0.064, 1.000, 16.00, 0.242)}
    for policy, (largest, entropy, keys, grad) in expected.items():
        assert values[f"regimes_rows_{policy}_max_weight"] == pytest.approx(largest, abs=5e-4)
        assert values[f"regimes_rows_{policy}_entropy_fraction"] == pytest.approx(entropy, abs=5e-4)
        assert values[f"regimes_rows_{policy}_effective_keys"] == pytest.approx(keys, abs=5e-3)
        assert values[f"regimes_rows_{policy}_jacobian_norm"] == pytest.approx(grad, abs=5e-4)
    assert (values["regimes_sqrt_max_low"], values["regimes_sqrt_max_high"]) == pytest.approx((0.207, 0.256), abs=5e-4)
    # The gain at the raw score is c times the gain at the logits, with its standard error.
    for policy in expected:
        c = simulate.scale_for(policy, 4096)
        score, grad = f"regimes_rows_{policy}_score_gain", f"regimes_rows_{policy}_jacobian_norm"
        assert values[score] == pytest.approx(c * values[grad], rel=1e-12)
        assert values[f"{score}_se"] == pytest.approx(c * values[f"{grad}_se"], rel=1e-12)
    none, sqrt = values["regimes_rows_none_score_gain"], values["regimes_rows_sqrt_score_gain"]
    assert none > sqrt + 3 * values["regimes_rows_none_score_gain_se"]
    assert len(values) == 3 + 21 + 2


def test_regimes_check_fails_when_the_raw_score_gain_loses_its_factor_c(page, monkeypatch):
    # Planted fault: c taken as 1 for every policy, so the gain at the raw score is the gain at the
    # logits and the unscaled one is no longer the larger.
    monkeypatch.setattr(page_support, "scale_for", lambda policy, d_k: 1.0)
    with pytest.raises(PageCheckError, match="mean gain at the raw score is above"):
        page_support.regimes_numbers(page["regimes"])


@pytest.mark.parametrize(
    "fault, match",
    [
        ({"none": "sqrt"}, "without scaling, attention at the widest d_k rests on about one key"),
        ({"linear": "sqrt"}, "divided by d_k, attention at the widest d_k spreads over nearly all keys"),
        ({"sqrt": "none"}, "divided by sqrt\\(d_k\\), the largest weight stays between uniform and unscaled"),
    ],
)
def test_regimes_checks_fail_when_a_policy_behaves_like_another(page, fault, match):
    (policy, impostor), = fault.items()
    data = page["regimes"]
    wrong = dataclasses.replace(data, **{policy: getattr(data, impostor)})
    with pytest.raises(PageCheckError, match=match):
        page_support.regimes_numbers(wrong)


def test_temperature_numbers(page):
    values = glue_fields(page_support.temperature_numbers(page["patterns"]), "patterns")
    assert values["patterns_d_k"] == 64
    assert [values[f"patterns_{name}_max"] for name in ("half", "one", "two")] == pytest.approx(
        [0.573, 0.345, 0.210], abs=5e-4)


def test_temperature_check_fails_when_the_temperatures_are_swapped(page):
    patterns = page["patterns"]
    wrong = dataclasses.replace(patterns, weights=patterns.weights[::-1])
    with pytest.raises(PageCheckError, match="the mean largest weight falls as the temperature rises"):
        page_support.temperature_numbers(wrong)
