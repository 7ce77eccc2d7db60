"""Soft-capping, QK-norm's initial scale and the dispersion bounds: values, errors and measurements."""

import math

import numpy as np
import pytest

from attention_scaling import softmax, softmax_jacobian
from attention_scaling.bounded_logits import (
    capped_gradients,
    largest_weights,
    qknorm_initial_logits,
    qknorm_initial_scale,
    soft_cap,
    weight_bounds,
)
from attention_scaling.gradients import softmax_jacobian_norm


def test_soft_cap_is_near_identity_for_small_logits_and_bounded_for_large():
    z = np.array([-1e6, -50.0, -0.01, 0.0, 0.01, 50.0, 1e6])
    capped = soft_cap(z, 50.0)
    assert np.all(np.abs(capped) <= 50.0) and np.all(np.diff(capped) > 0)
    assert capped[2:5] == pytest.approx(z[2:5], rel=1e-4)


@pytest.mark.parametrize("cap", [0.0, -1.0, math.inf, math.nan])
def test_soft_cap_refuses_a_cap_that_is_not_positive_and_finite(cap):
    with pytest.raises(ValueError):
        soft_cap([1.0], cap)


def test_the_chain_rule_factor_matches_finite_differences():
    rng = np.random.default_rng(0)
    s, cap, h = 30.0 * rng.standard_normal(6), 20.0, 1e-6
    columns = [(softmax(soft_cap(s + h * e, cap)) - softmax(soft_cap(s - h * e, cap))) / (2 * h) for e in np.eye(6)]
    numerical = np.linalg.norm(np.array(columns))
    assert softmax_jacobian_norm(soft_cap(s, cap), 1 - np.tanh(s / cap) ** 2) == pytest.approx(numerical, rel=1e-5)
    # Without the factor the norm is that of the softmax Jacobian alone: a different number.
    plain = np.linalg.norm(softmax_jacobian(softmax(soft_cap(s, cap))))
    assert softmax_jacobian_norm(soft_cap(s, cap)) == pytest.approx(plain, rel=1e-9)


def test_weight_bounds_hold_for_random_rows():
    rng = np.random.default_rng(1)
    for n, delta in ((2, 0.5), (16, 3.0), (1000, 6.0)):
        weights = softmax(delta * rng.random((200, n)))
        low, high = weight_bounds(n, delta)
        assert weights.min() >= low and weights.max() <= high


@pytest.mark.parametrize("args", [(0, 1.0), (4, -1.0), (4, math.inf)])
def test_weight_bounds_refuse_bad_input(args):
    with pytest.raises(ValueError):
        weight_bounds(*args)


def test_qknorm_initial_scale():
    assert qknorm_initial_scale(2) == pytest.approx(1.0)
    assert qknorm_initial_scale([72, 79]) == pytest.approx([math.log2(5112), math.log2(6162)])
    for bad in (1, 2.5, [3, 0]):
        with pytest.raises(ValueError):
            qknorm_initial_scale(bad)


def test_capped_gradients_are_seeded_and_ordered():
    first = capped_gradients((64, 4096), n_rows=300)
    second = capped_gradients((64, 4096), n_rows=300)
    assert np.array_equal(first.medians, second.medians)
    medians = first.medians[:, -1, 0]  # no cap, 50, 10 at d_k = 4096
    assert medians[0] < medians[1] < medians[2]
    low, high = first.medians[..., 1], first.medians[..., 2]
    assert np.all((low <= first.medians[..., 0]) & (first.medians[..., 0] <= high))


def test_qknorm_spread_matches_g_over_sqrt_d():
    result = qknorm_initial_logits(12.0, (16, 256), n_rows=400)
    assert result.std[:, 0] == pytest.approx(12.0 / np.sqrt([16, 256]), rel=0.05)
    assert result.entropy[0, 0] < result.entropy[1, 0]  # wider heads, flatter rows


def test_largest_weights_fall_within_the_bounds():
    result = largest_weights((16, 1024), 4.0, n_rows=50)
    assert np.all(result.bounds[:, 0] <= result.largest[:, 0])
    assert np.all(result.largest[:, 0] <= result.bounds[:, 1])
    assert result.largest[1, 0] < result.largest[0, 0]
