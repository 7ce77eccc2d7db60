r"""Page support for "The variance of a dot product" (``docs/dot-product-variance.md``).

The page's proofs are checked by :mod:`attention_scaling.proofs` in visible
cells; the functions here take what those cells computed, check what the
prose says of it, and return a record whose fields are the numbers the
prose quotes (glued by :func:`attention_scaling.site.glue_fields`).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from attention_scaling.proofs import d_k as d_k_symbol
from attention_scaling.proofs import mu_k, mu_q, sigma_k, sigma_q
from attention_scaling.simulate import Estimate
from attention_scaling.site.checks import require

__all__ = ["GeneralMomentsExample", "NumericCheck", "general_moments_example", "numeric_check"]

_PAGE = "dot-product-variance.md"


def _where(section: str) -> str:
    return f"{_PAGE}, section {section}"


@dataclass(frozen=True)
class GeneralMomentsExample:
    r"""The variance of :math:`q \cdot k / \sqrt{d_k}` for zero means and :math:`\sigma_q = \sigma_k = \sigma`.

    Attributes
    ----------
    sigma : int
        The common standard deviation of the components.
    scaled_variance : int
        The variance of the scores divided by :math:`\sqrt{d_k}`.
    nonzero_mean_square : sympy.Rational
        A value :math:`m` with which :math:`\mu_q^2 = \sigma_q^2 = m`,
        :math:`\mu_k = 0`, :math:`\sigma_k = 1` also gives the scaled scores
        unit variance: zero means are sufficient, not necessary.
    """

    sigma: int
    scaled_variance: int
    nonzero_mean_square: object


def general_moments_example(general, sigma: int = 2) -> GeneralMomentsExample:
    r"""The example after the general-moments theorem: zero means, :math:`\sigma_q = \sigma_k = \sigma`.

    Parameters
    ----------
    general : attention_scaling.proofs.Proof
        The checked proof of the general-moments theorem; its result is
        :math:`\operatorname{Var}[q \cdot k]` in terms of the moments.
    sigma : int, default 2
        The common standard deviation, a positive integer.

    Returns
    -------
    GeneralMomentsExample

    Raises
    ------
    PageCheckError
        If the variance of the scaled scores is not an integer other than 1:
        the prose quotes it as a whole number and contrasts it with 1; or if
        the example with a nonzero mean does not give unit variance.

    Examples
    --------
    >>> from attention_scaling.proofs import dot_product_general_moments
    >>> from attention_scaling.site.dot_product_variance import general_moments_example
    >>> general_moments_example(dot_product_general_moments())
    GeneralMomentsExample(sigma=2, scaled_variance=16, nonzero_mean_square=1/2)
    """
    example = {mu_q: 0, mu_k: 0, sigma_q: sigma, sigma_k: sigma}
    value = (general.result.rhs / d_k_symbol).subs(example)
    require(value.is_integer and value != 1, _where("variance-general"),
            "the scaled scores' variance for zero means and sigma_q = sigma_k = sigma is a whole number, not 1",
            sigma=sigma, variance=value)
    half = sp.Rational(1, 2)
    with_mean = (general.result.rhs / d_k_symbol).subs({mu_q: sp.sqrt(half), sigma_q: sp.sqrt(half), mu_k: 0, sigma_k: 1})
    require(sp.simplify(with_mean - 1) == 0, _where("variance-general"),
            "mu_q^2 = sigma_q^2 = 1/2, mu_k = 0, sigma_k = 1 gives the scaled scores unit variance", variance=with_mean)
    return GeneralMomentsExample(sigma=sigma, scaled_variance=int(value), nonzero_mean_square=half)


@dataclass(frozen=True)
class NumericCheck:
    r"""A seeded estimate of :math:`\operatorname{Var}[q \cdot k]` and its interval of three standard errors.

    Attributes
    ----------
    d_k, n_samples : int
        The head dimension and the number of pairs drawn.
    variance, standard_error : float
        The estimate and its standard error.
    low, high : float
        The interval of three standard errors.
    """

    d_k: int
    n_samples: int
    variance: float
    standard_error: float
    low: float
    high: float


def numeric_check(estimate: Estimate, d_k: int, n_samples: int) -> NumericCheck:
    r"""The section "A numeric sanity check": the proved :math:`d_k` must lie in the estimate's interval.

    Parameters
    ----------
    estimate : attention_scaling.simulate.Estimate
        The sample variance of :math:`q \cdot k` and its standard error.
    d_k : int
        The head dimension, the proved variance.
    n_samples : int
        The number of pairs drawn.

    Returns
    -------
    NumericCheck

    Raises
    ------
    PageCheckError
        If the interval of three standard errors does not contain :math:`d_k`.

    Examples
    --------
    >>> from attention_scaling.simulate import dot_product_samples, variance_estimate
    >>> from attention_scaling.site.dot_product_variance import numeric_check
    >>> estimate = variance_estimate(dot_product_samples(16, 20_000, seed=4))
    >>> numeric_check(estimate, 16, 20_000).low < 16
    True
    """
    low, high = estimate.interval()
    require(estimate.contains(d_k), _where("variance-numeric"),
            "the proved variance d_k lies inside the Monte Carlo interval",
            d_k=d_k, low=low, high=high)
    return NumericCheck(d_k=int(d_k), n_samples=int(n_samples), variance=estimate.value,
                        standard_error=estimate.standard_error, low=low, high=high)
