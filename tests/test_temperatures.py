"""The length multipliers and the Gaussian-logit sweep of attention_scaling.temperatures."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attention_scaling.long_sequences import needle_weight
from attention_scaling.temperatures import (
    METHODS,
    llama4_multiplier,
    log_length_multiplier,
    multiplier,
    qwen_logn_multiplier,
    sqrt_log_multiplier,
    su_multiplier,
    temperature_sweep,
    yarn_multiplier,
    yarn_scale,
)


def test_each_multiplier_is_one_at_its_reference_length():
    assert su_multiplier(512) == pytest.approx(1.0)
    assert log_length_multiplier(4096) == pytest.approx(1.0)
    assert sqrt_log_multiplier(4096) == pytest.approx(1.0)
    assert yarn_multiplier([1, 4096]).tolist() == [1.0, 1.0]
    assert qwen_logn_multiplier([2, 4096]).tolist() == [1.0, 1.0]
    assert llama4_multiplier([1, 8191]).tolist() == [1.0, 1.0]


def test_the_published_formulas_at_known_points():
    # YaRN's code: 0.1 * math.log(scale) + 1.0; the logits get its square.
    assert yarn_scale(8) == pytest.approx(0.1 * math.log(8) + 1)
    assert yarn_multiplier(8 * 4096) == pytest.approx((0.1 * math.log(8) + 1) ** 2)
    # Qwen: math.log(i, seq_length) beyond seq_length.
    assert qwen_logn_multiplier(4096**2) == pytest.approx(2.0)
    # Llama 4: 1 + 0.1 ln(floor((pos + 1) / 8192) + 1), pos = n - 1.
    assert llama4_multiplier(3 * 8192) == pytest.approx(1 + 0.1 * math.log(4))
    assert su_multiplier(512**2) == pytest.approx(2.0)


@given(st.integers(min_value=2, max_value=2**40), st.integers(min_value=2, max_value=2**40))
def test_every_multiplier_is_non_decreasing_in_n(a, b):
    low, high = sorted((a, b))
    for method in METHODS:
        assert multiplier(method, high) >= multiplier(method, low) - 1e-12, method


def test_su_and_log_length_are_one_curve_up_to_a_constant():
    n = np.geomspace(2, 2**30, 50).round()
    ratio = su_multiplier(n) / log_length_multiplier(n)
    assert np.allclose(ratio, math.log(4096) / math.log(512))


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="method must be one of"):
        multiplier("cosine", 10)
    with pytest.raises(ValueError, match="extension"):
        yarn_scale(0.5)
    with pytest.raises(ValueError, match="n must hold integers"):
        su_multiplier(0)
    with pytest.raises(TypeError, match="reference"):
        su_multiplier(10, reference=512.0)
    with pytest.raises(ValueError, match="spread"):
        temperature_sweep((512,), spread=0.0)
    with pytest.raises(ValueError, match="n_values"):
        temperature_sweep((1,))


def test_the_sweep_is_seeded_and_shares_its_draws():
    first = temperature_sweep((512, 4096), ("fixed", "sqrt-log"), budget=2**14)
    second = temperature_sweep((512, 4096), ("fixed", "sqrt-log"), budget=2**14)
    assert np.array_equal(first.entropy_fraction, second.entropy_fraction)
    # At n = 4096 the sqrt-log multiplier is 1: the same draws give the same rows as the fixed scale.
    assert first.entropy_fraction[1, 1] == first.entropy_fraction[0, 1]
    assert first.trials.tolist() == [32, 8]


def test_the_sweep_agrees_with_the_plug_in_value_and_with_softmax():
    sweep = temperature_sweep((512, 8192), ("fixed", "su", "yarn"), budget=2**17)
    assert np.max(np.abs(sweep.entropy_fraction - sweep.plug_in_fraction())) < 0.01
    assert np.all(sweep.max_weight_low <= sweep.max_weight) and np.all(sweep.max_weight <= sweep.max_weight_high)
    # Recompute one cell from the same generator: the first row of n = 512 under Su's multiplier.
    x = np.random.default_rng(sweep.seed).standard_normal((int(sweep.trials[0]), 512))
    logits = su_multiplier(512) * x
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    entropy = -(p * np.log(p)).sum(axis=1) / math.log(512)
    assert sweep.entropy_fraction[1, 0] == pytest.approx(entropy.mean(), rel=1e-10)


def test_under_su_a_needle_above_ln_512_gains_and_one_below_loses():
    n = np.array([2**10, 2**16, 2**22])
    above = needle_weight(n, 7.0, su_multiplier(n))
    below = needle_weight(n, 5.5, su_multiplier(n))
    assert np.all(np.diff(above) > 0) and np.all(np.diff(below) < 0)
