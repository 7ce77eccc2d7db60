"""Page support of docs/dot-product-variance.md: the example after the general theorem and the numeric check."""

import pytest
import sympy as sp

from attention_scaling.proofs import dot_product_general_moments
from attention_scaling.simulate import Estimate, dot_product_samples, variance_estimate
from attention_scaling.site import dot_product_variance as page, glue_fields
from attention_scaling.site.checks import PageCheckError
from se_checks import SE_REL, dot_variance_se, within


def test_general_moments_example():
    example = page.general_moments_example(dot_product_general_moments(), sigma=2)
    assert glue_fields(example, "example") == {
        "example_sigma": 2, "example_scaled_variance": 16, "example_nonzero_mean_square": sp.Rational(1, 2)}
    assert page.general_moments_example(dot_product_general_moments(), sigma=3).scaled_variance == 81


class FakeProof:
    """A proof whose result is not what the theorem says."""

    def __init__(self, rhs):
        self.result = sp.Eq(sp.Symbol("V"), rhs)


def test_general_moments_example_fails_when_the_result_is_wrong():
    # Planted fault: a result that forgot the variances, so the scaled variance is 1.
    from attention_scaling.proofs import d_k

    with pytest.raises(PageCheckError, match="is a whole number, not 1"):
        page.general_moments_example(FakeProof(d_k), sigma=2)


def test_the_nonzero_mean_example_is_checked_against_the_result():
    # Planted fault: a result with the mean terms left out gives variance 1/2 at the nonzero-mean example.
    from attention_scaling.proofs import d_k, sigma_k, sigma_q

    with pytest.raises(PageCheckError, match="unit variance"):
        page.general_moments_example(FakeProof(d_k * sigma_q**2 * sigma_k**2), sigma=2)


def test_the_page_says_zero_means_are_neither_necessary_nor_sufficient():
    from pathlib import Path

    text = (Path(__file__).parents[1] / "docs" / "dot-product-variance.md").read_text(encoding="utf-8")
    assert "only when $\\mu_q = \\mu_k = 0$" not in text
    assert "neither necessary nor sufficient" in text  # the examples: a nonzero mean gives 1, sigma = 2 gives 16


def test_numeric_check():
    d_k, n = 64, 200_000
    estimate = variance_estimate(dot_product_samples(d_k, n, seed=4))
    values = glue_fields(page.numeric_check(estimate, d_k, n), "numeric")
    assert values["numeric_d_k"] == d_k and values["numeric_n_samples"] == n
    # The true variance is d_k; 5 SE (se_checks.Z) of the SE the page reports, which
    # must itself match sqrt((2 d_k^2 + 6 d_k) / n) (se_checks.SE_REL).
    assert values["numeric_variance"] == within(d_k, values["numeric_standard_error"])
    assert values["numeric_standard_error"] == pytest.approx(dot_variance_se(d_k, n), rel=SE_REL)
    assert values["numeric_low"] < 64 < values["numeric_high"]


def test_numeric_check_fails_when_the_interval_misses_d_k():
    # Planted fault: an estimator that halves the variance.
    estimate = variance_estimate(dot_product_samples(64, 20_000, seed=4) / 2 ** 0.5)
    with pytest.raises(PageCheckError, match="the proved variance d_k lies inside the Monte Carlo interval"):
        page.numeric_check(estimate, 64, 20_000)
    with pytest.raises(PageCheckError, match="d_k=64, low=.*, high="):
        page.numeric_check(Estimate(60.0, 0.1), 64, 20_000)
