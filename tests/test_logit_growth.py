"""Logit growth, the QK-norm bound and Zhai et al.'s entropy bound, against independent computations."""

import math

import mpmath
import numpy as np
import pytest

from attention_scaling import attention_entropy, attention_scores, entropy_from_logits, layer_norm, softmax
from attention_scaling.logit_growth import (
    EntropyCollapse,
    entropy_bound_check,
    entropy_bound_sigma,
    entropy_collapse_data,
    logit_growth,
    qk_norm_bound,
    qk_norm_scores,
    tight_instance,
    zhai_entropy_bound,
)


def exact_entropy(row) -> float:
    """Entropy of softmax(row) in 50-digit arithmetic."""
    with mpmath.workdps(50):
        weights = [mpmath.exp(mpmath.mpf(float(v))) for v in row]
        total = mpmath.fsum(weights)
        return float(-mpmath.fsum(w / total * mpmath.log(w / total) for w in weights))


def one_peak_entropy(gap: float, n_tokens: int) -> float:
    """Entropy of softmax([gap, 0, ..., 0]) in 50-digit arithmetic."""
    return exact_entropy([gap] + [0.0] * (n_tokens - 1))


# -- Entropy from logits -------------------------------------------------------------------


def test_entropy_from_logits_matches_high_precision_even_near_one_hot():
    rng = np.random.default_rng(0)
    rows = [rng.standard_normal(7) * scale for scale in (0.1, 1.0, 10.0, 100.0)]
    rows += [np.array([50.0, 0.0, 0.0]), np.array([0.0, -745.0]), np.array([3.0])]
    for row in rows:
        exact = exact_entropy(row)
        assert entropy_from_logits(row) == pytest.approx(exact, rel=1e-12, abs=1e-300), row


def test_entropy_from_logits_agrees_with_entropy_of_the_weights_when_not_peaked():
    logits = np.random.default_rng(1).standard_normal((5, 3, 9))
    np.testing.assert_allclose(entropy_from_logits(logits), attention_entropy(softmax(logits)), rtol=1e-13)


def test_entropy_from_logits_is_shift_invariant_and_handles_ties():
    row = np.array([2.0, 2.0, -1.0])
    assert entropy_from_logits(row + 1000.0) == pytest.approx(entropy_from_logits(row), rel=1e-12)
    assert entropy_from_logits([5.0, 5.0]) == pytest.approx(math.log(2))


@pytest.mark.parametrize("bad, error", [([], ValueError), ([1.0, np.nan], ValueError), (["a"], TypeError), (3.0, ValueError)])
def test_entropy_from_logits_refuses_bad_input(bad, error):
    with pytest.raises(error):
        entropy_from_logits(bad)


# -- Logit growth ------------------------------------------------------------------------------


def test_logits_grow_like_c_squared_and_attention_collapses():
    growth = (1.0, 2.0, 3.0, 5.0)
    result = logit_growth(growth, d_model=64, d_k=16, n_tokens=32, n_trials=4, seed=3)
    np.testing.assert_allclose(result.logit_std / result.logit_std[0], np.array(growth) ** 2, rtol=1e-12)
    assert np.all(np.diff(result.entropy) < 0) and np.all(np.diff(result.max_weight) > 0)
    assert result.entropy[0] < math.log(32)
    assert np.all(result.entropy_se > 0) and np.all(result.max_weight_se > 0)


def test_logit_growth_matches_a_direct_computation_of_one_trial_at_unit_scale():
    result = logit_growth((1.0,), d_model=32, d_k=8, n_tokens=10, n_trials=2, seed=11)
    rng = np.random.default_rng(11)
    entropies, maxima = [], []
    for _ in range(2):
        x = layer_norm(rng.standard_normal((10, 32)))
        w_q, w_k = rng.standard_normal((32, 8)) / math.sqrt(32), rng.standard_normal((32, 8)) / math.sqrt(32)
        weights = softmax((x @ w_q) @ (x @ w_k).T / math.sqrt(8))
        entropies.append(attention_entropy(weights).mean())
        maxima.append(weights.max(axis=-1).mean())
    assert result.entropy[0] == pytest.approx(np.mean(entropies), rel=1e-12)
    assert result.max_weight[0] == pytest.approx(np.mean(maxima), rel=1e-12)
    assert result.entropy_se[0] == pytest.approx(np.std(entropies, ddof=1) / math.sqrt(2), rel=1e-9)


def test_logit_growth_is_seeded_and_validates():
    a = logit_growth((1.0, 2.0), d_model=16, d_k=4, n_tokens=8, n_trials=3, seed=5)
    b = logit_growth((1.0, 2.0), d_model=16, d_k=4, n_tokens=8, n_trials=3, seed=5)
    np.testing.assert_array_equal(a.entropy, b.entropy)
    with pytest.raises(ValueError, match="growth"):
        logit_growth((1.0, 0.0))
    with pytest.raises(ValueError, match="n_trials"):
        logit_growth((1.0,), n_trials=1)


# -- QK-norm ----------------------------------------------------------------------------------------


def test_qk_norm_logits_never_exceed_sqrt_d_and_reach_it_when_q_equals_k():
    rng = np.random.default_rng(2)
    for d in (2, 3, 16, 128):
        q, k = rng.standard_normal((200, d)) * 10, rng.standard_normal((50, d)) ** 3
        assert np.abs(qk_norm_scores(q, k)).max() <= math.sqrt(d) * (1 + 1e-12)
        # Any positive affine image of q normalises to the same vector; a negative one to its opposite.
        same = qk_norm_scores(q, 3.0 * q + 7.0)
        np.testing.assert_allclose(np.diag(same), math.sqrt(d), rtol=1e-12)
        np.testing.assert_allclose(np.diag(qk_norm_scores(q, -q)), -math.sqrt(d), rtol=1e-12)
        assert qk_norm_bound(d) == pytest.approx(math.sqrt(d))


def test_qk_norm_with_gains():
    rng = np.random.default_rng(4)
    d = 32
    q, k = rng.standard_normal((100, d)), rng.standard_normal((100, d))
    gain_q, gain_k = rng.uniform(0.5, 3.0, d), rng.uniform(0.5, 3.0, d)
    scores = qk_norm_scores(q, k, gain_q=gain_q, gain_k=gain_k)
    direct = (gain_q * layer_norm(q)) @ (gain_k * layer_norm(k)).T / math.sqrt(d)
    np.testing.assert_allclose(scores, direct, rtol=1e-12)
    assert np.abs(scores).max() <= qk_norm_bound(d, gain_q=gain_q, gain_k=gain_k)
    # Scalar gains: the bound scales by |g_q g_k| and is still attained at q = k.
    assert qk_norm_scores(q[:1], q[:1], gain_q=2.0, gain_k=-1.5)[0, 0] == pytest.approx(-3.0 * math.sqrt(d))
    assert qk_norm_bound(d, gain_q=2.0, gain_k=-1.5) == pytest.approx(3.0 * math.sqrt(d))


def test_qk_norm_refuses_bad_gains():
    with pytest.raises(ValueError, match="gain_q"):
        qk_norm_scores(np.eye(3) + 1, np.eye(3) + 1, gain_q=np.ones(4))
    with pytest.raises(ValueError, match="d_k"):
        qk_norm_bound(1)
    with pytest.raises(ValueError, match="gains"):
        qk_norm_bound(4, gain_q=np.ones(3))


def test_fp16_cannot_exponentiate_the_bound_at_d_128():
    # sqrt(128) = 11.31 is above ln(65504) = 11.09, the largest fp16 exponent.
    assert qk_norm_bound(128) > math.log(np.finfo(np.float16).max) > qk_norm_bound(64)
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(np.float16(qk_norm_bound(128))))
        assert np.isfinite(np.exp(np.float16(qk_norm_bound(64))))


# -- Zhai et al.'s bound -------------------------------------------------------------------------------


@pytest.mark.parametrize("n_tokens", [2, 3, 16, 100])
def test_bound_is_the_entropy_of_one_peak_at_the_largest_gap(n_tokens):
    for sigma in (0.0, 0.3, 2.0, 9.0, 30.0):
        gap = sigma * math.sqrt(n_tokens / (n_tokens - 1))
        assert zhai_entropy_bound(sigma, n_tokens) == pytest.approx(one_peak_entropy(gap, n_tokens), rel=1e-12)
    values = zhai_entropy_bound(np.linspace(0, 40, 400), n_tokens)
    assert values[0] == pytest.approx(math.log(n_tokens)) and np.all(np.diff(values) < 0)


def test_bound_holds_for_rows_of_norm_sigma_and_fails_for_longer_rows():
    rng = np.random.default_rng(6)
    for n_tokens in (2, 5, 30):
        for sigma in (0.5, 3.0, 8.0):
            rows = rng.standard_normal((2000, n_tokens)) ** 3
            rows *= sigma / np.linalg.norm(rows, axis=1, keepdims=True)
            assert entropy_from_logits(rows).min() >= zhai_entropy_bound(sigma, n_tokens)
            # The worst row, 10 % longer than sigma allows, falls below the bound.
            x, w_q, w_k = tight_instance(n_tokens, 1.1 * sigma)
            worst = attention_scores(x @ w_q, x @ w_k, scale=1.0)[0]
            assert entropy_from_logits(worst) < zhai_entropy_bound(sigma, n_tokens)


def test_entropy_bound_sigma_matches_singular_values_and_bounds_the_logits():
    rng = np.random.default_rng(7)
    for _ in range(20):
        x, w_q, w_k = rng.standard_normal((9, 5)), rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
        sigma = entropy_bound_sigma(x, w_q, w_k)
        by_svd = np.linalg.svd(w_q @ w_k.T, compute_uv=False)[0] * np.linalg.svd(x, compute_uv=False)[0] ** 2
        assert sigma == pytest.approx(by_svd, rel=1e-12)
        logits = (x @ w_q) @ (x @ w_k).T
        assert np.linalg.norm(logits, axis=1).max() <= np.linalg.norm(logits, 2) <= sigma * (1 + 1e-12)
    with pytest.raises(ValueError, match="w_q and w_k"):
        entropy_bound_sigma(np.ones((3, 4)), np.ones((4, 2)), np.ones((3, 2)))


@pytest.mark.parametrize("n_tokens, sigma", [(2, 0.0), (2, 4.0), (16, 3.0), (64, 12.0), (16, 60.0)])
def test_tight_instance_meets_the_bound(n_tokens, sigma):
    x, w_q, w_k = tight_instance(n_tokens, sigma, d_model=n_tokens + 3)
    assert entropy_bound_sigma(x, w_q, w_k) == pytest.approx(sigma, abs=1e-12)
    row = attention_scores(x @ w_q, x @ w_k, scale=1.0)[0]
    assert np.linalg.norm(row) == pytest.approx(sigma, abs=1e-12)
    assert entropy_from_logits(row) == pytest.approx(zhai_entropy_bound(sigma, n_tokens), rel=1e-12)


def test_random_heads_never_violate_the_bound_but_a_misread_sigma_does():
    result = entropy_bound_check(300, seed=9)
    assert result.violations == 0 and result.gap.min() >= 0
    assert result.n_tokens.min() >= 2 and result.n_tokens.max() <= 64
    assert np.all(result.max_row_norm <= result.sigma * (1 + 1e-12))
    # Planted misreading: sigma_x = ||X||_2 instead of ||X X^T||_2 = ||X||_2^2.
    rng = np.random.default_rng(10)
    violations = 0
    for _ in range(200):
        x = rng.standard_normal((8, 6)) * 2.0
        w_q, w_k = rng.standard_normal((6, 4)), rng.standard_normal((6, 4))
        misread = np.linalg.norm(w_k @ w_q.T, 2) * np.linalg.norm(x, 2)
        entropy = entropy_from_logits((x @ w_q) @ (x @ w_k).T).min()
        violations += entropy < zhai_entropy_bound(misread, 8)
    assert violations > 0


def test_entropy_bound_inputs_are_validated():
    with pytest.raises(ValueError, match="sigma"):
        zhai_entropy_bound(-1.0, 4)
    with pytest.raises(ValueError, match="n_tokens"):
        zhai_entropy_bound(1.0, 1)
    with pytest.raises(ValueError, match="sigma"):
        tight_instance(4, -1.0)
    with pytest.raises(ValueError, match="d_model"):
        tight_instance(4, 1.0, d_model=3)
    with pytest.raises(ValueError, match="n_tokens"):
        entropy_bound_check(5, n_tokens=(10, 4))


# -- The data of the entropy-collapse figure -----------------------------------------------------


def test_entropy_collapse_data_puts_random_heads_above_the_bound_and_worst_cases_on_it():
    data = entropy_collapse_data(n_tokens=8, n_instances=20, seed=8)
    assert isinstance(data, EntropyCollapse) and data.n_tokens == 8
    assert data.random.violations == 0 and set(data.random.n_tokens.tolist()) == {8}
    assert np.allclose(data.tight_entropy, zhai_entropy_bound(data.tight_sigma, 8), rtol=1e-9)
    assert np.array_equal(data.log_grid_bound, zhai_entropy_bound(data.log_grid, 8))
    assert data.linear_grid[0] == 0.0 and data.linear_grid[-1] == 12.0
