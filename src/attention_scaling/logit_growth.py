r"""Logit growth during training, the QK-norm bound, and entropy collapse.

The division by :math:`\sqrt{d_k}` is fixed when a model is built, but the
query and key projections are trained, and the logits are quadratic in them:
multiplying :math:`W_Q` and :math:`W_K` by :math:`c` multiplies every logit by
:math:`c^2`. This module measures what that does to attention (seeded, with
standard errors), computes the logits of QK-norm (LayerNorm on queries and
keys) and their bound, and evaluates the lower bound on attention entropy of
Zhai et al. (2023) together with random and worst-case instances to test it
against.

Entropies here are computed from the logits (:func:`~attention_scaling.entropy_from_logits`),
because the entropy of a nearly one-hot row is tiny and computing it from
rounded weights loses most of it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attention_scaling._softmax import entropy_from_logits
from attention_scaling._checks import as_float_array, integer_at_least, require_finite, require_ndim
from attention_scaling._attention import attention_scores, layer_norm
from attention_scaling.simulate import mean_estimate

__all__ = [
    "EntropyBoundCheck",
    "EntropyCollapse",
    "LogitGrowth",
    "entropy_bound_check",
    "entropy_bound_sigma",
    "entropy_collapse_data",
    "logit_growth",
    "qk_norm_bound",
    "qk_norm_scores",
    "tight_instance",
    "zhai_entropy_bound",
]




# -- Logit growth ---------------------------------------------------------------------


@dataclass(frozen=True)
class LogitGrowth:
    """Attention statistics as the query and key projections grow by a factor ``c``.

    Each statistic is a mean over independent trials, with its standard error.
    ``entropy`` and ``max_weight`` are the row entropy (nats) and largest
    weight, averaged over the rows of a trial.
    """

    growth: np.ndarray
    d_model: int
    d_k: int
    n_tokens: int
    n_trials: int
    logit_std: np.ndarray
    logit_std_se: np.ndarray
    entropy: np.ndarray
    entropy_se: np.ndarray
    max_weight: np.ndarray
    max_weight_se: np.ndarray


def logit_growth(
    growth=(1, 2, 3, 4, 6, 8),
    *,
    d_model: int = 256,
    d_k: int = 64,
    n_tokens: int = 64,
    n_trials: int = 16,
    seed=0,
) -> LogitGrowth:
    r"""Measure the logits and attention of a random head whose projections are multiplied by ``c``.

    Each trial draws ``n_tokens`` standard normal vectors of length
    ``d_model``, passes them through LayerNorm (no gain), and draws
    :math:`W_Q, W_K` with independent :math:`\mathcal{N}(0, 1/d_\text{model})`
    entries, so that the queries and keys have components of variance about 1
    and the scaled logits a standard deviation of about 1 at :math:`c = 1`.
    Every growth factor uses the same draws: only :math:`c` changes.

    Parameters
    ----------
    growth : sequence of float
        The factors :math:`c > 0` applied to both :math:`W_Q` and :math:`W_K`.
    d_model, d_k, n_tokens : int
        Width of the inputs (at least 2), head dimension, number of tokens.
    n_trials : int
        Independent draws, at least 2 (for the standard errors).
    seed : int or tuple of int
        Seed for ``numpy.random.default_rng``.

    Returns
    -------
    LogitGrowth

    Raises
    ------
    ValueError
        If a size is too small or a growth factor is not finite and positive.

    Examples
    --------
    >>> from attention_scaling.logit_growth import logit_growth
    >>> result = logit_growth((1, 4), d_model=32, d_k=8, n_tokens=16, n_trials=4)
    >>> [round(float(r), 6) for r in result.logit_std / result.logit_std[0]]   # c**2
    [1.0, 16.0]
    >>> bool(result.entropy[1] < result.entropy[0])
    True
    """
    growth = as_float_array(growth, "growth")
    require_ndim(growth, "growth", 1, "(n_factors,)")
    require_finite(growth, "growth")
    if growth.size == 0 or np.any(growth <= 0):
        raise ValueError(f"growth must hold at least one factor, each > 0; got {growth.tolist()}")
    d_model = integer_at_least(d_model, "d_model", 2)
    d_k = integer_at_least(d_k, "d_k", 1)
    n_tokens = integer_at_least(n_tokens, "n_tokens", 1)
    n_trials = integer_at_least(n_trials, "n_trials", 2)
    rng = np.random.default_rng(seed)
    shape = (n_trials, growth.size)
    logit_std, entropy, max_weight = np.empty(shape), np.empty(shape), np.empty(shape)
    for trial in range(n_trials):
        x = layer_norm(rng.standard_normal((n_tokens, d_model)))
        w_q = rng.standard_normal((d_model, d_k)) / math.sqrt(d_model)
        w_k = rng.standard_normal((d_model, d_k)) / math.sqrt(d_model)
        queries, keys = x @ w_q, x @ w_k
        for column, c in enumerate(growth):
            # x @ (c w_q) = c (x @ w_q): scaling the projections scales the queries and keys.
            logits = attention_scores(c * queries, c * keys)
            logit_std[trial, column] = logits.std()
            entropy[trial, column] = entropy_from_logits(logits).mean()
            shifted = logits - logits.max(axis=-1, keepdims=True)
            max_weight[trial, column] = (1.0 / np.exp(shifted).sum(axis=-1)).mean()
    fields = {}
    for name, values in (("logit_std", logit_std), ("entropy", entropy), ("max_weight", max_weight)):
        estimate = mean_estimate(values, axis=0)
        fields[name], fields[f"{name}_se"] = estimate.value, estimate.standard_error
    return LogitGrowth(growth, d_model, d_k, n_tokens, n_trials, **fields)


def qk_norm_scores(q, k, *, gain_q=1.0, gain_k=1.0) -> np.ndarray:
    r"""Logits of QK-norm: :math:`(g_q \odot \mathrm{LN}(q))(g_k \odot \mathrm{LN}(k))^\top / \sqrt{d_k}`.

    :func:`~attention_scaling.layer_norm` (no :math:`\epsilon`, no bias)
    normalises each query and key; ``gain_q`` and ``gain_k`` stand for the
    learnable gains of a real QK-norm layer (scalars or vectors of length
    :math:`d_k`); with the default gain 1 every logit lies in
    :math:`[-\sqrt{d_k}, \sqrt{d_k}]`.

    Parameters
    ----------
    q : array_like, shape (..., n_q, d_k)
        Queries before normalisation; no row may be constant.
    k : array_like, shape (..., n_k, d_k)
        Keys before normalisation.
    gain_q, gain_k : float or array_like of shape (d_k,), default 1.0
        Elementwise gains applied after the normalisation.

    Returns
    -------
    numpy.ndarray, shape (..., n_q, n_k)

    Raises
    ------
    TypeError, ValueError
        As for :func:`~attention_scaling.layer_norm` and
        :func:`~attention_scaling.attention_scores`, or if a gain is not
        finite or does not broadcast to :math:`d_k`.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.logit_growth import qk_norm_scores
    >>> q = np.array([[1.0, 2.0, 3.0, 4.0]])
    >>> float(qk_norm_scores(q, 100 * q)[0, 0])   # q = k up to scale: the bound sqrt(4)
    2.0
    >>> round(float(qk_norm_scores(q, q, gain_q=3.0)[0, 0]), 12)
    6.0
    """
    normalised_q, normalised_k = layer_norm(q), layer_norm(k)
    d = normalised_q.shape[-1]
    gains = []
    for name, gain in (("gain_q", gain_q), ("gain_k", gain_k)):
        gain = as_float_array(gain, name)
        require_finite(gain, name)
        if gain.ndim > 1 or (gain.ndim == 1 and gain.shape[0] != d):
            raise ValueError(f"{name} must be a scalar or have shape ({d},); got shape {gain.shape}")
        gains.append(gain)
    return attention_scores(gains[0] * normalised_q, gains[1] * normalised_k)


def qk_norm_bound(d_k: int, *, gain_q=1.0, gain_k=1.0) -> float:
    r"""A bound on every :func:`qk_norm_scores` logit: :math:`\sqrt{d_k}\,\max_i |g_{q,i}\, g_{k,i}|`.

    With unit gains this is :math:`\sqrt{d_k}`, attained when a query and a
    key normalise to the same vector (theorem ``thm-qk-norm-bound``); so is
    :math:`\sqrt{d_k}\,|g_q g_k|` for scalar gains. With vector
    gains, :math:`|\sum_i g_{q,i} g_{k,i} u_i v_i| \le \max_i|g_{q,i} g_{k,i}|
    \sum_i |u_i v_i|` and Cauchy–Schwarz bounds the last sum by
    :math:`\lVert u\rVert\,\lVert v\rVert = d_k`.

    Parameters
    ----------
    d_k : int
        Head dimension, at least 2.
    gain_q, gain_k : float or array_like of shape (d_k,), default 1.0

    Returns
    -------
    float

    Examples
    --------
    >>> from attention_scaling.logit_growth import qk_norm_bound
    >>> round(qk_norm_bound(128), 4)
    11.3137
    >>> qk_norm_bound(64, gain_q=2.0, gain_k=1.5)
    24.0
    """
    d_k = integer_at_least(d_k, "d_k", 2)
    product = as_float_array(gain_q, "gain_q") * as_float_array(gain_k, "gain_k")
    require_finite(product, "gain_q * gain_k")
    if product.ndim > 1 or (product.ndim == 1 and product.shape[0] != d_k):
        raise ValueError(f"the gains must be scalars or have shape ({d_k},); got shape {product.shape}")
    return float(math.sqrt(d_k) * np.max(np.abs(product)))


# -- Entropy collapse (Zhai et al. 2023) ---------------------------------------------------------


def zhai_entropy_bound(sigma, n_tokens: int) -> np.ndarray:
    r"""The lower bound on the entropy of every attention row, as secondary sources state Theorem 3.1 of Zhai et al. (2023).

    The primary text's statement was not checked: the logit-growth page says
    so beside it, and checks the bound on its own terms instead.

    With :math:`\boldsymbol\sigma` the product of the spectral norms (see
    :func:`entropy_bound_sigma`), :math:`T` tokens and
    :math:`\beta = \exp(-\boldsymbol\sigma\sqrt{T/(T-1)})`,

    .. math::

        \operatorname{Ent}(A_i) \ge \ln\bigl(1 + (T-1)\beta\bigr)
        + \frac{\boldsymbol\sigma \sqrt{T(T-1)}\,\beta}{1 + (T-1)\beta} .

    It is the entropy of a row with one logit
    :math:`\boldsymbol\sigma\sqrt{T/(T-1)}` above the other :math:`T - 1`
    (see :func:`~attention_scaling.proofs.entropy_bound_derivation`).

    Parameters
    ----------
    sigma : float or array_like
        Values of :math:`\boldsymbol\sigma \ge 0`.
    n_tokens : int or array_like of int
        Sequence length :math:`T \ge 2`; an array broadcasts against ``sigma``.

    Returns
    -------
    numpy.ndarray
        The bound, in nats, with the broadcast shape of ``sigma`` and ``n_tokens``.

    Raises
    ------
    TypeError
        If ``sigma`` is not real and numeric.
    ValueError
        If ``sigma`` is negative or not finite, or a ``n_tokens`` is not an integer >= 2.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.logit_growth import zhai_entropy_bound
    >>> bool(np.isclose(zhai_entropy_bound(0.0, 16), np.log(16)))   # uniform attention
    True
    >>> zhai_entropy_bound([1.0, 5.0, 10.0], 16).round(4)
    array([2.7168, 0.4903, 0.0056])
    """
    sigma = as_float_array(sigma, "sigma")
    require_finite(sigma, "sigma")
    if np.any(sigma < 0):
        raise ValueError(f"sigma must be >= 0; got a minimum of {sigma.min()!r}")
    T = np.asarray(n_tokens)
    if T.dtype.kind not in "iu" or np.any(T < 2):
        raise ValueError(f"n_tokens must be integers >= 2; got {n_tokens!r}")
    T = T.astype(np.float64)
    beta = np.exp(-sigma * np.sqrt(T / (T - 1)))
    return np.log1p((T - 1) * beta) + sigma * np.sqrt(T * (T - 1)) * beta / (1 + (T - 1) * beta)


def entropy_bound_sigma(x, w_q, w_k) -> float:
    r""":math:`\boldsymbol\sigma = \lVert W_K W_Q^\top\rVert_2\,\lVert X X^\top\rVert_2`, the quantity of Zhai et al.'s bound.

    For logits :math:`L = X W_Q W_K^\top X^\top` (rows are queries),
    :math:`\lVert L\rVert_2 \le \lVert X\rVert_2^2\,\lVert W_Q W_K^\top\rVert_2 = \boldsymbol\sigma`,
    since :math:`\lVert X\rVert_2^2 = \lVert XX^\top\rVert_2` and a matrix
    and its transpose share their spectral norm; every row of :math:`L` then
    has Euclidean norm at most :math:`\boldsymbol\sigma`.

    Parameters
    ----------
    x : array_like, shape (T, d)
        The tokens, one per row.
    w_q, w_k : array_like, shape (d, d_head)
        Query and key projections.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If an input is not real and numeric.
    ValueError
        If an input is not a finite matrix or the shapes do not fit.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.logit_growth import entropy_bound_sigma
    >>> entropy_bound_sigma(2 * np.eye(3), np.eye(3), 0.5 * np.eye(3))   # 0.5 * 4
    2.0
    """
    x, w_q, w_k = (_matrix(value, name) for value, name in ((x, "x"), (w_q, "w_q"), (w_k, "w_k")))
    if w_q.shape != w_k.shape or w_q.shape[0] != x.shape[1]:
        raise ValueError(
            f"w_q and w_k must both have shape ({x.shape[1]}, d_head) for x of shape {x.shape}; "
            f"got {w_q.shape} and {w_k.shape}"
        )
    return float(np.linalg.norm(w_k @ w_q.T, 2) * np.linalg.norm(x @ x.T, 2))


def _matrix(value, name: str) -> np.ndarray:
    array = as_float_array(value, name)
    if array.ndim != 2 or 0 in array.shape:
        raise ValueError(f"{name} must be a non-empty matrix; got shape {array.shape}")
    require_finite(array, name)
    return array


def tight_instance(n_tokens: int, sigma: float, d_model: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Tokens and projections whose first attention row meets Zhai et al.'s bound with equality.

    :math:`X = [I_T \; 0]` (so :math:`\lVert XX^\top\rVert_2 = 1`),
    :math:`W_Q = \boldsymbol\sigma e_1` and :math:`W_K = v` (one column
    each), where :math:`v` is the unit vector along
    :math:`e_1 - \tfrac1T\mathbf 1`. The first row of logits is then
    :math:`\boldsymbol\sigma v`: one logit :math:`\boldsymbol\sigma\sqrt{T/(T-1)}`
    above the other :math:`T - 1`, with norm :math:`\boldsymbol\sigma`; the
    other rows are 0 (uniform).

    Parameters
    ----------
    n_tokens : int
        :math:`T \ge 2`.
    sigma : float
        The value of :math:`\boldsymbol\sigma \ge 0` to realise.
    d_model : int, optional
        Width of the tokens, at least ``n_tokens`` (default: ``n_tokens``).

    Returns
    -------
    x : numpy.ndarray, shape (n_tokens, d_model)
    w_q, w_k : numpy.ndarray, shape (d_model, 1)

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling import attention_scores, entropy_from_logits
    >>> from attention_scaling.logit_growth import entropy_bound_sigma, tight_instance, zhai_entropy_bound
    >>> x, w_q, w_k = tight_instance(8, 3.0)
    >>> entropy_bound_sigma(x, w_q, w_k)
    3.0
    >>> row = entropy_from_logits(attention_scores(x @ w_q, x @ w_k, scale=1.0))[0]
    >>> bool(np.isclose(row, zhai_entropy_bound(3.0, 8)))
    True
    """
    T = integer_at_least(n_tokens, "n_tokens", 2)
    d_model = T if d_model is None else integer_at_least(d_model, "d_model", T)
    if isinstance(sigma, bool) or not isinstance(sigma, (int, float, np.integer, np.floating)):
        raise TypeError(f"sigma must be a real number; got {type(sigma).__name__}")
    if not math.isfinite(sigma) or sigma < 0:
        raise ValueError(f"sigma must be finite and >= 0; got {sigma!r}")
    x = np.eye(T, d_model)
    w_q = np.zeros((d_model, 1))
    w_q[0, 0] = sigma
    direction = np.full(T, -1.0 / T)
    direction[0] += 1.0
    w_k = np.zeros((d_model, 1))
    w_k[:T, 0] = direction / np.linalg.norm(direction)
    return x, w_q, w_k


@dataclass(frozen=True)
class EntropyBoundCheck:
    r"""Random instances of Zhai et al.'s bound.

    Per instance: :math:`T`, :math:`\boldsymbol\sigma`, the lowest row
    entropy, the bound, :math:`\lVert X\rVert_2` (so that a misreading
    of :math:`\sigma_x` can be tested on the same heads), and the largest
    Euclidean norm of a row of logits, which :math:`\boldsymbol\sigma` bounds.
    """

    n_tokens: np.ndarray
    sigma: np.ndarray
    min_entropy: np.ndarray
    bound: np.ndarray
    x_norm: np.ndarray
    max_row_norm: np.ndarray

    @property
    def gap(self) -> np.ndarray:
        """Lowest row entropy minus the bound; negative would be a violation."""
        return self.min_entropy - self.bound

    @property
    def violations(self) -> int:
        """How many instances have a row below the bound."""
        return int(np.sum(self.gap < 0))


def entropy_bound_check(
    n_instances: int = 2000,
    *,
    seed=0,
    n_tokens: tuple[int, int] = (2, 64),
    sigma_range: tuple[float, float] = (1e-2, 1e2),
    log_sigma: bool = True,
    max_dim: int = 64,
) -> EntropyBoundCheck:
    r"""Test Zhai et al.'s bound on seeded random self-attention heads.

    Each instance draws :math:`T` uniformly from the ``n_tokens`` range, a
    width :math:`d` and head size from :math:`[2, \text{max\_dim}]` and
    :math:`[1, \text{max\_dim}/2]`, Gaussian tokens :math:`X` with a random
    scale, Gaussian :math:`W_Q, W_K`, and a target :math:`\boldsymbol\sigma`
    from ``sigma_range`` (log-uniform if ``log_sigma``); :math:`W_Q` is then
    rescaled so that :func:`entropy_bound_sigma` equals the target. The logits
    are :math:`X W_Q (X W_K)^\top`, with no further scale (a constant such as
    :math:`1/\sqrt{d_k}` is part of :math:`W_Q`).

    Parameters
    ----------
    n_instances : int
        Number of random heads, at least 1.
    seed : int or tuple of int
        Seed for ``numpy.random.default_rng``.
    n_tokens : (int, int)
        Inclusive range of :math:`T`, with :math:`2 \le` low :math:`\le` high.
    sigma_range : (float, float)
        Range of :math:`\boldsymbol\sigma`, with 0 < low <= high (low >= 0 if not ``log_sigma``).
    log_sigma : bool, default True
        Draw :math:`\boldsymbol\sigma` uniformly on a log scale, else linearly.
    max_dim : int
        Largest token width, at least 2.

    Returns
    -------
    EntropyBoundCheck

    Examples
    --------
    >>> from attention_scaling.logit_growth import entropy_bound_check
    >>> result = entropy_bound_check(50, seed=1)
    >>> result.violations, bool(result.gap.min() >= 0)
    (0, True)
    """
    n_instances = integer_at_least(n_instances, "n_instances", 1)
    low_t, high_t = (integer_at_least(value, "n_tokens", 2) for value in n_tokens)
    max_dim = integer_at_least(max_dim, "max_dim", 2)
    low_s, high_s = (float(value) for value in sigma_range)
    if not (0 <= low_s <= high_s < math.inf) or (log_sigma and low_s == 0) or low_t > high_t:
        raise ValueError(f"need 2 <= n_tokens low <= high and 0 < sigma low <= high; got {n_tokens}, {sigma_range}")
    rng = np.random.default_rng(seed)
    rows = np.empty((n_instances, 6))
    for index in range(n_instances):
        T = int(rng.integers(low_t, high_t + 1))
        width, head = int(rng.integers(2, max_dim + 1)), int(rng.integers(1, max_dim // 2 + 1))
        target = math.exp(rng.uniform(math.log(low_s), math.log(high_s))) if log_sigma else rng.uniform(low_s, high_s)
        x = rng.standard_normal((T, width)) * math.exp(rng.uniform(-2, 2))
        w_q, w_k = rng.standard_normal((width, head)), rng.standard_normal((width, head))
        w_q *= target / entropy_bound_sigma(x, w_q, w_k)
        logits = attention_scores(x @ w_q, x @ w_k, scale=1.0)
        rows[index] = (T, target, entropy_from_logits(logits).min(), zhai_entropy_bound(target, T),
                       np.linalg.norm(x, 2), np.linalg.norm(logits, axis=1).max())
    return EntropyBoundCheck(rows[:, 0].astype(int), *rows[:, 1:].T)


# -- The data of the site's figure ------------------------------------------------------


@dataclass(frozen=True)
class EntropyCollapse:
    r"""Lowest row entropy against :math:`\boldsymbol\sigma`: random heads, worst-case heads, and the bound.

    Attributes
    ----------
    n_tokens : int
        The sequence length :math:`T` of every head.
    random : EntropyBoundCheck
        Random heads with :math:`\boldsymbol\sigma` spread log-uniformly.
    log_grid, log_grid_bound : numpy.ndarray
        A logarithmic grid of :math:`\boldsymbol\sigma` and the bound on it.
    linear_grid, linear_grid_bound : numpy.ndarray
        A linear grid of :math:`\boldsymbol\sigma` from 0 to 12 and the bound on it.
    tight_sigma, tight_entropy : numpy.ndarray
        :math:`\boldsymbol\sigma` of the worst-case heads (:func:`tight_instance`)
        and the entropy of their first row.
    """

    n_tokens: int
    random: EntropyBoundCheck
    log_grid: np.ndarray
    log_grid_bound: np.ndarray
    linear_grid: np.ndarray
    linear_grid_bound: np.ndarray
    tight_sigma: np.ndarray
    tight_entropy: np.ndarray


def entropy_collapse_data(n_tokens: int = 16, n_instances: int = 200, seed: int = 8) -> EntropyCollapse:
    r"""Lowest row entropy of random and of worst-case heads against :math:`\boldsymbol\sigma`, with Zhai et al.'s bound.

    Parameters
    ----------
    n_tokens : int, default 16
        Sequence length :math:`T` of every head, at least 2.
    n_instances : int, default 200
        Random heads, with :math:`\boldsymbol\sigma` log-uniform in
        :math:`[10^{-2}, 10^3]` (see :func:`entropy_bound_check`).
    seed : int, default 8
        Seed of the random heads.

    Returns
    -------
    EntropyCollapse

    Examples
    --------
    >>> from attention_scaling.logit_growth import entropy_collapse_data
    >>> data = entropy_collapse_data(n_instances=5)
    >>> data.n_tokens, data.random.sigma.shape, data.random.violations
    (16, (5,), 0)
    """
    n_tokens = integer_at_least(n_tokens, "n_tokens", 2)
    random = entropy_bound_check(n_instances, seed=seed, n_tokens=(n_tokens, n_tokens), sigma_range=(1e-2, 1e3))
    tight_sigma = np.linspace(0.0, 12.0, 13)
    tight_entropy = []
    for sigma in tight_sigma:
        x, w_q, w_k = tight_instance(n_tokens, float(sigma))
        tight_entropy.append(entropy_from_logits(attention_scores(x @ w_q, x @ w_k, scale=1.0))[0])
    log_grid, linear_grid = np.geomspace(1e-2, 1e3, 300), np.linspace(0.0, 12.0, 200)
    return EntropyCollapse(
        n_tokens=n_tokens,
        random=random,
        log_grid=log_grid,
        log_grid_bound=zhai_entropy_bound(log_grid, n_tokens),
        linear_grid=linear_grid,
        linear_grid_bound=zhai_entropy_bound(linear_grid, n_tokens),
        tight_sigma=tight_sigma,
        tight_entropy=np.array(tight_entropy),
    )
