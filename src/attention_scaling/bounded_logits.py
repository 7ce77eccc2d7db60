r"""Bounded logits: soft-capping, QK-norm with a learned scale, and dispersion.

Three ways of keeping attention logits in a bounded range, and what a bound
implies for the weights:

* :func:`soft_cap` is Gemma 2's :math:`z \mapsto C \tanh(z/C)`;
  :func:`capped_gradients` measures what it does to the softmax Jacobian,
  the factor :math:`1 - \tanh^2(z/C)` of the chain rule included;
* :func:`qknorm_initial_scale` is the initial value :math:`g_0 = \log_2(L^2 - L)`
  of the learned scale of QK-norm (Henry et al. 2020), and
  :func:`qknorm_initial_logits` measures the spread and entropy of
  :math:`g_0\, \hat q \cdot \hat k` for random directions;
* :func:`weight_bounds` gives the interval every softmax weight of :math:`n`
  logits of spread at most :math:`\delta` lies in,
  :math:`[e^{-\delta}/n,\ e^{\delta}/n]`, and :func:`largest_weights` measures
  the largest weight against it as :math:`n` grows (dispersion).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attention_scaling._checks import as_float_array, integer_at_least, positive_finite_scalar, require_finite
from attention_scaling._softmax import softmax
from attention_scaling.gradients import quantile_interval, softmax_jacobian_norm, starved_threshold, wilson_interval
from attention_scaling.simulate import SCORE_ROWS_SEED, mean_estimate, query_key_scores

__all__ = [
    "CappedGradients",
    "QKNormLogits",
    "LargestWeights",
    "capped_gradients",
    "largest_weights",
    "qknorm_initial_logits",
    "qknorm_initial_scale",
    "soft_cap",
    "weight_bounds",
]


def soft_cap(logits, cap: float) -> np.ndarray:
    r"""Gemma 2's soft-capping, :math:`C \tanh(z / C)`: near :math:`z` when :math:`|z| \ll C`, never beyond :math:`\pm C`.

    Parameters
    ----------
    logits : array_like
        Finite logits :math:`z`.
    cap : float
        The cap :math:`C`, finite and > 0 (50 for Gemma 2's attention, 30 for its final logits).

    Returns
    -------
    numpy.ndarray
        The capped logits, of the shape of ``logits``.

    Raises
    ------
    TypeError
        If ``logits`` is not real and numeric, or ``cap`` is not a number.
    ValueError
        If a logit is not finite, or ``cap`` is not finite and > 0.

    Examples
    --------
    >>> from attention_scaling.bounded_logits import soft_cap
    >>> [round(float(value), 4) for value in soft_cap([1.0, 50.0, 1000.0], 50.0)]
    [0.9999, 38.0797, 50.0]
    """
    cap = positive_finite_scalar(cap, "cap")
    z = as_float_array(logits, "logits").astype(np.float64, copy=False)
    require_finite(z, "logits")
    return cap * np.tanh(z / cap)


def weight_bounds(n: int, spread: float) -> tuple[float, float]:
    r"""The interval :math:`[e^{-\delta}/n,\ e^{\delta}/n]` that every softmax weight of :math:`n` logits of spread :math:`\le \delta` lies in.

    Parameters
    ----------
    n : int
        Number of logits, at least 1.
    spread : float
        :math:`\delta = \max z - \min z`, finite and >= 0.

    Returns
    -------
    tuple of float
        ``(lower, upper)``; the upper end is capped at 1.

    Raises
    ------
    ValueError
        If ``n < 1`` or ``spread`` is negative or not finite.

    Examples
    --------
    >>> from attention_scaling.bounded_logits import weight_bounds
    >>> weight_bounds(4, 0.0)
    (0.25, 0.25)
    >>> [round(value, 4) for value in weight_bounds(1000, 2.0)]
    [0.0001, 0.0074]
    """
    n = integer_at_least(n, "n", 1)
    if not (isinstance(spread, (int, float)) and math.isfinite(spread) and spread >= 0):
        raise ValueError(f"spread must be a finite number >= 0; got {spread!r}")
    return math.exp(-spread) / n, min(1.0, math.exp(spread) / n)


def qknorm_initial_scale(length) -> np.ndarray:
    r"""QK-norm's initial learned scale :math:`g_0 = \log_2(L^2 - L)`, with :math:`L` the training length.

    Henry et al. (2020) take :math:`L` as the 97.5th percentile of the
    training lengths; :math:`L^2 - L` is the number of ordered pairs of
    distinct positions.

    Parameters
    ----------
    length : int or array_like of int
        :math:`L \ge 2`.

    Returns
    -------
    numpy.ndarray
        :math:`g_0`, of the shape of ``length``.

    Raises
    ------
    ValueError
        If a length is below 2 or not an integer.

    Examples
    --------
    >>> from attention_scaling.bounded_logits import qknorm_initial_scale
    >>> [round(float(g), 2) for g in qknorm_initial_scale([72, 79, 4096])]
    [12.32, 12.59, 24.0]
    """
    lengths = np.asarray(length)
    if lengths.dtype.kind not in "iu" or np.any(lengths < 2):
        raise ValueError(f"length must hold integers >= 2; got {length!r}")
    lengths = lengths.astype(np.float64)
    return np.log2(lengths**2 - lengths)


@dataclass(frozen=True)
class CappedGradients:
    r"""The softmax Jacobian of capped unscaled scores, per query row, across :math:`d_k`.

    Attributes
    ----------
    d_values : tuple of int
        Head dimensions; the raw scores are the rows :math:`q \cdot k_j` of
        :func:`~attention_scaling.simulate.query_key_scores`.
    caps : tuple of float
        Caps :math:`C`; ``math.inf`` is no cap.
    n_keys, n_rows : int
        Keys per row and rows per :math:`d_k`.
    thresholds : numpy.ndarray
        Shape (len(d_values),). A row is *starved* when its norm is below this
        (:func:`~attention_scaling.gradients.starved_threshold` of the uncapped
        rows under the standard scale, at each :math:`d_k`).
    medians : numpy.ndarray
        Shape (len(caps), len(d_values), 3). Median of :math:`\lVert J \operatorname{diag}(1 - \tanh^2(s/C)) \rVert_F`
        and its 95 % distribution-free interval (``median, low, high``).
    starved : numpy.ndarray
        Shape (len(caps), len(d_values), 3). Fraction of starved rows and its 95 % Wilson interval.
    reference : numpy.ndarray
        Shape (len(d_values),). The median norm with the standard scale :math:`1/\sqrt{d_k}` and no cap.
    """

    d_values: tuple[int, ...]
    caps: tuple[float, ...]
    n_keys: int
    n_rows: int
    thresholds: np.ndarray
    medians: np.ndarray
    starved: np.ndarray
    reference: np.ndarray


def capped_gradients(d_values=(16, 64, 256, 1024, 4096), caps=(math.inf, 50.0, 10.0), *, n_keys: int = 8,
                     n_rows: int = 2000, seed: int = SCORE_ROWS_SEED) -> CappedGradients:
    r"""Measure the Jacobian of :math:`\operatorname{softmax}(C \tanh(s/C))` with respect to unscaled scores :math:`s`.

    Parameters
    ----------
    d_values : sequence of int
        Head dimensions :math:`d_k \ge 1`.
    caps : sequence of float
        Caps, each > 0 (``math.inf`` for none).
    n_keys, n_rows : int
        Keys per row (>= 2) and rows per :math:`d_k` (>= 1).
    seed : int, default SCORE_ROWS_SEED
        Base seed of the rows; every cap sees the same scores, the same rows
        as the saturation chapter's at the same ``(d_k, seed)``.

    Returns
    -------
    CappedGradients

    Examples
    --------
    >>> import math
    >>> from attention_scaling.bounded_logits import capped_gradients
    >>> result = capped_gradients((1024,), (math.inf, 10.0), n_rows=400)
    >>> bool(result.medians[1, 0, 0] > result.medians[0, 0, 0])   # a small cap un-saturates rows
    True
    """
    d_values = tuple(integer_at_least(d, "d_k", 1) for d in d_values)
    caps = tuple(math.inf if cap == math.inf else positive_finite_scalar(cap, "cap") for cap in caps)
    n_keys, n_rows = integer_at_least(n_keys, "n_keys", 2), integer_at_least(n_rows, "n_rows", 1)
    medians = np.empty((len(caps), len(d_values), 3))
    starved = np.empty((len(caps), len(d_values), 3))
    reference, thresholds = np.empty(len(d_values)), np.empty(len(d_values))
    for column, d_k in enumerate(d_values):
        scores, _ = query_key_scores(d_k, n_rows, n_keys, seed=seed)
        scaled = softmax_jacobian_norm(scores / math.sqrt(d_k)) / math.sqrt(d_k)
        reference[column], thresholds[column] = np.median(scaled), starved_threshold(scaled)
        for row, cap in enumerate(caps):
            if cap == math.inf:
                norms = softmax_jacobian_norm(scores)
            else:
                norms = softmax_jacobian_norm(soft_cap(scores, cap), 1.0 - np.tanh(scores / cap) ** 2)
            medians[row, column] = quantile_interval(norms, 0.5)
            count = int(np.sum(norms < thresholds[column]))
            starved[row, column] = (count / n_rows, *wilson_interval(count, n_rows))
    return CappedGradients(d_values, caps, n_keys, n_rows, thresholds, medians, starved, reference)


@dataclass(frozen=True)
class QKNormLogits:
    r"""The logits :math:`g\, \hat q \cdot \hat k` of random unit directions at QK-norm's initial scale.

    Attributes
    ----------
    d_values : tuple of int
        Head dimensions.
    scale : float
        The scale :math:`g`.
    n_keys, n_rows : int
        Keys per row and rows per :math:`d`.
    std : numpy.ndarray
        Shape (len(d_values), 2). Standard deviation of the logits and its standard error (delta method).
    entropy : numpy.ndarray
        Shape (len(d_values), 2). Mean of :math:`H/\ln n` over the rows, and its standard error.
    largest : numpy.ndarray
        Shape (len(d_values), 2). Mean of the largest weight over the rows, and its standard error.
    """

    d_values: tuple[int, ...]
    scale: float
    n_keys: int
    n_rows: int
    std: np.ndarray
    entropy: np.ndarray
    largest: np.ndarray


def _unit_rows(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    vectors = rng.standard_normal(shape)
    return vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)


def qknorm_initial_logits(scale: float, d_values=(16, 64, 256), *, n_keys: int = 64, n_rows: int = 500,
                          seed: int = 2010) -> QKNormLogits:
    r"""Measure :math:`g\, \hat q \cdot \hat k` for independent uniform directions: spread, entropy, largest weight.

    Parameters
    ----------
    scale : float
        :math:`g > 0`, for example :func:`qknorm_initial_scale` of a length.
    d_values : sequence of int
        Head dimensions, each >= 2.
    n_keys, n_rows : int
        Keys per row (>= 2) and rows per dimension (>= 2).
    seed : int
        Seed.

    Returns
    -------
    QKNormLogits

    Examples
    --------
    >>> from attention_scaling.bounded_logits import qknorm_initial_logits
    >>> result = qknorm_initial_logits(12.0, (64,), n_rows=200)
    >>> round(float(result.std[0, 0]), 1)        # g / sqrt(d) = 1.5
    1.5
    """
    scale = positive_finite_scalar(scale, "scale")
    d_values = tuple(integer_at_least(d, "d", 2) for d in d_values)
    n_keys, n_rows = integer_at_least(n_keys, "n_keys", 2), integer_at_least(n_rows, "n_rows", 2)
    rng = np.random.default_rng(seed)
    std, entropy, largest = (np.empty((len(d_values), 2)) for _ in range(3))
    for index, d in enumerate(d_values):
        queries, keys = _unit_rows(rng, (n_rows, 1, d)), _unit_rows(rng, (n_rows, n_keys, d))
        logits = scale * np.einsum("rqd,rkd->rqk", queries, keys)  # shape (n_rows, 1, n_keys)
        variance = mean_estimate(logits.ravel() ** 2)  # the mean is 0 by symmetry

        # The delta method: the standard error of sqrt(v) is that of v over 2 sqrt(v).
        std[index] = math.sqrt(variance.value), variance.standard_error / (2 * math.sqrt(variance.value))
        weights = softmax(logits[:, 0])
        for target, samples in ((entropy, -np.sum(weights * np.log(weights), axis=-1) / math.log(n_keys)),
                                (largest, weights.max(axis=-1))):
            estimate = mean_estimate(samples)
            target[index] = estimate.value, estimate.standard_error
    return QKNormLogits(d_values, scale, n_keys, n_rows, std, entropy, largest)


@dataclass(frozen=True)
class LargestWeights:
    r"""The largest softmax weight of bounded logits, against the dispersion bound, as :math:`n` grows.

    Attributes
    ----------
    lengths : tuple of int
        Numbers of keys :math:`n`.
    spread : float
        The bound :math:`\delta` on the spread of every row's logits.
    n_rows : int
        Rows per length.
    largest : numpy.ndarray
        Shape (len(lengths), 3). Median of the largest weight and its 95 % distribution-free interval.
    bounds : numpy.ndarray
        Shape (len(lengths), 2). :func:`weight_bounds` at each length.
    """

    lengths: tuple[int, ...]
    spread: float
    n_rows: int
    largest: np.ndarray
    bounds: np.ndarray


def largest_weights(lengths=(16, 256, 4096, 65536), spread: float = 4.0, *, n_rows: int = 64,
                    seed: int = 2410) -> LargestWeights:
    r"""The largest weight of rows of :math:`n` logits drawn uniformly from :math:`[0, \delta]`, a spread bounded by :math:`\delta`.

    Parameters
    ----------
    lengths : sequence of int
        Numbers of keys, each >= 1.
    spread : float
        :math:`\delta`, finite and >= 0.
    n_rows : int
        Rows per length, >= 1.
    seed : int
        Seed.

    Returns
    -------
    LargestWeights

    Examples
    --------
    >>> from attention_scaling.bounded_logits import largest_weights
    >>> result = largest_weights((16, 4096), 2.0, n_rows=20)
    >>> bool(result.largest[1, 0] < result.largest[0, 0] <= result.bounds[0, 1])
    True
    """
    lengths = tuple(integer_at_least(n, "n", 1) for n in lengths)
    n_rows = integer_at_least(n_rows, "n_rows", 1)
    bounds = np.array([weight_bounds(n, spread) for n in lengths])
    rng = np.random.default_rng(seed)
    largest = np.array([quantile_interval(softmax(spread * rng.random((n_rows, n))).max(axis=-1), 0.5)
                        for n in lengths])
    return LargestWeights(lengths, float(spread), n_rows, largest, bounds)
