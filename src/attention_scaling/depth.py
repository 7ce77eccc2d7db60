r"""Depth: rank collapse of pure attention, and the Lipschitz constant of self-attention.

:func:`rank_collapse_data` stacks seeded attention layers
:math:`X \leftarrow \operatorname{softmax}(c\,XW_Q(XW_K)^\top)XW_V` (with or
without a skip connection :math:`X + \cdot`, never an MLP) and records the
relative residual :math:`\lVert X - \mathbf{1}\bar x^\top\rVert_F /
\lVert X\rVert_F` (:func:`relative_residual`) after each layer, for the
scales :math:`c = 1`, :math:`1/\sqrt{d_k}` and :math:`1/d_k`.
:func:`collapse_fits` compares an exponential and a doubly exponential fit of
a residual curve. :func:`lipschitz_growth_data` measures the spectral norm of
the Jacobian of dot-product and L2 self-attention (identity weights) at
:math:`t X_0` for growing :math:`t`, by central differences
(:func:`attention_jacobian_norm`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attention_scaling._softmax import softmax

__all__ = [
    "CollapseFit",
    "LipschitzGrowth",
    "RankCollapse",
    "POLICIES",
    "attention_jacobian_norm",
    "collapse_fits",
    "contraction_ratios",
    "dot_product_self_attention",
    "l2_self_attention",
    "lipschitz_growth_data",
    "query_gradient_norm",
    "rank_collapse_data",
    "relative_residual",
]

#: The scale c of the logits under each policy, for a head of size d.
POLICIES = {"none": lambda d: 1.0, "sqrt": lambda d: 1 / math.sqrt(d), "linear": lambda d: 1 / d}

# The relative residual of a collapsed float64 matrix is about 2e-16, rounding error; at 1e-14 that error
# is 2 % of the value, 0.02 in its logarithm, far below the fits' errors. Fits use only the points above.
_FLOOR = 1e-14


def relative_residual(x) -> np.ndarray:
    r""":math:`\lVert X - \mathbf{1}\bar x^\top\rVert_F / \lVert X\rVert_F`: how far the tokens are from all being equal.

    :math:`\mathbf{1}\bar x^\top` (every row the mean token) is the closest
    matrix with identical rows in the Frobenius norm, so this is 0 exactly for
    a rank-1 matrix of that form and at most 1.

    Parameters
    ----------
    x : array_like, shape (..., n, d)
        Tokens as rows; leading axes are a batch.

    Returns
    -------
    numpy.ndarray, shape (...)

    Raises
    ------
    ValueError
        If ``x`` has fewer than 2 axes or a zero matrix in it.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.depth import relative_residual
    >>> float(relative_residual(np.ones((4, 3))))
    0.0
    >>> float(relative_residual(np.array([[1.0, 0.0], [-1.0, 0.0]])))
    1.0
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., n, d); got shape {x.shape}")
    total = np.linalg.norm(x, axis=(-2, -1))
    if np.any(total == 0):
        raise ValueError("x must not hold a zero matrix: its relative residual is undefined")
    return np.linalg.norm(x - x.mean(axis=-2, keepdims=True), axis=(-2, -1)) / total


@dataclass(frozen=True)
class RankCollapse:
    r"""Relative residuals of stacked attention layers, by policy and skip connection.

    Attributes
    ----------
    depth : numpy.ndarray
        Layers 0 (the input) to L.
    residual : dict
        ``(policy, skip)`` to an array of shape (seeds, L + 1).
    n_tokens, d, n_seeds, seed : int
        The sizes and the seed of the generator.
    """

    depth: np.ndarray
    residual: dict
    n_tokens: int
    d: int
    n_seeds: int
    seed: int

    def quantiles(self, policy: str, skip: bool, q=(0.1, 0.5, 0.9)) -> np.ndarray:
        """Quantiles over the seeds at each depth, shape (len(q), L + 1)."""
        return np.quantile(self.residual[(policy, skip)], q, axis=0)


def rank_collapse_data(depth: int = 24, n_tokens: int = 16, d: int = 64, n_seeds: int = 16,
                       seed: int = 2021) -> RankCollapse:
    r"""The relative residual after each of ``depth`` attention layers, for every policy, with and without skips.

    Each seed draws its tokens :math:`X_0 \sim \mathcal{N}(0, 1)` and, per
    layer, :math:`W_Q, W_K, W_V` with entries :math:`\mathcal{N}(0, 1/d)`; all
    policies and both architectures share these draws. A layer is
    :math:`A = \operatorname{softmax}(c\,XW_Q(XW_K)^\top)XW_V` (one head,
    :math:`d_k = d`), and :math:`X \leftarrow A` (pure attention) or
    :math:`X \leftarrow X + A` (skip). After each layer :math:`X` is rescaled
    to :math:`\lVert X\rVert_F^2 = nd`: a scalar, which leaves the relative
    residual unchanged, keeps the logits' size from drifting with depth.

    Returns
    -------
    RankCollapse

    Raises
    ------
    ValueError
        If a size is below 1 (``n_tokens`` below 2).

    Examples
    --------
    >>> from attention_scaling.depth import rank_collapse_data
    >>> data = rank_collapse_data(depth=3, n_tokens=8, d=16, n_seeds=4)
    >>> data.residual[("linear", False)].shape
    (4, 4)
    >>> bool(data.quantiles("linear", False)[1, -1] < data.quantiles("linear", True)[1, -1])
    True
    """
    for value, name, low in ((depth, "depth", 1), (n_tokens, "n_tokens", 2), (d, "d", 1), (n_seeds, "n_seeds", 1)):
        if int(value) != value or value < low:
            raise ValueError(f"{name} must be an integer >= {low}; got {value!r}")
    rng = np.random.default_rng(seed)
    x0 = rng.standard_normal((n_seeds, n_tokens, d))
    weights = rng.standard_normal((depth, 3, n_seeds, d, d)) / math.sqrt(d)
    residual = {}
    for policy, scale in POLICIES.items():
        c = scale(d)
        for skip in (False, True):
            x, curve = x0, [relative_residual(x0)]
            for w_q, w_k, w_v in weights:
                logits = c * (x @ w_q) @ (x @ w_k).transpose(0, 2, 1)
                out = softmax(logits, axis=-1) @ (x @ w_v)
                x = x + out if skip else out
                x = x * (math.sqrt(n_tokens * d) / np.linalg.norm(x, axis=(-2, -1), keepdims=True))
                curve.append(relative_residual(x))
            residual[(policy, skip)] = np.stack(curve, axis=1)
    return RankCollapse(np.arange(depth + 1), residual, n_tokens, d, n_seeds, seed)


@dataclass(frozen=True)
class CollapseFit:
    r"""An exponential and a doubly exponential fit of a residual curve :math:`r_L`.

    Attributes
    ----------
    points : int
        Layers used (from ``first`` on, those with :math:`r_L` above the rounding floor 1e-14).
    rms_exponential : float
        RMS error in :math:`\ln r_L` of the fit :math:`\ln r_L = a + bL`.
    rms_double : float
        RMS error in :math:`\ln r_L` of the fit :math:`\ln(-\ln r_L) = a + bL`,
        i.e. :math:`r_L = \exp(-e^{a} B^{L})` with :math:`B = e^{b}`.
    base : float
        :math:`B`, the factor by which :math:`-\ln r_L` grows per layer in the
        doubly exponential fit (3 would be a cubic rate).
    """

    points: int
    rms_exponential: float
    rms_double: float
    base: float

    @property
    def doubly_exponential(self) -> bool:
        """Whether the doubly exponential fit is the better one, with a base above 1."""
        return self.rms_double < self.rms_exponential and self.base > 1


def collapse_fits(curve, first: int = 1) -> CollapseFit:
    r"""Fit :math:`\ln r_L` linearly in :math:`L` and :math:`\ln(-\ln r_L)` linearly in :math:`L`; compare the errors.

    Parameters
    ----------
    curve : array_like, shape (L + 1,)
        Residuals in (0, 1) at depths 0, 1, ...; points at or below 1e-14 are dropped.
    first : int, default 1
        The first depth fitted: by default layer 1, the first attention output
        (depth 0 is the random input).

    Raises
    ------
    ValueError
        If fewer than 3 points lie above the floor, or a point is not in (0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.depth import collapse_fits
    >>> fit = collapse_fits(np.exp(-0.1 * 3.0 ** np.arange(5)), first=0)
    >>> round(fit.base, 6), fit.doubly_exponential
    (3.0, True)
    >>> collapse_fits(0.5 ** np.arange(1, 9)).doubly_exponential
    False
    """
    curve = np.asarray(curve, dtype=np.float64)
    layers = np.arange(curve.size)
    keep = (curve > _FLOOR) & (layers >= first)
    layers, curve = layers[keep], curve[keep]
    if curve.size < 3 or np.any(curve >= 1):
        raise ValueError(f"curve must hold at least 3 residuals in (1e-14, 1) from depth {first}; got {curve.tolist()}")
    logs = np.log(curve)
    slope, intercept = np.polyfit(layers, logs, 1)
    rms_exponential = float(np.sqrt(np.mean((intercept + slope * layers - logs) ** 2)))
    b, a = np.polyfit(layers, np.log(-logs), 1)
    rms_double = float(np.sqrt(np.mean((-np.exp(a + b * layers) - logs) ** 2)))
    return CollapseFit(int(curve.size), rms_exponential, rms_double, float(np.exp(b)))


def dot_product_self_attention(x) -> np.ndarray:
    r""":math:`f(X) = \operatorname{softmax}(XX^\top/\sqrt{d})\,X`, identity weights; batched over leading axes.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.depth import dot_product_self_attention
    >>> [round(v, 6) for v in dot_product_self_attention(np.array([[0.0], [2.0]])).ravel().tolist()]
    [1.0, 1.964028]
    """
    x = np.asarray(x, dtype=np.float64)
    return softmax(x @ np.swapaxes(x, -1, -2) / math.sqrt(x.shape[-1]), axis=-1) @ x


def l2_self_attention(x) -> np.ndarray:
    r""":math:`f(X) = \operatorname{softmax}(-\lVert x_i - x_j\rVert^2/\sqrt{d})\,X`: L2 scores, tied identity weights.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.depth import l2_self_attention
    >>> [round(v, 6) for v in l2_self_attention(np.array([[0.0], [2.0]])).ravel().tolist()]
    [0.035972, 1.964028]
    """
    x = np.asarray(x, dtype=np.float64)
    squared = np.sum((x[..., :, None, :] - x[..., None, :, :]) ** 2, axis=-1)
    return softmax(-squared / math.sqrt(x.shape[-1]), axis=-1) @ x


def attention_jacobian_norm(f, x, step: float = 1e-6) -> float:
    r"""The spectral norm of the Jacobian of ``f`` at ``x`` (shape (n, d)), by central differences.

    The step is relative, ``step`` times :math:`\max(1, \max|x|)`; for the
    smooth maps here the truncation error is of order step², far below the
    norms measured.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.depth import attention_jacobian_norm
    >>> round(attention_jacobian_norm(lambda x: 3 * x, np.ones((2, 2))), 6)
    3.0
    """
    x = np.asarray(x, dtype=np.float64)
    size = x.size
    h = step * max(1.0, float(np.max(np.abs(x))))
    directions = np.eye(size).reshape(size, *x.shape) * h
    jacobian = (f(x + directions) - f(x - directions)).reshape(size, size) / (2 * h)
    return float(np.linalg.norm(jacobian, 2))


@dataclass(frozen=True)
class LipschitzGrowth:
    r"""Jacobian spectral norms of self-attention at :math:`tX_0`, by seed and :math:`t`.

    Attributes
    ----------
    t : numpy.ndarray
        The scales.
    dot_origin, l2_origin : numpy.ndarray
        Dot-product and L2 attention, with the first token of :math:`X_0` at
        the origin; one row per seed, one column per scale.
    dot_generic : numpy.ndarray
        Dot-product attention at a Gaussian :math:`X_0` with no token at the
        origin; one row per seed, one column per scale.
    bound : numpy.ndarray
        One row per seed, one column per scale: the lower bound :math:`1/n + t^2\lambda_{\max}(C_0)/\sqrt{d}`, :math:`C_0`
        the covariance of the rows of :math:`X_0` (the block
        :math:`\partial f_1/\partial x_1` when :math:`x_1 = 0`).
    n_tokens, d, n_seeds, seed : int
    """

    t: np.ndarray
    dot_origin: np.ndarray
    l2_origin: np.ndarray
    dot_generic: np.ndarray
    bound: np.ndarray
    n_tokens: int
    d: int
    n_seeds: int
    seed: int


def lipschitz_growth_data(t=tuple(np.geomspace(0.25, 16.0, 13)), n_tokens: int = 6, d: int = 4, n_seeds: int = 16,
                          seed: int = 2020) -> LipschitzGrowth:
    r"""Measure :math:`\lVert J_f(tX_0)\rVert_2` for dot-product and L2 self-attention as :math:`t` grows.

    Each seed draws :math:`X_0 \sim \mathcal{N}(0, 1)` of shape (n, d) and sets
    its first row to 0 (then the first token's logits :math:`x_1 \cdot x_j`
    are all 0 whatever :math:`t`); the generic series uses the same draw
    with its first row kept.

    Examples
    --------
    >>> from attention_scaling.depth import lipschitz_growth_data
    >>> data = lipschitz_growth_data(t=(1.0, 8.0), n_seeds=2)
    >>> bool(data.dot_origin[0, 1] > 10 * data.l2_origin[0, 1])
    True
    """
    t = np.asarray(t, dtype=np.float64)
    rng = np.random.default_rng(seed)
    draws = rng.standard_normal((n_seeds, n_tokens, d))
    origin = draws.copy()
    origin[:, 0] = 0.0
    series = {name: np.empty((n_seeds, t.size)) for name in ("dot_origin", "l2_origin", "dot_generic", "bound")}
    for s in range(n_seeds):
        centred = origin[s] - origin[s].mean(axis=0)
        top = float(np.linalg.eigvalsh(centred.T @ centred / n_tokens)[-1])
        for k, scale in enumerate(t):
            series["dot_origin"][s, k] = attention_jacobian_norm(dot_product_self_attention, scale * origin[s])
            series["l2_origin"][s, k] = attention_jacobian_norm(l2_self_attention, scale * origin[s])
            series["dot_generic"][s, k] = attention_jacobian_norm(dot_product_self_attention, scale * draws[s])
            series["bound"][s, k] = 1 / n_tokens + scale**2 * top / math.sqrt(d)
    return LipschitzGrowth(t, **series, n_tokens=n_tokens, d=d, n_seeds=n_seeds, seed=seed)


def contraction_ratios(rng: np.random.Generator, n_tokens: int = 16, d: int = 64, n_heads: int = 64,
                       scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""One attention layer's contraction of every column's spread, against the factor :math:`1 - e^{-\delta}`.

    Draws ``n_heads`` seeded heads (tokens :math:`\mathcal{N}(0, 1)`, weights
    :math:`\mathcal{N}(0, 1/d)`), forms :math:`P = \operatorname{softmax}(c\,QK^\top)`
    and :math:`V = XW_V`, and for each head returns the largest ratio
    :math:`\operatorname{spread}((PV)_{:,l}) / \operatorname{spread}(V_{:,l})`
    over the columns :math:`l`, and the factor :math:`1 - e^{-\delta}` with
    :math:`\delta` the largest row spread of the logits
    (:func:`attention_scaling.proofs.attention_contraction`).

    Parameters
    ----------
    rng : numpy.random.Generator
    n_tokens, d, n_heads : int
    scale : float, optional
        The scale :math:`c` of the logits; default :math:`1/\sqrt{d}`.

    Returns
    -------
    ratio, factor : numpy.ndarray, shape (n_heads,)

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.depth import contraction_ratios
    >>> ratio, factor = contraction_ratios(np.random.default_rng(0), n_heads=8)
    >>> bool(np.all(ratio <= factor))
    True
    """
    c = 1 / math.sqrt(d) if scale is None else scale
    x = rng.standard_normal((n_heads, n_tokens, d))
    w_q, w_k, w_v = rng.standard_normal((3, n_heads, d, d)) / math.sqrt(d)
    logits = c * (x @ w_q) @ (x @ w_k).transpose(0, 2, 1)
    values = x @ w_v
    mixed = softmax(logits, axis=-1) @ values
    spread = np.ptp(mixed, axis=-2) / np.ptp(values, axis=-2)
    delta = np.max(np.ptp(logits, axis=-1), axis=-1)
    return np.max(spread, axis=-1), 1 - np.exp(-delta)


def query_gradient_norm(x, w_q, w_k, w_v, g, scale: float) -> float:
    r"""The Frobenius norm of :math:`\partial L/\partial W_Q` for :math:`L = \langle G, \operatorname{softmax}(c\,XW_Q(XW_K)^\top)XW_V\rangle`.

    With :math:`P` the attention weights, :math:`V = XW_V` and
    :math:`U = GV^\top`, the gradient at the logits is
    :math:`\partial L/\partial Z_{ij} = P_{ij}(U_{ij} - \sum_k P_{ik}U_{ik})`
    (the softmax Jacobian), and :math:`\partial L/\partial W_Q = c\,X^\top
    (\partial L/\partial Z)\,XW_K`. If every token is the same, :math:`U_{ij}`
    does not depend on :math:`j` and the gradient is exactly 0: softmax
    ignores a constant shift of a row (:func:`attention_scaling.proofs.softmax_shift_invariance`).

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.depth import query_gradient_norm
    >>> rng = np.random.default_rng(0)
    >>> w_q, w_k, w_v = rng.standard_normal((3, 4, 4)) / 2
    >>> g = rng.standard_normal((5, 4))
    >>> query_gradient_norm(np.tile(rng.standard_normal(4), (5, 1)), w_q, w_k, w_v, g, 0.5)
    0.0
    >>> query_gradient_norm(rng.standard_normal((5, 4)), w_q, w_k, w_v, g, 0.5) > 0
    True
    """
    x = np.asarray(x, dtype=np.float64)
    keys = x @ w_k
    weights = softmax(scale * (x @ w_q) @ keys.T, axis=-1)
    u = np.asarray(g, dtype=np.float64) @ (x @ w_v).T
    # Subtracting each row's first entry first leaves the gradient unchanged (the weights sum to 1) and makes
    # a row of equal entries exactly 0, not rounding error.
    u = u - u[:, :1]
    grad_logits = weights * (u - np.sum(weights * u, axis=-1, keepdims=True))
    return float(np.linalg.norm(scale * x.T @ grad_logits @ keys))
