"""Long sequences: plug-in approximations against simulation, the needle, Scalable-Softmax, bad input."""

import math

import numpy as np
import pytest
import scipy.special

from attention_scaling import attention_entropy, softmax
from attention_scaling.long_sequences import (
    LengthSweep,
    freezing_ratio,
    gaussian_logit_sweep,
    long_sequence_entropy_data,
    max_logit_bound,
    needle_weight,
    plug_in_collision_count,
    plug_in_entropy,
    plug_in_log_partition,
    scalable_softmax,
)
from attention_scaling.simulate import mean_estimate


@pytest.fixture(scope="module")
def sweep() -> LengthSweep:
    return gaussian_logit_sweep([16, 256, 4096], [0.0, 0.5, 1.0, 3.0], seed=11, budget=2**17, min_trials=32)


# -- The simulation against an independent computation -------------------------------


def test_sweep_statistics_match_softmax_entropy_and_logsumexp(sweep):
    # Redraw the same standard normals and compute every statistic another way.
    for j, n in enumerate(sweep.n):
        standard = np.random.default_rng([11, int(n)]).standard_normal((sweep.trials[j], n))
        for i, s in enumerate(sweep.spreads):
            logits = s * standard
            p = softmax(logits)
            expected = {
                "entropy": attention_entropy(p),
                "collision_count": 1 / np.sum(p**2, axis=-1),
                "max_weight": p.max(axis=-1),
                "log_partition": scipy.special.logsumexp(logits, axis=-1),
                "max_logit": logits.max(axis=-1),
            }
            for name, values in expected.items():
                reference = mean_estimate(values) if np.ptp(values) > 0 else None
                assert math.isclose(getattr(sweep, name)[i, j], values.mean(), rel_tol=1e-10, abs_tol=1e-12), (name, n, s)
                if reference is not None:
                    assert math.isclose(getattr(sweep, f"{name}_se")[i, j], reference.standard_error, rel_tol=1e-8)


def test_equal_logits_give_uniform_weights(sweep):
    row = list(sweep.spreads).index(0.0)
    np.testing.assert_allclose(sweep.entropy[row], np.log(sweep.n), rtol=1e-12)
    np.testing.assert_allclose(sweep.max_weight[row], 1 / sweep.n, rtol=1e-12)
    np.testing.assert_allclose(sweep.collision_count[row], sweep.n, rtol=1e-12)


def test_sweep_is_seeded_and_each_length_has_its_own_stream():
    alone = gaussian_logit_sweep([256], [1.0], seed=3, budget=4096)
    together = gaussian_logit_sweep([16, 256], [1.0], seed=3, budget=4096)
    assert alone.entropy[0, 0] == together.entropy[0, 1]
    other = gaussian_logit_sweep([256], [1.0], seed=4, budget=4096)
    assert other.entropy[0, 0] != alone.entropy[0, 0]


def test_exponential_moments_agree_with_monte_carlo():
    # The moments of thm-gaussian-logit-moments, by direct sampling.
    s = 0.7
    x = np.random.default_rng(0).normal(scale=s, size=400_000)
    assert mean_estimate(np.exp(x)).contains(math.exp(s**2 / 2))
    assert mean_estimate(x * np.exp(x)).contains(s**2 * math.exp(s**2 / 2))
    assert mean_estimate(np.exp(2 * x)).contains(math.exp(2 * s**2))
    # A planted error of the usual kind, E[e^X] = e^{s^2}, is excluded.
    assert not mean_estimate(np.exp(x)).contains(math.exp(s**2))


# -- Where the plug-in values hold and where they fail ---------------------------------


def test_plug_in_entropy_holds_for_small_spread_and_long_rows(sweep):
    for s in (0.5, 1.0):
        measured = sweep.estimate("entropy", s, 4096)
        # The plug-in value is a large-n limit; at n = 4096 its bias is below 0.01 nats.
        assert abs(measured.value - plug_in_entropy(4096, s)) < 3 * measured.standard_error + 0.01, s
    # The opposite sign of the s^2/2 term is far outside.
    assert abs(sweep.estimate("entropy", 1.0, 4096).value - (math.log(4096) + 0.5)) > 0.9


def test_plug_in_entropy_fails_past_freezing(sweep):
    assert freezing_ratio(16, 3.0) > 1
    assert plug_in_entropy(16, 3.0) < 0  # impossible for an entropy
    measured = sweep.estimate("entropy", 3.0, 16)
    assert measured.value > 0.5
    assert measured.value - plug_in_entropy(16, 3.0) > 2.0


def test_plug_in_collision_count_holds_only_for_small_spread(sweep):
    good = sweep.estimate("collision_count", 0.5, 4096)
    assert abs(good.value / plug_in_collision_count(4096, 0.5) - 1) < 0.01
    bad = sweep.estimate("collision_count", 3.0, 4096)
    assert bad.value / plug_in_collision_count(4096, 3.0) > 10


def test_largest_logit_respects_the_bound_and_largest_weight_falls(sweep):
    for i, s in enumerate(sweep.spreads):
        assert np.all(sweep.max_logit[i] <= max_logit_bound(sweep.n, s) + 1e-12)
        if s > 0:
            assert np.all(np.diff(sweep.max_weight[i]) < 0)


def test_closed_forms():
    n = np.array([2, 16, 1000])
    np.testing.assert_allclose(plug_in_entropy(n, 2.0), np.log(n) - 2.0)
    np.testing.assert_allclose(plug_in_collision_count(n, 2.0), n * np.exp(-4.0))
    np.testing.assert_allclose(max_logit_bound(n, 2.0), 2.0 * np.sqrt(2 * np.log(n)))
    np.testing.assert_allclose(freezing_ratio(n, 2.0), 4.0 / (2 * np.log(n)))
    assert plug_in_entropy([[16], [64]], [0.5, 1.0]).shape == (2, 2)  # broadcasts


def test_plug_in_log_partition_bounds_the_measured_log_partition(sweep):
    n = np.array([1, 16, 1000])
    np.testing.assert_allclose(plug_in_log_partition(n, 2.0), np.log(n) + 2.0)
    assert plug_in_log_partition([[16], [64]], [0.5, 1.0]).shape == (2, 2)  # broadcasts
    # Jensen: E ln Z <= ln E Z, so no mean of ln Z lies more than 3 standard errors above it.
    n_grid, s_grid = np.meshgrid(sweep.n, sweep.spreads)
    assert np.all(sweep.log_partition - 3 * sweep.log_partition_se <= plug_in_log_partition(n_grid, s_grid))
    # Below freezing it is also close: at s = 0.5, n = 4096 within 3 standard errors plus 0.01.
    measured = sweep.estimate("log_partition", 0.5, 4096)
    assert abs(measured.value - plug_in_log_partition(4096, 0.5)) < 3 * measured.standard_error + 0.01


# -- The needle -------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 7, 1000])
@pytest.mark.parametrize("margin, scale", [(5.0, 1.0), (0.5, 3.0), (-1.0, 2.0), (2.0, 0.0)])
def test_needle_weight_is_the_softmax_weight_of_the_needle(n, margin, scale):
    scores = np.zeros(n)
    scores[0] = margin
    assert math.isclose(needle_weight(n, margin, scale), softmax(scale * scores)[0], rel_tol=1e-12)


def test_needle_weight_does_not_overflow():
    with np.errstate(over="raise", invalid="raise"):
        assert needle_weight(10, 1000.0, -1.0) < 1e-300  # e^{1000} would overflow
        assert needle_weight(10, 1000.0, 1.0) == 1.0
        huge = needle_weight(2**60, 1.0, 1.0)
    assert math.isclose(huge, 1 / (1 + (2**60 - 1) * math.exp(-1)), rel_tol=1e-12)


def test_needle_limits_numerically():
    n = np.array([10, 10**3, 10**6, 10**9])
    fixed = needle_weight(n, 1.0, 2.0)
    assert np.all(np.diff(fixed) < 0) and fixed[-1] < 1e-8
    above = needle_weight(n, 1.0, 2.0 * np.log(n))  # s * Delta = 2
    assert np.all(np.diff(above) > 0) and above[-1] > 1 - 1e-8
    below = needle_weight(n, 1.0, 0.5 * np.log(n))  # s * Delta = 1/2
    assert np.all(np.diff(below) < 0) and below[-1] < 1e-4
    # s * Delta = 1: p = n / (2n - 1) exactly.
    np.testing.assert_allclose(needle_weight(n, 1.0, np.log(n)), n / (2 * n - 1), rtol=1e-12)


# -- Scalable-Softmax ---------------------------------------------------------------------


def test_scalable_softmax_is_powers_of_n():
    z = np.random.default_rng(1).normal(size=(3, 50))
    powers = 50.0 ** (0.3 * z)
    np.testing.assert_allclose(scalable_softmax(z, 0.3), powers / powers.sum(axis=-1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(scalable_softmax(z.T, 0.3, axis=0), scalable_softmax(z, 0.3).T, rtol=1e-12)
    np.testing.assert_allclose(scalable_softmax(z, 0.0), np.full((3, 50), 1 / 50))


def test_subtracting_s_log_n_is_not_scalable_softmax():
    z = np.random.default_rng(2).normal(size=200)
    shifted = softmax(z - 0.5 * np.log(z.size))
    np.testing.assert_allclose(shifted, softmax(z), rtol=1e-12)  # a shift changes nothing
    assert np.max(np.abs(scalable_softmax(z, 0.5) - softmax(z))) > 0.01


def test_scalable_softmax_keeps_the_needle():
    for n in (16, 4096):
        z = np.full(n, -2.0)
        z[-1] = 3.0
        assert math.isclose(scalable_softmax(z, 0.43)[-1], needle_weight(n, 5.0, 0.43 * np.log(n)), rel_tol=1e-12)


# -- Bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1.5, -3, np.nan])
def test_lengths_must_be_positive_integers(n):
    with pytest.raises(ValueError, match="n must hold integers >= 1"):
        plug_in_entropy(n, 1.0)


@pytest.mark.parametrize("n", [True, "16", [1 + 1j]])
def test_lengths_must_be_numbers(n):
    with pytest.raises(TypeError, match="n must hold integers"):
        needle_weight(n, 1.0, 1.0)


def test_other_bad_input():
    with pytest.raises(ValueError, match="s must be >= 0"):
        plug_in_collision_count(16, -1.0)
    with pytest.raises(ValueError, match="s must be >= 0"):
        plug_in_log_partition(16, -1.0)
    with pytest.raises(ValueError, match="margin must contain only finite values"):
        needle_weight(16, np.inf, 1.0)
    with pytest.raises(ValueError, match="n must hold integers >= 2 for a freezing ratio"):
        freezing_ratio(1, 1.0)
    with pytest.raises(TypeError, match="s must be a finite real number"):
        scalable_softmax([1.0, 2.0], "0.5")
    with pytest.raises(TypeError, match="s must be a finite real number"):
        scalable_softmax([1.0, 2.0], math.nan)
    with pytest.raises(ValueError, match="axis must be an integer"):
        scalable_softmax([1.0, 2.0], 0.5, axis=1)
    with pytest.raises(ValueError, match="n_values must be a non-empty sequence of integers >= 2"):
        gaussian_logit_sweep([1, 16], [1.0], seed=0)
    with pytest.raises(ValueError, match="spreads must be >= 0"):
        gaussian_logit_sweep([16], [-1.0], seed=0)
    with pytest.raises(ValueError, match="min_trials must be an integer >= 2"):
        gaussian_logit_sweep([16], [1.0], seed=0, min_trials=1)
    with pytest.raises(ValueError, match="budget must be an integer >= 1"):
        gaussian_logit_sweep([16], [1.0], seed=0, budget=0)
    with pytest.raises(TypeError, match="budget must be an integer; got float"):
        gaussian_logit_sweep([16], [1.0], seed=0, budget=0.5)


def test_estimate_names_its_point(sweep):
    with pytest.raises(ValueError, match="name must be one of"):
        sweep.estimate("perplexity", 1.0, 16)
    with pytest.raises(ValueError, match="no point at s = 2.0"):
        sweep.estimate("entropy", 2.0, 16)


# -- The data of the long-sequence figure ------------------------------------------------------


def test_long_sequence_entropy_data_is_the_seeded_sweep():
    data = long_sequence_entropy_data(seed=8, budget=2**10)
    assert isinstance(data, LengthSweep)
    assert data.n.tolist() == [4**k for k in range(2, 9)]
    assert data.spreads.tolist() == [0.5, 1.0, 2.0, 3.0]
    again = gaussian_logit_sweep(data.n, data.spreads, seed=8, budget=2**10)
    assert np.array_equal(data.entropy, again.entropy)
