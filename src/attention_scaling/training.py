r"""A training ablation of the attention scale, in numpy, with a hand-written backward pass.

The task is synthetic retrieval. Each example holds ``n`` keys
:math:`x_1, \dots, x_n \in \mathbb{R}^{d_\text{model}}` with standard normal
components and a query that is a noisy copy of one of them, the *target*. A
single attention head with learned projections :math:`W_Q, W_K \in
\mathbb{R}^{d_\text{model} \times d_k}` scores every key,

.. math::

   s_j = c \, (x_q W_Q) \cdot (x_j W_K), \qquad p = \operatorname{softmax}(s),

and is trained to put its weight on the target: the loss is the mean of
:math:`-\ln p_\text{target}`. The factor :math:`c` is fixed by a scaling
policy (``"none"``: 1, ``"sqrt"``: :math:`1/\sqrt{d_k}`, ``"linear"``:
:math:`1/d_k`), and :func:`ablation` trains every (:math:`d_k`, policy) pair
with one shared learning rate, the same data and, for each :math:`d_k`, the
same initial weights, so the runs differ only by :math:`c`.

Randomness comes only from ``numpy.random.default_rng``; the same seed gives
identical arrays.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from attention_scaling._checks import as_float_array, integer_at_least, positive_finite_scalar, require_finite
from attention_scaling._products import product
from attention_scaling.simulate import scale_for, scaling_policy
from attention_scaling._softmax import attention_entropy, log_softmax

__all__ = [
    "OPTIMIZERS",
    "RetrievalBatch",
    "TrainingCurves",
    "TrainingRecord",
    "ablation",
    "backward",
    "forward",
    "gradient_check",
    "init_params",
    "loss_and_grads",
    "numerical_gradients",
    "retrieval_batch",
    "train",
    "training_curves_data",
]

#: The optimisers :func:`train` knows, both written out below in a few lines.
OPTIMIZERS = ("adam", "sgd")

# The parameter names, in the order every dict of parameters or gradients uses.
_NAMES = ("W_Q", "W_K")

# Adam's usual constants (Kingma & Ba, 2015); only the learning rate is varied.
_BETA1, _BETA2, _EPS = 0.9, 0.999, 1e-8


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


@dataclass(frozen=True)
class TrainingRecord:
    r"""What one training run did, step by step.

    The three curves are measured on each step's training batch *before* that
    step's update, so ``loss[0]`` is the loss of the initial weights. Every
    batch is fresh, so these are also estimates of the test metrics.

    Attributes
    ----------
    d_k : int
        Head dimension.
    policy : str
        The scaling policy's name (a callable's ``__name__``).
    scale : float
        The factor :math:`c` that multiplied the scores.
    lr : float
        Learning rate.
    optimizer : str
        ``"adam"`` or ``"sgd"``.
    seed : int
        The seed of the run.
    loss : numpy.ndarray, shape (steps,)
        Mean cross-entropy :math:`-\ln p_\text{target}`, in nats.
    entropy : numpy.ndarray, shape (steps,)
        Mean entropy of the attention weights, in nats (at most :math:`\ln n`).
    accuracy : numpy.ndarray, shape (steps,)
        Fraction of queries whose highest score is on the target key.
    params : dict
        The weights after the last step, ``{"W_Q": array, "W_K": array}``
        (read-only arrays).
    diverged_at : int or None
        The first step whose scores were not finite, if any; from there on the
        curves hold NaN.

    Examples
    --------
    >>> from attention_scaling.training import train
    >>> record = train(16, "sqrt", steps=20, batch=8, seed=0)
    >>> record.loss.shape, record.policy, record.scale
    ((20,), 'sqrt', 0.25)
    >>> sorted(record.final(window=5))
    ['accuracy', 'entropy', 'loss']
    """

    d_k: int
    policy: str
    scale: float
    lr: float
    optimizer: str
    seed: int
    loss: np.ndarray
    entropy: np.ndarray
    accuracy: np.ndarray
    params: dict[str, np.ndarray]
    diverged_at: int | None = None

    @property
    def steps(self) -> int:
        """Number of training steps."""
        return int(self.loss.shape[0])

    def final(self, window: int = 10) -> dict[str, float]:
        """Means of loss, entropy and accuracy over the last ``window`` steps.

        Averaging a few steps smooths the noise of one batch.
        """
        window = integer_at_least(window, "window", 1)
        tail = slice(max(0, self.steps - window), None)
        return {
            "loss": float(np.mean(self.loss[tail])),
            "entropy": float(np.mean(self.entropy[tail])),
            "accuracy": float(np.mean(self.accuracy[tail])),
        }


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


def _policy(scale_policy, d_k: int) -> tuple[str, float]:
    """The policy's label and its factor for ``d_k``, with errors that name ``scale_policy``."""
    label, _ = scaling_policy(scale_policy, name="scale_policy")
    return label, scale_for(scale_policy, d_k, name="scale_policy")


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
    >>> from attention_scaling.training import retrieval_batch
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
    >>> from attention_scaling.training import init_params
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
    >>> from attention_scaling.training import forward, init_params, retrieval_batch
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
    >>> from attention_scaling.training import backward, forward, init_params, retrieval_batch
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
    >>> from attention_scaling.training import init_params, loss_and_grads, retrieval_batch
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
    >>> from attention_scaling.training import init_params, loss_and_grads, numerical_gradients, retrieval_batch
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
    >>> from attention_scaling.training import gradient_check, init_params, loss_and_grads, retrieval_batch
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


# -- Training --------------------------------------------------------------------------


def _training_setup(steps, lr, seed, batch, n, d_model, noise, optimizer) -> dict:
    """Validate the arguments shared by :func:`train` and :func:`ablation`."""
    seed = integer_at_least(seed, "seed", 0)
    if not isinstance(optimizer, str) or optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}; got {optimizer!r}")
    return {
        "steps": integer_at_least(steps, "steps", 1),
        "lr": positive_finite_scalar(lr, "lr"),
        "seed": seed,
        "batch": integer_at_least(batch, "batch", 1),
        "n": integer_at_least(n, "n", 2),
        "d_model": integer_at_least(d_model, "d_model", 1),
        "noise": _nonnegative(noise, "noise"),
        "optimizer": optimizer,
    }


def _run(d_k: int, label: str, scale: float, *, steps, lr, seed, batch, n, d_model, noise, optimizer) -> TrainingRecord:
    """Train on validated arguments; see :func:`train`."""
    # Two streams from one seed: the data stream does not depend on d_k or
    # the policy, so every run of an ablation sees the same batches, and the
    # initial weights depend only on (seed, d_k), so the policies compared at
    # one d_k start from the same point.
    data_rng = np.random.default_rng([seed, 0])
    params = init_params(np.random.default_rng([seed, 1]), d_model, d_k)
    moments = {name: (np.zeros_like(w), np.zeros_like(w)) for name, w in params.items()}
    curves = np.full((3, steps), np.nan)
    diverged_at = None
    for t in range(steps):
        data = retrieval_batch(data_rng, batch, n, d_model, noise)
        try:
            loss, cache = _forward(params["W_Q"], params["W_K"], data, scale)
        except FloatingPointError:
            diverged_at = t
            break
        grads = _backward(params["W_K"], cache)
        curves[0, t] = loss
        curves[1, t] = float(np.mean(attention_entropy(cache["weights"])))
        # Ties (possible only when scores are exactly equal) go to the lowest
        # index, as np.argmax does; with continuous data they have probability 0.
        curves[2, t] = float(np.mean(np.argmax(cache["scores"], axis=1) == cache["targets"]))
        if optimizer == "sgd":
            for name in _NAMES:
                params[name] = params[name] - lr * grads[name]
        else:
            # Adam with bias correction, exactly as in Kingma & Ba (2015), Alg. 1.
            for name in _NAMES:
                m, v = moments[name]
                m = _BETA1 * m + (1 - _BETA1) * grads[name]
                v = _BETA2 * v + (1 - _BETA2) * grads[name] ** 2
                moments[name] = (m, v)
                m_hat = m / (1 - _BETA1 ** (t + 1))
                v_hat = v / (1 - _BETA2 ** (t + 1))
                params[name] = params[name] - lr * m_hat / (np.sqrt(v_hat) + _EPS)
    # Read-only, so that a record cannot be changed after the fact. (Flag the
    # base array: views taken from it afterwards inherit the flag.)
    for array in (curves, *params.values()):
        array.setflags(write=False)
    return TrainingRecord(
        d_k=d_k,
        policy=label,
        scale=scale,
        lr=lr,
        optimizer=optimizer,
        seed=seed,
        loss=curves[0],
        entropy=curves[1],
        accuracy=curves[2],
        params=params,
        diverged_at=diverged_at,
    )


def train(
    d_k: int,
    scale_policy,
    *,
    steps: int = 200,
    lr: float = 1e-2,
    seed: int = 0,
    batch: int = 64,
    n: int = 16,
    d_model: int = 32,
    noise: float = 0.5,
    optimizer: str = "adam",
) -> TrainingRecord:
    r"""Train one attention head on the retrieval task and record its progress.

    Each step draws a fresh batch, computes the loss and its gradient with
    :func:`forward` and :func:`backward`, records loss, attention entropy and
    accuracy, and takes one optimiser step.

    Parameters
    ----------
    d_k : int
        Head dimension, at least 1.
    scale_policy : {"none", "sqrt", "linear"} or callable
        Gives the score factor :math:`c`: 1, :math:`1/\sqrt{d_k}`,
        :math:`1/d_k`, or ``scale_policy(d_k)``, as in
        :func:`attention_scaling.simulate.scale_for`.
    steps : int, default 200
        Optimiser steps, at least 1.
    lr : float, default 1e-2
        Learning rate, finite and > 0.
    seed : int, default 0
        Seeds both the data and the initial weights.
    batch : int, default 64
        Examples per step.
    n : int, default 16
        Keys per example, at least 2.
    d_model : int, default 32
        Input dimension.
    noise : float, default 0.5
        Query noise, as in :func:`retrieval_batch`.
    optimizer : {"adam", "sgd"}, default "adam"
        Adam (:math:`\beta = (0.9, 0.999)`, :math:`\epsilon = 10^{-8}`) or plain SGD.

    Returns
    -------
    TrainingRecord

    Raises
    ------
    TypeError
        If an integer argument is not an integer, ``lr`` or ``noise`` is not a
        number, or ``scale_policy`` is neither a name nor a callable.
    ValueError
        If ``d_k < 1``, ``steps < 1``, ``lr <= 0``, ``n < 2``, ``batch < 1``,
        ``d_model < 1``, ``noise < 0``, ``seed < 0``, or the policy or optimiser
        is unknown.

    Notes
    -----
    The batches come from ``numpy.random.default_rng([seed, 0])`` and the
    initial weights from :func:`init_params` with
    ``numpy.random.default_rng([seed, 1])``. Neither stream depends on the
    policy, and the batches do not depend on ``d_k`` either, so runs that
    differ only in ``scale_policy`` see the same data from the same start.

    If the scores overflow, the run stops, ``diverged_at`` records the step
    and the rest of the curves stay NaN, so an ablation still completes.

    Examples
    --------
    >>> from attention_scaling.training import train
    >>> record = train(16, "sqrt", steps=60, seed=0)
    >>> bool(record.loss[-10:].mean() < record.loss[:10].mean())    # it learns
    True
    >>> bool((train(16, "sqrt", steps=5).loss == train(16, "sqrt", steps=5).loss).all())
    True
    """
    d_k = integer_at_least(d_k, "d_k", 1)
    setup = _training_setup(steps, lr, seed, batch, n, d_model, noise, optimizer)
    label, scale = _policy(scale_policy, d_k)
    return _run(d_k, label, scale, **setup)


def ablation(
    d_values: Sequence[int] = (16, 64, 256),
    policies: Sequence[str | Callable[[int], float]] = ("none", "sqrt", "linear"),
    *,
    steps: int = 200,
    lr: float = 1e-2,
    seed: int = 0,
    batch: int = 64,
    n: int = 16,
    d_model: int = 32,
    noise: float = 0.5,
    optimizer: str = "adam",
) -> dict[tuple[int, str], TrainingRecord]:
    r"""Train every (:math:`d_k`, policy) pair with one learning rate and the same seeds.

    All runs see the same sequence of batches; the runs at one :math:`d_k`
    also start from the same weights. Only the score factor differs, so any
    difference between policies at one :math:`d_k` is due to it, including
    through its interaction with the shared learning rate.

    Parameters
    ----------
    d_values : sequence of int, default (16, 64, 256)
        Head dimensions, each at least 1, without repeats.
    policies : sequence, default ("none", "sqrt", "linear")
        Scaling policies, as for :func:`train`, without repeated labels.
    steps, lr, seed, batch, n, d_model, noise, optimizer
        As for :func:`train`, shared by every run.

    Returns
    -------
    dict
        ``{(d_k, policy_label): TrainingRecord}``, in the order
        ``d_values`` x ``policies``.

    Raises
    ------
    TypeError, ValueError
        As for :func:`train`; also ``ValueError`` if ``d_values`` or
        ``policies`` is empty or repeats an entry.

    Examples
    --------
    >>> from attention_scaling.training import ablation
    >>> results = ablation((4, 8), ("sqrt", "linear"), steps=5, batch=8)
    >>> list(results)
    [(4, 'sqrt'), (4, 'linear'), (8, 'sqrt'), (8, 'linear')]
    >>> results[8, "linear"].scale
    0.125
    """
    if isinstance(d_values, (str, bytes)) or not isinstance(d_values, Sequence):
        raise TypeError(f"d_values must be a sequence of integers; got {type(d_values).__name__}")
    if isinstance(policies, (str, bytes)) or not isinstance(policies, Sequence):
        raise TypeError(f"policies must be a sequence of names or callables; got {type(policies).__name__}")
    d_list = [integer_at_least(d, "d_values entry", 1) for d in d_values]
    if not d_list or len(set(d_list)) != len(d_list):
        raise ValueError(f"d_values must be non-empty without repeats; got {list(d_values)!r}")
    if not policies:
        raise ValueError("policies must not be empty")
    setup = _training_setup(steps, lr, seed, batch, n, d_model, noise, optimizer)
    # Resolve every policy up front so that a bad one fails before any training.
    resolved = {(d_k, i): _policy(policy, d_k) for d_k in d_list for i, policy in enumerate(policies)}
    labels = [resolved[d_list[0], i][0] for i in range(len(policies))]
    if len(set(labels)) != len(labels):
        raise ValueError(f"policies must have distinct labels; got {labels!r}")
    results = {}
    for d_k in d_list:
        for i in range(len(policies)):
            label, scale = resolved[d_k, i]
            results[d_k, label] = _run(d_k, label, scale, **setup)
    return results


# -- The data of the site's figure ------------------------------------------------------


@dataclass(frozen=True)
class TrainingCurves:
    """The runs of a training ablation, for the learning-curve figure.

    Attributes
    ----------
    runs : dict
        ``{(d_k, policy_label): TrainingRecord}``, as returned by :func:`ablation`.
    d_values : tuple of int
        The head dimensions, in increasing order.
    policies : tuple of str
        The policy labels, in the order of the ablation.
    """

    runs: dict[tuple[int, str], TrainingRecord]
    d_values: tuple[int, ...]
    policies: tuple[str, ...]


def training_curves_data(seed: int = 0) -> TrainingCurves:
    r"""The default training ablation: :math:`d_k \in \{16, 64, 256\}` under the three policies, one learning rate.

    Parameters
    ----------
    seed : int, default 0
        Seed of the data and the initial weights (see :func:`ablation`).

    Returns
    -------
    TrainingCurves

    Examples
    --------
    >>> from attention_scaling.training import training_curves_data
    >>> data = training_curves_data()
    >>> data.d_values, data.policies
    ((16, 64, 256), ('none', 'sqrt', 'linear'))
    """
    runs = ablation(seed=seed)
    policies = tuple(dict.fromkeys(policy for _, policy in runs))
    return TrainingCurves(runs=runs, d_values=tuple(sorted({d_k for d_k, _ in runs})), policies=policies)
