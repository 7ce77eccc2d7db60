"""Softmax, log-softmax, Jacobian and entropy: examples, properties, bad input."""

import numpy as np
import pytest
import scipy.special
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_scaling import attention_entropy, entropy_from_logits, log_softmax, softmax, softmax_jacobian

# Logits of moderate size: large enough to saturate softmax, small enough that
# the finite-difference and limit checks below stay well conditioned.
moderate = st.floats(-30, 30, allow_nan=False, allow_infinity=False)
logit_rows = arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 8)), elements=moderate)
# Any finite float64, including values near the limits of the type.
extreme = st.floats(allow_nan=False, allow_infinity=False)


# -- Examples ---------------------------------------------------------------------


def test_softmax_matches_hand_computation():
    expected = np.exp([1.0, 2.0, 3.0]) / np.exp([1.0, 2.0, 3.0]).sum()
    np.testing.assert_allclose(softmax([1.0, 2.0, 3.0]), expected, rtol=1e-15)


def test_softmax_neg_inf_gets_zero_weight():
    weights = softmax([2.0, -np.inf, 0.0])
    assert weights[1] == 0.0
    np.testing.assert_allclose(weights[[0, 2]], softmax([2.0, 0.0]))


def test_softmax_along_other_axis():
    x = np.array([[0.0, 1.0], [2.0, 5.0]])
    np.testing.assert_allclose(softmax(x, axis=0), softmax(x.T).T)


def test_softmax_keeps_floating_dtype_and_promotes_integers():
    assert softmax(np.array([1, 2], dtype=np.int64)).dtype == np.float64
    assert softmax(np.array([1, 2], dtype=np.float32)).dtype == np.float32
    assert softmax(np.array([1, 2], dtype=np.float16)).dtype == np.float16


def test_float16_softmax_does_not_overflow():
    # exp(12) overflows float16 (largest finite value 65504); max-subtraction avoids it.
    weights = softmax(np.array([12.0, 11.0], dtype=np.float16))
    assert np.all(np.isfinite(weights))


def test_log_softmax_is_log_of_softmax():
    x = np.array([[0.3, -1.2, 4.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(log_softmax(x), np.log(softmax(x)), rtol=1e-12)


def test_log_softmax_of_neg_inf_is_neg_inf():
    assert log_softmax([0.0, -np.inf])[1] == -np.inf


def test_jacobian_of_uniform_pair():
    np.testing.assert_allclose(softmax_jacobian([0.5, 0.5]), [[0.25, -0.25], [-0.25, 0.25]])


def test_jacobian_is_batched():
    p = softmax(np.arange(24.0).reshape(2, 3, 4) / 10)
    jac = softmax_jacobian(p)
    assert jac.shape == (2, 3, 4, 4)
    np.testing.assert_allclose(jac[1, 2], softmax_jacobian(p[1, 2]))


def test_entropy_of_one_hot_and_uniform():
    assert attention_entropy([0.0, 1.0, 0.0]) == 0.0
    np.testing.assert_allclose(attention_entropy(np.full((3, 5), 0.2)), np.full(3, np.log(5)))


# -- Properties -------------------------------------------------------------------


@given(logit_rows)
def test_weights_are_a_distribution(x):
    weights = softmax(x)
    assert np.all(weights >= 0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=1e-12)


@given(logit_rows, st.floats(-1e3, 1e3))
def test_softmax_ignores_shifts(x, shift):
    np.testing.assert_allclose(softmax(x + shift), softmax(x), atol=1e-12)


@given(arrays(np.float64, st.integers(1, 6), elements=extreme))
def test_softmax_is_finite_for_every_finite_input(x):
    weights = softmax(x)
    assert np.all(np.isfinite(weights))
    assert abs(weights.sum() - 1) < 1e-12


@given(logit_rows)
def test_small_temperature_approaches_one_hot_at_argmax(x):
    # Rows with a tie for the maximum have no single argmax to approach.
    if x.shape[-1] > 1:
        top_two = np.sort(x, axis=-1)[..., -2:]
        assume(np.all(top_two[..., 1] - top_two[..., 0] > 1e-3))
    weights = softmax(x, temperature=1e-6)
    one_hot = np.eye(x.shape[-1])[np.argmax(x, axis=-1)]
    np.testing.assert_allclose(weights, one_hot, atol=1e-9)


@given(logit_rows)
def test_large_temperature_approaches_uniform(x):
    weights = softmax(x, temperature=1e9)
    np.testing.assert_allclose(weights, np.full_like(x, 1 / x.shape[-1]), rtol=1e-6)


@given(logit_rows)
def test_matches_scipy_reference(x):
    np.testing.assert_allclose(softmax(x), scipy.special.softmax(x, axis=-1), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(log_softmax(x), scipy.special.log_softmax(x, axis=-1), rtol=1e-12, atol=1e-12)


@given(logit_rows)
def test_jacobian_rows_sum_to_zero(x):
    np.testing.assert_allclose(softmax_jacobian(softmax(x)).sum(axis=-1), 0.0, atol=1e-15)


@settings(max_examples=50)
@given(arrays(np.float64, st.integers(1, 6), elements=st.floats(-5, 5)))
def test_jacobian_matches_central_differences(x):
    step = 1e-6
    numeric = np.empty((x.size, x.size))
    for j in range(x.size):
        bump = np.zeros_like(x)
        bump[j] = step
        numeric[:, j] = (softmax(x + bump) - softmax(x - bump)) / (2 * step)
    # Central differences are accurate to O(step^2) plus rounding of O(eps/step).
    np.testing.assert_allclose(softmax_jacobian(softmax(x)), numeric, atol=1e-8)


@given(logit_rows)
def test_entropy_is_between_zero_and_log_n(x):
    entropy = attention_entropy(softmax(x))
    assert np.all(entropy >= -1e-12)
    assert np.all(entropy <= np.log(x.shape[-1]) + 1e-12)
    np.testing.assert_allclose(entropy, scipy.special.entr(softmax(x)).sum(axis=-1), atol=1e-12)


# -- Bad input ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "match"),
    [
        ([1.0, np.nan], "finite values or -inf"),
        ([1.0, np.inf], "finite values or -inf"),
        ([-np.inf, -np.inf], "all -inf"),
        (np.zeros((2, 0)), "at least one entry"),
        (np.float64(3.0), "at least one axis"),
    ],
)
def test_softmax_rejects_bad_values(x, match):
    with pytest.raises(ValueError, match=match):
        softmax(x)
    with pytest.raises(ValueError, match=match):
        log_softmax(x)


@pytest.mark.parametrize("x", [["a", "b"], [True, False], [1 + 1j], [object()]])
def test_softmax_rejects_non_real_input(x):
    with pytest.raises(TypeError, match="x must be a real numeric array"):
        softmax(x)


@pytest.mark.parametrize("temperature", [0.0, -1.0, np.inf, np.nan])
def test_softmax_rejects_bad_temperature(temperature):
    with pytest.raises(ValueError, match="temperature must be finite and > 0"):
        softmax([1.0, 2.0], temperature=temperature)


@pytest.mark.parametrize("temperature", ["1", None, True])
def test_softmax_rejects_non_numeric_temperature(temperature):
    with pytest.raises(TypeError, match="temperature must be a real number"):
        softmax([1.0, 2.0], temperature=temperature)


@pytest.mark.parametrize("axis", [2, -3, 1.0, True])
def test_softmax_rejects_bad_axis(axis):
    with pytest.raises(ValueError, match="axis must be an integer"):
        softmax(np.zeros((2, 2)), axis=axis)


@pytest.mark.parametrize("function", [softmax_jacobian, attention_entropy])
@pytest.mark.parametrize(
    ("p", "match"),
    [
        ([0.5, 0.6], "must sum to 1"),
        ([1.5, -0.5], "non-negative"),
        ([0.5, np.nan], "finite"),
        (np.zeros(0), "at least one entry"),
        (np.float64(1.0), r"shape \(\.\.\., n\)"),
    ],
)
def test_distribution_functions_reject_non_distributions(function, p, match):
    with pytest.raises(ValueError, match=match):
        function(p)


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [(0, ValueError, "n must be an integer >= 1; got 0"), (2.0, TypeError, "got float"), (True, TypeError, "got bool")],
)
def test_integer_at_least_refuses_non_counts(value, error, message):
    from attention_scaling._checks import integer_at_least

    with pytest.raises(error, match=message):
        integer_at_least(value, "n", 1)
    assert integer_at_least(np.int64(3), "n", 1) == 3


# -- One entropy implementation ------------------------------------------------------


def test_both_entropy_entry_points_use_the_one_formula(monkeypatch):
    # Planting a fault in the shared formula must reach both public functions.
    import attention_scaling._softmax as core

    monkeypatch.setattr(core, "_entropy", lambda log_weights, weights, *args: np.full(np.shape(weights)[:-1], -1.0))
    assert core.attention_entropy([0.5, 0.5]) == -1.0
    assert core.entropy_from_logits([0.0, 0.0]) == -1.0
    from attention_scaling.long_sequences import gaussian_logit_sweep

    assert np.all(gaussian_logit_sweep([16], [1.0], seed=0, budget=64).entropy == -1.0)


@given(logit_rows)
@settings(max_examples=50, deadline=None)
def test_entropy_from_weights_equals_entropy_from_logits_away_from_one_hot(x):
    assume(np.all(np.ptp(x, axis=-1) < 20))
    np.testing.assert_allclose(attention_entropy(softmax(x)), entropy_from_logits(x), rtol=1e-12, atol=1e-14)


def test_entropy_from_weights_loses_the_top_share_of_a_nearly_one_hot_row():
    # The top weight rounds to 1, so from the weights its share (about e^-40) is lost.
    row = np.array([40.0, 0.0])
    assert softmax(row)[0] == 1.0
    assert attention_entropy(softmax(row)) < 0.99 * entropy_from_logits(row)


def test_entropy_keeps_the_dtype_of_the_weights():
    assert attention_entropy(np.full(4, 0.25, dtype=np.float32)).dtype == np.float32
