"""Rank collapse and the Lipschitz measurements: the residual, the stacks, the fits, the gradients, the Jacobians."""

import math

import numpy as np
import pytest

from attention_scaling import depth
from attention_scaling.depth import (
    attention_jacobian_norm,
    collapse_fits,
    contraction_ratios,
    dot_product_self_attention,
    l2_self_attention,
    lipschitz_growth_data,
    query_gradient_norm,
    rank_collapse_data,
    relative_residual,
)


def test_the_relative_residual_is_zero_for_equal_tokens_and_scale_free():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 3))
    assert relative_residual(np.tile(x[0], (5, 1))) == pytest.approx(0.0, abs=1e-15)
    assert relative_residual(7.5 * x) == pytest.approx(relative_residual(x))
    # The mean token is the best rank-1 matrix of identical rows: any other row does worse.
    other = np.linalg.norm(x - (x.mean(axis=0) + 0.1)) / np.linalg.norm(x)
    assert relative_residual(x) < other
    with pytest.raises(ValueError, match="shape"):
        relative_residual(np.ones(3))
    with pytest.raises(ValueError, match="zero matrix"):
        relative_residual(np.zeros((2, 2)))


@pytest.fixture(scope="module")
def stack():
    return rank_collapse_data(depth=6, n_tokens=8, d=16, n_seeds=6)


def test_the_stack_is_seeded_and_shared(stack):
    again = rank_collapse_data(depth=6, n_tokens=8, d=16, n_seeds=6)
    for key, values in stack.residual.items():
        assert values.shape == (6, 7)
        np.testing.assert_array_equal(values, again.residual[key])
    # Every policy and architecture starts from the same tokens.
    firsts = {tuple(values[:, 0]) for values in stack.residual.values()}
    assert len(firsts) == 1


def test_pure_attention_collapses_faster_with_a_smaller_scale_and_skips_slow_it(stack):
    medians = {key: stack.quantiles(*key)[1] for key in stack.residual}
    assert medians[("linear", False)][2] < medians[("sqrt", False)][2] < medians[("none", False)][2]
    for policy in depth.POLICIES:
        assert medians[(policy, True)][-1] > medians[(policy, False)][-1]


def test_the_stack_refuses_bad_sizes():
    with pytest.raises(ValueError, match="n_tokens"):
        rank_collapse_data(n_tokens=1)
    with pytest.raises(ValueError, match="depth"):
        rank_collapse_data(depth=0)


def test_the_fits_tell_the_two_decays_apart():
    layers = np.arange(8)
    double = collapse_fits(np.exp(-0.05 * 3.0**layers), first=0)
    assert double.doubly_exponential and double.base == pytest.approx(3.0)
    single = collapse_fits(np.exp(-0.7 * (layers + 1)))
    assert not single.doubly_exponential and single.rms_exponential == pytest.approx(0.0, abs=1e-12)
    # Points at the float64 floor are dropped; too few left is an error.
    assert collapse_fits(np.r_[0.9, 0.5, 0.1, 1e-3, 2e-16, 2e-16]).points == 3
    with pytest.raises(ValueError, match="at least 3"):
        collapse_fits(np.r_[0.9, 0.5, 2e-16, 2e-16])


def test_one_layer_never_beats_the_proved_factor():
    rng = np.random.default_rng(5)
    for scale in (1.0, 1 / 8, 1 / 64):
        ratio, factor = contraction_ratios(rng, n_heads=32, scale=scale)
        assert np.all(ratio <= factor) and np.all(factor < 1 + 1e-15)


def _loss(x, w_q, w_k, w_v, g, scale):
    logits = scale * (x @ w_q) @ (x @ w_k).T
    weights = np.exp(logits - logits.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return float(np.sum(g * (weights @ x @ w_v)))


def test_the_query_gradient_matches_finite_differences_and_vanishes_for_equal_tokens():
    rng = np.random.default_rng(3)
    n, d, scale = 5, 4, 0.5
    x, g = rng.standard_normal((n, d)), rng.standard_normal((n, d))
    w_q, w_k, w_v = rng.standard_normal((3, d, d)) / 2
    h = 1e-6
    numeric = np.zeros((d, d))
    for a in range(d):
        for b in range(d):
            bump = np.zeros((d, d))
            bump[a, b] = h
            numeric[a, b] = (_loss(x, w_q + bump, w_k, w_v, g, scale) - _loss(x, w_q - bump, w_k, w_v, g, scale)) / (2 * h)
    assert query_gradient_norm(x, w_q, w_k, w_v, g, scale) == pytest.approx(np.linalg.norm(numeric), rel=1e-6)
    assert query_gradient_norm(np.tile(x[0], (n, 1)), w_q, w_k, w_v, g, scale) == 0.0


def test_the_jacobian_norm_is_exact_for_a_linear_map():
    # The helper evaluates f on a batch of perturbed inputs, shape (n d, n, d): an entrywise scaling works on both.
    gains = np.array([[1.0, 2.0], [5.0, 0.5]])
    assert attention_jacobian_norm(lambda x: x * gains, np.ones((2, 2))) == pytest.approx(5.0)


@pytest.mark.parametrize("t", [0.5, 2.0, 6.0])
def test_the_two_token_derivative_is_the_theorem_s(t):
    # The (1, 1) entry of the Jacobian at x = (0, t), d = 1: 1/2 + t^2/4, as thm-dot-product-not-lipschitz says.
    h = 1e-6
    up = dot_product_self_attention(np.array([[h], [t]]))[0, 0]
    down = dot_product_self_attention(np.array([[-h], [t]]))[0, 0]
    assert (up - down) / (2 * h) == pytest.approx(0.5 + t**2 / 4, rel=1e-7)


def test_l2_attention_uses_squared_distances():
    x = np.array([[0.0, 0.0], [3.0, 4.0]])
    weight = 1 / (1 + math.exp(-25 / math.sqrt(2)))
    np.testing.assert_allclose(l2_self_attention(x)[0], (1 - weight) * x[1])


def test_the_growth_data_lies_on_or_above_the_bound_and_l2_stays_small():
    data = lipschitz_growth_data(t=(0.5, 4.0, 16.0), n_seeds=4)
    assert np.all(data.dot_origin >= data.bound * (1 - 1e-6))
    assert np.all(data.l2_origin < 3.0)
    assert np.median(data.dot_origin[:, -1]) > 50 * np.median(data.l2_origin[:, -1])
