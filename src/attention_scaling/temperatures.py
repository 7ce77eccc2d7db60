r"""Temperatures for longer contexts: published logit multipliers as functions of the length.

Each method below multiplies the scaled logits :math:`q \cdot k / \sqrt{d}` of a
row of :math:`n` keys by a factor :math:`m(n)` that grows with the length:

========================  ===================================================  ==========================
method                    multiplier of the logits                             equal to 1 at
========================  ===================================================  ==========================
Su (entropy invariance)   :math:`\log_{512} n = \ln n / \ln 512`               :math:`n = 512`
log-length (Chiang &      :math:`\ln n`, here :math:`\ln n / \ln n_0`          :math:`n = n_0`
Cholak; Scalable-Softmax
:math:`s \ln n`)
YaRN                      :math:`(0.1 \ln s + 1)^2`, :math:`s = n / L`         :math:`n \le L`
Qwen ``logn``             :math:`\ln n / \ln L` for :math:`n > L`              :math:`n \le L`
Llama 4 (NoPE layers)     :math:`1 + 0.1 \ln(\lfloor n / 8192 \rfloor + 1)`   :math:`n < 8192`
:math:`\sqrt{\ln n}` rule :math:`\sqrt{\ln n / \ln n_0}`                       :math:`n = n_0`
========================  ===================================================  ==========================

Chiang & Cholak's ``ln n`` and Scalable-Softmax's ``s ln n`` differ from Su's
scale only by a constant factor; normalised to 1 at a common length they are
the same curve. The :math:`\sqrt{\ln n}` rule is not a published method: it
is the scale that keeps the plug-in entropy a fixed fraction of
:math:`\ln n` for Gaussian logits (:func:`attention_scaling.proofs.entropy_temperature`).

:func:`temperature_sweep` measures, for each multiplier, the entropy and the
largest weight of the softmax of :math:`n` independent
:math:`\mathcal{N}(0, (m(n)\, s)^2)` logits, from seeded draws shared by all
the methods (common random numbers).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from attention_scaling._checks import integer_at_least
from attention_scaling._softmax import _entropy_of_shifted
from attention_scaling.gradients import quantile_interval
from attention_scaling.long_sequences import _lengths
from attention_scaling.simulate import mean_estimate

__all__ = [
    "METHODS",
    "REFERENCE_LENGTH",
    "TemperatureSweep",
    "llama4_multiplier",
    "log_length_multiplier",
    "multiplier",
    "qwen_logn_multiplier",
    "sqrt_log_multiplier",
    "su_multiplier",
    "temperature_sweep",
    "yarn_multiplier",
    "yarn_scale",
]

#: The length at which the multipliers without a length of their own are 1, and the training length
#: of YaRN and Qwen's ``logn`` here (Llama 2 was trained at 4096 tokens).
REFERENCE_LENGTH = 4096


def su_multiplier(n, reference: int = 512) -> np.ndarray:
    r"""Su's entropy-invariance factor :math:`\log_{512} n`: the logits' scale is :math:`(\log_{512} n)/\sqrt{d}`.

    Examples
    --------
    >>> from attention_scaling.temperatures import su_multiplier
    >>> su_multiplier([512, 4096]).round(4).tolist()
    [1.0, 1.3333]
    """
    return np.log(_lengths(n)) / math.log(integer_at_least(reference, "reference", 2))


def log_length_multiplier(n, reference: int = REFERENCE_LENGTH) -> np.ndarray:
    r"""The log-length factor :math:`\ln n` (Chiang & Cholak; Scalable-Softmax's :math:`s \ln n`), over its value at ``reference``.

    Examples
    --------
    >>> from attention_scaling.temperatures import log_length_multiplier
    >>> log_length_multiplier([64, 4096]).tolist()
    [0.5, 1.0]
    """
    return np.log(_lengths(n)) / math.log(integer_at_least(reference, "reference", 2))


def yarn_scale(extension) -> np.ndarray:
    r"""YaRN's :math:`\sqrt{1/t} = 0.1 \ln s + 1`, applied to both q and k, for an extension factor :math:`s \ge 1`.

    Examples
    --------
    >>> from attention_scaling.temperatures import yarn_scale
    >>> yarn_scale([1, 8]).round(4).tolist()
    [1.0, 1.2079]
    """
    s = np.asarray(extension, dtype=np.float64)
    if not np.all(np.isfinite(s)) or np.any(s < 1):
        raise ValueError(f"extension must hold finite factors >= 1; got {extension!r}")
    return 0.1 * np.log(s) + 1.0


def yarn_multiplier(n, trained: int = REFERENCE_LENGTH) -> np.ndarray:
    r"""YaRN's factor on the logits, :math:`(0.1 \ln s + 1)^2` with :math:`s = \max(n / L, 1)` (q and k are each scaled).

    Examples
    --------
    >>> from attention_scaling.temperatures import yarn_multiplier
    >>> yarn_multiplier([4096, 32768]).round(4).tolist()
    [1.0, 1.4591]
    """
    n = _lengths(n)
    return yarn_scale(np.maximum(n / integer_at_least(trained, "trained", 1), 1.0)) ** 2


def qwen_logn_multiplier(n, trained: int = REFERENCE_LENGTH) -> np.ndarray:
    r"""Qwen's ``logn`` factor for the query at position :math:`n`: :math:`\ln n / \ln L` beyond :math:`L`, else 1.

    Examples
    --------
    >>> from attention_scaling.temperatures import qwen_logn_multiplier
    >>> qwen_logn_multiplier([512, 4096, 2**24]).tolist()
    [1.0, 1.0, 2.0]
    """
    n = _lengths(n)
    return np.maximum(np.log(n) / math.log(integer_at_least(trained, "trained", 2)), 1.0)


def llama4_multiplier(n, floor_scale: int = 8192, attn_scale: float = 0.1) -> np.ndarray:
    r"""Llama 4's factor for the query at position :math:`n - 1`: :math:`1 + 0.1 \ln(\lfloor n / 8192 \rfloor + 1)`.

    Examples
    --------
    >>> from attention_scaling.temperatures import llama4_multiplier
    >>> llama4_multiplier([8191, 131072, 2**20]).round(3).tolist()
    [1.0, 1.283, 1.486]
    """
    n = _lengths(n)
    return 1.0 + attn_scale * np.log(np.floor(n / integer_at_least(floor_scale, "floor_scale", 1)) + 1.0)


def sqrt_log_multiplier(n, reference: int = REFERENCE_LENGTH) -> np.ndarray:
    r""":math:`\sqrt{\ln n / \ln n_0}`: the scale that keeps the plug-in entropy a fixed fraction of :math:`\ln n`.

    Examples
    --------
    >>> from attention_scaling.temperatures import sqrt_log_multiplier
    >>> sqrt_log_multiplier([64, 4096]).round(4).tolist()
    [0.7071, 1.0]
    """
    return np.sqrt(log_length_multiplier(n, reference))


#: The methods of the sweep and the figure, in order, each name with its label and its multiplier of n.
METHODS: dict[str, tuple[str, Callable[[np.ndarray], np.ndarray]]] = {
    "fixed": ("fixed scale", lambda n: np.ones_like(_lengths(n))),
    "su": (r"Su, $\log_{512} n$", su_multiplier),
    "log": (r"$\ln n$ (Chiang & Cholak; SSMax)", log_length_multiplier),
    "yarn": ("YaRN", yarn_multiplier),
    "qwen": (r"Qwen logn", qwen_logn_multiplier),
    "llama4": ("Llama 4", llama4_multiplier),
    "sqrt-log": (r"$\sqrt{\ln n}$ rule", sqrt_log_multiplier),
}


def multiplier(method: str, n) -> np.ndarray:
    """The multiplier of ``method`` (a key of ``METHODS``) at lengths ``n``.

    Examples
    --------
    >>> from attention_scaling.temperatures import multiplier
    >>> float(multiplier("su", 512))
    1.0
    >>> multiplier("cosine", 512)
    Traceback (most recent call last):
    ...
    ValueError: method must be one of ['fixed', 'su', 'log', 'yarn', 'qwen', 'llama4', 'sqrt-log']; got 'cosine'
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {list(METHODS)}; got {method!r}")
    return np.asarray(METHODS[method][1](n), dtype=np.float64)


@dataclass(frozen=True)
class TemperatureSweep:
    """Entropy and largest weight of softmax of Gaussian logits under each method's multiplier.

    Arrays are indexed ``[method, length]`` in the order of ``methods`` and ``lengths``.

    Attributes
    ----------
    lengths : numpy.ndarray
        The lengths :math:`n`.
    methods : tuple of str
        Keys of ``METHODS``.
    spread : float
        The standard deviation :math:`s` of the logits before the multiplier.
    multipliers : numpy.ndarray
        :math:`m(n)` of each method.
    trials : numpy.ndarray
        Rows drawn at each length (shared by the methods).
    entropy_fraction, entropy_fraction_se : numpy.ndarray
        Mean of :math:`H / \\ln n` over the rows, and its standard error.
    max_weight, max_weight_low, max_weight_high : numpy.ndarray
        Median of the largest weight and a distribution-free 95 % interval for it.
    seed : int
        The seed of the generator.
    """

    lengths: np.ndarray
    methods: tuple[str, ...]
    spread: float
    multipliers: np.ndarray
    trials: np.ndarray
    entropy_fraction: np.ndarray
    entropy_fraction_se: np.ndarray
    max_weight: np.ndarray
    max_weight_low: np.ndarray
    max_weight_high: np.ndarray
    seed: int

    def plug_in_fraction(self) -> np.ndarray:
        r"""The plug-in value of :math:`H / \ln n`, :math:`1 - (m s)^2 / (2 \ln n)`, for each method and length."""
        return 1.0 - (self.multipliers * self.spread) ** 2 / (2.0 * np.log(self.lengths))

    def index(self, method: str) -> int:
        """The row of ``method`` in the arrays."""
        return self.methods.index(method)


def temperature_sweep(n_values=(512, 4096, 32768, 262144, 2**20), methods=tuple(METHODS), *, spread: float = 1.0,
                      seed: int = 15, budget: int = 2**22, min_trials: int = 8, max_trials: int = 400) -> TemperatureSweep:
    r"""Measure :math:`H/\ln n` and the largest weight of softmax of :math:`m(n)\,x`, :math:`x_i \sim \mathcal{N}(0, s^2)`.

    At each length about ``budget`` standard normal draws (between
    ``min_trials`` and ``max_trials`` rows of :math:`n`) are made once and
    scaled by each method's multiplier, so the methods are compared on the same
    draws.

    Examples
    --------
    >>> from attention_scaling.temperatures import temperature_sweep
    >>> sweep = temperature_sweep((512, 4096), ("fixed", "su"), budget=2**14)
    >>> sweep.trials.tolist(), sweep.multipliers.round(3).tolist()
    ([32, 8], [[1.0, 1.0], [1.0, 1.333]])
    >>> bool(abs(sweep.entropy_fraction[0, 0] - sweep.plug_in_fraction()[0, 0]) < 0.01)
    True
    """
    n = _lengths(n_values).astype(np.int64)
    if n.ndim != 1 or n.size == 0 or np.any(n < 2):
        raise ValueError(f"n_values must be a non-empty list of lengths >= 2; got {n_values!r}")
    methods = tuple(methods)
    for method in methods:
        multiplier(method, 2)
    if not (math.isfinite(spread) and spread > 0):
        raise ValueError(f"spread must be a finite number > 0; got {spread!r}")
    rng = np.random.default_rng(seed)
    shape = (len(methods), n.size)
    fraction, fraction_se, top, top_low, top_high = (np.empty(shape) for _ in range(5))
    trials = np.clip(budget // n, min_trials, max_trials)
    multipliers = np.array([multiplier(method, n) for method in methods])
    for j, (length, rows) in enumerate(zip(n, trials)):
        x = spread * rng.standard_normal((int(rows), int(length)))
        for i in range(len(methods)):
            logits = multipliers[i, j] * x
            centred = logits - logits.max(axis=-1, keepdims=True)
            terms = np.exp(centred)
            largest = 1.0 / terms.sum(axis=-1)
            estimate = mean_estimate(_entropy_of_shifted(centred, terms) / math.log(length))
            fraction[i, j], fraction_se[i, j] = estimate.value, estimate.standard_error
            top[i, j], top_low[i, j], top_high[i, j] = quantile_interval(largest, 0.5)
    return TemperatureSweep(n.astype(np.float64), methods, float(spread), multipliers, trials, fraction, fraction_se,
                            top, top_low, top_high, seed)
