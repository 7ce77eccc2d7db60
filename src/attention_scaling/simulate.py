r"""Seeded Monte Carlo estimates, each with its standard error.

Randomness comes only from ``numpy.random.default_rng(seed)``, so every
number is the same on every build.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Estimate", "dot_product_samples", "variance_estimate"]

# Draws are generated in blocks of this many rows so that memory stays bounded
# (a block of 4096-dimensional float64 vectors is about 134 MB per operand).
_BLOCK = 4096


@dataclass(frozen=True)
class Estimate:
    """A Monte Carlo estimate and its standard error.

    Examples
    --------
    >>> from attention_scaling.simulate import Estimate
    >>> Estimate(1.02, 0.01).contains(1.0)
    True
    """

    value: float
    standard_error: float

    def interval(self, z: float = 3.0) -> tuple[float, float]:
        """The interval ``value ± z·standard_error`` (z = 3: about 99.7 % for a normal error)."""
        return self.value - z * self.standard_error, self.value + z * self.standard_error

    def contains(self, target: float, z: float = 3.0) -> bool:
        """Whether ``target`` lies within ``z`` standard errors of the estimate."""
        low, high = self.interval(z)
        return low <= target <= high


def dot_product_samples(d_k: int, n_samples: int, *, seed: int) -> np.ndarray:
    r"""Draw ``n_samples`` dot products :math:`q \cdot k` of standard normal vectors.

    Parameters
    ----------
    d_k : int
        Dimension of the query and key vectors, at least 1.
    n_samples : int
        How many independent pairs to draw, at least 2.
    seed : int
        Seed for ``numpy.random.default_rng``.

    Returns
    -------
    numpy.ndarray, shape (n_samples,)
        The dot products, unscaled.

    Raises
    ------
    ValueError
        If ``d_k < 1`` or ``n_samples < 2``.

    Examples
    --------
    >>> from attention_scaling.simulate import dot_product_samples
    >>> samples = dot_product_samples(4, 3, seed=0)
    >>> samples.shape
    (3,)
    >>> bool((samples == dot_product_samples(4, 3, seed=0)).all())   # seeded
    True
    """
    if isinstance(d_k, bool) or not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k must be an integer >= 1; got {d_k!r}")
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer >= 2; got {n_samples!r}")
    rng = np.random.default_rng(seed)
    out = np.empty(n_samples)
    rows = max(1, _BLOCK * 64 // d_k)
    for start in range(0, n_samples, rows):
        stop = min(start + rows, n_samples)
        q = rng.standard_normal((stop - start, d_k))
        k = rng.standard_normal((stop - start, d_k))
        out[start:stop] = np.einsum("ij,ij->i", q, k)
    return out


def variance_estimate(samples) -> Estimate:
    r"""Sample variance of independent draws, with its standard error.

    Parameters
    ----------
    samples : array_like, shape (n,)
        Independent draws of one random variable, ``n >= 4``.

    Returns
    -------
    Estimate
        The unbiased sample variance :math:`s^2` and the standard error
        :math:`\sqrt{(\hat m_4 - s^4)/n}`, where :math:`\hat m_4` is the sample
        fourth central moment: the large-sample error of :math:`s^2` for any
        distribution with a finite fourth moment.

    Raises
    ------
    ValueError
        If there are fewer than 4 finite samples or the array is not 1-D.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.simulate import variance_estimate
    >>> draws = np.random.default_rng(0).normal(scale=2.0, size=100_000)
    >>> variance_estimate(draws).contains(4.0)
    True
    """
    x = np.asarray(samples, dtype=np.float64)
    if x.ndim != 1 or x.size < 4:
        raise ValueError(f"samples must be a 1-D array of at least 4 draws; got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("samples must be finite")
    centred = x - x.mean()
    variance = centred.var(ddof=1)
    fourth = np.mean(centred**4)
    return Estimate(float(variance), float(np.sqrt(max(fourth - variance**2, 0.0) / x.size)))
