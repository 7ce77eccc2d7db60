"""Attention scores, weights and outputs: examples, properties, bad input."""

import numpy as np
import pytest
import scipy.special
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_scaling import attention_scores, attention_weights, layer_norm, scaled_dot_product_attention

rng = np.random.default_rng(20260101)


def random_qkv(batch=(2,), n_q=3, n_k=5, d_k=4, d_v=2):
    return (
        rng.standard_normal((*batch, n_q, d_k)),
        rng.standard_normal((*batch, n_k, d_k)),
        rng.standard_normal((*batch, n_k, d_v)),
    )


def reference_attention(q, k, v, scale, mask=None):
    """A loop over queries with scipy's softmax: independent of the package."""
    out = np.empty(q.shape[:-1] + v.shape[-1:])
    for index in np.ndindex(q.shape[:-1]):
        scores = k[index[:-1]] @ q[index] * scale
        if mask is not None:
            scores = np.where(mask[index], scores, -np.inf)
        out[index] = scipy.special.softmax(scores) @ v[index[:-1]]
    return out


# -- Examples ---------------------------------------------------------------------


def test_default_scale_is_one_over_sqrt_d_k():
    q, k, _ = random_qkv(d_k=9)
    np.testing.assert_allclose(attention_scores(q, k), attention_scores(q, k, scale=1.0) / 3.0)


def test_shapes():
    q, k, v = random_qkv(batch=(2, 3), n_q=4, n_k=6, d_k=5, d_v=7)
    assert attention_scores(q, k).shape == (2, 3, 4, 6)
    assert attention_weights(q, k).shape == (2, 3, 4, 6)
    assert scaled_dot_product_attention(q, k, v).shape == (2, 3, 4, 7)


def test_leading_axes_broadcast():
    q = rng.standard_normal((2, 1, 3, 4))
    k = rng.standard_normal((5, 6, 4))
    v = rng.standard_normal((5, 6, 2))
    out = scaled_dot_product_attention(q, k, v)
    assert out.shape == (2, 5, 3, 2)
    np.testing.assert_allclose(out[1, 4], scaled_dot_product_attention(q[1, 0], k[4], v[4]))


@pytest.mark.parametrize("scale", [None, 1.0, 0.01])
def test_matches_reference_without_mask(scale):
    q, k, v = random_qkv()
    expected_scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    np.testing.assert_allclose(
        scaled_dot_product_attention(q, k, v, scale=scale), reference_attention(q, k, v, expected_scale)
    )


def test_matches_reference_with_causal_mask():
    q, k, v = random_qkv(n_q=5, n_k=5)
    causal = np.tril(np.ones((5, 5), dtype=bool))
    full_mask = np.broadcast_to(causal, (2, 5, 5))
    np.testing.assert_allclose(
        scaled_dot_product_attention(q, k, v, mask=causal),
        reference_attention(q, k, v, 0.5, mask=full_mask),
    )


def test_masked_keys_get_exactly_zero_weight():
    q, k, _ = random_qkv()
    mask = np.array([True, False, True, False, True])
    weights = attention_weights(q, k, mask=mask)
    assert np.all(weights[..., ~mask] == 0.0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0)


def test_integer_inputs_become_float64():
    out = scaled_dot_product_attention([[1, 0]], [[1, 0], [0, 1]], [[2], [4]])
    assert out.dtype == np.float64


# -- Properties -------------------------------------------------------------------

finite = st.floats(-10, 10)


@given(
    arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 6)), elements=finite),
    arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 3)), elements=finite),
    st.integers(1, 6),
)
def test_identical_keys_return_the_mean_of_the_values(q, v, seed_key):
    d_k = q.shape[-1]
    key = np.random.default_rng(seed_key).standard_normal(d_k)
    k = np.tile(key, (v.shape[0], 1))
    out = scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(out, np.broadcast_to(v.mean(axis=0), out.shape), atol=1e-12)


@given(arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 6)), elements=finite))
def test_weights_are_a_distribution(q):
    k = np.random.default_rng(0).standard_normal((7, q.shape[-1]))
    weights = attention_weights(q, k)
    assert np.all(weights >= 0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0)


# -- Bad input ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("q", "k", "match"),
    [
        (np.zeros((2, 3)), np.zeros((4, 5)), "q and k must share their last axis d_k"),
        (np.zeros((2, 0)), np.zeros((4, 0)), "d_k must be at least 1"),
        (np.zeros((2, 3)), np.zeros((0, 3)), "at least one key"),
        (np.zeros(3), np.zeros((4, 3)), r"q must have shape \(\.\.\., n_q, d_k\)"),
        (np.zeros((2, 3)), np.zeros(3), r"k must have shape \(\.\.\., n_k, d_k\)"),
        (np.array([[np.nan, 0.0]]), np.zeros((1, 2)), "q must contain only finite values"),
        (np.zeros((1, 2)), np.array([[np.inf, 0.0]]), "k must contain only finite values"),
        (np.full((1, 2), 1e200), np.full((1, 2), 1e200), "overflowed"),
    ],
)
def test_bad_queries_and_keys(q, k, match):
    with pytest.raises(ValueError, match=match):
        attention_weights(q, k)


@pytest.mark.parametrize("bad", [["x"], [[True]], [[1j]]])
def test_non_numeric_queries_keys_values(bad):
    with pytest.raises(TypeError, match="q must be a real numeric array"):
        attention_weights(bad, [[1.0]])
    with pytest.raises(TypeError, match="k must be a real numeric array"):
        attention_weights([[1.0]], bad)
    with pytest.raises(TypeError, match="v must be a real numeric array"):
        scaled_dot_product_attention([[1.0]], [[1.0]], bad)


@pytest.mark.parametrize("scale", [0.0, -0.5, np.inf, np.nan])
def test_bad_scale_value(scale):
    with pytest.raises(ValueError, match="scale must be finite and > 0"):
        attention_scores([[1.0]], [[1.0]], scale=scale)


@pytest.mark.parametrize("scale", ["0.5", True, [0.5]])
def test_bad_scale_type(scale):
    with pytest.raises(TypeError, match="scale must be a real number"):
        attention_scores([[1.0]], [[1.0]], scale=scale)


def test_mask_must_be_boolean():
    with pytest.raises(TypeError, match="mask must be boolean"):
        attention_weights([[1.0]], [[1.0], [2.0]], mask=[[1, 0]])


def test_mask_must_broadcast():
    with pytest.raises(ValueError, match=r"mask of shape \(3,\) does not broadcast"):
        attention_weights([[1.0]], [[1.0], [2.0]], mask=[True, False, True])


def test_mask_must_leave_every_query_a_key():
    mask = np.array([[True, False], [False, False]])
    with pytest.raises(ValueError, match=r"mask allows no key for the query at index \(1,\)"):
        attention_weights(np.zeros((2, 1)), np.zeros((2, 1)), mask=mask)


def test_values_need_one_row_per_key():
    with pytest.raises(ValueError, match=r"v must have one row per key \(n_k = 2\)"):
        scaled_dot_product_attention([[1.0]], [[1.0], [2.0]], np.zeros((3, 1)))


def test_values_must_be_finite_and_two_dimensional():
    with pytest.raises(ValueError, match="v must contain only finite values"):
        scaled_dot_product_attention([[1.0]], [[1.0]], [[np.nan]])
    with pytest.raises(ValueError, match=r"v must have shape \(\.\.\., n_k, d_v\)"):
        scaled_dot_product_attention([[1.0]], [[1.0]], [1.0])


def test_value_batch_axes_must_broadcast():
    with pytest.raises(ValueError, match="batch axes of v"):
        scaled_dot_product_attention(np.zeros((2, 1, 1)), np.zeros((2, 1, 1)), np.zeros((3, 1, 1)))


@given(
    arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(2, 16)), elements=st.floats(-1e3, 1e3)),
)
def test_layer_norm_gives_mean_zero_and_squared_norm_d(x):
    assume(np.all(x.std(axis=-1) > 1e-3 * (1 + np.abs(x).max())))
    y = layer_norm(x)
    d = x.shape[-1]
    np.testing.assert_allclose(y.mean(axis=-1), 0, atol=1e-9)
    np.testing.assert_allclose((y**2).sum(axis=-1), d, rtol=1e-9)


def test_layer_norm_ignores_shift_and_positive_scale():
    x = np.array([0.3, -1.2, 2.5, 0.0])
    np.testing.assert_allclose(layer_norm(3.0 * x + 7.0), layer_norm(x))


@pytest.mark.parametrize(
    ("x", "error", "message"),
    [
        ([1.0], ValueError, "at least 2 entries"),
        ([[2.0, 2.0, 2.0]], ValueError, "constant vector"),
        ([1.0, np.nan], ValueError, "finite"),
        (3.0, ValueError, r"shape \(\.\.\., d\)"),
        (["a", "b"], TypeError, "real numeric"),
    ],
)
def test_layer_norm_refuses_bad_input(x, error, message):
    with pytest.raises(error, match=message):
        layer_norm(x)
