r"""Page support for "The three regimes, measured" (``docs/regimes.md``).

One function per section. Each takes what the page's visible cells computed
(the figure's data, drawn on the page), checks what the prose says of it, and
returns a record whose :meth:`glue_values` are the numbers the prose quotes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_scaling.simulate import ScoreSamples, VarianceSweep, scale_for
from attention_scaling.regimes import TemperaturePatterns, ThreeRegimes
from attention_scaling.site.checks import require

__all__ = [
    "RegimeRow",
    "RegimesNumbers",
    "ScoreRanges",
    "TemperatureNumbers",
    "VarianceNumbers",
    "histogram_numbers",
    "regimes_numbers",
    "temperature_numbers",
    "variance_numbers",
]

_PAGE = "regimes.md"


def _where(section: str) -> str:
    return f"{_PAGE}, section {section}"


@dataclass(frozen=True)
class VarianceNumbers:
    """How many head dimensions' estimates contain the proved variance :math:`d_k`.

    Attributes
    ----------
    sizes : int
        Head dimensions in the sweep.
    within : int
        Those whose estimate lies within three standard errors of :math:`d_k`.
    n_samples : int
        Draws per head dimension.
    """

    sizes: int
    within: int
    n_samples: int


def variance_numbers(variance: VarianceSweep, within) -> VarianceNumbers:
    """The numbers of the section "The variance grows like d_k".

    Parameters
    ----------
    variance : attention_scaling.simulate.VarianceSweep
        The figure's data.
    within : array_like of bool
        Per head dimension, whether the proved value lies within three
        standard errors of the estimate (computed on the page).

    Returns
    -------
    VarianceNumbers

    Raises
    ------
    ValueError
        If ``within`` does not have one entry per head dimension.
    PageCheckError
        If more than one estimate misses its proved value: at three standard
        errors each misses with probability about 0.3 %, so one miss in 13
        is already unlikely and two point at an error in the simulation.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.simulate import variance_vs_dk_data
    >>> from attention_scaling.site.regimes import variance_numbers
    >>> data = variance_vs_dk_data(n_samples=4000)
    >>> within = np.abs(data.variance - data.d_k) <= 3 * data.variance_se
    >>> numbers = variance_numbers(data, within)
    >>> numbers.sizes, numbers.within, numbers.n_samples
    (13, 13, 4000)
    """
    within = np.asarray(within, dtype=bool)
    if within.shape != variance.d_k.shape:
        raise ValueError(f"within must have one entry per head dimension, shape {variance.d_k.shape}; "
                         f"got shape {within.shape}")
    numbers = VarianceNumbers(sizes=int(within.size), within=int(within.sum()), n_samples=int(variance.n_samples))
    require(numbers.within >= numbers.sizes - 1, _where("regimes-variance"),
            "the proved variance d_k lies within 3 standard errors of all estimates but at most one",
            within=numbers.within, sizes=numbers.sizes)
    return numbers


@dataclass(frozen=True)
class ScoreRanges:
    r"""The range of the sampled scores, unscaled and divided by :math:`\sqrt{d_k}`.

    Attributes
    ----------
    d_k : int
        The head dimension.
    unscaled_range, scaled_range : float
        Largest minus smallest score, before and after the division.
    """

    d_k: int
    unscaled_range: float
    scaled_range: float


def histogram_numbers(scores: ScoreSamples) -> ScoreRanges:
    r"""The numbers of the section "What the scores look like".

    Parameters
    ----------
    scores : attention_scaling.simulate.ScoreSamples
        The figure's data.

    Returns
    -------
    ScoreRanges

    Raises
    ------
    PageCheckError
        If the scaled scores are not the unscaled ones divided by :math:`\sqrt{d_k}`
        (then the two histograms would not show the same draws).

    Examples
    --------
    >>> from attention_scaling.simulate import logit_histograms_data
    >>> from attention_scaling.site.regimes import histogram_numbers
    >>> ranges = histogram_numbers(logit_histograms_data(n_samples=1000))
    >>> round(ranges.unscaled_range / ranges.scaled_range, 6)
    8.0
    """
    divided = np.allclose(scores.scaled * np.sqrt(scores.d_k), scores.unscaled, rtol=1e-12, atol=0)
    require(divided, _where("regimes-histograms"),
            "the scaled scores are the unscaled ones divided by sqrt(d_k)",
            d_k=scores.d_k)
    return ScoreRanges(d_k=int(scores.d_k), unscaled_range=float(np.ptp(scores.unscaled)),
                       scaled_range=float(np.ptp(scores.scaled)))


@dataclass(frozen=True)
class RegimeRow:
    r"""One policy's statistics at the widest head dimension of the sweep.

    Attributes
    ----------
    max_weight : float
        Mean largest weight.
    entropy_fraction : float
        Mean entropy as a fraction of :math:`\ln n`.
    effective_keys : float
        Mean :math:`e^H`.
    jacobian_norm, jacobian_norm_se : float
        Mean Frobenius norm of the softmax Jacobian (the gain with respect to
        the logits :math:`z = cs`) and its standard error.
    score_gain, score_gain_se : float
        Mean gain with respect to the raw score :math:`s = q \cdot k`,
        :math:`c\,\lVert J \rVert_F` (the chain rule's factor :math:`c`), and its standard error.
    """

    max_weight: float
    entropy_fraction: float
    effective_keys: float
    jacobian_norm: float
    jacobian_norm_se: float = 0.0
    score_gain: float = 0.0
    score_gain_se: float = 0.0


@dataclass(frozen=True)
class RegimesNumbers:
    r"""The table of "Three scalings, one picture" and the range of the largest weight under :math:`1/\sqrt{d_k}`.

    Attributes
    ----------
    n_keys, n_queries : int
        Keys per query, queries per head dimension.
    widest : int
        The widest head dimension of the sweep, where the table is taken.
    rows : dict of str to RegimeRow
        The table, by policy (none, sqrt, linear).
    sqrt_max_low, sqrt_max_high : float
        Smallest and largest mean largest weight under :math:`1/\sqrt{d_k}`
        over the whole sweep.
    """

    n_keys: int
    n_queries: int
    widest: int
    rows: dict[str, RegimeRow]
    sqrt_max_low: float
    sqrt_max_high: float

    def glue_values(self) -> dict[str, object]:
        """The page's glue keys and their values."""
        values: dict[str, object] = {
            "regimes_n_keys": self.n_keys,
            "regimes_n_queries": self.n_queries,
            "regimes_widest": self.widest,
        }
        for policy, row in self.rows.items():
            values[f"regimes_{policy}_max"] = row.max_weight
            values[f"regimes_{policy}_entropy"] = row.entropy_fraction
            values[f"regimes_{policy}_keys"] = row.effective_keys
            values[f"regimes_{policy}_grad"] = row.jacobian_norm
            values[f"regimes_{policy}_grad_se"] = row.jacobian_norm_se
            values[f"regimes_{policy}_score"] = row.score_gain
            values[f"regimes_{policy}_score_se"] = row.score_gain_se
        values["regimes_sqrt_max_low"] = self.sqrt_max_low
        values["regimes_sqrt_max_high"] = self.sqrt_max_high
        return values


def regimes_numbers(regimes: ThreeRegimes) -> RegimesNumbers:
    r"""The numbers of the section "Three scalings, one picture".

    Parameters
    ----------
    regimes : attention_scaling.regimes.ThreeRegimes
        The figure's data.

    Returns
    -------
    RegimesNumbers

    Raises
    ------
    PageCheckError
        If, at the widest head dimension, attention without scaling rests on
        two or more effective keys, or with :math:`1/d_k` on fewer than 90 %
        of them (the prose says "about one key" and "nearly all of them"); if
        there, without scaling, the mean gain at the logits is not below the
        one with :math:`1/\sqrt{d_k}` or the mean gain at the raw score not
        above it (each by three standard errors); or
        if under :math:`1/\sqrt{d_k}` the largest weight ever leaves the
        range between uniform attention and no scaling ("intermediate").

    Examples
    --------
    >>> from attention_scaling.regimes import three_regimes_data
    >>> from attention_scaling.site.regimes import regimes_numbers
    >>> numbers = regimes_numbers(three_regimes_data())
    >>> numbers.widest, round(numbers.rows["linear"].effective_keys)
    (4096, 16)
    >>> numbers.rows["none"].score_gain > numbers.rows["sqrt"].score_gain   # larger at the raw score, on average
    True
    """
    widest = -1  # the last d_k of the sweep
    rows = {}
    for policy, curves in regimes.by_policy().items():
        # c is one number per policy and d_k, so the mean of c||J|| is c times the mean of ||J||.
        c = scale_for(policy, int(curves.d_k[widest]))
        rows[policy] = RegimeRow(
            max_weight=float(curves.max_weight[widest]),
            entropy_fraction=float(curves.entropy_fraction[widest]),
            effective_keys=float(curves.effective_keys[widest]),
            jacobian_norm=float(curves.jacobian_norm[widest]),
            jacobian_norm_se=float(curves.jacobian_norm_se[widest]),
            score_gain=c * float(curves.jacobian_norm[widest]),
            score_gain_se=c * float(curves.jacobian_norm_se[widest]),
        )
    numbers = RegimesNumbers(
        n_keys=int(regimes.n_keys),
        n_queries=int(regimes.n_queries),
        widest=int(regimes.none.d_k[widest]),
        rows=rows,
        sqrt_max_low=float(regimes.sqrt.max_weight.min()),
        sqrt_max_high=float(regimes.sqrt.max_weight.max()),
    )
    require(rows["none"].effective_keys < 2, _where("regimes-three"),
            "without scaling, attention at the widest d_k rests on about one key",
            effective_keys=rows["none"].effective_keys)
    require(rows["linear"].effective_keys > 0.9 * numbers.n_keys, _where("regimes-three"),
            "divided by d_k, attention at the widest d_k spreads over nearly all keys",
            effective_keys=rows["linear"].effective_keys, n_keys=numbers.n_keys)
    intermediate = np.all((regimes.sqrt.max_weight > 1 / numbers.n_keys)
                          & (regimes.sqrt.max_weight < regimes.none.max_weight[widest]))
    require(intermediate, _where("regimes-three"),
            "divided by sqrt(d_k), the largest weight stays between uniform and unscaled at every d_k",
            low=numbers.sqrt_max_low, high=numbers.sqrt_max_high, uniform=1 / numbers.n_keys,
            unscaled=rows["none"].max_weight)
    none, sqrt = rows["none"], rows["sqrt"]
    require(none.jacobian_norm + 3 * none.jacobian_norm_se < sqrt.jacobian_norm - 3 * sqrt.jacobian_norm_se,
            _where("regimes-three"), "without scaling the mean gain at the logits is below the one with 1/sqrt(d_k)",
            none=(none.jacobian_norm, none.jacobian_norm_se), sqrt=(sqrt.jacobian_norm, sqrt.jacobian_norm_se))
    require(none.score_gain - none.score_gain_se * 3 > sqrt.score_gain + 3 * sqrt.score_gain_se,
            _where("regimes-three"), "without scaling the mean gain at the raw score is above the one with 1/sqrt(d_k)",
            none=(none.score_gain, none.score_gain_se), sqrt=(sqrt.score_gain, sqrt.score_gain_se))
    return numbers


@dataclass(frozen=True)
class TemperatureNumbers:
    r"""The mean largest weight of one head at three temperatures.

    Attributes
    ----------
    d_k : int
        The head dimension.
    half_max, one_max, two_max : float
        Mean over queries of the largest weight at :math:`\tau = \sqrt{d_k}/2`,
        :math:`\sqrt{d_k}` and :math:`2\sqrt{d_k}`.
    """

    d_k: int
    half_max: float
    one_max: float
    two_max: float


def temperature_numbers(patterns: TemperaturePatterns) -> TemperatureNumbers:
    r"""The numbers of the section "Temperature".

    Parameters
    ----------
    patterns : attention_scaling.regimes.TemperaturePatterns
        The figure's data, at the temperatures :math:`\sqrt{d_k}/2`,
        :math:`\sqrt{d_k}` and :math:`2\sqrt{d_k}`.

    Returns
    -------
    TemperatureNumbers

    Raises
    ------
    ValueError
        If ``patterns`` does not hold three temperatures.
    PageCheckError
        If the mean largest weight does not fall as the temperature rises
        (the figure shows the contrast within each row weakening).

    Examples
    --------
    >>> from attention_scaling.regimes import temperature_patterns_data
    >>> from attention_scaling.site.regimes import temperature_numbers
    >>> numbers = temperature_numbers(temperature_patterns_data())
    >>> numbers.half_max > numbers.one_max > numbers.two_max
    True
    """
    if len(patterns.weights) != 3:
        raise ValueError(f"patterns must hold 3 temperatures; got {len(patterns.weights)}")
    half, one, two = (float(weights.max(axis=-1).mean()) for weights in patterns.weights)
    require(half > one > two, _where("regimes-temperature"), "the mean largest weight falls as the temperature rises",
            half=half, one=one, two=two)
    return TemperatureNumbers(d_k=int(patterns.d_k), half_max=half, one_max=one, two_max=two)
