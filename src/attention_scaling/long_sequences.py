r"""Attention over many keys: how the weights spread as the sequence grows.

Two models, both with a fixed scale on the scores:

* **Gaussian logits.** The :math:`n` scores are independent
  :math:`\mathcal{N}(0, \sigma^2)`. Replacing the sums in the entropy and the
  collision number by :math:`n` times their expectations (the law of large
  numbers) gives :func:`plug_in_entropy` and :func:`plug_in_collision_count`;
  :func:`gaussian_logit_sweep` measures the real values, with standard errors,
  so the pages can show where the plug-in values stop being good.
* **A needle.** One score exceeds the :math:`n - 1` others by a margin
  :math:`\Delta`; :func:`needle_weight` is the weight it receives at scale
  :math:`\beta`. :func:`scalable_softmax` multiplies the scores by
  :math:`s \ln n`, a scale that grows with the length.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from attention_scaling._checks import as_float_array, integer_at_least, require_finite, require_ndim
from attention_scaling.simulate import Estimate, mean_estimate
from attention_scaling._softmax import _entropy_of_shifted, softmax

__all__ = [
    "LengthSweep",
    "freezing_ratio",
    "gaussian_logit_sweep",
    "long_sequence_entropy_data",
    "max_logit_bound",
    "needle_weight",
    "plug_in_collision_count",
    "plug_in_entropy",
    "plug_in_log_partition",
    "scalable_softmax",
]


def _lengths(n, name: str = "n") -> np.ndarray:
    """``n`` as an array of integers >= 1 (a length counts keys)."""
    array = np.asarray(n)
    if array.dtype.kind == "b" or array.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold integers >= 1; got dtype {array.dtype}")
    if not np.all(np.isfinite(array)) or np.any(array < 1) or np.any(array != np.floor(array)):
        raise ValueError(f"{name} must hold integers >= 1; got {n!r}")
    return array.astype(np.float64)


def _spreads(s, name: str = "s") -> np.ndarray:
    """``s`` as a float array of finite values >= 0."""
    array = as_float_array(s, name)
    require_finite(array, name)
    if np.any(array < 0):
        raise ValueError(f"{name} must be >= 0; got {s!r}")
    return array


def _real(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise TypeError(f"{name} must be a finite real number; got {value!r}")
    return float(value)


def plug_in_entropy(n, s) -> np.ndarray:
    r"""The entropy of softmax over :math:`n` Gaussian logits, sums replaced by expectations.

    Parameters
    ----------
    n : int or array_like of int
        Number of keys, each >= 1.
    s : float or array_like
        Standard deviation of the logits, >= 0. Broadcasts against ``n``.

    Returns
    -------
    numpy.ndarray
        :math:`\ln n - \sigma^2/2`, in nats.

    Raises
    ------
    TypeError, ValueError
        If ``n`` is not made of integers >= 1 or ``s`` of finite values >= 0.

    Notes
    -----
    With :math:`Z = \sum_i e^{x_i}` the entropy is
    :math:`H = \ln Z - \sum_i x_i e^{x_i} / Z`. Putting
    :math:`n\,\mathbb{E}[e^X] = n e^{\sigma^2/2}` for :math:`Z` and
    :math:`n\,\mathbb{E}[X e^X] = n \sigma^2 e^{\sigma^2/2}` for the other sum gives

    .. math::

       H \approx \ln n + \tfrac{s^2}{2} - s^2 = \ln n - \tfrac{s^2}{2}.

    It is an approximation: good while :math:`\sigma^2` is well below
    :math:`2 \ln n`, and negative (impossible for an entropy) beyond it.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.long_sequences import plug_in_entropy
    >>> float(plug_in_entropy(1024, 0.0)) == float(np.log(1024))   # equal logits: uniform weights
    True
    >>> plug_in_entropy([16, 4096], 3.0).round(3)     # negative at n = 16: the approximation has failed
    array([-1.727,  3.818])
    """
    return np.log(_lengths(n)) - _spreads(s) ** 2 / 2


def plug_in_collision_count(n, s) -> np.ndarray:
    r"""The collision number :math:`1/\sum_i p_i^2` for Gaussian logits, sums replaced by expectations.

    Parameters
    ----------
    n : int or array_like of int
        Number of keys, each >= 1.
    s : float or array_like
        Standard deviation of the logits, >= 0.

    Returns
    -------
    numpy.ndarray
        :math:`n e^{-\sigma^2}`: the number of equally weighted keys with the same
        :math:`\sum_i p_i^2`.

    Notes
    -----
    :math:`\sum_i p_i^2 = \sum_i e^{2x_i} / Z^2 \approx n e^{2\sigma^2} / (n e^{\sigma^2/2})^2`.
    The sum of :math:`e^{2x_i}` is a sum for logits of spread :math:`2\sigma`, so
    this approximation needs :math:`(2\sigma)^2`, not :math:`\sigma^2`, well below
    :math:`2 \ln n`.

    Examples
    --------
    >>> from attention_scaling.long_sequences import plug_in_collision_count
    >>> round(float(plug_in_collision_count(4096, 1.0)), 1)
    1506.8
    """
    return _lengths(n) * np.exp(-(_spreads(s) ** 2))


def max_logit_bound(n, s) -> np.ndarray:
    r"""The bound :math:`\sigma\sqrt{2 \ln n}` on the expected largest of :math:`n` Gaussian logits.

    Parameters
    ----------
    n : int or array_like of int
        Number of logits, each >= 1.
    s : float or array_like
        Their standard deviation, >= 0.

    Returns
    -------
    numpy.ndarray
        :math:`\sigma\sqrt{2\ln n}`, an upper bound on :math:`\mathbb{E}\max_i x_i`
        for independent :math:`x_i \sim \mathcal{N}(0, \sigma^2)` (the theorem
        ``thm-gaussian-max-bound``).

    Examples
    --------
    >>> from attention_scaling.long_sequences import max_logit_bound
    >>> max_logit_bound([1, 65536], 1.0).round(3)
    array([0.  , 4.71])
    """
    return _spreads(s) * np.sqrt(2 * np.log(_lengths(n)))


def freezing_ratio(n, s) -> np.ndarray:
    r"""How close :math:`n` Gaussian logits of spread :math:`\sigma` are to freezing: :math:`\sigma^2 / (2 \ln n)`.

    Parameters
    ----------
    n : int or array_like of int
        Number of keys, each >= 2 (for one key the ratio is undefined).
    s : float or array_like
        Standard deviation of the logits, >= 0.

    Returns
    -------
    numpy.ndarray
        The ratio; below 1 the sum :math:`Z` is carried by many keys, above 1
        by the few largest (the random-energy model's frozen phase).

    Raises
    ------
    ValueError
        If some ``n`` is below 2.

    Examples
    --------
    >>> from attention_scaling.long_sequences import freezing_ratio
    >>> freezing_ratio([16, 65536], 3.0).round(3)
    array([1.623, 0.406])
    """
    lengths = _lengths(n)
    if np.any(lengths < 2):
        raise ValueError(f"n must hold integers >= 2 for a freezing ratio; got {n!r}")
    return _spreads(s) ** 2 / (2 * np.log(lengths))


def needle_weight(n, margin, scale) -> np.ndarray:
    r"""Weight on one key whose score exceeds each of the other :math:`n - 1` by ``margin``.

    Parameters
    ----------
    n : int or array_like of int
        Number of keys, each >= 1.
    margin : float or array_like
        The margin :math:`\Delta` of the needle over the others (finite).
    scale : float or array_like
        The factor :math:`\beta` that multiplies every score (finite).
        Broadcasts with ``n`` and ``margin``: pass ``s * np.log(n)`` for a
        length-aware scale.

    Returns
    -------
    numpy.ndarray
        :math:`p = 1 / (1 + (n - 1) e^{-\beta\Delta})`, computed as
        :math:`\exp(-\operatorname{softplus}(\ln(n - 1) - \beta\Delta))` so
        that neither factor overflows for long sequences or large margins.

    Raises
    ------
    TypeError, ValueError
        If ``n`` is not made of integers >= 1, or ``margin`` or ``scale`` is
        not finite.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.long_sequences import needle_weight
    >>> n = np.array([16, 65536])
    >>> needle_weight(n, 5.0, 1.0).round(4)                 # a fixed scale: the needle fades
    array([0.9082, 0.0023])
    >>> needle_weight(n, 5.0, 0.43 * np.log(n)).round(4)    # scale 0.43 ln n: it does not
    array([0.9628, 1.    ])
    >>> float(needle_weight(1, 5.0, 1.0))                   # one key takes everything
    1.0
    """
    lengths = _lengths(n)
    margin = as_float_array(margin, "margin")
    scale = as_float_array(scale, "scale")
    require_finite(margin, "margin")
    require_finite(scale, "scale")
    # ln(n - 1) is -inf for n = 1: then no other key competes, and logaddexp
    # returns exactly 0, so p = 1. The division warning is expected.
    with np.errstate(divide="ignore"):
        log_others = np.log(lengths - 1)
    return np.exp(-np.logaddexp(0.0, log_others - scale * margin))


def scalable_softmax(z, s: float, axis: int = -1) -> np.ndarray:
    r"""Scalable-Softmax: softmax of the scores multiplied by :math:`s \ln n`.

    Parameters
    ----------
    z : array_like
        Scores; ``n`` is their number along ``axis``.
    s : float
        The scaling parameter (learned per head in the paper), finite.
    axis : int, default -1
        Axis of the keys.

    Returns
    -------
    numpy.ndarray
        :math:`n^{s z_i} / \sum_j n^{s z_j} = \operatorname{softmax}(s \ln(n)\, z)_i`.

    Raises
    ------
    TypeError
        If ``s`` is not a finite real number or ``z`` is not numeric.
    ValueError
        For the inputs :func:`attention_scaling.softmax` refuses.

    References
    ----------
    K. M. Nakanishi, "Scalable-Softmax Is Superior for Attention",
    arXiv:2501.19399 (2025).

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.long_sequences import scalable_softmax
    >>> z = np.array([3.0, -2.0, -2.0, -2.0])
    >>> bool(np.allclose(scalable_softmax(z, 0.5), 4.0 ** (0.5 * z) / np.sum(4.0 ** (0.5 * z))))
    True
    """
    s = _real(s, "s")
    z = as_float_array(z, "z")
    require_ndim(z, "z", 1, "(..., n)")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -z.ndim <= axis < z.ndim:
        raise ValueError(f"axis must be an integer in [{-z.ndim}, {z.ndim - 1}] for z of shape {z.shape}; got {axis!r}")
    n = z.shape[axis]
    if n == 0:
        raise ValueError(f"z must have at least one entry along axis {axis}; got shape {z.shape}")
    return softmax(z * (s * np.log(n)), axis=axis)


@dataclass(frozen=True)
class LengthSweep:
    r"""Statistics of softmax over :math:`n` Gaussian logits, for each spread and length.

    Every array has shape ``(len(spreads), len(n))``: row ``i`` is the spread
    ``spreads[i]``, column ``j`` the length ``n[j]``. Each value is a mean over
    ``trials[j]`` independent rows of logits, with its standard error.

    Attributes
    ----------
    n : numpy.ndarray
        The lengths.
    spreads : numpy.ndarray
        The standard deviations :math:`\sigma` of the logits.
    trials : numpy.ndarray
        Rows of logits drawn at each length.
    entropy, entropy_se : numpy.ndarray
        Shannon entropy of the weights, in nats.
    collision_count, collision_count_se : numpy.ndarray
        :math:`1/\sum_i p_i^2`.
    max_weight, max_weight_se : numpy.ndarray
        The largest weight, which is also the share of :math:`Z` carried by
        the largest term.
    log_partition, log_partition_se : numpy.ndarray
        :math:`\ln Z = \ln \sum_i e^{x_i}`.
    max_logit, max_logit_se : numpy.ndarray
        The largest logit.
    """

    n: np.ndarray
    spreads: np.ndarray
    trials: np.ndarray
    entropy: np.ndarray
    entropy_se: np.ndarray
    collision_count: np.ndarray
    collision_count_se: np.ndarray
    max_weight: np.ndarray
    max_weight_se: np.ndarray
    log_partition: np.ndarray
    log_partition_se: np.ndarray
    max_logit: np.ndarray
    max_logit_se: np.ndarray

    def estimate(self, name: str, s: float, n: int) -> Estimate:
        """One statistic at one spread and length, as an :class:`~attention_scaling.simulate.Estimate`.

        Examples
        --------
        >>> from attention_scaling.long_sequences import gaussian_logit_sweep
        >>> sweep = gaussian_logit_sweep([16, 64], [0.0], seed=0, budget=256)
        >>> sweep.estimate("max_weight", 0.0, 64)
        Estimate(value=0.015625, standard_error=0.0)
        """
        if name not in _STATISTICS:
            raise ValueError(f"name must be one of {_STATISTICS}; got {name!r}")
        rows, columns = np.flatnonzero(self.spreads == s), np.flatnonzero(self.n == n)
        if rows.size == 0 or columns.size == 0:
            raise ValueError(f"no point at s = {s!r}, n = {n!r}; spreads {self.spreads}, lengths {self.n}")
        i, j = rows[0], columns[0]
        return Estimate(float(getattr(self, name)[i, j]), float(getattr(self, f"{name}_se")[i, j]))


_STATISTICS = ("entropy", "collision_count", "max_weight", "log_partition", "max_logit")


def _row_statistics(logits: np.ndarray) -> dict[str, np.ndarray]:
    """Per-row statistics of softmax(logits), from one pass of exponentials.

    With m the row maximum and e = exp(x - m): Z = e^m * sum(e), and the
    largest weight is 1 / sum(e). The entropy comes from the one entropy
    implementation, which stays accurate for nearly one-hot rows.
    """
    top = logits.max(axis=-1, keepdims=True)
    centred = logits - top
    terms = np.exp(centred)
    total = terms.sum(axis=-1)
    return {
        "entropy": _entropy_of_shifted(centred, terms),
        "collision_count": total**2 / (terms * terms).sum(axis=-1),
        "max_weight": 1.0 / total,
        "log_partition": top[:, 0] + np.log(total),
        "max_logit": top[:, 0],
    }


def gaussian_logit_sweep(n_values, spreads, *, seed: int, budget: int = 2**20, min_trials: int = 64) -> LengthSweep:
    r"""Measure softmax over :math:`n` independent :math:`\mathcal{N}(0, \sigma^2)` logits, for each :math:`n` and :math:`\sigma`.

    At each length the same standard normal draws are multiplied by every
    spread (so the curves in :math:`\sigma` are smooth), and the generator is
    seeded by ``(seed, n)``, so a length's numbers do not change when other
    lengths are added.

    Parameters
    ----------
    n_values : sequence of int
        Lengths, each >= 2.
    spreads : sequence of float
        Standard deviations of the logits, each >= 0.
    seed : int
        Base seed.
    budget : int, default 2**20
        Logits drawn per length: ``budget // n`` rows, but at least
        ``min_trials``. Short rows are cheap, so they get many trials.
    min_trials : int, default 64
        Fewest rows per length, at least 2.

    Returns
    -------
    LengthSweep

    Raises
    ------
    ValueError
        For a length below 2, a negative or non-finite spread, or a budget or
        ``min_trials`` that is not a positive integer (``min_trials >= 2``).

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.long_sequences import gaussian_logit_sweep, plug_in_entropy
    >>> sweep = gaussian_logit_sweep([4096], [1.0], seed=0, budget=2**18)
    >>> int(sweep.trials[0])
    64
    >>> bool(abs(sweep.entropy[0, 0] - plug_in_entropy(4096, 1.0)) < 3 * sweep.entropy_se[0, 0] + 0.01)
    True
    """
    lengths = _lengths(np.asarray(n_values), "n_values")
    if lengths.ndim != 1 or lengths.size == 0 or np.any(lengths < 2):
        raise ValueError(f"n_values must be a non-empty sequence of integers >= 2; got {n_values!r}")
    spreads = _spreads(np.asarray(spreads, dtype=np.float64), "spreads")
    if spreads.ndim != 1 or spreads.size == 0:
        raise ValueError(f"spreads must be a non-empty 1-D sequence; got {spreads!r}")
    budget = integer_at_least(budget, "budget", 1)
    min_trials = integer_at_least(min_trials, "min_trials", 2)
    shape = (spreads.size, lengths.size)
    columns = {name: np.empty(shape) for name in _STATISTICS}
    errors = {name: np.empty(shape) for name in _STATISTICS}
    trials = np.empty(lengths.size, dtype=np.int64)
    for j, n in enumerate(lengths.astype(np.int64)):
        trials[j] = max(min_trials, budget // n)
        standard = np.random.default_rng([seed, int(n)]).standard_normal((trials[j], n))
        for i, s in enumerate(spreads):
            for name, values in _row_statistics(s * standard).items():
                estimate = mean_estimate(values)
                columns[name][i, j], errors[name][i, j] = estimate.value, estimate.standard_error
    fields = {name: columns[name] for name in _STATISTICS} | {f"{name}_se": errors[name] for name in _STATISTICS}
    return LengthSweep(n=lengths.astype(np.int64), spreads=spreads, trials=trials, **fields)


def plug_in_log_partition(n, s) -> np.ndarray:
    r"""The plug-in value of :math:`\ln Z` for :math:`n` Gaussian logits: :math:`\ln n + \sigma^2/2`.

    Parameters
    ----------
    n : int or array_like of int
        Number of keys, each >= 1.
    s : float or array_like
        Standard deviation of the logits, >= 0. Broadcasts against ``n``.

    Returns
    -------
    numpy.ndarray
        :math:`\ln(n\,\mathbb{E}[e^X]) = \ln n + \sigma^2/2`.

    Raises
    ------
    TypeError, ValueError
        If ``n`` is not made of integers >= 1 or ``s`` of finite values >= 0.

    Notes
    -----
    The logarithm is concave, so by Jensen's inequality
    :math:`\mathbb{E} \ln Z \le \ln \mathbb{E} Z`, and this value is an upper
    bound on the mean of :math:`\ln Z` at every :math:`n` and :math:`\sigma`. It is
    close to that mean only while :math:`\sigma^2` is well below :math:`2 \ln n`
    (see :func:`freezing_ratio`).

    Examples
    --------
    >>> from attention_scaling.long_sequences import plug_in_log_partition
    >>> plug_in_log_partition([1, 16], 3.0).round(3)
    array([4.5  , 7.273])
    """
    return np.log(_lengths(n)) + _spreads(s) ** 2 / 2


# -- The data of the site's figure ------------------------------------------------------


def long_sequence_entropy_data(seed: int = 8, budget: int = 2**19) -> LengthSweep:
    r"""Softmax over :math:`n = 16, 64, \dots, 65536` Gaussian logits with :math:`\sigma = 0.5, 1, 2, 3` (seeded).

    Parameters
    ----------
    seed : int, default 8
        Base seed (see :func:`gaussian_logit_sweep`).
    budget : int, default 2**19
        Logits drawn per length, at least 1 (each length gets at least 64 rows).

    Returns
    -------
    LengthSweep

    Examples
    --------
    >>> from attention_scaling.long_sequences import long_sequence_entropy_data
    >>> data = long_sequence_entropy_data(budget=2**12)
    >>> data.n.tolist(), data.spreads.tolist()
    ([16, 64, 256, 1024, 4096, 16384, 65536], [0.5, 1.0, 2.0, 3.0])
    """
    return gaussian_logit_sweep([4**k for k in range(2, 9)], [0.5, 1.0, 2.0, 3.0], seed=seed, budget=budget)
