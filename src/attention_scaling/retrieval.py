r"""The retrieval task and the attention head that the training page trains, in numpy.

The task is synthetic retrieval. Each example holds ``n`` keys
:math:`x_1, \dots, x_n \in \mathbb{R}^{d_\text{model}}` with standard normal
components and a query that is a noisy copy of one of them, the *target*. A
single attention head with learned projections :math:`W_Q, W_K \in
\mathbb{R}^{d_\text{model} \times d_k}` scores every key,

.. math::

   s_j = c \, (x_q W_Q) \cdot (x_j W_K), \qquad p = \operatorname{softmax}(s),

and its loss is the mean of :math:`-\ln p_\text{target}`. This module holds the
data, the initial weights, the forward pass, a backward pass written by hand,
and a finite-difference check of it; :mod:`attention_scaling.training` trains
the head with them.

Randomness comes only from ``numpy.random.default_rng``; the same seed gives
identical arrays.
"""

from __future__ import annotations

import math
import numbers
from typing import NamedTuple

import numpy as np

from attention_scaling._checks import as_float_array, integer_at_least, positive_finite_scalar, require_finite
from attention_scaling._products import product
from attention_scaling._softmax import log_softmax

__all__ = [
    "RetrievalBatch",
    "backward",
    "forward",
    "gradient_check",
    "init_params",
    "loss_and_grads",
    "numerical_gradients",
    "retrieval_batch",
]

# The parameter names, in the order every dict of parameters or gradients uses.
_NAMES = ("W_Q", "W_K")


class RetrievalBatch(NamedTuple):
    """One batch of the retrieval task.

    Attributes
    ----------
    queries : numpy.ndarray, shape (batch, d_model)
        One query per example.
    keys : numpy.ndarray, shape (batch, n, d_model)
        The candidate keys of each example.
    targets : numpy.ndarray of int, shape (batch,)
        Index of the key each query was copied from.
    """

    queries: np.ndarray
    keys: np.ndarray
    targets: np.ndarray


# -- Validation ------------------------------------------------------------------------




def _nonnegative(value, name: str) -> float:
    """Return ``value`` as a float after checking it is a finite number >= 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be finite and >= 0; got {value!r}")
    return value


def _generator(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator (numpy.random.default_rng(seed)); got {type(rng).__name__}"
        )
    return rng


def _checked_params(params) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(params, dict) or set(params) != set(_NAMES):
        raise TypeError(f"params must be a dict with exactly the keys {_NAMES}; got {params!r:.80}")
    w_q = as_float_array(params["W_Q"], "params['W_Q']").astype(np.float64, copy=False)
    w_k = as_float_array(params["W_K"], "params['W_K']").astype(np.float64, copy=False)
    if w_q.ndim != 2 or w_q.shape != w_k.shape or 0 in w_q.shape:
        raise ValueError(
            f"params['W_Q'] and params['W_K'] must both have shape (d_model, d_k) with d_model, d_k >= 1; "
            f"got {w_q.shape} and {w_k.shape}"
        )
    require_finite(w_q, "params['W_Q']")
    require_finite(w_k, "params['W_K']")
    return w_q, w_k


def _checked_batch(batch, d_model: int) -> RetrievalBatch:
    if not isinstance(batch, tuple) or len(batch) != 3:
        raise TypeError(f"batch must be a RetrievalBatch (queries, keys, targets); got {type(batch).__name__}")
    queries = as_float_array(batch[0], "batch.queries").astype(np.float64, copy=False)
    keys = as_float_array(batch[1], "batch.keys").astype(np.float64, copy=False)
    targets = np.asarray(batch[2])
    if queries.ndim != 2 or queries.shape[0] == 0 or queries.shape[1] != d_model:
        raise ValueError(
            f"batch.queries must have shape (batch, d_model={d_model}) with batch >= 1; got {queries.shape}"
        )
    size = queries.shape[0]
    if keys.ndim != 3 or keys.shape[0] != size or keys.shape[2] != d_model or keys.shape[1] < 2:
        raise ValueError(f"batch.keys must have shape ({size}, n, {d_model}) with n >= 2; got {keys.shape}")
    if targets.dtype.kind not in "iu":
        raise TypeError(f"batch.targets must be integers; got dtype {targets.dtype}")
    if targets.shape != (size,):
        raise ValueError(f"batch.targets must have shape ({size},), one per query; got {targets.shape}")
    if np.any(targets < 0) or np.any(targets >= keys.shape[1]):
        raise ValueError(
            f"batch.targets must lie in [0, {keys.shape[1] - 1}]; "
            f"got values from {targets.min()} to {targets.max()}"
        )
    require_finite(queries, "batch.queries")
    require_finite(keys, "batch.keys")
    return RetrievalBatch(queries, keys, targets.astype(np.intp, copy=False))


# -- Data and parameters ---------------------------------------------------------------


def retrieval_batch(rng, batch: int, n: int, d_model: int, noise: float) -> RetrievalBatch:
    r"""Draw a batch of the retrieval task: find the key the query was copied from.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness, e.g. ``numpy.random.default_rng(seed)``. Draws
        happen in a fixed order (keys, targets, noise), so the batch is a
        function of the generator's state.
    batch : int
        Number of examples, at least 1.
    n : int
        Keys per example, at least 2.
    d_model : int
        Dimension of queries and keys, at least 1.
    noise : float
        Standard deviation of the noise added to the target key, >= 0.

    Returns
    -------
    RetrievalBatch
        ``queries`` of shape (batch, d_model), ``keys`` of shape
        (batch, n, d_model), integer ``targets`` of shape (batch,).

    Raises
    ------
    TypeError
        If ``rng`` is not a Generator or a size is not an integer.
    ValueError
        If ``batch < 1``, ``n < 2``, ``d_model < 1`` or ``noise`` is negative
        or not finite.

    Notes
    -----
    Keys have independent standard normal components. The query is

    .. math::

       x_q = \frac{x_t + \sigma \varepsilon}{\sqrt{1 + \sigma^2}},
       \qquad \varepsilon \sim \mathcal{N}(0, I),

    divided by :math:`\sqrt{1 + \sigma^2}` so that its components, like the
    keys', have variance 1: the assumption behind the :math:`\sqrt{d_k}`
    argument holds for both inputs.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.retrieval import retrieval_batch
    >>> queries, keys, targets = retrieval_batch(np.random.default_rng(0), 4, 8, 16, 0.0)
    >>> queries.shape, keys.shape, targets.shape
    ((4, 16), (4, 8, 16), (4,))
    >>> bool(np.array_equal(queries, keys[np.arange(4), targets]))   # no noise: an exact copy
    True
    """
    rng = _generator(rng)
    batch = integer_at_least(batch, "batch", 1)
    n = integer_at_least(n, "n", 2)
    d_model = integer_at_least(d_model, "d_model", 1)
    noise = _nonnegative(noise, "noise")
    keys = rng.standard_normal((batch, n, d_model))
    targets = rng.integers(0, n, size=batch)
    queries = keys[np.arange(batch), targets] + noise * rng.standard_normal((batch, d_model))
    queries /= math.sqrt(1.0 + noise**2)
    return RetrievalBatch(queries, keys, targets)


def init_params(rng, d_model: int, d_k: int) -> dict[str, np.ndarray]:
    r"""Initial projections with entries :math:`\mathcal{N}(0, 1/d_\text{model})`.

    With that variance, a projected input :math:`x W` of an input with unit
    variance components has unit variance components too, so the raw score
    :math:`(x_q W_Q) \cdot (x_k W_K)` starts with variance about :math:`d_k`:
    the situation the scale is meant to correct.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness; ``W_Q`` is drawn first, then ``W_K``.
    d_model : int
        Input dimension, at least 1.
    d_k : int
        Head dimension, at least 1.

    Returns
    -------
    dict
        ``{"W_Q": array, "W_K": array}``, each float64 of shape (d_model, d_k).

    Raises
    ------
    TypeError
        If ``rng`` is not a Generator or a size is not an integer.
    ValueError
        If ``d_model < 1`` or ``d_k < 1``.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.retrieval import init_params
    >>> params = init_params(np.random.default_rng(0), 64, 256)
    >>> params["W_Q"].shape, params["W_K"].dtype
    ((64, 256), dtype('float64'))
    >>> x = np.random.default_rng(1).standard_normal((2000, 64))
    >>> round(float((x @ params["W_Q"]).var()), 1)       # unit variance after projection
    1.0
    """
    rng = _generator(rng)
    d_model = integer_at_least(d_model, "d_model", 1)
    d_k = integer_at_least(d_k, "d_k", 1)
    std = 1.0 / math.sqrt(d_model)
    return {name: std * rng.standard_normal((d_model, d_k)) for name in _NAMES}


# -- Forward and backward --------------------------------------------------------------



def _forward(w_q, w_k, batch: RetrievalBatch, scale: float) -> tuple[float, dict]:
    """The forward pass on checked inputs; see :func:`forward`."""
    queries, keys, targets = batch
    q = product("bm,md->bd", queries, w_q)     # (B, d_k)
    # Never form the projected keys k = keys @ W_K, a (B, n, d_k) tensor: the
    # raw score q . (x_j W_K) equals x_j . (q W_K^T), so pulling each query
    # back to input space once costs O(B d_model d_k) instead of
    # O(B n d_model d_k), which is what keeps d_k = 256 cheap.
    v = product("bd,md->bm", q, w_k)           # (B, d_model)
    with np.errstate(over="ignore", invalid="ignore"):
        scores = scale * product("bjm,bm->bj", keys, v)
    if not np.all(np.isfinite(scores)):
        raise FloatingPointError(f"the scores overflowed (scale = {scale!r}); the weights have diverged")
    log_p = log_softmax(scores)
    rows = np.arange(targets.shape[0])
    # log_softmax, not log(softmax): a saturated wrong answer has p_target
    # below the smallest float64, and its log is still finite and exact.
    loss = float(-np.mean(log_p[rows, targets]))
    cache = {
        "queries": queries,
        "keys": keys,
        "targets": targets,
        "q": q,
        "scale": scale,
        "scores": scores,
        "weights": np.exp(log_p),
    }
    return loss, cache


def _backward(w_k: np.ndarray, cache: dict) -> dict[str, np.ndarray]:
    """The backward pass from a cache of :func:`_forward`; see :func:`backward`."""
    queries, keys, targets = cache["queries"], cache["keys"], cache["targets"]
    size = targets.shape[0]
    # dL/ds = (p - onehot(target)) / B: the softmax cross-entropy gradient,
    # divided by B because the loss is a mean over the batch.
    d_scores = cache["weights"].copy()
    d_scores[np.arange(size), targets] -= 1.0
    d_scores /= size
    # s = c * raw, so dL/draw = c * dL/ds.
    d_raw = cache["scale"] * d_scores                      # (B, n)
    # raw[b, j] = q[b] . k[b, j] with k[b, j] = x[b, j] W_K. Both gradients
    # need a[b] = sum_j d_raw[b, j] x[b, j], the keys weighted by their error.
    a = product("bj,bjm->bm", d_raw, keys)                # (B, d_model)
    # dL/dq[b] = sum_j d_raw[b, j] k[b, j] = a[b] W_K, and q = x_q W_Q, so
    # dL/dW_Q = x_q^T dL/dq.
    d_q = product("bm,md->bd", a, w_k)                    # (B, d_k)
    d_w_q = product("bm,bd->md", queries, d_q)
    # dL/dk[b, j] = d_raw[b, j] q[b], so dL/dW_K = sum_{b, j} x[b, j]^T d_raw[b, j] q[b]
    # = sum_b a[b]^T q[b].
    d_w_k = product("bm,bd->md", a, cache["q"])
    return {"W_Q": d_w_q, "W_K": d_w_k}


def forward(params, batch, scale: float) -> tuple[float, dict]:
    r"""Loss of one attention head on a retrieval batch, and what the backward pass needs.

    Parameters
    ----------
    params : dict
        ``{"W_Q": array, "W_K": array}``, both of shape (d_model, d_k).
    batch : RetrievalBatch
        Queries, keys and targets, as from :func:`retrieval_batch`.
    scale : float
        The factor :math:`c` multiplying every score; finite and > 0.

    Returns
    -------
    loss : float
        :math:`L = -\frac1B \sum_b \ln p_{b, t_b}`, in nats.
    cache : dict
        Inputs and intermediates: ``queries``, ``keys``, ``targets``, the
        projected queries ``q`` (B, d_k), ``scale``, the ``scores`` (B, n)
        and the attention ``weights`` :math:`p` (B, n). The projected keys
        are never formed (see Notes).

    Raises
    ------
    TypeError
        If ``params`` is not a dict of the two projections, an array is not
        real and numeric, or ``scale`` is not a number.
    ValueError
        On inconsistent shapes, non-finite inputs, targets out of range, or a
        ``scale`` that is not finite and positive.
    FloatingPointError
        If the scores overflow float64.

    Notes
    -----
    .. math::

       q_b = x_{q,b} W_Q, \quad k_{bj} = x_{bj} W_K, \quad
       s_{bj} = c \, q_b \cdot k_{bj}, \quad
       p_b = \operatorname{softmax}(s_b).

    The scores are computed as :math:`s_{bj} = c\, x_{bj} \cdot (q_b W_K^\top)`,
    the same number, without the (B, n, d_k) array of projected keys.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.retrieval import forward, init_params, retrieval_batch
    >>> rng = np.random.default_rng(0)
    >>> batch = retrieval_batch(rng, 32, 16, 8, 0.5)
    >>> params = init_params(rng, 8, 4)
    >>> loss, cache = forward(params, batch, 0.5)
    >>> round(loss, 2), round(float(np.log(16)), 2)      # random weights: no better than uniform
    (3.52, 2.77)
    >>> cache["weights"].shape
    (32, 16)
    >>> zero = {"W_Q": np.zeros((8, 4)), "W_K": np.zeros((8, 4))}
    >>> bool(np.isclose(forward(zero, batch, 1.0)[0], np.log(16)))   # all scores 0: exactly ln n
    True
    """
    w_q, w_k = _checked_params(params)
    batch = _checked_batch(batch, w_q.shape[0])
    scale = positive_finite_scalar(scale, "scale")
    return _forward(w_q, w_k, batch, scale)


def backward(params, cache: dict) -> dict[str, np.ndarray]:
    r"""Gradients :math:`\partial L / \partial W_Q` and :math:`\partial L / \partial W_K`, by hand.

    Parameters
    ----------
    params : dict
        The parameters the cache was computed with (``W_K`` is needed,
        because the projected keys are not cached).
    cache : dict
        The second result of :func:`forward`.

    Returns
    -------
    dict
        ``{"W_Q": array, "W_K": array}``, each of shape (d_model, d_k).

    Raises
    ------
    TypeError
        If ``params`` or ``cache`` is malformed.
    ValueError
        If the shapes of ``params`` and ``cache`` disagree.

    Notes
    -----
    With :math:`G_{bj} = \partial L/\partial s_{bj} = (p_{bj} - [j = t_b])/B`,
    the chain rule through :math:`s_{bj} = c\, q_b \cdot k_{bj}` gives

    .. math::

       \frac{\partial L}{\partial W_Q} = c \sum_b x_{q,b}^\top \sum_j G_{bj} k_{bj},
       \qquad
       \frac{\partial L}{\partial W_K} = c \sum_b \Bigl(\sum_j G_{bj} x_{bj}\Bigr)^{\!\top} q_b .

    Both carry the factor :math:`c`. A step of plain SGD therefore changes
    the scores by an amount proportional to :math:`c^2`; Adam divides the
    gradient by its own running magnitude, which removes one factor of
    :math:`c`, but the step's effect on the scores is still multiplied by
    :math:`c`.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.retrieval import backward, forward, init_params, retrieval_batch
    >>> rng = np.random.default_rng(0)
    >>> batch = retrieval_batch(rng, 8, 4, 6, 0.5)
    >>> params = init_params(rng, 6, 3)
    >>> grads = backward(params, forward(params, batch, 1.0)[1])
    >>> grads["W_Q"].shape, grads["W_K"].shape
    ((6, 3), (6, 3))
    >>> half = backward(params, forward(params, batch, 0.5)[1])
    >>> bool(np.abs(half["W_Q"]).sum() < np.abs(grads["W_Q"]).sum())   # a smaller scale, flatter loss here
    True
    """
    w_q, w_k = _checked_params(params)
    required = ("queries", "keys", "targets", "q", "scale", "weights")
    if not isinstance(cache, dict) or any(name not in cache for name in required):
        raise TypeError(f"cache must be the dict returned by forward, with keys {required}")
    if cache["queries"].shape[1] != w_q.shape[0] or cache["q"].shape[1] != w_q.shape[1]:
        raise ValueError(
            f"cache was computed for d_model = {cache['queries'].shape[1]}, d_k = {cache['q'].shape[1]}; "
            f"params have shape {w_q.shape}"
        )
    return _backward(w_k, cache)


def loss_and_grads(params, batch, scale: float) -> tuple[float, dict[str, np.ndarray]]:
    """The loss and its gradients: :func:`forward` followed by :func:`backward`.

    Parameters
    ----------
    params : dict
        ``{"W_Q": array, "W_K": array}``, both of shape (d_model, d_k).
    batch : RetrievalBatch
        As from :func:`retrieval_batch`.
    scale : float
        The factor multiplying the scores; finite and > 0.

    Returns
    -------
    loss : float
    grads : dict
        Same keys and shapes as ``params``.

    Raises
    ------
    TypeError, ValueError, FloatingPointError
        As for :func:`forward`.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.retrieval import init_params, loss_and_grads, retrieval_batch
    >>> rng = np.random.default_rng(0)
    >>> batch = retrieval_batch(rng, 8, 4, 6, 0.5)
    >>> loss, grads = loss_and_grads(init_params(rng, 6, 3), batch, 1.0)
    >>> loss > 0, sorted(grads)
    (True, ['W_K', 'W_Q'])
    """
    w_q, w_k = _checked_params(params)
    batch = _checked_batch(batch, w_q.shape[0])
    scale = positive_finite_scalar(scale, "scale")
    loss, cache = _forward(w_q, w_k, batch, scale)
    return loss, _backward(w_k, cache)


# -- Gradient checking -----------------------------------------------------------------


def numerical_gradients(params, batch, scale: float, *, step: float = 1e-6) -> dict[str, np.ndarray]:
    r"""Gradients of the loss by central finite differences, one entry at a time.

    Slow (two forward passes per parameter) and meant only for checking
    :func:`backward` on small problems.

    Parameters
    ----------
    params : dict
        ``{"W_Q": array, "W_K": array}``.
    batch : RetrievalBatch
        The batch the loss is computed on.
    scale : float
        The factor multiplying the scores.
    step : float, default 1e-6
        The perturbation :math:`h`; finite and > 0.

    Returns
    -------
    dict
        Same keys and shapes as ``params``.

    Notes
    -----
    .. math::

       \frac{\partial L}{\partial w} \approx \frac{L(w + h) - L(w - h)}{2h},

    whose truncation error is :math:`O(h^2)` and whose rounding error is about
    :math:`\epsilon L / h`; in float64 with :math:`h = 10^{-6}` both are near
    :math:`10^{-10}` for a loss of order one.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.retrieval import init_params, loss_and_grads, numerical_gradients, retrieval_batch
    >>> rng = np.random.default_rng(0)
    >>> batch = retrieval_batch(rng, 4, 3, 3, 0.5)
    >>> params = init_params(rng, 3, 2)
    >>> numeric = numerical_gradients(params, batch, 0.5)
    >>> exact = loss_and_grads(params, batch, 0.5)[1]
    >>> bool(np.allclose(numeric["W_K"], exact["W_K"], rtol=1e-6, atol=1e-9))
    True
    """
    w_q, w_k = _checked_params(params)
    batch = _checked_batch(batch, w_q.shape[0])
    scale = positive_finite_scalar(scale, "scale")
    step = positive_finite_scalar(step, "step")
    current = {"W_Q": w_q.copy(), "W_K": w_k.copy()}
    grads = {}
    for name in _NAMES:
        weights = current[name]
        grad = np.empty_like(weights)
        for index in np.ndindex(weights.shape):
            saved = weights[index]
            weights[index] = saved + step
            plus = _forward(current["W_Q"], current["W_K"], batch, scale)[0]
            weights[index] = saved - step
            minus = _forward(current["W_Q"], current["W_K"], batch, scale)[0]
            weights[index] = saved
            grad[index] = (plus - minus) / (2 * step)
        grads[name] = grad
    return grads


def gradient_check(params, batch, scale: float, *, grads=None, step: float = 1e-6) -> float:
    r"""Largest relative disagreement between a gradient and central finite differences.

    Parameters
    ----------
    params : dict
        ``{"W_Q": array, "W_K": array}``.
    batch : RetrievalBatch
        The batch the loss is computed on.
    scale : float
        The factor multiplying the scores.
    grads : dict, optional
        The gradient to check; defaults to the one from :func:`backward`.
        Passing a deliberately wrong one shows that the check can fail.
    step : float, default 1e-6
        Finite-difference step.

    Returns
    -------
    float
        :math:`\max_w |g_w - \hat g_w| \,/\, \max(\max_w |\hat g_w|, 10^{-12})`
        over both matrices, with :math:`\hat g` the finite differences. About
        :math:`10^{-9}` for a correct gradient; order one for a wrong one.

    Raises
    ------
    TypeError
        As for :func:`forward`, or if ``grads`` is not a dict of the two
        gradients.
    ValueError
        As for :func:`forward`, or if ``grads`` does not have the shapes of
        ``params``.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.retrieval import gradient_check, init_params, loss_and_grads, retrieval_batch
    >>> rng = np.random.default_rng(0)
    >>> batch = retrieval_batch(rng, 4, 3, 3, 0.5)
    >>> params = init_params(rng, 3, 2)
    >>> gradient_check(params, batch, 0.5) < 1e-6
    True
    >>> wrong = {name: 2 * g for name, g in loss_and_grads(params, batch, 0.5)[1].items()}
    >>> gradient_check(params, batch, 0.5, grads=wrong) > 0.1
    True
    """
    numeric = numerical_gradients(params, batch, scale, step=step)
    if grads is None:
        grads = loss_and_grads(params, batch, scale)[1]
    if not isinstance(grads, dict) or set(grads) != set(_NAMES):
        raise TypeError(f"grads must be a dict with exactly the keys {_NAMES}")
    worst = 0.0
    largest = 0.0
    for name in _NAMES:
        given = as_float_array(grads[name], f"grads[{name!r}]")
        if given.shape != numeric[name].shape:
            raise ValueError(f"grads[{name!r}] must have shape {numeric[name].shape}; got {given.shape}")
        worst = max(worst, float(np.max(np.abs(given - numeric[name]))))
        largest = max(largest, float(np.max(np.abs(numeric[name]))))
    # Relative to the largest entry, not entrywise: tiny entries would make an
    # entrywise ratio meaningless noise.
    return worst / max(largest, 1e-12)
