r"""Correlated queries and keys: seeded logits under the two scales, and growth of the norms.

The model is the one of :func:`attention_scaling.proofs.correlated_dot_product`:
coordinate pairs :math:`(q_i, k_i)` are jointly Gaussian with unit variances
and correlation :math:`\rho`, independent across :math:`i`, drawn as

.. math::

   q_i = Z_i, \qquad k_i = \rho Z_i + \sqrt{1 - \rho^2}\, W_i

from independent standard normals :math:`Z_i, W_i`. The functions here
measure the logit :math:`c\, q \cdot k` for :math:`c = 1/\sqrt{d_k}` and
:math:`c = 1/d_k` with standard errors, compare Chebyshev's bound with the
observed tail, and show what a common gain on queries and keys does to
attention under either scale.

Randomness comes only from ``numpy.random.default_rng``; every function
takes a seed.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attention_scaling._checks import integer_at_least
from attention_scaling._attention import attention_weights
from attention_scaling.simulate import mean_estimate, scale_for, scaling_policy, variance_estimate

__all__ = [
    "CorrelatedLogits",
    "LogitMoments",
    "NormGrowth",
    "TailCheck",
    "correlated_dot_products",
    "correlated_logit_sweep",
    "correlated_logits_data",
    "linear_logit_tail",
    "norm_growth",
    "predicted_logit_mean",
    "predicted_logit_std",
]

# The two scales this page compares; "none" would only repeat the unscaled theorem.
POLICIES = ("sqrt", "linear")

# Draws are made in blocks of about this many numbers per operand (8 MB of
# float64), so memory stays bounded for any d_k and sample count.
_BLOCK_ENTRIES = 1 << 20




def _counts(values, name: str, minimum: int) -> np.ndarray:
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
        raise TypeError(f"{name} must be a sequence of integers; got {type(values).__name__}")
    checked = [integer_at_least(value, f"each of {name}", minimum) for value in values]
    if not checked:
        raise ValueError(f"{name} must not be empty")
    return np.array(checked)


def _correlations(rhos) -> np.ndarray:
    try:
        array = np.asarray(rhos, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(f"rhos must be real numbers; got {rhos!r}") from error
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"rhos must be a non-empty 1-D sequence; got shape {array.shape}")
    if not np.all(np.isfinite(array)) or np.any(np.abs(array) > 1):
        raise ValueError(f"each correlation must lie in [-1, 1]; got {array.tolist()}")
    return array


def _policy(policy) -> str:
    return scaling_policy(policy, choices=POLICIES)[0]


def _broadcast(rho, d_k, policy) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Correlations, dimensions and scale factors, checked and broadcast against each other."""
    _policy(policy)
    rho = _correlations(np.ravel(rho)).reshape(np.shape(rho))
    d_k = np.asarray(d_k)
    if d_k.dtype.kind not in "iu" or np.any(d_k < 1):
        raise ValueError(f"d_k must hold integers >= 1; got {d_k.tolist()!r}")
    rho, d_k = np.broadcast_arrays(rho, d_k)
    factor = np.vectorize(lambda d: scale_for(policy, int(d)), otypes=[float])(d_k)
    return rho, d_k, factor


def correlated_dot_products(d_k: int, n_samples: int, rhos, *, seed) -> np.ndarray:
    r"""Draw unscaled dot products :math:`q \cdot k` of correlated queries and keys, for each :math:`\rho`.

    Parameters
    ----------
    d_k : int
        Dimension of the vectors, at least 1.
    n_samples : int
        Independent pairs :math:`(q, k)` per correlation, at least 2.
    rhos : sequence of float
        Correlations :math:`\rho \in [-1, 1]` of each coordinate pair.
    seed : int or sequence of int
        Seed for ``numpy.random.default_rng``.

    Returns
    -------
    numpy.ndarray, shape (len(rhos), n_samples)
        Row ``j`` holds the dot products at correlation ``rhos[j]``.

    Raises
    ------
    TypeError
        If a count is not an integer or ``rhos`` is not numeric.
    ValueError
        If a count is too small or a correlation lies outside [-1, 1].

    Notes
    -----
    With :math:`q_i = Z_i` and :math:`k_i = \rho Z_i + \sqrt{1-\rho^2}\,W_i`,

    .. math::

       q \cdot k = \rho \sum_i Z_i^2 + \sqrt{1 - \rho^2} \sum_i Z_i W_i ,

    so one set of draws of :math:`Z` and :math:`W` serves every
    :math:`\rho`: each row has exactly the law of the model, and rows differ
    only through :math:`\rho` (common random numbers), which makes the
    curves for different correlations smooth in :math:`\rho`.

    Examples
    --------
    >>> from attention_scaling.correlation import correlated_dot_products
    >>> draws = correlated_dot_products(4, 3, [0.0, 1.0], seed=0)
    >>> draws.shape
    (2, 3)
    >>> bool((draws[1] > 0).all())   # rho = 1: k = q, so q.k = |q|^2
    True
    """
    d_k = integer_at_least(d_k, "d_k", 1)
    n_samples = integer_at_least(n_samples, "n_samples", 2)
    rhos = _correlations(rhos)
    rng = np.random.default_rng(seed)
    squares, crosses = np.empty(n_samples), np.empty(n_samples)
    rows = max(1, _BLOCK_ENTRIES // d_k)
    for start in range(0, n_samples, rows):
        stop = min(start + rows, n_samples)
        z = rng.standard_normal((stop - start, d_k))
        w = rng.standard_normal((stop - start, d_k))
        squares[start:stop] = np.einsum("ij,ij->i", z, z)
        crosses[start:stop] = np.einsum("ij,ij->i", z, w)
    return rhos[:, None] * squares + np.sqrt(1 - rhos[:, None] ** 2) * crosses


def predicted_logit_mean(rho, d_k, policy: str) -> np.ndarray:
    r"""The proved mean of the scaled logit: :math:`\rho\sqrt{d_k}` for ``"sqrt"``, :math:`\rho` for ``"linear"``.

    From :math:`\mathbb{E}[q \cdot k] = \rho d_k`
    (``thm-correlated-dot-product``) times the scale :math:`c`.

    Parameters
    ----------
    rho : float or array_like
        Correlations.
    d_k : int or array_like of int
        Dimensions (broadcast against ``rho``).
    policy : {"sqrt", "linear"}
        The scale :math:`1/\sqrt{d_k}` or :math:`1/d_k`.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> from attention_scaling.correlation import predicted_logit_mean
    >>> predicted_logit_mean(0.5, [16, 64], "sqrt").tolist(), predicted_logit_mean(0.5, [16, 64], "linear").tolist()
    ([2.0, 4.0], [0.5, 0.5])
    """
    rho, d_k, factor = _broadcast(rho, d_k, policy)
    return factor * rho * d_k


def predicted_logit_std(rho, d_k, policy: str) -> np.ndarray:
    r"""The proved standard deviation of the scaled logit: :math:`\sqrt{1+\rho^2}` or :math:`\sqrt{(1+\rho^2)/d_k}`.

    From :math:`\operatorname{Var}[q \cdot k] = d_k(1 + \rho^2)`
    (``thm-correlated-dot-product``) times :math:`c^2`.

    Parameters
    ----------
    rho : float or array_like
        Correlations.
    d_k : int or array_like of int
        Dimensions (broadcast against ``rho``).
    policy : {"sqrt", "linear"}
        The scale.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> from attention_scaling.correlation import predicted_logit_std
    >>> predicted_logit_std(0.0, [16, 64], "sqrt").tolist(), predicted_logit_std(0.0, [16, 64], "linear").tolist()
    ([1.0, 1.0], [0.25, 0.125])
    """
    rho, d_k, factor = _broadcast(rho, d_k, policy)
    return factor * np.sqrt(d_k * (1 + rho**2))


@dataclass(frozen=True)
class LogitMoments:
    """Mean and standard deviation of the scaled logit, per correlation and dimension, with standard errors.

    Arrays have shape ``(len(rho), len(d_k))``.

    Attributes
    ----------
    policy : str
        ``"sqrt"`` or ``"linear"``.
    d_k, rho : numpy.ndarray
        The dimensions and correlations.
    n_samples : int
        Draws per point.
    mean, mean_se, std, std_se : numpy.ndarray
        Sample mean and standard deviation of the scaled logit and their
        standard errors.
    """

    policy: str
    d_k: np.ndarray
    rho: np.ndarray
    n_samples: int
    mean: np.ndarray
    mean_se: np.ndarray
    std: np.ndarray
    std_se: np.ndarray

    @property
    def predicted_mean(self) -> np.ndarray:
        """The proved means, same shape as ``mean``."""
        return predicted_logit_mean(self.rho[:, None], self.d_k[None, :], self.policy)

    @property
    def predicted_std(self) -> np.ndarray:
        """The proved standard deviations, same shape as ``std``."""
        return predicted_logit_std(self.rho[:, None], self.d_k[None, :], self.policy)

    @property
    def mean_z(self) -> np.ndarray:
        """How many standard errors each sample mean lies from its proved value."""
        return (self.mean - self.predicted_mean) / self.mean_se

    @property
    def std_z(self) -> np.ndarray:
        """How many standard errors each sample standard deviation lies from its proved value."""
        return (self.std - self.predicted_std) / self.std_se


def correlated_logit_sweep(d_values, rhos, n_samples: int, *, seed: int) -> dict[str, LogitMoments]:
    r"""Mean and spread of :math:`c\, q \cdot k` under both scales, over dimensions and correlations.

    Each :math:`d_k` gets its own generator, seeded by ``(seed, d_k)``, so a
    point does not change when other dimensions are added; both scales see
    the same draws, so their results differ only by the factor
    :math:`\sqrt{d_k}`.

    Parameters
    ----------
    d_values : sequence of int
        Dimensions, each at least 1.
    rhos : sequence of float
        Correlations in [-1, 1].
    n_samples : int
        Draws per point, at least 4.
    seed : int
        Base seed.

    Returns
    -------
    dict
        ``{"sqrt": LogitMoments, "linear": LogitMoments}``.

    Notes
    -----
    The standard error of the sample standard deviation :math:`s` comes
    from that of the sample variance by the delta method,
    :math:`\operatorname{se}(s) \approx \operatorname{se}(s^2) / (2s)`.

    Examples
    --------
    >>> from attention_scaling.correlation import correlated_logit_sweep
    >>> sweep = correlated_logit_sweep([16, 256], [0.5], 2000, seed=0)
    >>> [round(float(m), 1) for m in sweep["linear"].mean[0]]      # close to rho = 0.5
    [0.5, 0.5]
    >>> [round(float(m)) for m in sweep["sqrt"].mean[0]]           # close to rho * sqrt(d_k) = 2, 8
    [2, 8]
    """
    d_values = _counts(d_values, "d_values", 1)
    rhos = _correlations(rhos)
    n_samples = integer_at_least(n_samples, "n_samples", 4)
    columns = {policy: {"mean": [], "mean_se": [], "std": [], "std_se": []} for policy in POLICIES}
    for d_k in d_values:
        draws = correlated_dot_products(int(d_k), n_samples, rhos, seed=(seed, int(d_k)))
        for policy in POLICIES:
            logits = draws * scale_for(policy, int(d_k))
            mean = mean_estimate(logits, axis=-1)
            variance = [variance_estimate(row) for row in logits]
            column = columns[policy]
            column["mean"].append(mean.value)
            column["mean_se"].append(mean.standard_error)
            column["std"].append([math.sqrt(v.value) for v in variance])
            column["std_se"].append([v.standard_error / (2 * math.sqrt(v.value)) for v in variance])
    return {
        policy: LogitMoments(
            policy=policy,
            d_k=d_values,
            rho=rhos,
            n_samples=n_samples,
            # Collected with one row per d_k; stored with one row per rho.
            **{name: np.array(values).T for name, values in column.items()},
        )
        for policy, column in columns.items()
    }


@dataclass(frozen=True)
class TailCheck:
    r"""How often :math:`|q \cdot k / d_k - \rho| \ge \varepsilon`, against Chebyshev's bound.

    Attributes
    ----------
    d_k : numpy.ndarray
        The dimensions.
    rho, epsilon : float
        The correlation and the tolerance.
    n_samples : int
        Draws per dimension.
    fraction, fraction_se : numpy.ndarray
        The observed fraction of draws outside the tolerance, and its
        binomial standard error.
    bound : numpy.ndarray
        Chebyshev's bound :math:`(1 + \rho^2)/(d_k \varepsilon^2)`, capped at 1.
    """

    d_k: np.ndarray
    rho: float
    epsilon: float
    n_samples: int
    fraction: np.ndarray
    fraction_se: np.ndarray
    bound: np.ndarray


def linear_logit_tail(d_values, rho: float, epsilon: float, n_samples: int, *, seed: int) -> TailCheck:
    r"""The tail :math:`\Pr(|q \cdot k / d_k - \rho| \ge \varepsilon)`, observed, and Chebyshev's bound, per :math:`d_k`.

    Parameters
    ----------
    d_values : sequence of int
        Dimensions, each at least 1.
    rho : float
        Correlation in [-1, 1].
    epsilon : float
        Tolerance, > 0.
    n_samples : int
        Draws per dimension, at least 2.
    seed : int
        Base seed; dimension ``d`` uses ``(seed, d)``, as
        :func:`correlated_logit_sweep` does.

    Returns
    -------
    TailCheck

    Examples
    --------
    >>> from attention_scaling.correlation import linear_logit_tail
    >>> tail = linear_logit_tail([16, 1024], 0.5, 0.25, 4000, seed=0)
    >>> bool((tail.fraction <= tail.bound).all()), float(tail.fraction[-1])
    (True, 0.0)
    """
    d_values = _counts(d_values, "d_values", 1)
    (rho,) = _correlations([rho])
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not 0 < epsilon < math.inf:
        raise ValueError(f"epsilon must be a finite number > 0; got {epsilon!r}")
    n_samples = integer_at_least(n_samples, "n_samples", 2)
    fractions = []
    for d_k in d_values:
        logits = correlated_dot_products(int(d_k), n_samples, [rho], seed=(seed, int(d_k)))[0] / d_k
        fractions.append(float(np.mean(np.abs(logits - rho) >= epsilon)))
    fraction = np.array(fractions)
    return TailCheck(
        d_k=d_values,
        rho=float(rho),
        epsilon=float(epsilon),
        n_samples=n_samples,
        fraction=fraction,
        fraction_se=np.sqrt(fraction * (1 - fraction) / n_samples),
        bound=np.minimum(1.0, (1 + rho**2) / (d_values * epsilon**2)),
    )


@dataclass(frozen=True)
class NormGrowth:
    """Logits and attention of one seeded head as a common gain multiplies its queries and keys.

    Arrays are indexed by gain; dictionaries by policy (``"sqrt"``, ``"linear"``).

    Attributes
    ----------
    gains : numpy.ndarray
        The gains :math:`g`.
    d_k, n_keys, n_queries : int
        Head dimension, keys per query, queries averaged over.
    logit_std : dict of numpy.ndarray
        Standard deviation of all the scaled logits at each gain.
    rescaling_error : dict of numpy.ndarray
        The largest relative difference, over all logits, between the logit
        at gain :math:`g` and :math:`g^2` times the logit at gain 1.
    max_weight, max_weight_se : dict of numpy.ndarray
        The largest attention weight per query, averaged over the queries,
        and its standard error.
    """

    gains: np.ndarray
    d_k: int
    n_keys: int
    n_queries: int
    logit_std: dict[str, np.ndarray]
    rescaling_error: dict[str, np.ndarray]
    max_weight: dict[str, np.ndarray]
    max_weight_se: dict[str, np.ndarray]


def norm_growth(gains, *, d_model: int = 64, d_k: int = 64, n_keys: int = 16, n_queries: int = 512,
                seed: int = 0) -> NormGrowth:
    r"""Multiply the query and key projections of one head by each gain and measure the logits and weights.

    Inputs have standard normal components; :math:`W_Q, W_K` have entries
    :math:`\mathcal{N}(0, 1/d_\text{model})`, so at gain 1 the projected
    components have unit variance. Queries and keys come from independent
    inputs: nothing aligns them, so any growth of the logits comes from the
    norms alone. The same draws serve every gain and both scales.

    Parameters
    ----------
    gains : sequence of float
        Gains :math:`g > 0`; the first must be 1, the reference for
        ``rescaling_error``.
    d_model, d_k, n_keys, n_queries : int, optional
        Input width, head dimension, keys per query (at least 2) and queries.
    seed : int, default 0
        Seed.

    Returns
    -------
    NormGrowth

    Raises
    ------
    ValueError
        If a gain is not finite and positive, the first gain is not 1, or a
        size is too small.

    Examples
    --------
    >>> from attention_scaling.correlation import norm_growth
    >>> growth = norm_growth([1.0, 2.0], n_queries=64)
    >>> [round(float(s) / float(growth.logit_std["sqrt"][0]), 6) for s in growth.logit_std["sqrt"]]
    [1.0, 4.0]
    >>> bool(growth.max_weight["linear"][1] < growth.max_weight["sqrt"][1])
    True
    """
    try:
        gains = np.asarray(gains, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(f"gains must be real numbers; got {gains!r}") from error
    if gains.ndim != 1 or gains.size == 0 or not np.all(np.isfinite(gains)) or np.any(gains <= 0):
        raise ValueError(f"gains must be a non-empty 1-D sequence of finite values > 0; got {gains.tolist()}")
    if gains[0] != 1.0:
        raise ValueError(f"the first gain is the reference and must be 1; got {gains[0]}")
    d_model = integer_at_least(d_model, "d_model", 1)
    d_k = integer_at_least(d_k, "d_k", 1)
    n_keys = integer_at_least(n_keys, "n_keys", 2)
    n_queries = integer_at_least(n_queries, "n_queries", 2)
    rng = np.random.default_rng(seed)
    w_q = rng.standard_normal((d_model, d_k)) / math.sqrt(d_model)
    w_k = rng.standard_normal((d_model, d_k)) / math.sqrt(d_model)
    queries = rng.standard_normal((n_queries, 1, d_model)) @ w_q
    keys = rng.standard_normal((n_queries, n_keys, d_model)) @ w_k
    fields = {name: {policy: [] for policy in POLICIES} for name in ("std", "error", "max", "max_se")}
    for policy in POLICIES:
        scale = scale_for(policy, d_k)
        reference = (queries @ keys.swapaxes(-1, -2)) * scale
        for gain in gains:
            q, k = gain * queries, gain * keys
            logits = (q @ k.swapaxes(-1, -2)) * scale
            largest = mean_estimate(attention_weights(q, k, scale=scale).max(axis=-1))
            fields["std"][policy].append(float(logits.std()))
            fields["error"][policy].append(float(np.max(np.abs(logits - gain**2 * reference)) /
                                                 np.max(np.abs(gain**2 * reference))))
            fields["max"][policy].append(largest.value)
            fields["max_se"][policy].append(largest.standard_error)
    arrays = {name: {policy: np.array(values) for policy, values in by_policy.items()}
              for name, by_policy in fields.items()}
    return NormGrowth(
        gains=gains,
        d_k=d_k,
        n_keys=n_keys,
        n_queries=n_queries,
        logit_std=arrays["std"],
        rescaling_error=arrays["error"],
        max_weight=arrays["max"],
        max_weight_se=arrays["max_se"],
    )


# -- The data of the site's figure ------------------------------------------------------


@dataclass(frozen=True)
class CorrelatedLogits:
    r"""The logit :math:`c\, q \cdot k` of correlated queries and keys under both scales, from the same draws.

    Attributes
    ----------
    sqrt, linear : LogitMoments
        The moments with :math:`c = 1/\sqrt{d_k}` and with :math:`c = 1/d_k`.
    """

    sqrt: LogitMoments
    linear: LogitMoments

    def by_policy(self) -> dict[str, LogitMoments]:
        """The moments keyed by policy name, in the order sqrt, linear."""
        return {"sqrt": self.sqrt, "linear": self.linear}


def correlated_logits_data(n_samples: int = 4000, seed: int = 2024) -> CorrelatedLogits:
    r"""Seeded mean and spread of the scaled logit for :math:`d_k = 16, 32, \dots, 1024` and :math:`\rho = 0, 0.1, 0.5`.

    Parameters
    ----------
    n_samples : int, default 4000
        Draws per point, at least 4.
    seed : int, default 2024
        Base seed (see :func:`correlated_logit_sweep`).

    Returns
    -------
    CorrelatedLogits

    Examples
    --------
    >>> from attention_scaling.correlation import correlated_logits_data
    >>> data = correlated_logits_data(n_samples=100)
    >>> data.sqrt.rho.tolist(), data.linear.mean.shape
    ([0.0, 0.1, 0.5], (3, 7))
    """
    sweep = correlated_logit_sweep([2**i for i in range(4, 11)], [0.0, 0.1, 0.5], n_samples, seed=seed)
    return CorrelatedLogits(sqrt=sweep["sqrt"], linear=sweep["linear"])
