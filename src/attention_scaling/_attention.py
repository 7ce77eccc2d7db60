r"""Scaled dot-product attention: scores, weights and outputs.

Shapes follow the usual convention, with any number of leading batch axes
that broadcast against each other:

* queries ``q``: ``(..., n_q, d_k)``
* keys ``k``: ``(..., n_k, d_k)``
* values ``v``: ``(..., n_k, d_v)``
* ``mask``: boolean, broadcastable to ``(..., n_q, n_k)``, True where a query
  may attend to a key (PyTorch's convention).
"""

from __future__ import annotations

import math

import numpy as np

from attention_scaling._checks import (
    as_float_array,
    positive_finite_scalar,
    require_finite,
    require_ndim,
)
from attention_scaling._softmax import softmax

__all__ = ["attention_scores", "attention_weights", "layer_norm", "scaled_dot_product_attention"]


def _checked_queries_and_keys(q, k) -> tuple[np.ndarray, np.ndarray]:
    q = as_float_array(q, "q")
    k = as_float_array(k, "k")
    require_ndim(q, "q", 2, "(..., n_q, d_k)")
    require_ndim(k, "k", 2, "(..., n_k, d_k)")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must share their last axis d_k; got q of shape {q.shape} and k of shape {k.shape}"
        )
    if q.shape[-1] == 0:
        raise ValueError(f"d_k must be at least 1; got q of shape {q.shape}")
    if k.shape[-2] == 0:
        raise ValueError(f"k must hold at least one key (n_k >= 1); got shape {k.shape}")
    require_finite(q, "q")
    require_finite(k, "k")
    return q, k


def attention_scores(q, k, *, scale: float | None = None) -> np.ndarray:
    r"""Scaled dot products :math:`s = \text{scale} \cdot q k^\top`.

    Parameters
    ----------
    q : array_like, shape (..., n_q, d_k)
        Queries.
    k : array_like, shape (..., n_k, d_k)
        Keys.
    scale : float, optional
        Multiplies every dot product. Defaults to :math:`1/\sqrt{d_k}`; pass
        ``1.0`` for unscaled scores. Must be finite and > 0.

    Returns
    -------
    numpy.ndarray, shape (..., n_q, n_k)
        The logits that softmax turns into attention weights.

    Raises
    ------
    TypeError
        If an input is not real and numeric, or ``scale`` is not a number.
    ValueError
        On mismatched shapes, ``d_k = 0``, no keys, non-finite inputs, a
        ``scale`` that is not finite and positive, or scores that overflow.

    Examples
    --------
    >>> from attention_scaling import attention_scores
    >>> q = [[1.0, 1.0, 1.0, 1.0]]
    >>> k = [[1.0, 1.0, 1.0, 1.0], [1.0, -1.0, 1.0, -1.0]]
    >>> attention_scores(q, k)                # 1/sqrt(4) = 0.5
    array([[2., 0.]])
    >>> attention_scores(q, k, scale=1.0)
    array([[4., 0.]])
    """
    q, k = _checked_queries_and_keys(q, k)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    scale = positive_finite_scalar(scale, "scale")
    with np.errstate(over="ignore", invalid="ignore"):
        scores = (q @ np.swapaxes(k, -1, -2)) * scale
    if not np.all(np.isfinite(scores)):
        raise ValueError(
            f"the scores q @ k.T * scale overflowed {scores.dtype}; rescale q or k, or compute in float64"
        )
    return scores


def attention_weights(q, k, *, scale: float | None = None, mask=None) -> np.ndarray:
    r"""Attention weights :math:`\operatorname{softmax}(\text{scale} \cdot q k^\top)` over the keys.

    Parameters
    ----------
    q : array_like, shape (..., n_q, d_k)
        Queries.
    k : array_like, shape (..., n_k, d_k)
        Keys.
    scale : float, optional
        Multiplies the dot products; defaults to :math:`1/\sqrt{d_k}`.
    mask : array_like of bool, optional
        Broadcastable to ``(..., n_q, n_k)``; True where the query may attend
        to the key. Every query must be allowed at least one key.

    Returns
    -------
    numpy.ndarray, shape (..., n_q, n_k)
        Each row is non-negative and sums to 1; masked keys get exactly 0.

    Raises
    ------
    TypeError
        If an input is not real and numeric, ``mask`` is not boolean, or
        ``scale`` is not a number.
    ValueError
        As for :func:`attention_scores`; also if ``mask`` does not broadcast
        or leaves some query with no key.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling import attention_weights
    >>> q = np.array([[2.0, 0.0]])
    >>> k = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> attention_weights(q, k, scale=1.0).round(4)
    array([[0.8808, 0.1192]])
    >>> attention_weights(q, k, mask=np.array([[False, True]]))
    array([[0., 1.]])
    """
    scores = attention_scores(q, k, scale=scale)
    if mask is None:
        return softmax(scores)
    mask = np.asarray(mask)
    if mask.dtype != np.bool_:
        raise TypeError(
            f"mask must be boolean (True = may attend); got dtype {mask.dtype}. "
            "Convert it explicitly, e.g. mask != 0"
        )
    try:
        mask = np.broadcast_to(mask, np.broadcast_shapes(mask.shape, scores.shape))
        scores = np.broadcast_to(scores, mask.shape)
    except ValueError as error:
        raise ValueError(
            f"mask of shape {mask.shape} does not broadcast to the scores of shape {scores.shape}"
        ) from error
    empty_rows = ~mask.any(axis=-1)
    if np.any(empty_rows):
        first = tuple(int(i) for i in np.argwhere(empty_rows)[0])
        raise ValueError(f"mask allows no key for the query at index {first}; its weights would be undefined")
    return softmax(np.where(mask, scores, -np.inf))


def scaled_dot_product_attention(q, k, v, *, scale: float | None = None, mask=None) -> np.ndarray:
    r"""Scaled dot-product attention: :math:`\operatorname{softmax}(\text{scale} \cdot q k^\top)\, v`.

    Parameters
    ----------
    q : array_like, shape (..., n_q, d_k)
        Queries.
    k : array_like, shape (..., n_k, d_k)
        Keys.
    v : array_like, shape (..., n_k, d_v)
        Values, one row per key.
    scale : float, optional
        Multiplies the dot products; defaults to :math:`1/\sqrt{d_k}`.
    mask : array_like of bool, optional
        As for :func:`attention_weights`.

    Returns
    -------
    numpy.ndarray, shape (..., n_q, d_v)
        For each query, the weighted average of the values.

    Raises
    ------
    TypeError
        As for :func:`attention_weights`, or if ``v`` is not real and numeric.
    ValueError
        As for :func:`attention_weights`; also if ``v`` is not finite or does
        not have one row per key.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling import scaled_dot_product_attention
    >>> q = np.zeros((1, 3))                  # a query that prefers no key
    >>> k = np.eye(3)
    >>> v = np.array([[0.0], [3.0], [6.0]])
    >>> scaled_dot_product_attention(q, k, v)  # the mean of the values
    array([[3.]])
    """
    weights = attention_weights(q, k, scale=scale, mask=mask)
    v = as_float_array(v, "v")
    require_ndim(v, "v", 2, "(..., n_k, d_v)")
    require_finite(v, "v")
    if v.shape[-2] != weights.shape[-1]:
        raise ValueError(
            f"v must have one row per key (n_k = {weights.shape[-1]}); got v of shape {v.shape}"
        )
    try:
        np.broadcast_shapes(weights.shape[:-2], v.shape[:-2])
    except ValueError as error:
        raise ValueError(
            f"the batch axes of v {v.shape[:-2]} do not broadcast with those of q and k {weights.shape[:-2]}"
        ) from error
    return weights @ v


def layer_norm(x) -> np.ndarray:
    r"""LayerNorm without a learned gain or bias, over the last axis.

    Each vector is centred and divided by its population standard deviation,
    :math:`(x - \bar x)/\sigma_x`, so its squared norm is exactly its length
    :math:`d`. No :math:`\epsilon` is added: a constant vector has no
    direction to keep and is refused instead of being mapped to zero.

    Parameters
    ----------
    x : array_like, shape (..., d)
        Vectors with :math:`d \ge 2`.

    Returns
    -------
    numpy.ndarray, shape (..., d)
        Normalised vectors: mean 0, population variance 1.

    Raises
    ------
    TypeError
        If ``x`` is not real and numeric.
    ValueError
        If ``x`` has no axis, fewer than two entries on its last axis,
        non-finite entries, or a constant vector.

    Examples
    --------
    >>> from attention_scaling import layer_norm
    >>> y = layer_norm([[1.0, 2.0, 3.0, 6.0]])
    >>> y.round(3).tolist()
    [[-1.069, -0.535, 0.0, 1.604]]
    >>> float((y**2).sum())   # the squared norm is d
    4.0
    """
    x = as_float_array(x, "x")
    require_ndim(x, "x", 1, "(..., d)")
    if x.shape[-1] < 2:
        raise ValueError(f"x must have at least 2 entries on its last axis; got shape {x.shape}")
    require_finite(x, "x")
    centred = x - x.mean(axis=-1, keepdims=True)
    spread = np.sqrt((centred**2).mean(axis=-1, keepdims=True))
    if np.any(spread == 0):
        raise ValueError("x must not contain a constant vector: it has no direction to normalise")
    return centred / spread
