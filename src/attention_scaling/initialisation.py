r"""How the initialisation of the projections sets the variance of the scores.

Queries and keys are projections :math:`q = x W_Q`, :math:`k = x' W_K` of
token vectors that a LayerNorm without affine has normalised, so
:math:`\lVert x \rVert^2 = \lVert x' \rVert^2 = d_{model}`. With weight
entries drawn independently from :math:`N(0, \sigma_W^2)`, the scores divided
by :math:`\sqrt{d_k}` have variance :math:`(d_{model}\sigma_Q\sigma_K)^2`
(:func:`attention_scaling.proofs.projected_dot_product`): the constant
:math:`\sqrt{d_k}` gives unit variance only when :math:`d_{model}\sigma_W^2 = 1`.

This module names the common initialisation schemes, predicts the variance
each gives, and measures it and its consequences for attention with seeded
Monte Carlo. :func:`in_projection` and :func:`in_projection_scores` do the
same for the two ways PyTorch's ``nn.MultiheadAttention`` stores its query
and key projections, packed into one ``in_proj_weight`` of shape
:math:`(3E, E)` or as separate matrices, each initialised by
``xavier_uniform_``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from attention_scaling._checks import integer_at_least, positive_finite_scalar
from attention_scaling._products import product
from attention_scaling._attention import layer_norm
from attention_scaling.simulate import Estimate, mean_estimate
from attention_scaling._softmax import attention_entropy, softmax

__all__ = [
    "IN_PROJECTION_LAYOUTS",
    "SCHEMES",
    "AttentionSpread",
    "InProjection",
    "SchemeRow",
    "attention_spreads",
    "compare_schemes",
    "in_projection",
    "in_projection_scores",
    "predicted_score_variance",
    "projected_scores",
    "second_moment_estimate",
    "unit_variance_scale",
    "weight_std",
    "xavier_uniform_bound",
    "xavier_uniform_variance",
]

#: The initialisation schemes, by key, with the name a table shows.
#: Xavier's fan_out depends on how the projection is stored: one
#: d_model x d_model matrix split into heads has fan_out = d_model, a separate
#: d_model x d_k matrix per head has fan_out = d_k, and PyTorch's
#: nn.MultiheadAttention, which packs W_Q, W_K and W_V into one
#: (3 d_model) x d_model in_proj_weight, has fan_out = 3 d_model.
SCHEMES: dict[str, str] = {
    "xavier-full": "Xavier, full matrix",
    "xavier-head": "Xavier, per head",
    "xavier-packed": "Xavier, packed (PyTorch MHA)",
    "he": "He",
    "gpt": r"GPT, $\sigma_W = 0.02$",
}

# The standard deviation GPT-style models draw every weight from.
_GPT_STD = 0.02




def _require_shape(d_model, d_k) -> tuple[int, int]:
    # LayerNorm needs at least two entries to normalise.
    return integer_at_least(d_model, "d_model", 2), integer_at_least(d_k, "d_k", 1)



def xavier_uniform_bound(fan_in: int, fan_out: int, gain: float = 1.0) -> float:
    r"""The bound :math:`a` of Xavier/Glorot's uniform initialisation :math:`U(-a, a)`.

    Parameters
    ----------
    fan_in, fan_out : int
        The fans of the weight matrix, at least 1 each. For a matrix stored as
        PyTorch stores a linear layer's weight, shape ``(out, in)``, the
        fan-in is ``in`` and the fan-out ``out``.
    gain : float, default 1.0
        The factor ``gain`` of ``torch.nn.init.xavier_uniform_``.

    Returns
    -------
    float
        :math:`a = \text{gain}\,\sqrt{6/(\text{fan-in} + \text{fan-out})}`.

    Raises
    ------
    TypeError
        If a fan is not an integer or the gain not a number.
    ValueError
        If a fan is below 1 or the gain not finite and > 0.

    Examples
    --------
    >>> from attention_scaling.initialisation import xavier_uniform_bound
    >>> xavier_uniform_bound(2, 1)
    1.4142135623730951
    """
    fan_in = integer_at_least(fan_in, "fan_in", 1)
    fan_out = integer_at_least(fan_out, "fan_out", 1)
    gain = positive_finite_scalar(gain, "gain")
    return gain * math.sqrt(6.0 / (fan_in + fan_out))


def xavier_uniform_variance(fan_in: int, fan_out: int, gain: float = 1.0) -> float:
    r"""Variance of one weight under Xavier/Glorot's uniform initialisation.

    A uniform variable on :math:`(-a, a)` has variance :math:`a^2/3`; with
    the bound of :func:`xavier_uniform_bound` that is
    :math:`2\,\text{gain}^2/(\text{fan-in} + \text{fan-out})`, the same as
    Xavier's normal variant.

    Parameters
    ----------
    fan_in, fan_out : int
        The fans of the weight matrix, at least 1 each.
    gain : float, default 1.0
        As in ``torch.nn.init.xavier_uniform_``.

    Returns
    -------
    float

    Raises
    ------
    TypeError, ValueError
        As :func:`xavier_uniform_bound`.

    Examples
    --------
    The query block of PyTorch's packed ``in_proj_weight``, shape
    :math:`(3E, E)`, against a separate :math:`E \times E` query matrix, at
    :math:`E = 512`:

    >>> from attention_scaling.initialisation import xavier_uniform_variance
    >>> xavier_uniform_variance(512, 3 * 512) * 512   # 1/(2E), times E
    0.5
    >>> xavier_uniform_variance(512, 512) * 512       # 1/E, times E
    1.0
    """
    xavier_uniform_bound(fan_in, fan_out, gain)  # validates the arguments
    # a^2 / 3 with a^2 = gain^2 * 6 / (fan_in + fan_out), squared without the square root's rounding.
    return gain**2 * (6.0 / (fan_in + fan_out)) / 3.0


#: The layouts in which ``torch.nn.MultiheadAttention`` stores its query and
#: key projections, with what each stores. With ``kdim == vdim == embed_dim``
#: (the default) PyTorch packs them; otherwise it keeps separate matrices.
IN_PROJECTION_LAYOUTS: dict[str, str] = {
    "packed": "in_proj_weight, shape (3E, E), holding W_Q, W_K and W_V",
    "separate": "q_proj_weight, shape (E, E), and k_proj_weight, shape (E, kdim)",
}


@dataclass(frozen=True)
class InProjection:
    r"""The variances PyTorch's initialisation of ``nn.MultiheadAttention`` gives its queries and keys.

    Attributes
    ----------
    layout : {"packed", "separate"}
        A key of ``IN_PROJECTION_LAYOUTS``.
    embed_dim, kdim : int
        :math:`E`, the width of the queries' inputs (and of the queries), and
        the width of the keys' inputs.
    query_storage, key_storage : tuple of int
        Shape ``(out, in)`` of the tensor that ``xavier_uniform_`` initialises
        and :math:`W_Q` (:math:`W_K`) is a block of: its fan-out and fan-in.
    query_weight_variance, key_weight_variance : float
        Variance of one entry of :math:`W_Q` (:math:`W_K`).
    """

    layout: str
    embed_dim: int
    kdim: int
    query_storage: tuple[int, int]
    key_storage: tuple[int, int]
    query_weight_variance: float
    key_weight_variance: float

    @property
    def query_variance(self) -> float:
        r""":math:`\operatorname{Var}[q_i] = E\,\sigma_Q^2`, for inputs of squared norm :math:`E`."""
        return self.embed_dim * self.query_weight_variance

    @property
    def key_variance(self) -> float:
        r""":math:`\operatorname{Var}[k_i] = \text{kdim}\,\sigma_K^2`, for inputs of squared norm kdim."""
        return self.kdim * self.key_weight_variance

    @property
    def score_variance(self) -> float:
        r""":math:`\operatorname{Var}[q \cdot k/\sqrt{d_k}] = \operatorname{Var}[q_i]\operatorname{Var}[k_i]`, whatever the head width.

        By :func:`attention_scaling.proofs.projected_dot_product`, whose
        :math:`(d_{model}\sigma_Q\sigma_K)^2` this is when ``kdim`` equals
        ``embed_dim``.
        """
        return self.query_variance * self.key_variance


def in_projection(embed_dim: int, layout: str = "packed", *, kdim: int | None = None) -> InProjection:
    r"""The variance of the queries, keys and scaled scores under PyTorch's ``nn.MultiheadAttention`` initialisation.

    ``nn.MultiheadAttention`` initialises its query and key projections with
    ``xavier_uniform_``, whose variance depends on the shape of the tensor
    initialised (:func:`xavier_uniform_variance`). By default it packs
    :math:`W_Q, W_K, W_V` into one ``in_proj_weight`` of shape
    :math:`(3E, E)`: fan-out :math:`3E`, so each weight has variance
    :math:`2/(E + 3E) = 1/(2E)`, each query coordinate variance 1/2 at inputs
    of squared norm :math:`E`, and the scores divided by :math:`\sqrt{d_k}`
    variance 1/4. When the keys' width ``kdim`` differs from :math:`E`, it
    keeps a separate ``q_proj_weight`` of shape :math:`(E, E)`, variance
    :math:`1/E`, and ``k_proj_weight`` of shape :math:`(E, \text{kdim})`.

    Parameters
    ----------
    embed_dim : int
        :math:`E`, at least 1.
    layout : {"packed", "separate"}, default "packed"
        How the projections are stored (``IN_PROJECTION_LAYOUTS``).
    kdim : int, optional
        Width of the keys' inputs; ``embed_dim`` by default. The packed layout
        exists only for ``kdim == embed_dim``.

    Returns
    -------
    InProjection

    Raises
    ------
    TypeError
        If a width is not an integer.
    ValueError
        If a width is below 1, the layout is unknown, or the packed layout is
        asked for with ``kdim != embed_dim``.

    Examples
    --------
    >>> from attention_scaling.initialisation import in_projection
    >>> packed = in_projection(512)
    >>> packed.query_storage, packed.query_variance, packed.score_variance
    ((1536, 512), 0.5, 0.25)
    >>> in_projection(512, "separate").score_variance
    1.0
    """
    embed_dim = integer_at_least(embed_dim, "embed_dim", 1)
    kdim = embed_dim if kdim is None else integer_at_least(kdim, "kdim", 1)
    if layout == "packed":
        if kdim != embed_dim:
            raise ValueError(f"the packed layout needs kdim == embed_dim = {embed_dim}; got kdim = {kdim}")
        query_storage = key_storage = (3 * embed_dim, embed_dim)
    elif layout == "separate":
        query_storage, key_storage = (embed_dim, embed_dim), (embed_dim, kdim)
    else:
        raise ValueError(f"layout must be one of {tuple(IN_PROJECTION_LAYOUTS)}; got {layout!r}")
    # PyTorch's fans of a 2-d weight of shape (out, in): fan_in = in, fan_out = out.
    return InProjection(
        layout=layout,
        embed_dim=embed_dim,
        kdim=kdim,
        query_storage=query_storage,
        key_storage=key_storage,
        query_weight_variance=xavier_uniform_variance(query_storage[1], query_storage[0]),
        key_weight_variance=xavier_uniform_variance(key_storage[1], key_storage[0]),
    )


def in_projection_scores(
    embed_dim: int,
    num_heads: int,
    *,
    layout: str = "packed",
    kdim: int | None = None,
    n_weights: int,
    n_tokens: int,
    seed,
) -> np.ndarray:
    r"""Scaled scores of every head under freshly drawn ``nn.MultiheadAttention`` weights.

    Draws ``n_tokens`` token vectors once (standard normal, through
    :func:`attention_scaling.layer_norm`, so each has squared norm equal to its
    width), then ``n_weights`` times the tensors PyTorch initialises, in
    PyTorch's storage shapes, from :math:`U(-a, a)` with the bound of
    :func:`xavier_uniform_bound`; takes :math:`W_Q` and :math:`W_K` as the
    blocks PyTorch takes (rows :math:`0..E-1` and :math:`E..2E-1` of the
    packed ``in_proj_weight``), projects, splits into ``num_heads`` heads of
    width :math:`d_k = E/\text{num\_heads}`, and scores every token against
    every token in each head, divided by :math:`\sqrt{d_k}`. The keys come
    from the same tokens as the queries (self-attention) unless ``kdim``
    differs from ``embed_dim``.

    Parameters
    ----------
    embed_dim : int
        :math:`E`, at least 2, a multiple of ``num_heads``.
    num_heads : int
        At least 1.
    layout : {"packed", "separate"}, default "packed"
    kdim : int, optional
        Width of the keys' inputs, at least 2; ``embed_dim`` by default.
    n_weights : int
        Independent weight draws, at least 2.
    n_tokens : int
        Tokens, at least 1.
    seed : int or tuple of int
        Seed for ``numpy.random.default_rng``.

    Returns
    -------
    numpy.ndarray, shape (n_weights, num_heads, n_tokens, n_tokens)
        Axis 0 indexes independent draws, as
        :func:`second_moment_estimate` expects.

    Raises
    ------
    TypeError
        If a size is not an integer.
    ValueError
        If a size is too small, ``embed_dim`` is not a multiple of
        ``num_heads``, or the layout is not one of
        ``IN_PROJECTION_LAYOUTS`` (or is packed with a different kdim).

    Examples
    --------
    >>> from attention_scaling.initialisation import in_projection, in_projection_scores, second_moment_estimate
    >>> scores = in_projection_scores(64, 4, n_weights=200, n_tokens=8, seed=0)
    >>> scores.shape
    (200, 4, 8, 8)
    >>> second_moment_estimate(scores).contains(in_projection(64).score_variance)
    True
    """
    embed_dim = integer_at_least(embed_dim, "embed_dim", 2)
    num_heads = integer_at_least(num_heads, "num_heads", 1)
    if embed_dim % num_heads:
        raise ValueError(f"embed_dim must be a multiple of num_heads = {num_heads}; got {embed_dim}")
    n_weights = integer_at_least(n_weights, "n_weights", 2)
    n_tokens = integer_at_least(n_tokens, "n_tokens", 1)
    shape = in_projection(embed_dim, layout, kdim=kdim)
    if shape.kdim < 2:
        raise ValueError(f"kdim must be an integer >= 2; got {shape.kdim!r}")
    head = embed_dim // num_heads
    rng = np.random.default_rng(seed)
    queries_from = layer_norm(rng.standard_normal((n_tokens, embed_dim)))
    keys_from = queries_from if shape.kdim == embed_dim else layer_norm(rng.standard_normal((n_tokens, shape.kdim)))

    def xavier_uniform(storage: tuple[int, int]) -> np.ndarray:
        bound = xavier_uniform_bound(storage[1], storage[0])
        return rng.uniform(-bound, bound, size=storage)

    scores = np.empty((n_weights, num_heads, n_tokens, n_tokens))
    for draw in range(n_weights):
        if layout == "packed":
            in_proj_weight = xavier_uniform(shape.query_storage)
            w_q, w_k = in_proj_weight[:embed_dim], in_proj_weight[embed_dim : 2 * embed_dim]
        else:
            w_q, w_k = xavier_uniform(shape.query_storage), xavier_uniform(shape.key_storage)
        # A linear layer computes x W^T with W stored as (out, in).
        q = product("na,ia->ni", queries_from, w_q).reshape(n_tokens, num_heads, head)
        k = product("na,ia->ni", keys_from, w_k).reshape(n_tokens, num_heads, head)
        scores[draw] = product("nhi,mhi->hnm", q, k) / math.sqrt(head)
    return scores


def weight_std(scheme: str, d_model: int, d_k: int) -> float:
    r"""Standard deviation :math:`\sigma_W` of each weight entry under a scheme.

    Parameters
    ----------
    scheme : {"xavier-full", "xavier-head", "xavier-packed", "he", "gpt"}
        Xavier/Glorot, :math:`\sigma_W^2 = 2/(\text{fan-in} + \text{fan-out})`
        (:func:`xavier_uniform_variance`; the normal variant has the same
        variance), with fan-out :math:`d_{model}` (one full projection split
        into heads, "xavier-full"), :math:`d_k` (one matrix per head,
        "xavier-head") or :math:`3 d_{model}` (PyTorch's packed
        ``in_proj_weight``, "xavier-packed"); He,
        :math:`\sigma_W^2 = 2/\text{fan-in}`; or GPT's fixed
        :math:`\sigma_W = 0.02`. The fan-in is :math:`d_{model}` throughout.
    d_model : int
        Width of the token vectors, at least 2.
    d_k : int
        Width of one head's queries and keys, at least 1.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the scheme is unknown or a width is too small.
    TypeError
        If a width is not an integer.

    Examples
    --------
    >>> from attention_scaling.initialisation import weight_std
    >>> round(weight_std("xavier-full", 512, 64) ** 2 * 512, 12)   # sigma_W^2 = 1/d_model
    1.0
    >>> round(weight_std("xavier-head", 512, 64) ** 2 * (512 + 64), 12)
    2.0
    >>> round(weight_std("xavier-packed", 512, 64) ** 2 * 512, 12)   # sigma_W^2 = 1/(2 d_model)
    0.5
    >>> weight_std("gpt", 768, 64)
    0.02
    """
    d_model, d_k = _require_shape(d_model, d_k)
    if scheme == "xavier-full":
        return math.sqrt(xavier_uniform_variance(d_model, d_model))
    if scheme == "xavier-head":
        return math.sqrt(xavier_uniform_variance(d_model, d_k))
    if scheme == "xavier-packed":
        return math.sqrt(xavier_uniform_variance(d_model, 3 * d_model))
    if scheme == "he":
        return math.sqrt(2.0 / d_model)
    if scheme == "gpt":
        return _GPT_STD
    raise ValueError(f"scheme must be one of {tuple(SCHEMES)}; got {scheme!r}")


def predicted_score_variance(d_model: int, sigma_q: float, sigma_k: float) -> float:
    r"""Variance of :math:`q \cdot k / \sqrt{d_k}` for projected, normalised tokens.

    Parameters
    ----------
    d_model : int
        Width of the token vectors; their squared norm is :math:`d_{model}`.
    sigma_q, sigma_k : float
        Standard deviations of the entries of :math:`W_Q` and :math:`W_K`.

    Returns
    -------
    float
        :math:`(d_{model}\sigma_Q\sigma_K)^2`, whatever :math:`d_k`.

    Examples
    --------
    >>> from attention_scaling.initialisation import predicted_score_variance
    >>> round(predicted_score_variance(768, 0.02, 0.02), 6)   # GPT-style at d_model = 768
    0.094372
    """
    d_model = integer_at_least(d_model, "d_model", 2)
    sigma_q = positive_finite_scalar(sigma_q, "sigma_q")
    sigma_k = positive_finite_scalar(sigma_k, "sigma_k")
    return (d_model * sigma_q * sigma_k) ** 2


def unit_variance_scale(d_model: int, d_k: int, sigma_q: float, sigma_k: float) -> float:
    r"""The factor on :math:`q \cdot k` that would give the scores variance 1.

    Parameters
    ----------
    d_model, d_k : int
        Widths of the tokens and of one head.
    sigma_q, sigma_k : float
        Standard deviations of the entries of :math:`W_Q` and :math:`W_K`.

    Returns
    -------
    float
        :math:`1/(\sqrt{d_k}\, d_{model}\sigma_Q\sigma_K)`; it equals the usual
        :math:`1/\sqrt{d_k}` only when :math:`d_{model}\sigma_Q\sigma_K = 1`.

    Examples
    --------
    >>> from attention_scaling.initialisation import unit_variance_scale
    >>> round(unit_variance_scale(512, 64, 512 ** -0.5, 512 ** -0.5), 12)   # Xavier, fan_out = d_model
    0.125
    """
    d_model, d_k = _require_shape(d_model, d_k)
    return 1.0 / (math.sqrt(d_k) * math.sqrt(predicted_score_variance(d_model, sigma_q, sigma_k)))


def projected_scores(
    d_model: int,
    d_k: int,
    *,
    n_weights: int,
    n_tokens: int,
    seed,
    sigma_q: float = 1.0,
    sigma_k: float = 1.0,
    self_attention: bool = False,
) -> np.ndarray:
    r"""Score matrices :math:`(X W_Q)(X' W_K)^\top/\sqrt{d_k}` for fixed tokens and fresh weights.

    ``n_tokens`` query tokens :math:`X` and ``n_tokens`` key tokens
    :math:`X'` are drawn once (standard normal vectors passed through
    :func:`attention_scaling.layer_norm`, so each has squared norm
    :math:`d_{model}`); then each of ``n_weights`` independent pairs of
    weight matrices, with entries from :math:`N(0, \sigma_Q^2)` and
    :math:`N(0, \sigma_K^2)`, scores every query token against every key
    token.

    Parameters
    ----------
    d_model : int
        Width of the token vectors, at least 2.
    d_k : int
        Width of one head, at least 1.
    n_weights : int
        How many independent draws of :math:`(W_Q, W_K)`, at least 2.
    n_tokens : int
        How many query tokens and key tokens, at least 1.
    seed : int or tuple of int
        Seed for ``numpy.random.default_rng``.
    sigma_q, sigma_k : float, default 1.0
        Standard deviations of the weight entries. The weights are the same
        standard normal draws multiplied by these, so two calls with the same
        seed differ exactly by the factor :math:`\sigma_Q\sigma_K`.
    self_attention : bool, default False
        Use the same tokens for keys as for queries (:math:`X' = X`): each
        matrix is then the score matrix of one sequence, and its diagonal
        scores every token against itself.

    Returns
    -------
    numpy.ndarray, shape (n_weights, n_tokens, n_tokens)
        ``scores[b, i, j]`` scores query token ``i`` against key token ``j``
        under weight draw ``b``. Draws are independent; scores of one draw
        share their weights and are not.

    Raises
    ------
    TypeError
        If a size is not an integer or a standard deviation not a number.
    ValueError
        If a size is too small or a standard deviation is not finite and > 0.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.initialisation import projected_scores
    >>> scores = projected_scores(16, 4, n_weights=3, n_tokens=5, seed=0)
    >>> scores.shape
    (3, 5, 5)
    >>> halved = projected_scores(16, 4, n_weights=3, n_tokens=5, seed=0, sigma_q=0.5)
    >>> bool(np.allclose(halved, 0.5 * scores))
    True
    """
    d_model, d_k = _require_shape(d_model, d_k)
    n_weights = integer_at_least(n_weights, "n_weights", 2)
    n_tokens = integer_at_least(n_tokens, "n_tokens", 1)
    sigma_q = positive_finite_scalar(sigma_q, "sigma_q")
    sigma_k = positive_finite_scalar(sigma_k, "sigma_k")
    rng = np.random.default_rng(seed)
    queries_from = layer_norm(rng.standard_normal((n_tokens, d_model)))
    keys_from = queries_from if self_attention else layer_norm(rng.standard_normal((n_tokens, d_model)))
    scores = np.empty((n_weights, n_tokens, n_tokens))
    for draw in range(n_weights):
        w_q = sigma_q * rng.standard_normal((d_model, d_k))
        w_k = sigma_k * rng.standard_normal((d_model, d_k))
        q, k = product("na,ai->ni", queries_from, w_q), product("na,ai->ni", keys_from, w_k)
        scores[draw] = product("ni,mi->nm", q, k) / math.sqrt(d_k)
    return scores


def second_moment_estimate(scores) -> Estimate:
    r"""Estimate :math:`\mathbb{E}[s^2]` from scores grouped by weight draw, with its standard error.

    The mean square of the scores of one draw is one sample of a random
    variable whose mean is :math:`\mathbb{E}[s^2]`; draws are independent, so
    the estimate is the mean of these samples with the standard error of a
    mean. Scores of one draw share their weights and are not independent;
    counting them as separate samples would understate the error. Since
    :math:`\mathbb{E}[s] = 0` for the scores of :func:`projected_scores`, the
    estimate is their variance.

    Parameters
    ----------
    scores : array_like, shape (n_weights, ...)
        Axis 0 indexes independent weight draws (at least 2); the other
        axes, at least one entry in all, hold the scores of each draw.

    Returns
    -------
    Estimate

    Raises
    ------
    ValueError
        If ``scores`` has fewer than 2 axes or 2 draws, no scores per draw,
        or non-finite values.

    Examples
    --------
    >>> from attention_scaling.initialisation import second_moment_estimate
    >>> second_moment_estimate([[1.0, -1.0], [2.0, 0.0]])
    Estimate(value=1.5, standard_error=0.5)
    """
    array = np.asarray(scores, dtype=np.float64)
    if array.ndim < 2 or array.shape[0] < 2 or array[0].size < 1:
        raise ValueError(f"scores must have shape (n_weights >= 2, ...), with a score per draw; got {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError("scores must be finite")
    return mean_estimate((array**2).reshape(array.shape[0], -1).mean(axis=1))


@dataclass(frozen=True)
class SchemeRow:
    """Predicted and measured score variance for one scheme at one shape."""

    scheme: str
    d_model: int
    d_k: int
    sigma_w: float
    predicted: float
    measured: Estimate

    @property
    def z_score(self) -> float:
        """How many standard errors the measurement lies from the prediction."""
        return (self.measured.value - self.predicted) / self.measured.standard_error

    @property
    def unit_scale(self) -> float:
        """The factor on q.k that would have given variance 1."""
        return unit_variance_scale(self.d_model, self.d_k, self.sigma_w, self.sigma_w)


def compare_schemes(
    shapes: Sequence[tuple[int, int]],
    *,
    n_weights: int,
    n_tokens: int,
    seed: int,
    schemes: Sequence[str] = tuple(SCHEMES),
) -> list[SchemeRow]:
    r"""Predicted and measured variance of the scaled scores, per scheme and shape.

    Each shape is simulated once with unit-variance weights; since every
    scheme draws :math:`W = \sigma_W Z` from the same standard normal
    :math:`Z`, its scores are those scores times :math:`\sigma_W^2`, and its
    measured second moment and standard error are :math:`\sigma_W^4` times
    theirs (common random numbers: the same as redrawing with the same seed).

    Parameters
    ----------
    shapes : sequence of (d_model, d_k)
        The shapes to simulate.
    n_weights, n_tokens : int
        Passed to :func:`projected_scores`.
    seed : int
        Shape ``i`` uses the seed ``(seed, i)``.
    schemes : sequence of str, optional
        Keys of ``SCHEMES``; all of them by default.

    Returns
    -------
    list of SchemeRow
        Shape by shape, scheme by scheme.

    Raises
    ------
    ValueError
        If there are no shapes or an unknown scheme.

    Examples
    --------
    >>> from attention_scaling.initialisation import compare_schemes
    >>> rows = compare_schemes([(64, 8)], n_weights=20, n_tokens=16, seed=0)
    >>> [row.scheme for row in rows]
    ['xavier-full', 'xavier-head', 'xavier-packed', 'he', 'gpt']
    >>> all(abs(row.z_score) < 3 for row in rows)
    True
    """
    shapes = list(shapes)
    if not shapes:
        raise ValueError("shapes must hold at least one (d_model, d_k) pair; got none")
    unknown = [scheme for scheme in schemes if scheme not in SCHEMES]
    if unknown or not schemes:
        raise ValueError(f"schemes must be a non-empty selection of {tuple(SCHEMES)}; got {list(schemes)!r}")
    rows = []
    for index, (d_model, d_k) in enumerate(shapes):
        unit = second_moment_estimate(
            projected_scores(d_model, d_k, n_weights=n_weights, n_tokens=n_tokens, seed=(seed, index))
        )
        for scheme in schemes:
            sigma = weight_std(scheme, d_model, d_k)
            factor = sigma**4
            measured = Estimate(unit.value * factor, unit.standard_error * factor)
            predicted = predicted_score_variance(d_model, sigma, sigma)
            rows.append(SchemeRow(scheme, int(d_model), int(d_k), sigma, predicted, measured))
    return rows


@dataclass(frozen=True)
class AttentionSpread:
    r"""How far attention weights at initialisation are from uniform.

    ``largest_weight`` is the mean over queries of :math:`n \max_j p_j`
    (1 for uniform weights, :math:`n` for one-hot); ``entropy`` is the mean of
    :math:`H(p)/\ln n` (1 for uniform, 0 for one-hot). Both are averaged over
    the queries of one weight draw, and the standard errors come from the
    spread across independent draws.
    """

    label: str
    sigma_w: float
    score_std: float
    n_tokens: int
    largest_weight: Estimate
    entropy: Estimate


def attention_spreads(unit_scores, weight_stds: Mapping[str, float], *, d_model: int) -> list[AttentionSpread]:
    r"""Measure how peaked self-attention is at initialisation, for several weight scales.

    The score matrices are those of unit-variance weights; with
    :math:`W = \sigma_W Z` the same draws serve every weight scale (common
    random numbers), as scores :math:`\sigma_W^2` times these. Each row goes
    through softmax over all :math:`n` keys.

    Parameters
    ----------
    unit_scores : array_like, shape (n_weights, n, n)
        From :func:`projected_scores` with ``sigma_q = sigma_k = 1``; at least
        2 draws and :math:`n \ge 2` keys.
    weight_stds : mapping of str to float
        A label and :math:`\sigma_W` (for both projections) for each scale.
    d_model : int
        Width of the tokens, for the predicted standard deviation of the
        scores.

    Returns
    -------
    list of AttentionSpread
        In the order of ``weight_stds``.

    Raises
    ------
    TypeError
        If ``d_model`` is not an integer or a standard deviation not a number.
    ValueError
        If the scores have the wrong shape, ``weight_stds`` is empty, or a
        standard deviation is not finite and > 0.

    Examples
    --------
    >>> from attention_scaling.initialisation import attention_spreads, projected_scores
    >>> unit = projected_scores(32, 8, n_weights=4, n_tokens=16, seed=0, self_attention=True)
    >>> tiny, large = attention_spreads(unit, {"tiny": 0.001, "large": 1.0}, d_model=32)
    >>> round(tiny.entropy.value, 3), round(tiny.largest_weight.value, 3)   # near uniform
    (1.0, 1.0)
    >>> large.entropy.value < 0.5
    True
    """
    d_model = integer_at_least(d_model, "d_model", 2)
    scores = np.asarray(unit_scores, dtype=np.float64)
    if scores.ndim != 3 or scores.shape[0] < 2 or scores.shape[2] < 2:
        raise ValueError(f"unit_scores must have shape (n_weights >= 2, n, n >= 2); got {scores.shape}")
    if not weight_stds:
        raise ValueError("weight_stds must name at least one weight scale; got none")
    sigmas = {label: positive_finite_scalar(sigma, f"weight_stds[{label!r}]") for label, sigma in weight_stds.items()}
    n_keys = scores.shape[2]
    spreads = []
    for label, sigma in sigmas.items():
        weights = softmax(sigma**2 * scores)
        largest = n_keys * weights.max(axis=-1).mean(axis=-1)
        entropy = attention_entropy(weights).mean(axis=-1) / math.log(n_keys)
        score_std = math.sqrt(predicted_score_variance(d_model, sigma, sigma))
        spreads.append(AttentionSpread(label, sigma, score_std, n_keys, mean_estimate(largest), mean_estimate(entropy)))
    return spreads
