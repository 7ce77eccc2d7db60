"""The top-two gap: its distribution against scipy and Monte Carlo, and the sweep of saturated rows."""

import math

import numpy as np
import pytest

from attention_scaling import softmax, softmax_jacobian
from attention_scaling.gradients import softmax_jacobian_norm
from attention_scaling.site.checks import PageCheckError
from attention_scaling.saturation import (
    SaturatedRows,
    gap_density_at_zero,
    gap_distribution,
    gap_monte_carlo,
    gap_threshold,
    saturated_rows_data,
    top_two_gap,
)

scipy = pytest.importorskip("scipy")
from scipy import integrate, stats  # noqa: E402


@pytest.mark.parametrize("n", [2, 3, 8, 32])
@pytest.mark.parametrize("g", [0.0, 0.05, 0.5, 2.0, 5.0])
def test_the_distribution_matches_adaptive_quadrature(n, g):
    def integrand(x):
        return stats.norm.pdf(x) * (stats.norm.cdf(x) ** (n - 1) - stats.norm.cdf(x - g) ** (n - 1))

    reference = n * integrate.quad(integrand, -np.inf, np.inf, epsabs=1e-13, limit=200)[0]
    assert float(gap_distribution(g, n)) == pytest.approx(reference, abs=1e-10)


def test_two_scores_give_erf_of_half_the_gap():
    gaps = np.linspace(0, 6, 13)
    assert np.allclose(gap_distribution(gaps, 2), [math.erf(g / 2) for g in gaps], atol=1e-12)
    assert gap_distribution(gaps, 2).shape == gaps.shape


@pytest.mark.parametrize("n", [2, 8])
def test_the_density_at_zero_is_the_slope_of_the_distribution(n):
    h = 1e-4
    slope = float(gap_distribution(h, n)) / h
    assert gap_density_at_zero(n) == pytest.approx(slope, rel=1e-3)
    reference = n * (n - 1) * integrate.quad(lambda x: stats.norm.pdf(x) ** 2 * stats.norm.cdf(x) ** (n - 2),
                                             -np.inf, np.inf)[0]
    assert gap_density_at_zero(n) == pytest.approx(reference, abs=1e-10)


@pytest.mark.parametrize("n", [2, 8])
def test_monte_carlo_agrees_with_the_integral_within_four_standard_errors(n):
    gaps = np.array([0.1, 0.5, 1.0, 2.0])
    share, se = gap_monte_carlo(gaps, n, n_samples=40_000, seed=7)
    assert np.all(np.abs(share - gap_distribution(gaps, n)) <= 4 * se)


def test_monte_carlo_is_reproducible_and_seed_dependent():
    first = gap_monte_carlo([0.5], 8, n_samples=1000, seed=3)
    again = gap_monte_carlo([0.5], 8, n_samples=1000, seed=3)
    other = gap_monte_carlo([0.5], 8, n_samples=1000, seed=4)
    assert np.array_equal(first[0], again[0]) and not np.array_equal(first[0], other[0])


def test_the_frobenius_norm_matches_the_jacobian_and_the_gap_bound():
    rng = np.random.default_rng(0)
    scores = rng.standard_normal((500, 8)) * np.array([[0.1], [1.0], [10.0], [100.0], [1000.0]]).repeat(100, 0)
    norms = softmax_jacobian_norm(scores)
    direct = np.linalg.norm(softmax_jacobian(softmax(scores)), axis=(-2, -1))
    # At spreads 0.1 and 1 no weight is near 1, and the direct product is accurate too.
    assert np.allclose(norms[:200], direct[:200], rtol=1e-9, atol=0)
    assert np.allclose(norms, direct, rtol=0, atol=1e-14)
    assert np.all(norms <= 4 * 7 * np.exp(-top_two_gap(scores)) * (1 + 1e-12))
    # A saturated row keeps its relative precision: its four entries are +-p_1 p_2, p_2 about e^-40.
    assert softmax_jacobian_norm([40.0, 0.0])[()] == pytest.approx(2 * math.exp(-40), rel=1e-9)


def test_the_frobenius_norm_is_accurate_for_saturated_rows():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 50
    rng = np.random.default_rng(1)
    scores = rng.standard_normal((20, 8)) * 300.0
    for row, norm in zip(scores, softmax_jacobian_norm(scores)):
        weights = [mpmath.e ** mpmath.mpf(float(value)) for value in row]
        total = sum(weights)
        p = [weight / total for weight in weights]
        exact = mpmath.sqrt(sum((p[i] * (int(i == k) - p[k])) ** 2 for i in range(8) for k in range(8)))
        assert norm == pytest.approx(float(exact), rel=1e-12)


def test_two_tied_scores_have_norm_one_half():
    # p = (1/2, 1/2): every entry is +-1/4, so ||J||_F = 1/2, within the bound 4 (n - 1) e^0 = 4.
    assert softmax_jacobian_norm([[0.0, 0.0]])[0] == pytest.approx(0.5)


def test_top_two_gap_and_threshold():
    assert top_two_gap([[1.0, 5.0, 4.5]]).tolist() == [0.5]
    assert gap_threshold(8, 0.1) == pytest.approx(math.log(280))


@pytest.mark.parametrize("call, message", [
    (lambda: gap_distribution(1.0, 1), "n must be an integer >= 2"),
    (lambda: gap_distribution(-0.1, 8), "g must be finite gaps >= 0"),
    (lambda: gap_distribution(np.inf, 8), "g must be finite gaps >= 0"),
    (lambda: gap_density_at_zero(2.0), "n must be an integer >= 2"),
    (lambda: gap_threshold(8, 28.0), r"t must be a number in \(0, 4\(n - 1\)\)"),
    (lambda: gap_threshold(8, 0), r"t must be a number in"),
    (lambda: gap_monte_carlo([0.5], 8, n_samples=0), "n_samples must be a positive integer"),
    (lambda: top_two_gap([1.0]), "at least 2 entries"),
    (lambda: saturated_rows_data((64, 16)), "d_values must be increasing positive integers"),
    (lambda: saturated_rows_data(()), "d_values must be increasing positive integers"),
    (lambda: saturated_rows_data((16,), n_rows=0), "n_rows must be a positive integer"),
    (lambda: saturated_rows_data((16,), n_keys=1), "n must be an integer >= 2"),
])
def test_bad_arguments_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.fixture(scope="module")
def sweep():
    return saturated_rows_data((16, 64, 256, 1024), n_rows=1500, seed=5)


def test_the_sweep_is_reproducible():
    first = saturated_rows_data((16, 64), n_rows=200, seed=9)
    again = saturated_rows_data((16, 64), n_rows=200, seed=9)
    assert isinstance(first, SaturatedRows)
    assert np.array_equal(first.fraction, again.fraction) and np.array_equal(first.bound, again.bound)
    assert not np.array_equal(first.mean_norm, saturated_rows_data((16, 64), n_rows=200, seed=10).mean_norm)


def test_measured_fractions_lie_under_the_bound_and_fall_like_one_over_root_dk(sweep):
    assert sweep.within_bound
    assert np.all(sweep.fraction_low <= sweep.bound)
    assert np.all(np.diff(sweep.fraction) < 0)
    slope = np.polyfit(np.log(sweep.d_k), np.log(sweep.fraction), 1)[0]
    assert -0.65 < slope < -0.35
    # The bound approaches its asymptote f_G(0) ell / sqrt(d_k) from below as d_k grows.
    ratio = sweep.bound / sweep.asymptote
    assert np.all(np.diff(ratio) > 0) and ratio[-1] == pytest.approx(1, abs=0.15)


def test_the_mean_decays_like_root_dk_while_the_median_collapses(sweep):
    scaled = np.sqrt(sweep.d_k) * sweep.mean_norm
    assert np.all((0.8 < scaled) & (scaled < 2.0))
    assert sweep.median_norm[-1] < 1e-5 < sweep.median_norm[0]


def test_the_page_refuses_a_fraction_above_the_bound(sweep):
    from dataclasses import replace

    from attention_scaling.proofs import gap_probability, saturated_jacobian
    from attention_scaling.site import glue_fields
    from attention_scaling.site.saturation import gap_numbers

    jacobian, probability = saturated_jacobian(), gap_probability()
    (share,), (se,) = gap_monte_carlo([0.5], 8, seed=3)
    numbers = gap_numbers(jacobian, probability, 0.5, share, se, replace(sweep, median_norm=sweep.median_norm * 0))
    assert glue_fields(numbers, "gap")["gap_n"] == 8
    broken = replace(sweep, fraction_low=sweep.bound + 0.01)
    with pytest.raises(PageCheckError, match="no measured fraction lies above the bound"):
        gap_numbers(jacobian, probability, 0.5, share, se, broken)
    with pytest.raises(PageCheckError, match="Monte Carlo estimate of F_G agrees"):
        gap_numbers(jacobian, probability, 0.5, share + 10 * se, se, sweep)
    flat = replace(sweep, fraction=np.full(4, 0.3), fraction_low=np.full(4, 0.0))
    with pytest.raises(PageCheckError, match="falls like 1/sqrt"):
        gap_numbers(jacobian, probability, 0.5, share, se, flat)


def test_the_glued_numbers_are_plain_python_numbers(sweep):
    # myst-nb formats a glued number from its text/plain repr: np.float64(...) would not parse.
    from attention_scaling.proofs import gap_probability, saturated_jacobian
    from attention_scaling.site import glue_fields
    from attention_scaling.site.saturation import gap_numbers

    (share,), (se,) = gap_monte_carlo([0.5], 8, seed=3)
    values = glue_fields(gap_numbers(saturated_jacobian(), gap_probability(), 0.5, share, se, sweep), "gap")
    assert all(type(value) in (int, float) for value in values.values()), values


def test_every_sweep_of_unscaled_rows_measures_the_same_rows_the_same_way():
    # Issue 53, item 7: the saturation chapter's sweep, its gap section and the bounded-logits chapter draw
    # their rows from query_key_scores at one (d_k, seed), and count starved rows by one threshold.
    from attention_scaling.bounded_logits import capped_gradients
    from attention_scaling.saturation import gradient_distribution

    sweep = gradient_distribution([1024], n_queries=400).summary("score", "none", 1024)
    gap = saturated_rows_data((1024,), n_rows=400)
    capped = capped_gradients((1024,), (math.inf,), n_rows=400)
    assert gap.median_norm[0] == sweep.median == capped.medians[0, 0, 0]
    assert capped.starved[0, 0, 0] == sweep.fraction_below and capped.thresholds[0] == sweep.threshold


def test_the_mean_jacobian_is_measured_on_the_rows_of_query_key_scores():
    from attention_scaling.saturation import mean_jacobian_data
    from attention_scaling.simulate import query_key_scores

    data = mean_jacobian_data((64, 1024), n_rows=5000, seed=3)
    scores, norms = query_key_scores(1024, 5000, 8, seed=3)
    sizes = np.sqrt(1024) * softmax_jacobian_norm(scores)
    assert data.scaled_mean[1] == pytest.approx([sizes.mean(), sizes.std(ddof=1) / np.sqrt(5000)])
    assert data.standard_mean[0] == pytest.approx(softmax_jacobian_norm(scores / norms[:, None]).mean())
    assert data.ratio_limit == pytest.approx(data.limit / data.standard_mean[0])


@pytest.mark.parametrize(("kwargs", "message"), [({"d_values": (64, 16)}, "increasing"), ({"d_values": ()}, "increasing"),
                                                 ({"n_rows": 1}, "n_rows must be an integer >= 2"),
                                                 ({"n_keys": 1}, "n_keys must be an integer >= 2")])
def test_the_mean_jacobian_refuses_bad_input(kwargs, message):
    from attention_scaling.saturation import mean_jacobian_data

    with pytest.raises(ValueError, match=message):
        mean_jacobian_data(**kwargs)
