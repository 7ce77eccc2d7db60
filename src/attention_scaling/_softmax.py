r"""Softmax, its logarithm, its Jacobian and the entropy of its output.

All functions work on the last axis (or the one given) and broadcast over the
leading axes, so a whole batch of attention rows goes through one call.
"""

from __future__ import annotations

import numpy as np

from attention_scaling._checks import (
    as_float_array,
    positive_finite_scalar,
    require_distribution,
    require_finite,
    require_ndim,
)

__all__ = [
    "softmax",
    "naive_softmax",
    "log_softmax",
    "softmax_jacobian",
    "attention_entropy",
    "entropy_from_logits",
    "saturation_margin",
]


def _shifted_logits(x, axis: int, temperature: float) -> np.ndarray:
    """Return ``(x - max(x)) / temperature`` after checking the inputs.

    Subtracting the maximum first keeps every exponent at or below zero, so
    ``exp`` cannot overflow, and dividing afterwards means a small temperature
    cannot push a finite input out of range either.
    """
    x = as_float_array(x, "x")
    temperature = positive_finite_scalar(temperature, "temperature")
    require_ndim(x, "x", 1, "(..., n) with at least one axis")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer in [{-x.ndim}, {x.ndim - 1}] for x of shape {x.shape}; got {axis!r}")
    if x.shape[axis] == 0:
        raise ValueError(f"x must have at least one entry along axis {axis}; got shape {x.shape}")
    if np.any(np.isnan(x)) or np.any(np.isposinf(x)):
        raise ValueError("x must contain only finite values or -inf; got NaN or +inf")
    top = np.max(x, axis=axis, keepdims=True)
    if np.any(np.isneginf(top)):
        raise ValueError(f"x has a slice along axis {axis} whose entries are all -inf; its softmax is undefined")
    # x - top can overflow to -inf for inputs near the float limits; that is
    # the right answer (the weight is zero), so the warning is noise.
    with np.errstate(over="ignore"):
        return (x - top) / temperature


def softmax(x, axis: int = -1, temperature: float = 1.0) -> np.ndarray:
    r"""Softmax of ``x / temperature`` along ``axis``, stable for every finite input.

    Parameters
    ----------
    x : array_like
        Real scores. Finite values and ``-inf`` are allowed; a ``-inf`` entry
        gets weight exactly 0 (a masked key).
    axis : int, default -1
        Axis along which the weights sum to 1.
    temperature : float, default 1.0
        Divides the scores before the exponential. Must be finite and > 0.

    Returns
    -------
    numpy.ndarray
        Weights of the same shape as ``x``, non-negative and summing to 1 along
        ``axis``. Floating inputs keep their dtype; integers become float64.

    Raises
    ------
    TypeError
        If ``x`` is not real and numeric, or ``temperature`` is not a number.
    ValueError
        If ``x`` holds NaN or ``+inf``, if a slice is all ``-inf`` or empty, or
        if ``temperature`` is not finite and positive.

    Notes
    -----
    .. math::

       \operatorname{softmax}(x)_i = \frac{e^{(x_i - m)/\tau}}{\sum_j e^{(x_j - m)/\tau}},
       \qquad m = \max_j x_j .

    Subtracting :math:`m` changes nothing mathematically (softmax ignores
    shifts) and keeps every exponent :math:`\le 0`, so nothing overflows.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling import softmax
    >>> softmax([1.0, 2.0, 3.0]).round(4)
    array([0.09  , 0.2447, 0.6652])
    >>> softmax([1000.0, 1001.0]).round(4)      # no overflow
    array([0.2689, 0.7311])
    >>> softmax([0.0, -np.inf])                 # -inf means "masked"
    array([1., 0.])
    >>> softmax([1.0, 2.0, 3.0], temperature=100.0).round(3)
    array([0.33 , 0.333, 0.337])
    """
    shifted = _shifted_logits(x, axis, temperature)
    weights = np.exp(shifted)
    return weights / np.sum(weights, axis=axis, keepdims=True)


def naive_softmax(x, axis: int = -1) -> np.ndarray:
    r"""Softmax computed as ``exp(x) / sum(exp(x))``, without subtracting the maximum.

    A counterexample for teaching, not for use: it shows what the
    max-subtraction in :func:`softmax` prevents. Overflow is allowed to
    happen silently, so the result may hold ``inf`` or ``nan``.

    Parameters
    ----------
    x : array_like
        Real scores.
    axis : int, default -1
        Axis along which the weights are normalised.

    Returns
    -------
    numpy.ndarray
        Same shape as ``x``; floating inputs keep their dtype.

    Raises
    ------
    TypeError
        If ``x`` is not real and numeric.

    Examples
    --------
    >>> from attention_scaling import naive_softmax
    >>> naive_softmax([1.0, 2.0, 3.0]).round(4)        # agrees when nothing overflows
    array([0.09  , 0.2447, 0.6652])
    >>> naive_softmax([1000.0, 1001.0])                # exp(1000) is inf in float64
    array([nan, nan])
    """
    x = as_float_array(x, "x")
    with np.errstate(over="ignore", invalid="ignore"):
        weights = np.exp(x)
        return weights / np.sum(weights, axis=axis, keepdims=True)


def log_softmax(x, axis: int = -1, temperature: float = 1.0) -> np.ndarray:
    r"""Logarithm of :func:`softmax`, computed without taking ``log`` of a tiny weight.

    Parameters
    ----------
    x : array_like
        Real scores; finite values and ``-inf`` (which maps to ``-inf``).
    axis : int, default -1
        Axis along which the exponentials of the result sum to 1.
    temperature : float, default 1.0
        Divides the scores first. Must be finite and > 0.

    Returns
    -------
    numpy.ndarray
        Log-weights of the same shape and dtype rules as :func:`softmax`.

    Raises
    ------
    TypeError
        As for :func:`softmax`.
    ValueError
        As for :func:`softmax`.

    Notes
    -----
    .. math::

       \log \operatorname{softmax}(x)_i = \frac{x_i - m}{\tau}
       - \log \sum_j e^{(x_j - m)/\tau}.

    Examples
    --------
    >>> from attention_scaling import log_softmax
    >>> log_softmax([0.0, 0.0]).round(4)
    array([-0.6931, -0.6931])
    >>> log_softmax([0.0, 800.0]).round(1)      # exp(-800) underflows; its log does not
    array([-800.,    0.])
    """
    shifted = _shifted_logits(x, axis, temperature)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def softmax_jacobian(p) -> np.ndarray:
    r"""Jacobian of softmax, :math:`\operatorname{diag}(p) - p p^\top`, batched.

    Parameters
    ----------
    p : array_like, shape (..., n)
        Softmax outputs: non-negative, each row summing to 1.

    Returns
    -------
    numpy.ndarray, shape (..., n, n)
        ``J[..., i, j]`` is :math:`\partial p_i / \partial x_j`.

    Raises
    ------
    TypeError
        If ``p`` is not a real numeric array.
    ValueError
        If ``p`` is empty, non-finite, negative, or its rows do not sum to 1.

    Notes
    -----
    .. math::

       \frac{\partial p_i}{\partial x_j} = p_i (\delta_{ij} - p_j).

    Every row sums to zero (adding a constant to all logits changes nothing),
    and the entries vanish as ``p`` approaches one-hot.

    Examples
    --------
    >>> from attention_scaling import softmax_jacobian
    >>> softmax_jacobian([0.5, 0.5])
    array([[ 0.25, -0.25],
           [-0.25,  0.25]])
    >>> softmax_jacobian([[1.0, 0.0], [0.5, 0.5]]).shape
    (2, 2, 2)
    """
    p = as_float_array(p, "p")
    require_distribution(p, "p")
    return p[..., :, None] * np.eye(p.shape[-1], dtype=p.dtype) - p[..., :, None] * p[..., None, :]


def _entropy(log_weights: np.ndarray, weights: np.ndarray, total=None, log_total=0.0) -> np.ndarray:
    r"""The one entropy formula, :math:`H = \ln T - \sum_i (w_i / T) \ln w_i`, on the last axis.

    ``weights`` are non-negative weights :math:`w_i` with total :math:`T`
    (``None`` for :math:`T = 1`), ``log_weights`` their logarithms (any finite
    value where a weight is 0: its term is 0 by continuity), and ``log_total``
    is :math:`\ln T`, passed in so that a caller can compute it accurately.
    """
    probabilities = weights if total is None else weights / total[..., None]
    return log_total - np.sum(probabilities * log_weights, axis=-1)


def _entropy_of_shifted(shifted: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """:func:`_entropy` for logits less their row maximum, ``shifted``, and ``weights = exp(shifted)``.

    For callers that have both already; ``weights`` is modified and restored.
    """
    top = np.argmax(shifted, axis=-1)[..., None]
    # The others' total on its own: adding the top's 1 first would round it away.
    np.put_along_axis(weights, top, 0.0, axis=-1)
    rest = weights.sum(axis=-1)
    np.put_along_axis(weights, top, 1.0, axis=-1)
    return _entropy(shifted, weights, 1.0 + rest, np.log1p(rest))


def entropy_from_logits(logits) -> np.ndarray:
    r"""Shannon entropy (nats) of :math:`\operatorname{softmax}` of each row of logits, accurate near one-hot.

    With :math:`m` the largest logit, :math:`s = \sum_{j \ne \text{top}} e^{x_j - m}`
    and :math:`\ln Z = \ln(1 + s)` computed by ``log1p``, the entropy is
    :math:`\ln Z + \sum_j p_j (m - x_j)`. Computing :math:`-\sum p \ln p` from
    the weights instead rounds :math:`p_\text{top}` to 1 once :math:`s` is
    below the float resolution and drops the top weight's share of the
    entropy, about :math:`s`: for two logits a gap :math:`\Delta` apart, a
    fraction :math:`1/(1 + \Delta)` of the whole.

    Parameters
    ----------
    logits : array_like, shape (..., n)
        Finite real logits.

    Returns
    -------
    numpy.ndarray, shape (...)
        Entropies, between 0 and :math:`\ln n`.

    Raises
    ------
    TypeError
        If ``logits`` is not real and numeric.
    ValueError
        If ``logits`` has no axis, an empty last axis, or non-finite entries.

    See Also
    --------
    attention_entropy : the same formula applied to weights as given.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling import entropy_from_logits
    >>> bool(np.isclose(entropy_from_logits([0.0, 0.0, 0.0, 0.0]), np.log(4)))
    True
    >>> f"{float(entropy_from_logits([40.0, 0.0])):.4e}"   # exactly 1.7418e-16, from the weights 1.6993e-16
    '1.7418e-16'
    """
    x = as_float_array(logits, "logits")
    require_ndim(x, "logits", 1, "(..., n)")
    if x.shape[-1] == 0:
        raise ValueError(f"logits must have at least one entry on its last axis; got shape {x.shape}")
    require_finite(x, "logits")
    shifted = x - x.max(axis=-1, keepdims=True)
    return _entropy_of_shifted(shifted, np.exp(shifted))


def attention_entropy(p) -> np.ndarray:
    r"""Shannon entropy, in nats, of probability vectors on the last axis.

    The formula of :func:`entropy_from_logits`, applied to the weights as
    given: log-weights :math:`\ln p_i` and total 1. A weight that has
    rounded to 1 contributes nothing, so for a nearly one-hot row, whose
    largest weight rounds to 1 once the others sum to less than the float
    resolution, the result falls short by about the sum of the others; use
    :func:`entropy_from_logits` when the logits are at hand.

    Parameters
    ----------
    p : array_like, shape (..., n)
        Attention weights: non-negative, each row summing to 1.

    Returns
    -------
    numpy.ndarray, shape (...)
        :math:`H(p) = -\sum_i p_i \ln p_i`, with :math:`0 \ln 0 = 0`; between 0
        (one-hot) and :math:`\ln n` (uniform).

    Raises
    ------
    TypeError
        If ``p`` is not a real numeric array.
    ValueError
        If ``p`` is empty, non-finite, negative, or its rows do not sum to 1.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling import attention_entropy
    >>> float(attention_entropy([1.0, 0.0, 0.0]))
    0.0
    >>> bool(np.isclose(attention_entropy(np.full(4, 0.25)), np.log(4)))
    True
    """
    p = as_float_array(p, "p")
    require_distribution(p, "p")
    # Where p == 0 the term is 0 by continuity; log(1) = 0 gives exactly that.
    log_p = np.log(np.where(p > 0, p, 1))
    # A log-total of 0.0 rather than -sum alone, so that a one-hot row gives 0.0 and not -0.0.
    return _entropy(log_p, p)


def saturation_margin(n: int, fraction: float = 0.1) -> float:
    r"""The margin :math:`x` at which softmax of :math:`[x, 0, \dots, 0]` has saturated.

    Saturated means that the slope :math:`\partial p_1 / \partial x_1 = p_1(1 - p_1)`
    has fallen to ``fraction`` of its largest possible value :math:`\tfrac14`,
    with :math:`p_1` past :math:`\tfrac12`.

    Parameters
    ----------
    n : int
        Number of scores, at least 2 (one preferred, ``n - 1`` at zero).
    fraction : float, default 0.1
        In (0, 1): how far the slope has fallen.

    Returns
    -------
    float
        :math:`x = \ln\bigl((n - 1)\,p / (1 - p)\bigr)` with
        :math:`p = \bigl(1 + \sqrt{1 - \text{fraction}}\bigr) / 2`, the root of
        :math:`p(1 - p) = \text{fraction}/4` above one half.

    Raises
    ------
    ValueError
        If ``n < 2`` or ``fraction`` is not in (0, 1).

    Examples
    --------
    >>> from attention_scaling import saturation_margin, softmax, softmax_jacobian
    >>> x = saturation_margin(4)
    >>> round(x, 3)
    4.736
    >>> p = softmax([x, 0.0, 0.0, 0.0])
    >>> round(float(softmax_jacobian(p)[0, 0]), 6)      # a tenth of 1/4
    0.025
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"n must be an integer >= 2; got {n!r}")
    fraction = positive_finite_scalar(fraction, "fraction")
    if fraction >= 1:
        raise ValueError(f"fraction must be in (0, 1); got {fraction!r}")
    p = (1 + np.sqrt(1 - fraction)) / 2
    return float(np.log((n - 1) * p / (1 - p)))
