r"""How much gradient attention passes back at initialisation: distributions, not means.

The textbook argument says that without scaling "the gradient all but
vanishes". Which gradient, and in which rows? This module measures, per query
row, four gradient sizes for a head whose scores are multiplied by a factor
:math:`c` (:func:`~attention_scaling.simulate.scale_for`):

``logit``
    :math:`\lVert J(c\,s) \rVert_F`, the gain of softmax with respect to its own
    input, the logits :math:`z = c\,s` (:math:`J` as in
    :func:`~attention_scaling.softmax_jacobian`);
``score``
    :math:`c\,\lVert J(c\,s) \rVert_F`, the gain with respect to the raw score
    :math:`s = q \cdot k`: the chain rule multiplies by :math:`c`;
``w_q``, ``w_k``
    :math:`\lVert \partial L / \partial W_Q \rVert_F` and
    :math:`\lVert \partial L / \partial W_K \rVert_F` in a projected head
    (:func:`head_gradients`) with a random upstream gradient.

and summarises each across queries by its median and quantiles (with
distribution-free intervals), the fraction of rows below a threshold (with a
Wilson interval) and the mean (with its standard error): the sizes are heavy
tailed, so a mean alone says little about a typical row.

Randomness comes only from ``numpy.random.default_rng``; the same seed gives
identical numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from attention_scaling._checks import as_float_array, integer_at_least, positive_finite_scalar, require_finite
from attention_scaling.simulate import mean_estimate, scale_for

__all__ = [
    "GRADIENT_D_VALUES",
    "GRADIENT_LEVELS",
    "GRADIENT_QUANTITIES",
    "GRADIENT_SCALINGS",
    "GradientSummary",
    "STARVED_RATIO",
    "head_gradients",
    "head_loss",
    "numerical_head_gradients",
    "quantile_interval",
    "softmax_jacobian_norm",
    "starved_threshold",
    "summarise",
    "weight_gradient_norms",
    "wilson_interval",
]

#: The four gradient sizes measured per row, in the order the records use.
GRADIENT_QUANTITIES = ("logit", "score", "w_q", "w_k")
#: The scaling policies compared (names of :data:`attention_scaling.simulate.SCALINGS`).
GRADIENT_SCALINGS = ("none", "sqrt", "linear")
#: The quantile levels every summary reports.
GRADIENT_LEVELS = (0.01, 0.1, 0.5, 0.9, 0.99)
#: The head dimensions of the default sweep (512 is the index page's example).
GRADIENT_D_VALUES = (16, 64, 256, 512, 1024, 4096)
#: A row is *starved* when its gradient is below this fraction of the median of the same gradient under
#: :math:`1/\sqrt{d_k}` at the same :math:`d_k` (:func:`starved_threshold`): the site's one definition.
STARVED_RATIO = 1e-3
# Cluster-bootstrap replicates behind the intervals of summaries of grouped rows (summarise(groups=...)).
_BOOTSTRAP_REPLICATES = 1000


# -- The softmax Jacobian's size, accurately ------------------------------------------------


def softmax_jacobian_norm(logits, input_gain=None) -> np.ndarray:
    r"""Frobenius norm of the softmax Jacobian at ``logits``, accurate also for saturated rows.

    Parameters
    ----------
    logits : array_like, shape (..., n)
        Softmax inputs :math:`z`, finite, ``n >= 1``.
    input_gain : array_like, shape (..., n), optional
        When the logits are an elementwise function :math:`z_j = h(u_j)` of
        an earlier input :math:`u`, the derivatives :math:`h'(u_j)`: the norm
        is then that of the Jacobian with respect to :math:`u`,
        :math:`J \operatorname{diag}(h'(u))` (the chain rule's factor).

    Returns
    -------
    numpy.ndarray, shape (...)
        :math:`\lVert \operatorname{diag}(p) - p p^\top \rVert_F` with
        :math:`p = \operatorname{softmax}(z)`, or
        :math:`\lVert (\operatorname{diag}(p) - p p^\top) \operatorname{diag}(h'(u)) \rVert_F`.

    Raises
    ------
    TypeError
        If ``logits`` is not a real numeric array.
    ValueError
        If it has no axis, an empty last axis, or a non-finite entry.

    Notes
    -----
    .. math::

       \lVert J \rVert_F^2 = \sum_i p_i^2 (1 - p_i)^2 + \sum_i p_i^2 \sum_{j \ne i} p_j^2 .

    Formed from ``softmax_jacobian(softmax(z))``, the diagonal entry of the
    top key, :math:`p_1 - p_1^2`, is lost to rounding once
    :math:`1 - p_1 < 10^{-16}`, and the expanded form
    :math:`\sum p^2 - 2\sum p^3 + (\sum p^2)^2` cancels to 0 much earlier.
    Here :math:`1 - p_1` and :math:`\sum_{j \ne 1} p_j^2` of the top key are
    summed from the other keys' weights, so every term keeps its relative
    accuracy: the norm of a row whose second weight is :math:`10^{-30}` is
    about :math:`2 \cdot 10^{-30}` (two keys), not 0.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling import softmax, softmax_jacobian
    >>> from attention_scaling.gradients import softmax_jacobian_norm
    >>> z = np.array([0.3, -1.0, 2.0])
    >>> bool(np.isclose(softmax_jacobian_norm(z), np.linalg.norm(softmax_jacobian(softmax(z)))))
    True
    >>> float(softmax_jacobian_norm([0.0, 0.0]))             # four entries of 1/4
    0.5
    >>> print(f"{float(softmax_jacobian_norm([69.0, 0.0])):.3e}")   # 2 e^-69, no cancellation
    2.161e-30
    >>> gain = np.array([0.5, 1.0, 2.0])
    >>> J = softmax_jacobian(softmax(z)) * gain                  # J diag(gain)
    >>> bool(np.isclose(softmax_jacobian_norm(z, gain), np.linalg.norm(J)))
    True
    """
    z = as_float_array(logits, "logits").astype(np.float64, copy=False)
    if z.ndim < 1 or z.shape[-1] == 0:
        raise ValueError(f"logits must have shape (..., n) with n >= 1; got shape {z.shape}")
    require_finite(z, "logits")
    top = np.argmax(z, axis=-1)[..., None]
    weights = np.exp(z - np.take_along_axis(z, top, axis=-1))
    p = weights / weights.sum(axis=-1, keepdims=True)
    is_top = np.zeros(p.shape, dtype=bool)
    np.put_along_axis(is_top, top, True, axis=-1)
    others = np.where(is_top, 0.0, p)
    squares = p**2
    # 1 - p_i: summed from the other weights for the top key (where 1 - p_top
    # would cancel), by subtraction elsewhere (p_i <= 1/2 there, no cancellation).
    complement = np.where(is_top, others.sum(axis=-1, keepdims=True), 1.0 - p)
    # sum_{j != i} p_j^2 likewise: for i != top it is at least p_top^2 >= p_i^2.
    rest = np.where(is_top, (others**2).sum(axis=-1, keepdims=True),
                    squares.sum(axis=-1, keepdims=True) - squares)
    # Column j of the symmetric J holds p_j (delta_ij - p_i): its squared norm is the term j.
    columns = squares * complement**2 + squares * rest
    if input_gain is not None:
        gain = as_float_array(input_gain, "input_gain").astype(np.float64, copy=False)
        require_finite(gain, "input_gain")
        columns = columns * np.broadcast_to(gain, columns.shape) ** 2
    return np.sqrt(np.sum(columns, axis=-1))


# -- A projected head and its backward pass, by hand -----------------------------------------


def _head_inputs(x_query, x_keys, upstream, w_q, w_k, w_v, scale):
    x_query = as_float_array(x_query, "x_query").astype(np.float64, copy=False)
    x_keys = as_float_array(x_keys, "x_keys").astype(np.float64, copy=False)
    upstream = as_float_array(upstream, "upstream").astype(np.float64, copy=False)
    weights = [as_float_array(w, name).astype(np.float64, copy=False)
               for w, name in ((w_q, "w_q"), (w_k, "w_k"), (w_v, "w_v"))]
    if weights[0].ndim != 2 or any(w.shape != weights[0].shape for w in weights) or 0 in weights[0].shape:
        raise ValueError("w_q, w_k and w_v must all have shape (d_model, d_k) with d_model, d_k >= 1; got "
                         f"{[w.shape for w in weights]}")
    d_model, d_k = weights[0].shape
    if x_query.ndim != 2 or x_query.shape[1] != d_model or x_query.shape[0] == 0:
        raise ValueError(f"x_query must have shape (rows, d_model={d_model}) with rows >= 1; got {x_query.shape}")
    rows = x_query.shape[0]
    if x_keys.ndim != 3 or x_keys.shape[0] != rows or x_keys.shape[2] != d_model or x_keys.shape[1] < 1:
        raise ValueError(f"x_keys must have shape ({rows}, n, {d_model}) with n >= 1; got {x_keys.shape}")
    if upstream.shape != (rows, d_k):
        raise ValueError(f"upstream must have shape ({rows}, d_k={d_k}); got {upstream.shape}")
    for array, name in ((x_query, "x_query"), (x_keys, "x_keys"), (upstream, "upstream"),
                        *zip(weights, ("w_q", "w_k", "w_v"))):
        require_finite(array, name)
    return x_query, x_keys, upstream, *weights, positive_finite_scalar(scale, "scale")


def _scores(x_query, x_keys, w_q, w_k):
    q = x_query @ w_q
    # s_bj = q_b . (x_bj W_K) = x_bj . (W_K q_b): no (rows, n, d_k) array of keys.
    return q, np.einsum("bjm,bm->bj", x_keys, q @ w_k.T)


def _logit_gradient(logits, g):
    r""":math:`J(z)\,g` row by row, as :math:`p_i \sum_j p_j (g_i - g_j)`.

    The usual :math:`p_i (g_i - p \cdot g)` loses :math:`g_i - p\cdot g` of the
    top key to rounding when its weight is within :math:`10^{-16}` of 1; the
    pairwise form keeps every term's relative accuracy.
    """
    shifted = logits - logits.max(axis=-1, keepdims=True)
    weights = np.exp(shifted)
    p = weights / weights.sum(axis=-1, keepdims=True)
    return p * np.einsum("bj,bij->bi", p, g[:, :, None] - g[:, None, :])


def head_loss(x_query, x_keys, upstream, w_q, w_k, w_v, scale: float) -> float:
    r"""The loss :math:`L = \sum_b u_b \cdot o_b` of a projected attention head.

    Parameters
    ----------
    x_query : array_like, shape (rows, d_model)
        One input vector per query row.
    x_keys : array_like, shape (rows, n, d_model)
        The ``n`` input vectors each query attends to (keys and values).
    upstream : array_like, shape (rows, d_k)
        The upstream gradient :math:`u_b = \partial L / \partial o_b`.
    w_q, w_k, w_v : array_like, shape (d_model, d_k)
        The projections.
    scale : float
        The factor :math:`c` multiplying the scores; finite and > 0.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If an array is not real and numeric or ``scale`` is not a number.
    ValueError
        On inconsistent shapes, non-finite entries or a ``scale`` that is not
        finite and positive.

    Notes
    -----
    .. math::

       q_b = x_{q,b} W_Q,\quad k_{bj} = x_{bj} W_K,\quad v_{bj} = x_{bj} W_V,\quad
       p_b = \operatorname{softmax}(c\, q_b \cdot k_{b\cdot}),\quad
       o_b = \sum_j p_{bj} v_{bj} .

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.gradients import head_loss
    >>> x, keys, u = np.ones((1, 2)), np.ones((1, 3, 2)), np.ones((1, 2))
    >>> w = np.eye(2)
    >>> head_loss(x, keys, u, w, w, w, 1.0)        # equal scores: o = mean of the values = (1, 1)
    2.0
    """
    x_query, x_keys, upstream, w_q, w_k, w_v, scale = _head_inputs(x_query, x_keys, upstream, w_q, w_k, w_v, scale)
    _, s = _scores(x_query, x_keys, w_q, w_k)
    z = scale * s
    weights = np.exp(z - z.max(axis=-1, keepdims=True))
    p = weights / weights.sum(axis=-1, keepdims=True)
    values = np.einsum("bjm,md->bjd", x_keys, w_v)
    return float(np.sum(upstream * np.einsum("bj,bjd->bd", p, values)))


def _row_backward(x_query, x_keys, upstream, w_q, w_k, w_v, scale):
    """Per row: the score gradient, sum_j (dL/ds_bj) x_bj, q_b and dL/dq_b (the factors of the W gradients)."""
    q, s = _scores(x_query, x_keys, w_q, w_k)
    # dL/dp_bj = u_b . v_bj = x_bj . (W_V u_b)
    g = np.einsum("bjm,bm->bj", x_keys, upstream @ w_v.T)
    d_scores = scale * _logit_gradient(scale * s, g)
    # dL/dq_b = sum_j d_scores_bj k_bj = (sum_j d_scores_bj x_bj) W_K
    mixed = np.einsum("bj,bjm->bm", d_scores, x_keys)
    return d_scores, mixed, q, mixed @ w_k


def head_gradients(x_query, x_keys, upstream, w_q, w_k, w_v, scale: float) -> dict[str, np.ndarray]:
    r"""Gradients :math:`\partial L / \partial W_Q` and :math:`\partial L / \partial W_K` of :func:`head_loss`, by hand.

    Parameters
    ----------
    x_query, x_keys, upstream, w_q, w_k, w_v, scale
        As for :func:`head_loss`.

    Returns
    -------
    dict
        ``{"W_Q": array, "W_K": array}``, each of shape (d_model, d_k).

    Raises
    ------
    TypeError, ValueError
        As for :func:`head_loss`.

    Notes
    -----
    With :math:`g_{bj} = u_b \cdot v_{bj}` and :math:`\delta_{bj} =
    \partial L / \partial s_{bj} = c\, [J(c s_b)\, g_b]_j`, the chain rule gives

    .. math::

       \frac{\partial L}{\partial W_Q} = \sum_b x_{q,b}^\top
       \Bigl(\sum_j \delta_{bj} x_{bj}\Bigr) W_K ,\qquad
       \frac{\partial L}{\partial W_K} = \sum_b
       \Bigl(\sum_j \delta_{bj} x_{bj}\Bigr)^{\!\top} q_b .

    For one row each is an outer product, so its Frobenius norm is the
    product of two vector norms; :func:`weight_gradient_norms` uses that.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.gradients import head_gradients, numerical_head_gradients
    >>> rng = np.random.default_rng(0)
    >>> args = (rng.standard_normal((2, 3)), rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 5)),
    ...         *(rng.standard_normal((3, 5)) / np.sqrt(3) for _ in range(3)), 0.5)
    >>> exact, numeric = head_gradients(*args), numerical_head_gradients(*args)
    >>> all(np.allclose(exact[name], numeric[name], rtol=1e-6, atol=1e-9) for name in ("W_Q", "W_K"))
    True
    """
    x_query, x_keys, upstream, w_q, w_k, w_v, scale = _head_inputs(x_query, x_keys, upstream, w_q, w_k, w_v, scale)
    _, mixed, q, d_q = _row_backward(x_query, x_keys, upstream, w_q, w_k, w_v, scale)
    return {"W_Q": x_query.T @ d_q, "W_K": mixed.T @ q}


def numerical_head_gradients(x_query, x_keys, upstream, w_q, w_k, w_v, scale: float, *,
                             step: float = 1e-6) -> dict[str, np.ndarray]:
    r"""Gradients of :func:`head_loss` by central finite differences, one entry at a time.

    Slow, and meant only for checking :func:`head_gradients` on small heads.

    Parameters
    ----------
    x_query, x_keys, upstream, w_q, w_k, w_v, scale
        As for :func:`head_loss`.
    step : float, default 1e-6
        The perturbation :math:`h`, finite and > 0.

    Returns
    -------
    dict
        ``{"W_Q": array, "W_K": array}``.

    Raises
    ------
    TypeError, ValueError
        As for :func:`head_loss`, or for a bad ``step``.

    Notes
    -----
    :math:`\partial L/\partial w \approx (L(w + h) - L(w - h)) / 2h`: truncation
    error :math:`O(h^2)`, rounding error about :math:`\epsilon L / h`, both near
    :math:`10^{-10}` for a loss of order one in float64.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.gradients import numerical_head_gradients
    >>> w = np.eye(2)
    >>> grads = numerical_head_gradients(np.ones((1, 2)), np.ones((1, 3, 2)), np.ones((1, 2)), w, w, w, 1.0)
    >>> bool(np.allclose(grads["W_Q"], 0, atol=1e-8))    # identical keys: the scores cannot matter
    True
    """
    x_query, x_keys, upstream, w_q, w_k, w_v, scale = _head_inputs(x_query, x_keys, upstream, w_q, w_k, w_v, scale)
    step = positive_finite_scalar(step, "step")
    current = {"W_Q": w_q.copy(), "W_K": w_k.copy()}
    grads = {}
    for name, weights in current.items():
        grad = np.empty_like(weights)
        for index in np.ndindex(weights.shape):
            saved = weights[index]
            weights[index] = saved + step
            plus = head_loss(x_query, x_keys, upstream, current["W_Q"], current["W_K"], w_v, scale)
            weights[index] = saved - step
            minus = head_loss(x_query, x_keys, upstream, current["W_Q"], current["W_K"], w_v, scale)
            weights[index] = saved
            grad[index] = (plus - minus) / (2 * step)
        grads[name] = grad
    return grads


def weight_gradient_norms(x_query, x_keys, upstream, w_q, w_k, w_v, scales) -> list[dict[str, np.ndarray]]:
    r"""Per row, :math:`\lVert \partial L/\partial W_Q \rVert_F` and :math:`\lVert \partial L/\partial W_K \rVert_F`, for each scale.

    The same backward pass as :func:`head_gradients`, per row and without
    the :math:`d_k`-wide arrays it can avoid: a row's gradients are the outer
    products :math:`x_q^\top (m W_K)` and :math:`m^\top q`, with
    :math:`m = \sum_j \delta_j x_j`, so their norms are
    :math:`\lVert x_q \rVert \sqrt{m\, W_K W_K^\top m^\top}` and
    :math:`\lVert m \rVert \sqrt{x_q W_Q W_Q^\top x_q^\top}`, and the scores
    are :math:`x_j \cdot (x_q W_Q W_K^\top)`. Every product is then
    :math:`d_\text{model}`-wide; only :math:`W_V u` is formed from :math:`u`.
    The arguments are those of :func:`head_gradients` (not checked again
    here), with a sequence of scales in place of one.

    Returns
    -------
    list of dict
        One per scale: ``{"w_q": norms, "w_k": norms}``, each of shape (b,).

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.gradients import head_gradients, weight_gradient_norms
    >>> rng = np.random.default_rng(0)
    >>> x_query, x_keys, upstream = rng.standard_normal((1, 6)), rng.standard_normal((1, 4, 6)), rng.standard_normal((1, 3))
    >>> w_q, w_k, w_v = (rng.standard_normal((6, 3)) for _ in range(3))
    >>> (norms,) = weight_gradient_norms(x_query, x_keys, upstream, w_q, w_k, w_v, [0.5])
    >>> full = head_gradients(x_query, x_keys, upstream, w_q, w_k, w_v, 0.5)
    >>> bool(np.isclose(norms["w_q"][0], np.linalg.norm(full["W_Q"])))
    True
    """
    gram_q, gram_k, cross = w_q @ w_q.T, w_k @ w_k.T, w_q @ w_k.T
    scores = np.einsum("bjm,bm->bj", x_keys, x_query @ cross)
    g = np.einsum("bjm,bm->bj", x_keys, upstream @ w_v.T)
    x_norm = np.linalg.norm(x_query, axis=1)
    q_norm = np.sqrt(np.einsum("bm,bm->b", x_query @ gram_q, x_query))
    norms = []
    for c in scales:
        mixed = np.einsum("bj,bjm->bm", c * _logit_gradient(c * scores, g), x_keys)
        d_q_norm = np.sqrt(np.maximum(np.einsum("bm,bm->b", mixed @ gram_k, mixed), 0.0))
        norms.append({"w_q": x_norm * d_q_norm, "w_k": np.linalg.norm(mixed, axis=1) * q_norm})
    return norms


# -- Summaries with their uncertainty ---------------------------------------------------------


def _binomial_quantile(q: float, n: int, p: float) -> int:
    """The smallest k with P(Binomial(n, p) <= k) >= q, for 0 < p < 1 (as scipy.stats.binom.ppf)."""
    k = np.arange(1, n + 1)
    # log C(n, k) accumulated term by term: exact enough for any n this module sees, no scipy needed.
    log_comb = np.concatenate(([0.0], np.cumsum(np.log(n - k + 1) - np.log(k))))
    ks = np.arange(n + 1)
    cdf = np.cumsum(np.exp(log_comb + ks * math.log(p) + (n - ks) * math.log1p(-p)))
    # Rounding can leave the last cumulative value a hair below 1.
    return int(min(np.searchsorted(cdf, q * (1 - 1e-12), side="left"), n))


def quantile_interval(samples, level: float, confidence: float = 0.95) -> tuple[float, float, float]:
    r"""A sample quantile and a distribution-free confidence interval for it, from order statistics.

    Parameters
    ----------
    samples : array_like, shape (n,)
        Independent draws, at least 1, finite.
    level : float
        The quantile level, strictly between 0 and 1.
    confidence : float, default 0.95
        The coverage asked for, strictly between 0 and 1.

    Returns
    -------
    value, low, high : float
        The sample quantile (``numpy.quantile``, linear interpolation) and the
        order statistics :math:`X_{(l)} \le X_{(u)}` of the interval.

    Raises
    ------
    ValueError
        For an empty, non-finite or non-1-D sample, or a level or confidence
        outside (0, 1).

    Notes
    -----
    The number of draws below the true quantile :math:`\xi` is
    :math:`\operatorname{Binomial}(n, \text{level})` whatever the (continuous)
    distribution, so :math:`P(X_{(l)} \le \xi \le X_{(u)}) = F(u - 1) - F(l - 1)`
    with :math:`F` the binomial distribution function. :math:`l` and :math:`u`
    are its :math:`\alpha/2` and :math:`1 - \alpha/2` quantiles (:math:`u` plus
    one), clipped to :math:`1, \dots, n`; near the ends of a small sample the
    clipped interval covers less than asked.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.gradients import quantile_interval
    >>> value, low, high = quantile_interval(np.arange(1.0, 101.0), 0.5)
    >>> value, low, high
    (50.5, 40.0, 61.0)
    """
    x = np.sort(as_float_array(samples, "samples").astype(np.float64, copy=False))
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"samples must be a 1-D array of at least 1 draw; got shape {x.shape}")
    require_finite(x, "samples")
    for value, name in ((level, "level"), (confidence, "confidence")):
        if not 0 < value < 1:
            raise ValueError(f"{name} must lie strictly between 0 and 1; got {value!r}")
    n = x.size
    alpha = 1 - confidence
    low = _binomial_quantile(alpha / 2, n, level)
    high = _binomial_quantile(1 - alpha / 2, n, level) + 1
    low, high = min(max(low, 1), n), min(max(high, 1), n)
    return float(np.quantile(x, level)), float(x[low - 1]), float(x[high - 1])


def wilson_interval(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    r"""The Wilson score interval for a binomial proportion.

    Parameters
    ----------
    successes : int
        Count, ``0 <= successes <= n``.
    n : int
        Trials, at least 1.
    z : float, default 1.96
        Normal quantile (1.96: about 95 %).

    Returns
    -------
    low, high : float

    Raises
    ------
    TypeError, ValueError
        For counts that are not integers in range, or a ``z`` that is not finite and > 0.

    Notes
    -----
    .. math::

       \frac{\hat f + z^2/2n \pm z \sqrt{\hat f(1 - \hat f)/n + z^2/4n^2}}{1 + z^2/n},

    which, unlike :math:`\hat f \pm z\,\mathrm{SE}`, stays in [0, 1] and is
    not empty when :math:`\hat f` is 0 or 1.

    Examples
    --------
    >>> from attention_scaling.gradients import wilson_interval
    >>> low, high = wilson_interval(0, 100)
    >>> low, round(high, 4)
    (0.0, 0.037)
    """
    n = integer_at_least(n, "n", 1)
    successes = integer_at_least(successes, "successes", 0)
    if successes > n:
        raise ValueError(f"successes must be at most n = {n}; got {successes}")
    z = positive_finite_scalar(z, "z")
    f = successes / n
    centre = (f + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(f * (1 - f) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # At 0 or n successes one end is exactly 0 or 1; computed, it is off by rounding.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True)
class GradientSummary:
    r"""One gradient size across query rows: quantiles, the fraction below a threshold, the mean.

    Attributes
    ----------
    n_rows : int
        Rows summarised.
    levels : tuple of float
        Quantile levels.
    quantiles, quantiles_low, quantiles_high : tuple of float
        Sample quantile at each level and its distribution-free interval
        (:func:`quantile_interval`).
    confidence : float
        The coverage of the quantile and fraction intervals.
    threshold : float
        A row is counted below when its size is under this.
    fraction_below, fraction_se : float
        The fraction of rows below the threshold and its standard error
        (binomial, or between blocks for grouped rows: :func:`summarise`).
    fraction_low, fraction_high : float
        Its Wilson interval (widened for grouped rows).
    mean, mean_se : float
        The sample mean and its standard error.
    """

    n_rows: int
    levels: tuple[float, ...]
    quantiles: tuple[float, ...]
    quantiles_low: tuple[float, ...]
    quantiles_high: tuple[float, ...]
    confidence: float
    threshold: float
    fraction_below: float
    fraction_se: float
    fraction_low: float
    fraction_high: float
    mean: float
    mean_se: float

    def quantile(self, level: float) -> tuple[float, float, float]:
        """The quantile at ``level`` (one of ``levels``) and its interval, as (value, low, high)."""
        if level not in self.levels:
            raise ValueError(f"level must be one of {self.levels}; got {level!r}")
        i = self.levels.index(level)
        return self.quantiles[i], self.quantiles_low[i], self.quantiles_high[i]

    @property
    def median(self) -> float:
        """The sample median."""
        return self.quantile(0.5)[0]


def starved_threshold(scaled_sizes) -> float:
    r"""The size below which a row counts as starved: :data:`STARVED_RATIO` times the median under :math:`1/\sqrt{d_k}`.

    Parameters
    ----------
    scaled_sizes : array_like, shape (n,)
        One gradient size per row, for the same quantity, at the same
        :math:`d_k`, with scores scaled by :math:`1/\sqrt{d_k}`; finite, not all 0.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        For an empty or non-finite array, or a median of 0.

    Examples
    --------
    >>> from attention_scaling.gradients import starved_threshold
    >>> starved_threshold([0.2, 0.4, 0.9])
    0.0004
    """
    sizes = as_float_array(scaled_sizes, "scaled_sizes")
    if sizes.ndim != 1 or sizes.size == 0:
        raise ValueError(f"scaled_sizes must be a non-empty 1-D array; got shape {sizes.shape}")
    require_finite(sizes, "scaled_sizes")
    return positive_finite_scalar(STARVED_RATIO * float(np.median(sizes)), "the starved threshold")


def _grouped_uncertainty(blocks: np.ndarray, threshold: float, levels: tuple[float, ...], confidence: float) -> dict:
    """Standard errors from the spread between blocks, and cluster-bootstrap intervals (blocks resampled)."""
    n_groups = blocks.shape[0]
    picks = np.random.default_rng(0).integers(n_groups, size=(_BOOTSTRAP_REPLICATES, n_groups))
    resampled = blocks[picks].reshape(_BOOTSTRAP_REPLICATES, -1)
    tails = [(1 - confidence) / 2, (1 + confidence) / 2]
    return {
        "mean_se": float(blocks.mean(axis=1).std(ddof=1) / math.sqrt(n_groups)),
        "fraction_se": float((blocks < threshold).mean(axis=1).std(ddof=1) / math.sqrt(n_groups)),
        "quantiles": np.quantile(np.quantile(resampled, levels, axis=1), tails, axis=1),
        "fraction": np.quantile((resampled < threshold).mean(axis=1), tails),
    }


def summarise(samples, threshold: float, *, levels=GRADIENT_LEVELS, confidence: float = 0.95,
              groups: int = 1) -> GradientSummary:
    r"""Summarise gradient sizes: quantiles with intervals, fraction below ``threshold``, mean.

    Parameters
    ----------
    samples : array_like, shape (n,)
        One size per row, finite, ``n >= 2``.
    threshold : float
        Rows with a size strictly below it are counted; finite and > 0.
    levels : sequence of float, default GRADIENT_LEVELS
        Quantile levels, each in (0, 1); 0.5 must be among them.
    confidence : float, default 0.95
        Coverage of the quantile intervals and of the Wilson interval.
    groups : int, default 1
        The rows come in this many equal consecutive blocks, each sharing
        one draw of something else (a head's weights), so rows of one block
        are not independent. With more than one block, the standard errors
        of the mean and of the fraction come from the spread between the
        blocks, and every interval is widened to cover also the
        cluster-bootstrap interval of the same confidence (whole blocks
        resampled, seeded).

    Returns
    -------
    GradientSummary

    Raises
    ------
    ValueError
        For fewer than 2 or non-finite samples, a bad threshold, levels
        without 0.5, a confidence outside (0, 1), or ``groups`` that does
        not split the samples into equal blocks of at least 2.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.gradients import summarise
    >>> summary = summarise(np.arange(1.0, 101.0), threshold=10.5)
    >>> summary.median, summary.fraction_below, summary.mean
    (50.5, 0.1, 50.5)

    Rows that share a draw: the blocks' own spread sets the uncertainty.

    >>> rng = np.random.default_rng(1)
    >>> shared = np.repeat(rng.normal(size=10), 50) + 0.1 * rng.normal(size=500)
    >>> naive, grouped = summarise(shared + 5, 1.0), summarise(shared + 5, 1.0, groups=10)
    >>> bool(grouped.mean_se > 5 * naive.mean_se)
    True
    """
    x = as_float_array(samples, "samples").astype(np.float64, copy=False)
    if x.ndim != 1 or x.size < 2:
        raise ValueError(f"samples must be a 1-D array of at least 2 draws; got shape {x.shape}")
    require_finite(x, "samples")
    threshold = positive_finite_scalar(threshold, "threshold")
    levels = tuple(float(level) for level in levels)
    if 0.5 not in levels:
        raise ValueError(f"levels must include 0.5 (the median); got {levels}")
    z = NormalDist().inv_cdf(0.5 + confidence / 2) if 0 < confidence < 1 else None
    if z is None:
        raise ValueError(f"confidence must lie strictly between 0 and 1; got {confidence!r}")
    groups = integer_at_least(groups, "groups", 1)
    if x.size % groups or (groups > 1 and x.size // groups < 2):
        raise ValueError(f"groups must split the {x.size} samples into equal blocks of at least 2; got {groups}")
    quantiles = np.array([quantile_interval(x, level, confidence) for level in levels])
    below = int(np.count_nonzero(x < threshold))
    fraction = below / x.size
    low, high = wilson_interval(below, x.size, z)
    mean = mean_estimate(x)
    mean_se, fraction_se = mean.standard_error, math.sqrt(fraction * (1 - fraction) / x.size)
    if groups > 1:
        grouped = _grouped_uncertainty(x.reshape(groups, -1), threshold, levels, confidence)
        mean_se, fraction_se = grouped["mean_se"], grouped["fraction_se"]
        quantiles[:, 1] = np.minimum(quantiles[:, 1], grouped["quantiles"][0])
        quantiles[:, 2] = np.maximum(quantiles[:, 2], grouped["quantiles"][1])
        low, high = min(low, float(grouped["fraction"][0])), max(high, float(grouped["fraction"][1]))
    return GradientSummary(
        n_rows=int(x.size), levels=levels, quantiles=tuple(quantiles[:, 0].tolist()),
        quantiles_low=tuple(quantiles[:, 1].tolist()), quantiles_high=tuple(quantiles[:, 2].tolist()),
        confidence=float(confidence), threshold=threshold, fraction_below=fraction, fraction_se=fraction_se,
        fraction_low=low, fraction_high=high, mean=mean.value, mean_se=mean_se,
    )
