"""Seeded Monte Carlo: reproducibility, estimates and their errors, bad input."""

import numpy as np
import pytest

from attention_scaling.simulate import (
    Estimate,
    attention_regimes,
    dot_product_samples,
    dot_product_sweep,
    jacobian_norm_by_spread,
    mean_estimate,
    scale_for,
    variance_estimate,
)


@pytest.mark.parametrize("distribution", ["normal", "rademacher", "uniform"])
def test_components_have_the_assumed_moments(distribution):
    samples = dot_product_samples(1, 200_000, seed=1, distribution=distribution)
    assert mean_estimate(samples).contains(0.0)
    assert variance_estimate(samples).contains(1.0)


def test_samples_are_reproducible_and_seed_dependent():
    a = dot_product_samples(8, 100, seed=3)
    assert np.array_equal(a, dot_product_samples(8, 100, seed=3))
    assert not np.array_equal(a, dot_product_samples(8, 100, seed=4))


def test_blocks_do_not_change_the_draws_distribution():
    # d_k large enough that the draws come in several blocks.
    samples = dot_product_samples(4096, 300, seed=5)
    assert variance_estimate(samples).contains(4096.0)


def test_sweep_values_do_not_depend_on_the_other_sizes():
    alone = dot_product_sweep([64], 500, seed=7)
    together = dot_product_sweep([1, 64, 256], 500, seed=7)
    assert alone["variance"][0] == together["variance"][1]
    assert together["n_samples"] == 500


def test_variance_standard_error_is_calibrated():
    # Over many independent replications, about 99.7 % of 3-s.e. intervals
    # should contain the truth; allow a generous margin for 400 replications.
    rng = np.random.default_rng(11)
    hits = sum(variance_estimate(rng.standard_normal(500)).contains(1.0) for _ in range(400))
    assert hits >= 390


def test_estimate_interval():
    estimate = Estimate(10.0, 0.5)
    assert estimate.interval() == (8.5, 11.5)
    assert estimate.contains(11.4) and not estimate.contains(11.6)
    assert estimate.contains(11.9, z=4)


def test_regimes_match_the_story():
    d = [1, 64, 1024]
    none = attention_regimes(d, "none", n_keys=16, n_queries=200, seed=1)
    sqrt = attention_regimes(d, "sqrt", n_keys=16, n_queries=200, seed=1)
    linear = attention_regimes(d, "linear", n_keys=16, n_queries=200, seed=1)
    # Same draws: at d_k = 1 every policy multiplies by 1.
    assert none.max_weight[0] == sqrt.max_weight[0] == linear.max_weight[0]
    assert none.max_weight[-1] > 0.9 and none.entropy_fraction[-1] < 0.1
    assert linear.entropy_fraction[-1] > 0.99
    assert abs(sqrt.max_weight[-1] - sqrt.max_weight[1]) < 0.05
    np.testing.assert_allclose(linear.effective_keys[-1], 16, rtol=0.01)


def test_a_callable_policy_is_used():
    doubled = attention_regimes([16], lambda d: 2.0, n_keys=4, n_queries=50, seed=0)
    reference = attention_regimes([16], lambda d: 2.0 / 1.0, n_keys=4, n_queries=50, seed=0)
    halved = attention_regimes([16], lambda d: 0.5, n_keys=4, n_queries=50, seed=0)
    assert doubled.max_weight[0] == reference.max_weight[0] > halved.max_weight[0]


def test_jacobian_norm_at_zero_spread_is_exact():
    curves = jacobian_norm_by_spread([0.0], n_keys=4, n_samples=10, seed=0)
    p = np.full(4, 0.25)
    expected = np.linalg.norm(np.diag(p) - np.outer(p, p))
    np.testing.assert_allclose(curves.jacobian_norm[0], expected)
    assert curves.jacobian_norm_se[0] == 0


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: dot_product_samples(0, 10, seed=0), "d_k must be an integer >= 1"),
        (lambda: dot_product_samples(4, 1, seed=0), "n_samples must be an integer >= 2"),
        (lambda: dot_product_samples(4, 10, seed=0, distribution="cauchy"), "distribution must be one of"),
        (lambda: variance_estimate([1.0, 2.0]), "at least 4 draws"),
        (lambda: variance_estimate([1.0, 2.0, np.nan, 4.0]), "finite"),
        (lambda: mean_estimate([1.0]), "at least 2 finite draws"),
        (lambda: scale_for("cube", 4), "policy must be one of"),
        (lambda: scale_for(lambda d: -1.0, 4), "finite and > 0"),
        (lambda: attention_regimes([4], "none", n_keys=1, n_queries=5, seed=0), "n_keys must be an integer >= 2"),
        (lambda: jacobian_norm_by_spread([-1.0], n_keys=2, n_samples=5, seed=0), "stds must be"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_policy_must_be_a_name_or_callable():
    with pytest.raises(TypeError, match="policy must be a name or a callable"):
        scale_for(3, 4)
