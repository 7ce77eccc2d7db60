r"""The three regimes of attention, measured: how spread out the weights are against the scale of the logits.

Each function runs a seeded experiment (random queries and keys, or Gaussian
logits of a given spread) and returns its statistics as means over queries
with their standard errors, or the data of one of the site's figures. The
estimates come from :mod:`attention_scaling.simulate`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_scaling._attention import attention_weights
from attention_scaling._checks import integer_at_least
from attention_scaling._softmax import attention_entropy, saturation_margin, softmax, softmax_jacobian
from attention_scaling.simulate import _SWEEP_D_VALUES, Estimate, mean_estimate, scale_for

__all__ = [
    "RegimeCurves",
    "SaturationCurve",
    "TemperaturePatterns",
    "ThreeRegimes",
    "WeightProfiles",
    "attention_regimes",
    "jacobian_norm_by_spread",
    "jacobian_vs_spread_data",
    "saturation_onset_data",
    "temperature_patterns_data",
    "three_regimes_data",
    "weight_profiles_data",
]


@dataclass(frozen=True)
class RegimeCurves:
    """Attention statistics as functions of :math:`d_k`, each a mean over queries with its standard error.

    Attributes
    ----------
    d_k : numpy.ndarray
        The dimensions.
    n_keys : int
        Keys per query.
    n_queries : int
        Queries (rows of scores) averaged over at each point.
    max_weight, entropy, effective_keys, jacobian_norm : numpy.ndarray
        Means over the queries: the largest weight; the entropy in nats; the
        effective number of attended keys, exp(entropy); the Frobenius norm
        of the softmax Jacobian.
    max_weight_se, entropy_se, effective_keys_se, jacobian_norm_se : numpy.ndarray
        Their standard errors.
    """

    d_k: np.ndarray
    n_keys: int
    n_queries: int
    max_weight: np.ndarray
    max_weight_se: np.ndarray
    entropy: np.ndarray
    entropy_se: np.ndarray
    effective_keys: np.ndarray
    effective_keys_se: np.ndarray
    jacobian_norm: np.ndarray
    jacobian_norm_se: np.ndarray

    @property
    def entropy_fraction(self) -> np.ndarray:
        r"""Entropy as a fraction of its maximum, :math:`\ln n`."""
        return self.entropy / np.log(self.n_keys)


def _weight_statistics(weights: np.ndarray) -> dict[str, Estimate]:
    entropy = attention_entropy(weights)
    return {
        "max_weight": mean_estimate(weights.max(axis=-1)),
        "entropy": mean_estimate(entropy),
        "effective_keys": mean_estimate(np.exp(entropy)),
        "jacobian_norm": mean_estimate(np.linalg.norm(softmax_jacobian(weights), axis=(-2, -1))),
    }


def _curves(d_values, n_keys: int, n_queries: int, rows: list[dict[str, Estimate]]) -> RegimeCurves:
    fields = {}
    for name in ("max_weight", "entropy", "effective_keys", "jacobian_norm"):
        fields[name] = np.array([row[name].value for row in rows])
        fields[f"{name}_se"] = np.array([row[name].standard_error for row in rows])
    return RegimeCurves(d_k=np.asarray(d_values), n_keys=n_keys, n_queries=n_queries, **fields)


def attention_regimes(d_values, policy, *, n_keys: int, n_queries: int, seed: int) -> RegimeCurves:
    r"""How peaked attention is, as a function of :math:`d_k`, under a scaling policy.

    For each :math:`d_k`, ``n_queries`` independent queries each score
    ``n_keys`` independent keys (standard normal components); the scores are
    multiplied by :func:`~attention_scaling.simulate.scale_for` and passed through softmax. The draws
    depend only on ``(seed, d_k)``, so different policies see the same
    queries and keys and their curves differ only by the scaling.

    Parameters
    ----------
    d_values : sequence of int
        Dimensions, each at least 1.
    policy : {"none", "sqrt", "linear"} or callable
        The scaling policy.
    n_keys : int
        Keys per query (the sequence length), at least 2.
    n_queries : int
        Queries per dimension, at least 2.
    seed : int
        Base seed.

    Returns
    -------
    RegimeCurves

    Examples
    --------
    >>> from attention_scaling.regimes import attention_regimes
    >>> curves = attention_regimes([4, 256], "none", n_keys=8, n_queries=200, seed=0)
    >>> bool(curves.max_weight[1] > curves.max_weight[0])   # wider heads, peakier attention
    True
    """
    n_keys = integer_at_least(n_keys, "n_keys", 2)
    n_queries = integer_at_least(n_queries, "n_queries", 2)
    d_values = [integer_at_least(d, "d_k", 1) for d in d_values]
    rows = []
    for d_k in d_values:
        rng = np.random.default_rng([seed, d_k])
        q = rng.standard_normal((n_queries, 1, d_k))
        k = rng.standard_normal((n_queries, n_keys, d_k))
        scores = (q @ k.swapaxes(-1, -2))[:, 0, :] * scale_for(policy, d_k)
        rows.append(_weight_statistics(softmax(scores)))
    return _curves(d_values, n_keys, n_queries, rows)


def jacobian_norm_by_spread(stds, *, n_keys: int, n_samples: int, seed: int) -> RegimeCurves:
    r"""Attention statistics when the scores are :math:`\mathcal{N}(0, \sigma^2)` for each spread :math:`\sigma`.

    The same standard normal draws are multiplied by every :math:`\sigma`, so the
    curves are smooth in :math:`\sigma`. The result's ``d_k`` field holds the
    spreads.

    Parameters
    ----------
    stds : sequence of float
        Standard deviations of the scores, each >= 0.
    n_keys : int
        Scores per row, at least 2.
    n_samples : int
        Rows per spread, at least 2.
    seed : int
        Seed.

    Returns
    -------
    RegimeCurves

    Examples
    --------
    >>> from attention_scaling.regimes import jacobian_norm_by_spread
    >>> curves = jacobian_norm_by_spread([0.0, 10.0], n_keys=4, n_samples=500, seed=0)
    >>> bool(curves.jacobian_norm[0] > 4 * curves.jacobian_norm[1])
    True
    """
    n_keys = integer_at_least(n_keys, "n_keys", 2)
    n_samples = integer_at_least(n_samples, "n_samples", 2)
    stds = np.asarray(stds, dtype=np.float64)
    if stds.ndim != 1 or not np.all(np.isfinite(stds)) or np.any(stds < 0):
        raise ValueError("stds must be a 1-D sequence of finite values >= 0")
    standard = np.random.default_rng(seed).standard_normal((n_samples, n_keys))
    rows = [_weight_statistics(softmax(standard * s)) for s in stds]
    return _curves(stds, n_keys, n_samples, rows)


# -- The data of the site's figures ----------------------------------------------------


@dataclass(frozen=True)
class SaturationCurve:
    r"""Softmax of :math:`[x, 0, \dots, 0]` along a grid of margins :math:`x`.

    Attributes
    ----------
    n_scores : int
        Number of scores.
    x : numpy.ndarray
        The margins of the preferred score.
    weight : numpy.ndarray
        Its weight :math:`p_1` at each margin.
    slope : numpy.ndarray
        :math:`\partial p_1 / \partial x_1 = p_1 (1 - p_1)` at each margin.
    onset : float
        The margin past which the slope stays below a tenth of its peak
        :math:`\tfrac14` (:func:`~attention_scaling.saturation_margin`).
    """

    n_scores: int
    x: np.ndarray
    weight: np.ndarray
    slope: np.ndarray
    onset: float


def saturation_onset_data(n: int = 4, x_max: float = 10.0, points: int = 401) -> SaturationCurve:
    r"""Softmax of :math:`[x, 0, \dots, 0]` and its slope :math:`\partial p_1 / \partial x_1` for :math:`x \in [0, x_\max]`.

    Parameters
    ----------
    n : int, default 4
        Number of scores, at least 2.
    x_max : float, default 10.0
        The largest margin.
    points : int, default 401
        Grid points, at least 2.

    Returns
    -------
    SaturationCurve

    Examples
    --------
    >>> from attention_scaling.regimes import saturation_onset_data
    >>> data = saturation_onset_data(points=11)
    >>> round(float(data.weight[0]), 2), round(float(data.slope[0]), 4)
    (0.25, 0.1875)
    """
    n = integer_at_least(n, "n", 2)
    points = integer_at_least(points, "points", 2)
    x = np.linspace(0.0, x_max, points)
    scores = np.zeros((points, n))
    scores[:, 0] = x
    weights = softmax(scores)
    return SaturationCurve(
        n_scores=n,
        x=x,
        weight=weights[:, 0],
        slope=softmax_jacobian(weights)[:, 0, 0],
        onset=saturation_margin(n),
    )


@dataclass(frozen=True)
class ThreeRegimes:
    r"""Attention statistics against :math:`d_k` under each scaling policy, from the same draws.

    Attributes
    ----------
    none, sqrt, linear : RegimeCurves
        The curves with no scaling, with :math:`1/\sqrt{d_k}` and with :math:`1/d_k`.
    """

    none: RegimeCurves
    sqrt: RegimeCurves
    linear: RegimeCurves

    @property
    def n_keys(self) -> int:
        """Keys per query (the same for every policy)."""
        return self.none.n_keys

    @property
    def n_queries(self) -> int:
        """Queries averaged over at each :math:`d_k` (the same for every policy)."""
        return self.none.n_queries

    def by_policy(self) -> dict[str, RegimeCurves]:
        """The curves keyed by policy name, in the order none, sqrt, linear."""
        return {"none": self.none, "sqrt": self.sqrt, "linear": self.linear}


def three_regimes_data(n_keys: int = 16, n_queries: int = 128, seed: int = 3) -> ThreeRegimes:
    r"""Attention statistics against :math:`d_k = 1, \dots, 4096` under the three policies (same draws for each).

    Parameters
    ----------
    n_keys : int, default 16
        Keys per query, at least 2.
    n_queries : int, default 128
        Queries per dimension, at least 2.
    seed : int, default 3
        Base seed (see :func:`attention_regimes`).

    Returns
    -------
    ThreeRegimes

    Examples
    --------
    >>> from attention_scaling.regimes import three_regimes_data
    >>> data = three_regimes_data(n_queries=4)
    >>> list(data.by_policy()), data.n_keys
    (['none', 'sqrt', 'linear'], 16)
    """
    curves = {
        policy: attention_regimes(_SWEEP_D_VALUES, policy, n_keys=n_keys, n_queries=n_queries, seed=seed)
        for policy in ("none", "sqrt", "linear")
    }
    return ThreeRegimes(**curves)


def jacobian_vs_spread_data(n_keys: int = 16, n_samples: int = 2000, seed: int = 5) -> RegimeCurves:
    r"""Softmax statistics for :math:`\mathcal{N}(0, \sigma^2)` scores, :math:`\sigma` from 0 to 12 in steps of 0.25.

    Parameters
    ----------
    n_keys : int, default 16
        Scores per row, at least 2.
    n_samples : int, default 2000
        Rows per spread, at least 2.
    seed : int, default 5
        Seed (see :func:`jacobian_norm_by_spread`).

    Returns
    -------
    RegimeCurves
        Its ``d_k`` field holds the spreads :math:`\sigma`.

    Examples
    --------
    >>> from attention_scaling.regimes import jacobian_vs_spread_data
    >>> float(jacobian_vs_spread_data(n_samples=10).d_k[-1])
    12.0
    """
    return jacobian_norm_by_spread(np.linspace(0.0, 12.0, 49), n_keys=n_keys, n_samples=n_samples, seed=seed)


@dataclass(frozen=True)
class TemperaturePatterns:
    r"""Attention weights of one seeded head at several temperatures.

    Attributes
    ----------
    d_k : int
        The head dimension.
    temperatures : tuple of float
        The temperatures :math:`\tau`; the scores are divided by each.
    weights : tuple of numpy.ndarray
        The weights (queries by keys) at each temperature, in the same order.
    """

    d_k: int
    temperatures: tuple[float, ...]
    weights: tuple[np.ndarray, ...]


def temperature_patterns_data(d_k: int = 64, n: int = 10, seed: int = 6) -> TemperaturePatterns:
    r"""Attention weights of one seeded head at temperatures :math:`\sqrt{d_k}/2`, :math:`\sqrt{d_k}` and :math:`2\sqrt{d_k}`.

    Parameters
    ----------
    d_k : int, default 64
        Head dimension, at least 1.
    n : int, default 10
        Queries and keys (standard normal components), at least 1.
    seed : int, default 6
        Seed for ``numpy.random.default_rng``.

    Returns
    -------
    TemperaturePatterns

    Examples
    --------
    >>> from attention_scaling.regimes import temperature_patterns_data
    >>> data = temperature_patterns_data()
    >>> [round(t / 8, 1) for t in data.temperatures], data.weights[0].shape
    ([0.5, 1.0, 2.0], (10, 10))
    """
    d_k = integer_at_least(d_k, "d_k", 1)
    n = integer_at_least(n, "n", 1)
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, d_k))
    k = rng.standard_normal((n, d_k))
    temperatures = tuple(factor * float(np.sqrt(d_k)) for factor in (0.5, 1.0, 2.0))
    return TemperaturePatterns(
        d_k=d_k,
        temperatures=temperatures,
        weights=tuple(attention_weights(q, k, scale=1 / tau) for tau in temperatures),
    )


@dataclass(frozen=True)
class WeightProfiles:
    r"""The softmax weights of a row and the distribution of its scores, per :math:`d_k` and scaling policy.

    The data of the site's interactive three-regimes figure, which a reader
    moves along :math:`d_k` and between the policies.

    Attributes
    ----------
    d_values : tuple of int
        The head dimensions.
    policies : tuple of str
        The scaling policies, names of :data:`attention_scaling.simulate.SCALINGS`.
    n_keys, n_rows : int
        Keys per row, and rows drawn per :math:`d_k`.
    edges : numpy.ndarray
        The edges of the score histogram's bins, shape ``(bins + 1,)``.
    weights : numpy.ndarray
        Shape ``(len(d_values), len(policies), n_keys)``: each row's weights
        sorted from the largest, averaged over the rows.
    share : numpy.ndarray
        Shape ``(len(d_values), len(policies), bins)``: the fraction of the
        scaled scores in each bin.
    outside : numpy.ndarray
        Shape ``(len(d_values), len(policies))``: the fraction of scores beyond the edges.
    score_std : numpy.ndarray
        Shape ``(len(d_values), len(policies))``: the standard deviation of the
        scaled scores, :math:`c\sqrt{d_k}` for unit-variance components.
    """

    d_values: tuple[int, ...]
    policies: tuple[str, ...]
    n_keys: int
    n_rows: int
    edges: np.ndarray
    weights: np.ndarray
    share: np.ndarray
    outside: np.ndarray
    score_std: np.ndarray


def weight_profiles_data(d_values=(4, 16, 64, 256, 1024, 4096), *, n_keys: int = 16, n_rows: int = 4000,
                         bins: int = 32, limit: float = 8.0, seed: int = 11) -> WeightProfiles:
    r"""Softmax weight profiles and score histograms under the three policies, as :math:`d_k` grows.

    For each :math:`d_k`, ``n_rows`` rows of ``n_keys`` scores :math:`q \cdot k`
    are drawn with independent standard normal components. Given :math:`q`,
    the scores of independent keys are independent :math:`\mathcal{N}(0,
    \lVert q \rVert^2)`, and :math:`\lVert q \rVert^2` is
    :math:`\chi^2_{d_k}`: so a row is drawn as :math:`\lVert q \rVert` times
    ``n_keys`` standard normals, exactly, without drawing the vectors. The
    same scores are then multiplied by each policy's factor.

    Parameters
    ----------
    d_values : sequence of int, default (4, 16, 64, 256, 1024, 4096)
        Head dimensions, each at least 1.
    n_keys : int, default 16
        Keys per row, at least 2.
    n_rows : int, default 4000
        Rows per :math:`d_k`, at least 1.
    bins : int, default 32
        Bins of the score histogram, at least 1.
    limit : float, default 8.0
        The histogram covers :math:`[-\text{limit}, \text{limit}]`.
    seed : int, default 11
        Seeds the draws of each :math:`d_k` with ``[seed, d_k]``.

    Returns
    -------
    WeightProfiles

    Examples
    --------
    >>> from attention_scaling.regimes import weight_profiles_data
    >>> data = weight_profiles_data((4, 4096), n_rows=500)
    >>> data.policies, data.weights.shape
    (('none', 'sqrt', 'linear'), (2, 3, 16))
    >>> bool(data.weights[1, 0, 0] > 0.9), bool(abs(data.weights[1, 2, 0] - 1 / 16) < 0.01)
    (True, True)
    >>> [round(float(std), 2) for std in data.score_std[1]]
    [64.0, 1.0, 0.02]
    """
    d_values = tuple(integer_at_least(d, "d_values", 1) for d in d_values)
    n_keys = integer_at_least(n_keys, "n_keys", 2)
    n_rows = integer_at_least(n_rows, "n_rows", 1)
    bins = integer_at_least(bins, "bins", 1)
    if not (np.isfinite(limit) and limit > 0):
        raise ValueError(f"limit must be positive and finite; got {limit!r}")
    policies = ("none", "sqrt", "linear")
    edges = np.linspace(-limit, limit, bins + 1)
    weights = np.empty((len(d_values), len(policies), n_keys))
    share = np.empty((len(d_values), len(policies), bins))
    outside = np.empty((len(d_values), len(policies)))
    score_std = np.empty((len(d_values), len(policies)))
    for i, d_k in enumerate(d_values):
        rng = np.random.default_rng([seed, d_k])
        norms = np.sqrt(rng.chisquare(d_k, size=(n_rows, 1)))
        scores = norms * rng.standard_normal((n_rows, n_keys))
        for j, policy in enumerate(policies):
            scaled = scale_for(policy, d_k) * scores
            weights[i, j] = np.sort(softmax(scaled), axis=-1)[:, ::-1].mean(axis=0)
            counts, _ = np.histogram(scaled, bins=edges)
            share[i, j] = counts / scaled.size
            outside[i, j] = 1 - counts.sum() / scaled.size
            score_std[i, j] = scale_for(policy, d_k) * np.sqrt(d_k)
    return WeightProfiles(d_values, policies, n_keys, n_rows, edges, weights, share, outside, score_std)
