"""Seeded Monte Carlo: reproducibility, estimates and their errors, bad input."""

import numpy as np
import pytest

from attention_scaling import saturation_margin
from attention_scaling.simulate import (
    Estimate,
    ScoreSamples,
    VarianceSweep,
    dot_product_samples,
    dot_product_sweep,
    logit_histograms_data,
    mean_estimate,
    scale_for,
    scaling_policy,
    variance_estimate,
    variance_vs_dk_data,
)
from attention_scaling.regimes import (
    RegimeCurves,
    SaturationCurve,
    TemperaturePatterns,
    ThreeRegimes,
    attention_regimes,
    jacobian_norm_by_spread,
    jacobian_vs_spread_data,
    saturation_onset_data,
    temperature_patterns_data,
    three_regimes_data,
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


# -- The data of the site's figures ----------------------------------------------------------


def test_variance_vs_dk_data_is_the_seeded_sweep():
    data = variance_vs_dk_data(n_samples=300, seed=1)
    assert isinstance(data, VarianceSweep)
    assert data.d_k.tolist() == [2**i for i in range(13)] and data.n_samples == 300
    sweep = dot_product_sweep(data.d_k.tolist(), 300, seed=1)
    for name in ("mean", "mean_se", "variance", "variance_se"):
        assert np.array_equal(getattr(data, name), sweep[name]), name


def test_logit_histograms_data_divides_the_same_draws():
    data = logit_histograms_data(d_k=16, n_samples=50, seed=2)
    assert isinstance(data, ScoreSamples) and data.d_k == 16
    assert np.array_equal(data.unscaled, dot_product_samples(16, 50, seed=2))
    assert np.allclose(data.scaled * 4, data.unscaled, rtol=1e-15)


def test_saturation_onset_data_follows_the_jacobian():
    data = saturation_onset_data(n=3, x_max=8.0, points=81)
    assert isinstance(data, SaturationCurve) and data.n_scores == 3 and data.x[-1] == 8.0
    assert data.weight[0] == pytest.approx(1 / 3)
    assert np.allclose(data.slope, data.weight * (1 - data.weight), atol=1e-15)
    assert data.onset == saturation_margin(3)


def test_three_regimes_data_shares_draws_across_policies():
    data = three_regimes_data(n_keys=4, n_queries=8, seed=3)
    assert isinstance(data, ThreeRegimes)
    assert list(data.by_policy()) == ["none", "sqrt", "linear"]
    assert (data.n_keys, data.n_queries) == (4, 8)
    assert data.sqrt.d_k[-1] == 4096
    alone = attention_regimes(data.sqrt.d_k, "sqrt", n_keys=4, n_queries=8, seed=3)
    assert np.array_equal(alone.max_weight, data.sqrt.max_weight)
    # At d_k = 1 every policy multiplies by 1, so the three agree there.
    assert data.none.max_weight[0] == data.sqrt.max_weight[0] == data.linear.max_weight[0]


def test_jacobian_vs_spread_data_spans_spreads_0_to_12():
    data = jacobian_vs_spread_data(n_keys=4, n_samples=20, seed=5)
    assert isinstance(data, RegimeCurves) and data.n_keys == 4
    assert data.d_k[0] == 0.0 and data.d_k[-1] == 12.0 and data.d_k.size == 49


def test_temperature_patterns_data_sharpens_as_the_temperature_falls():
    data = temperature_patterns_data(d_k=16, n=5, seed=6)
    assert isinstance(data, TemperaturePatterns)
    assert data.temperatures == (2.0, 4.0, 8.0)
    assert all(weights.shape == (5, 5) for weights in data.weights)
    assert all(np.allclose(weights.sum(axis=-1), 1.0) for weights in data.weights)
    peaks = [float(weights.max()) for weights in data.weights]
    assert peaks[0] > peaks[1] > peaks[2]


# -- One policy validation, one mean ± standard error -------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "policy", "error", "message"),
    [
        ({}, "cube", ValueError, r"^policy must be one of \('none', 'sqrt', 'linear'\) or a callable of d_k; got 'cube'$"),
        ({"name": "scale_policy"}, 2, TypeError, "^scale_policy must be a name or a callable of d_k; got int$"),
        ({"choices": ("sqrt", "linear")}, "none", ValueError, r"^policy must be one of \('sqrt', 'linear'\); got 'none'$"),
        ({"choices": ("sqrt", "linear")}, np.sqrt, ValueError, "policy must be one of"),
    ],
)
def test_scaling_policy_names_the_argument(kwargs, policy, error, message):
    with pytest.raises(error, match=message):
        scaling_policy(policy, **kwargs)


def test_scaling_policy_gives_labels_and_factors():
    def quarter(d_k):
        return 0.25

    assert scaling_policy("linear")[0] == "linear" and scaling_policy("linear")[1](8) == 1 / 8
    assert scaling_policy(quarter) == ("quarter", quarter)
    assert scale_for(quarter, 8) == 0.25
    with pytest.raises(ValueError, match="^scale_policy gave the factor"):
        scale_for(lambda d: 0.0, 8, name="scale_policy")


def test_the_chapter_modules_validate_policies_through_scaling_policy(monkeypatch):
    # A planted fault in the one validator reaches every module that takes a policy.
    from attention_scaling import correlation, simulate, training

    def refuse(policy, *, name="policy", choices=None):
        raise ValueError(f"planted: {name}")

    monkeypatch.setattr(simulate, "scaling_policy", refuse)
    monkeypatch.setattr(correlation, "scaling_policy", refuse)
    monkeypatch.setattr(training, "scaling_policy", refuse)
    with pytest.raises(ValueError, match="planted: policy"):
        scale_for("sqrt", 4)
    with pytest.raises(ValueError, match="planted: policy"):
        correlation.predicted_logit_mean(0.5, 16, "sqrt")
    with pytest.raises(ValueError, match="planted: scale_policy"):
        training._policy("sqrt", 4)


def test_mean_estimate_along_an_axis_equals_one_estimate_per_row_bit_for_bit():
    draws = np.random.default_rng(5).standard_normal((7, 301)) * np.arange(1, 8)[:, None]
    rows = mean_estimate(draws, axis=1)
    columns = mean_estimate(draws.T, axis=0)
    for i, row in enumerate(draws):
        single = mean_estimate(row)
        assert (rows.value[i], rows.standard_error[i]) == (single.value, single.standard_error)
        assert (columns.value[i], columns.standard_error[i]) == (single.value, single.standard_error)
    assert rows.contains(0.0, z=6) and not rows.contains(10.0)


@pytest.mark.parametrize(
    ("samples", "axis", "message"),
    [(np.zeros((3, 1)), 1, "at least 2 finite draws; got 1"), (np.zeros(3), 1, "axis must be an axis"),
     ([1.0, np.inf], None, "at least 2 finite draws")],
)
def test_mean_estimate_refuses_too_few_draws_and_bad_axes(samples, axis, message):
    with pytest.raises(ValueError, match=message):
        mean_estimate(samples, axis=axis)
