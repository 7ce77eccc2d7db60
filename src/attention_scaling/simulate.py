r"""Seeded Monte Carlo estimates, each with its standard error.

Randomness comes only from ``numpy.random.default_rng(seed)``, so every
number is the same on every build.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from attention_scaling._checks import integer_at_least

__all__ = [
    "DISTRIBUTIONS",
    "SCALINGS",
    "Estimate",
    "ScoreSamples",
    "VarianceSweep",
    "dot_product_samples",
    "dot_product_sweep",
    "logit_histograms_data",
    "mean_estimate",
    "query_key_scores",
    "scale_for",
    "scaling_policy",
    "variance_estimate",
    "variance_vs_dk_data",
]

# Component laws with mean 0 and variance 1: the assumptions of footnote 4,
# met by three quite different distributions.
DISTRIBUTIONS = ("normal", "rademacher", "uniform")

#: The three scaling policies the site compares, as functions of d_k.
SCALINGS: dict[str, Callable[[int], float]] = {
    "none": lambda d_k: 1.0,
    "sqrt": lambda d_k: 1.0 / np.sqrt(d_k),
    "linear": lambda d_k: 1.0 / d_k,
}

# Draws are generated in blocks of this many rows so that memory stays bounded
# (a block of 4096-dimensional float64 vectors is about 134 MB per operand).
_BLOCK = 4096


@dataclass(frozen=True)
class Estimate:
    """A Monte Carlo estimate and its standard error.

    Both fields are floats, or arrays of the same shape for estimates made
    along an axis (see :func:`mean_estimate`).

    Examples
    --------
    >>> from attention_scaling.simulate import Estimate
    >>> Estimate(1.02, 0.01).contains(1.0)
    True
    """

    value: float
    standard_error: float

    def interval(self, z: float = 3.0) -> tuple[float, float]:
        """The interval ``value ± z·standard_error`` (z = 3: about 99.7 % for a normal error)."""
        return self.value - z * self.standard_error, self.value + z * self.standard_error

    def contains(self, target: float, z: float = 3.0) -> bool:
        """Whether ``target`` lies within ``z`` standard errors of the estimate (of every one, for arrays)."""
        low, high = self.interval(z)
        return bool(np.all((low <= target) & (target <= high)))




def _components(rng: np.random.Generator, shape: tuple[int, ...], distribution: str) -> np.ndarray:
    """Independent components with mean 0 and variance 1."""
    if distribution == "normal":
        return rng.standard_normal(shape)
    if distribution == "rademacher":
        return rng.integers(0, 2, size=shape) * 2.0 - 1.0
    if distribution == "uniform":
        return rng.uniform(-np.sqrt(3.0), np.sqrt(3.0), size=shape)
    raise ValueError(f"distribution must be one of {DISTRIBUTIONS}; got {distribution!r}")


#: The seed of the rows of scores that every page measuring gradients shares (see :func:`query_key_scores`).
SCORE_ROWS_SEED = 14


def query_key_scores(d_k: int, n_rows: int, n_keys: int, *, seed: int = SCORE_ROWS_SEED) -> tuple[np.ndarray, np.ndarray]:
    r"""Rows of unscaled scores :math:`q \cdot k_j` of standard normal vectors, and each row's :math:`\lVert q \rVert`.

    Every row is one query :math:`q` and ``n_keys`` keys :math:`k_j`, all in
    :math:`\mathbb{R}^{d_k}` with independent standard normal components.
    The scores are drawn from their exact law rather than from the vectors:
    :math:`\lVert q \rVert^2` is chi-square with :math:`d_k` degrees of
    freedom, and given :math:`q` the :math:`q \cdot k_j` are independent
    :math:`\mathcal{N}(0, \lVert q \rVert^2)`. The generators are seeded by
    ``(seed, d_k)`` alone, so one ``(d_k, seed)`` is one set of rows, whichever
    page or sweep asks for it and however many rows it takes, and every page
    that measures the same quantity on them prints the same number.

    Parameters
    ----------
    d_k : int
        Dimension of the queries and keys, at least 1.
    n_rows : int
        Rows (queries), at least 1.
    n_keys : int
        Keys per row, at least 2.
    seed : int, default SCORE_ROWS_SEED
        Base seed, at least 0.

    Returns
    -------
    scores : numpy.ndarray, shape (n_rows, n_keys)
    query_norms : numpy.ndarray, shape (n_rows,)

    Raises
    ------
    TypeError, ValueError
        For arguments that are not integers in range.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.simulate import query_key_scores
    >>> scores, norms = query_key_scores(256, 20_000, 8)
    >>> scores.shape, round(float(scores.var() / 256), 1)     # variance d_k
    ((20000, 8), 1.0)
    >>> bool((query_key_scores(256, 5, 8)[0] == scores[:5]).all())   # the first rows of the same draw
    True
    """
    d_k = integer_at_least(d_k, "d_k", 1)
    n_rows = integer_at_least(n_rows, "n_rows", 1)
    n_keys = integer_at_least(n_keys, "n_keys", 2)
    seed = integer_at_least(seed, "seed", 0)
    # Two streams, so that the first rows do not depend on how many are drawn.
    norm_stream, score_stream = (np.random.default_rng([seed, d_k, stream]) for stream in (0, 1))
    norms = np.sqrt(norm_stream.chisquare(d_k, n_rows))
    return norms[:, None] * score_stream.standard_normal((n_rows, n_keys)), norms


def dot_product_samples(d_k: int, n_samples: int, *, seed, distribution: str = "normal") -> np.ndarray:
    r"""Draw ``n_samples`` dot products :math:`q \cdot k` of independent random vectors.

    Parameters
    ----------
    d_k : int
        Dimension of the query and key vectors, at least 1.
    n_samples : int
        How many independent pairs to draw, at least 2.
    seed : int or tuple of int
        Seed for ``numpy.random.default_rng``.
    distribution : {"normal", "rademacher", "uniform"}, default "normal"
        Law of every component; each has mean 0 and variance 1 (the uniform
        one is on :math:`[-\sqrt3, \sqrt3]`).

    Returns
    -------
    numpy.ndarray, shape (n_samples,)
        The dot products, unscaled.

    Raises
    ------
    ValueError
        If ``d_k < 1``, ``n_samples < 2`` or the distribution is unknown.

    Examples
    --------
    >>> from attention_scaling.simulate import dot_product_samples
    >>> samples = dot_product_samples(4, 3, seed=0)
    >>> samples.shape
    (3,)
    >>> bool((samples == dot_product_samples(4, 3, seed=0)).all())   # seeded
    True
    >>> sorted(set(dot_product_samples(1, 1000, seed=0, distribution="rademacher").tolist()))
    [-1.0, 1.0]
    """
    d_k = integer_at_least(d_k, "d_k", 1)
    n_samples = integer_at_least(n_samples, "n_samples", 2)
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {DISTRIBUTIONS}; got {distribution!r}")
    rng = np.random.default_rng(seed)
    out = np.empty(n_samples)
    rows = max(1, _BLOCK * 64 // d_k)
    for start in range(0, n_samples, rows):
        stop = min(start + rows, n_samples)
        q = _components(rng, (stop - start, d_k), distribution)
        k = _components(rng, (stop - start, d_k), distribution)
        out[start:stop] = np.einsum("ij,ij->i", q, k)
    return out


def mean_estimate(samples, axis: int | None = None) -> Estimate:
    r"""Sample mean of independent draws, with standard error :math:`s/\sqrt{n}`.

    The one mean ± standard-error aggregation of the package: every mean a
    page reports with its uncertainty comes from here.

    Parameters
    ----------
    samples : array_like
        Independent draws, at least 2 (along ``axis``).
    axis : int, optional
        The axis that holds the draws; every other axis indexes a separate
        estimate. ``None`` (the default) takes all the samples, flattened, as
        draws of one quantity.

    Returns
    -------
    Estimate
        With float fields when ``axis`` is None, otherwise with arrays of the
        shape of ``samples`` without ``axis``.

    Raises
    ------
    ValueError
        If there are fewer than 2 draws, a draw is not finite, or ``axis`` is
        not an axis of ``samples``.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.simulate import mean_estimate
    >>> mean_estimate([1.0, 2.0, 3.0, 4.0])
    Estimate(value=2.5, standard_error=0.6454972243679028)
    >>> rows = mean_estimate(np.array([[1.0, 2.0, 3.0, 4.0], [2.0, 2.0, 2.0, 2.0]]), axis=-1)
    >>> rows.value, rows.standard_error
    (array([2.5, 2. ]), array([0.64549722, 0.        ]))
    """
    x = np.asarray(samples, dtype=np.float64)
    if axis is None:
        x = x.ravel()
    elif not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an axis of samples (ndim {x.ndim}); got {axis!r}")
    else:
        # Draws contiguous on the last axis: each estimate is summed in the
        # same order as from its own 1-D array, so the two agree bit for bit.
        x = np.ascontiguousarray(np.moveaxis(x, axis, -1))
    if x.shape[-1] < 2 or not np.all(np.isfinite(x)):
        raise ValueError(f"samples must hold at least 2 finite draws; got {x.shape[-1]}")
    value, standard_error = x.mean(axis=-1), x.std(axis=-1, ddof=1) / np.sqrt(x.shape[-1])
    if axis is None:
        return Estimate(float(value), float(standard_error))
    return Estimate(value, standard_error)


def variance_estimate(samples) -> Estimate:
    r"""Sample variance of independent draws, with its standard error.

    Parameters
    ----------
    samples : array_like, shape (n,)
        Independent draws of one random variable, ``n >= 4``.

    Returns
    -------
    Estimate
        The unbiased sample variance :math:`s^2` and the standard error
        :math:`\sqrt{(\hat m_4 - s^4)/n}`, where :math:`\hat m_4` is the sample
        fourth central moment: the large-sample error of :math:`s^2` for any
        distribution with a finite fourth moment.

    Raises
    ------
    ValueError
        If there are fewer than 4 finite samples or the array is not 1-D.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.simulate import variance_estimate
    >>> draws = np.random.default_rng(0).normal(scale=2.0, size=100_000)
    >>> variance_estimate(draws).contains(4.0)
    True
    """
    x = np.asarray(samples, dtype=np.float64)
    if x.ndim != 1 or x.size < 4:
        raise ValueError(f"samples must be a 1-D array of at least 4 draws; got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("samples must be finite")
    centred = x - x.mean()
    variance = centred.var(ddof=1)
    fourth = np.mean(centred**4)
    return Estimate(float(variance), float(np.sqrt(max(fourth - variance**2, 0.0) / x.size)))


def dot_product_sweep(d_values, n_samples: int, *, seed: int, distribution: str = "normal") -> dict[str, np.ndarray]:
    r"""Mean and variance of :math:`q \cdot k` for each :math:`d_k`, with standard errors.

    Each :math:`d_k` gets its own generator, seeded by ``(seed, d_k)``, so a
    value does not change when other sizes are added to the sweep.

    Parameters
    ----------
    d_values : sequence of int
        The dimensions, each at least 1.
    n_samples : int
        Pairs drawn per dimension.
    seed : int
        Base seed.
    distribution : {"normal", "rademacher", "uniform"}, default "normal"
        Law of every component.

    Returns
    -------
    dict
        Arrays ``d_k``, ``mean``, ``mean_se``, ``variance``,
        ``variance_se``, and the integer ``n_samples``.

    Examples
    --------
    >>> from attention_scaling.simulate import dot_product_sweep
    >>> sweep = dot_product_sweep([1, 16], 20_000, seed=1)
    >>> [round(float(v)) for v in sweep["variance"]]
    [1, 16]
    """
    d_values = [integer_at_least(d, "d_k", 1) for d in d_values]
    columns: dict[str, list[float]] = {"mean": [], "mean_se": [], "variance": [], "variance_se": []}
    for d_k in d_values:
        samples = dot_product_samples(d_k, n_samples, seed=(seed, d_k), distribution=distribution)
        mean, variance = mean_estimate(samples), variance_estimate(samples)
        columns["mean"].append(mean.value)
        columns["mean_se"].append(mean.standard_error)
        columns["variance"].append(variance.value)
        columns["variance_se"].append(variance.standard_error)
    arrays = {name: np.array(values) for name, values in columns.items()}
    return {"d_k": np.array(d_values), "n_samples": n_samples, **arrays}


def scaling_policy(policy, *, name: str = "policy", choices=None) -> tuple[str, Callable[[int], float]]:
    """Check a scaling policy; return its label and its factor as a function of :math:`d_k`.

    The one validation of a scaling-policy argument in the package.

    Parameters
    ----------
    policy : {"none", "sqrt", "linear"} or callable
        A name from ``SCALINGS``, or a function of ``d_k`` returning the factor.
    name : str, default "policy"
        The argument's name in the caller, for the error messages.
    choices : tuple of str, optional
        The only names accepted, and then no callable. By default every name
        in ``SCALINGS``, or a callable.

    Returns
    -------
    label : str
        The name, or a callable's ``__name__``.
    factor : callable
        The factor as a function of ``d_k``.

    Raises
    ------
    ValueError
        For an unknown name (or, with ``choices``, anything else not in it).
    TypeError
        For a policy that is neither a name nor a callable.

    Examples
    --------
    >>> from attention_scaling.simulate import scale_for, scaling_policy
    >>> label, factor = scaling_policy("sqrt")
    >>> label, float(factor(64)), scale_for(label, 64)
    ('sqrt', 0.125, 0.125)
    >>> scaling_policy("none", name="scale", choices=("sqrt", "linear"))
    Traceback (most recent call last):
        ...
    ValueError: scale must be one of ('sqrt', 'linear'); got 'none'
    """
    if choices is not None:
        if not isinstance(policy, str) or policy not in choices:
            raise ValueError(f"{name} must be one of {tuple(choices)}; got {policy!r}")
        return policy, SCALINGS[policy]
    if isinstance(policy, str):
        if policy not in SCALINGS:
            raise ValueError(f"{name} must be one of {tuple(SCALINGS)} or a callable of d_k; got {policy!r}")
        return policy, SCALINGS[policy]
    if not callable(policy):
        raise TypeError(f"{name} must be a name or a callable of d_k; got {type(policy).__name__}")
    return getattr(policy, "__name__", repr(policy)), policy


def scale_for(policy, d_k: int, *, name: str = "policy") -> float:
    """The factor that multiplies the scores under a scaling policy.

    Parameters
    ----------
    policy : {"none", "sqrt", "linear"} or callable
        A name from ``SCALINGS``, or a function of ``d_k`` returning a
        positive finite factor (checked by :func:`scaling_policy`).
    d_k : int
        Head dimension.
    name : str, default "policy"
        The argument's name in the caller, for the error messages.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        For an unknown name or a factor that is not finite and positive.
    TypeError
        For a policy that is neither a name nor a callable.

    Examples
    --------
    >>> from attention_scaling.simulate import scale_for
    >>> scale_for("sqrt", 64), scale_for("linear", 64), scale_for(lambda d: 2.0, 64)
    (0.125, 0.015625, 2.0)
    """
    _, policy = scaling_policy(policy, name=name)
    factor = float(policy(d_k))
    if not np.isfinite(factor) or factor <= 0:
        raise ValueError(f"{name} gave the factor {factor!r} for d_k = {d_k}; it must be finite and > 0")
    return factor


# -- The data of the site's figures ----------------------------------------------------
# Each function below computes, seeded, the numbers one figure draws (the
# drawing itself is page support: attention_scaling.site.plots).

# The head dimensions of every sweep against d_k: powers of two from 1 to 4096.
_SWEEP_D_VALUES = tuple(2**i for i in range(13))


@dataclass(frozen=True)
class VarianceSweep:
    r"""Monte Carlo mean and variance of :math:`q \cdot k` at each :math:`d_k`, with standard errors.

    Attributes
    ----------
    d_k : numpy.ndarray
        The head dimensions.
    n_samples : int
        Pairs :math:`(q, k)` drawn at each dimension.
    mean, mean_se : numpy.ndarray
        Sample mean of :math:`q \cdot k` and its standard error.
    variance, variance_se : numpy.ndarray
        Sample variance of :math:`q \cdot k` and its standard error.
    """

    d_k: np.ndarray
    n_samples: int
    mean: np.ndarray
    mean_se: np.ndarray
    variance: np.ndarray
    variance_se: np.ndarray


def variance_vs_dk_data(n_samples: int = 4000, seed: int = 1) -> VarianceSweep:
    r"""The variance of :math:`q \cdot k` for :math:`d_k = 1, 2, 4, \dots, 4096` (standard normal components).

    Parameters
    ----------
    n_samples : int, default 4000
        Pairs drawn per dimension, at least 4.
    seed : int, default 1
        Base seed (see :func:`dot_product_sweep`).

    Returns
    -------
    VarianceSweep

    Examples
    --------
    >>> from attention_scaling.simulate import variance_vs_dk_data
    >>> data = variance_vs_dk_data(n_samples=200)
    >>> int(data.d_k[-1]), data.variance.shape
    (4096, (13,))
    """
    sweep = dot_product_sweep(_SWEEP_D_VALUES, n_samples, seed=seed)
    return VarianceSweep(
        d_k=sweep["d_k"],
        n_samples=sweep["n_samples"],
        mean=sweep["mean"],
        mean_se=sweep["mean_se"],
        variance=sweep["variance"],
        variance_se=sweep["variance_se"],
    )


@dataclass(frozen=True)
class ScoreSamples:
    r"""Seeded scores :math:`q \cdot k` at one :math:`d_k`, unscaled and divided by :math:`\sqrt{d_k}`.

    Attributes
    ----------
    d_k : int
        The head dimension.
    unscaled : numpy.ndarray
        The scores :math:`q \cdot k`.
    scaled : numpy.ndarray
        The same scores divided by :math:`\sqrt{d_k}`.
    """

    d_k: int
    unscaled: np.ndarray
    scaled: np.ndarray


def logit_histograms_data(d_k: int = 64, n_samples: int = 20_000, seed: int = 2) -> ScoreSamples:
    r"""Seeded scores :math:`q \cdot k` at one :math:`d_k`, unscaled and divided by :math:`\sqrt{d_k}`.

    Parameters
    ----------
    d_k : int, default 64
        Head dimension, at least 1.
    n_samples : int, default 20000
        Pairs drawn, at least 2.
    seed : int, default 2
        Seed for :func:`dot_product_samples`.

    Returns
    -------
    ScoreSamples

    Examples
    --------
    >>> from attention_scaling.simulate import logit_histograms_data
    >>> data = logit_histograms_data(n_samples=100)
    >>> data.d_k, data.unscaled.shape
    (64, (100,))
    """
    unscaled = dot_product_samples(d_k, n_samples, seed=seed)
    return ScoreSamples(d_k=d_k, unscaled=unscaled, scaled=unscaled / np.sqrt(d_k))
