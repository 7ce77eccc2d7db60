r"""Page support for "The three regimes, measured" (``docs/regimes.md``).

One function per section. Each takes what the page's visible cells computed
(the figure's data, drawn on the page), checks what the prose says of it, and
returns a record whose fields are the numbers the prose quotes, glued by
:func:`~attention_scaling.site.glue_fields`. The first page's example
(``docs/index.md``), the three scalings measured on one set of rows, is here too.
"""

from __future__ import annotations

from dataclasses import dataclass

import html
import math

import numpy as np

from attention_scaling.gradients import GRADIENT_SCALINGS, STARVED_RATIO, starved_threshold, summarise
from attention_scaling.simulate import SCALINGS, ScoreSamples, VarianceSweep, scale_for
from attention_scaling.regimes import TemperaturePatterns, ThreeRegimes, WeightProfiles
from attention_scaling.site.checks import require
from attention_scaling.site.graph import InlineHTML

__all__ = [
    "ExampleNumbers",
    "RegimeRow",
    "RegimesNumbers",
    "ScoreRanges",
    "TemperatureNumbers",
    "VarianceNumbers",
    "ExplorerNumbers",
    "example_numbers",
    "explorer_figure",
    "explorer_numbers",
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
        The table, by policy (none, sqrt, linear); glued through, as
        ``<prefix>_rows_<policy>_<field>``.
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


# -- The three regimes, moved by the reader (regimes-explorer) ---------------------------------

# What the explorer calls each policy, in its controls and its summary.
_POLICY_WORDS = {"none": "none", "sqrt": "1/√dₖ", "linear": "1/dₖ"}
# Each chart's viewBox, and the plot area inside it: room on the left and below for the axes' labels.
_WIDTH, _HEIGHT, _LEFT, _BOTTOM, _TOP = 320, 170, 34, 30, 8


def _chart(title: str, x_label: str, y_label: str, x_ticks: list[tuple[float, str]], states: list[str]) -> str:
    """One SVG chart: axes from 0 to 1 with ticks and labels, and a group per state (all but the first hidden)."""
    right, bottom = _WIDTH - 6, _HEIGHT - _BOTTOM
    parts = [f'<svg class="explorer-chart" viewBox="0 0 {_WIDTH} {_HEIGHT}" role="img" aria-label="{html.escape(title)}">',
             f'<path class="explorer-axis" d="M{_LEFT} {_TOP}V{bottom}H{right}"/>']
    for value in (0, 0.5, 1):
        y = bottom - value * (bottom - _TOP)
        parts.append(f'<text class="explorer-tick" x="{_LEFT - 4}" y="{y + 3:.1f}" text-anchor="end">{value:g}</text>')
    for fraction, text in x_ticks:
        x = _LEFT + fraction * (right - _LEFT)
        parts.append(f'<text class="explorer-tick" x="{x:.1f}" y="{bottom + 12}" text-anchor="middle">{text}</text>')
    parts.append(f'<text class="explorer-label" x="{(_LEFT + right) / 2:.1f}" y="{_HEIGHT - 3}" text-anchor="middle">'
                 f'{x_label}</text>')
    parts.append(f'<text class="explorer-label" x="10" y="{(_TOP + bottom) / 2:.1f}" text-anchor="middle" '
                 f'transform="rotate(-90 10 {(_TOP + bottom) / 2:.1f})">{y_label}</text>')
    return "".join(parts + states + ["</svg>"])


def _bars(heights, key: str, shown: bool) -> str:
    """Bars of heights in [0, 1] across the plot area, as one path, in a group for the state ``key``."""
    right, bottom = _WIDTH - 6, _HEIGHT - _BOTTOM
    step = (right - _LEFT) / len(heights)
    path = "".join(f"M{_LEFT + (i + 0.15) * step:.1f} {bottom}v{-min(float(h), 1.0) * (bottom - _TOP):.1f}"
                   f"h{0.7 * step:.1f}v{min(float(h), 1.0) * (bottom - _TOP):.1f}z" for i, h in enumerate(heights))
    hidden = "" if shown else ' style="display:none"'
    return f'<g data-state="{key}"{hidden}><path class="explorer-bars" d="{path}"/></g>'


def explorer_figure(data: WeightProfiles, start: tuple[int, int] = (2, 1)) -> InlineHTML:
    r"""The interactive three-regimes figure: a slider over :math:`d_k`, a choice of scale, two charts that follow.

    Every state (each :math:`d_k` and policy of ``data``) is drawn here, at
    build time, as a group of the two charts; the page's script
    (``_static/regimes_explorer.js``) shows the group that the controls
    select and reads out its summary. Without the script the figure shows
    its starting state, and the static three-regimes figure above it every case.

    Parameters
    ----------
    data : WeightProfiles
        What :func:`~attention_scaling.regimes.weight_profiles_data` returns.
    start : tuple of int, default (2, 1)
        The starting state: an index into ``data.d_values`` and one into ``data.policies``.

    Returns
    -------
    InlineHTML

    Raises
    ------
    TypeError
        If ``data`` is not a ``WeightProfiles``.
    ValueError
        If ``start`` is not a state of ``data``.

    Examples
    --------
    >>> from attention_scaling.regimes import weight_profiles_data
    >>> from attention_scaling.site.regimes import explorer_figure
    >>> figure = explorer_figure(weight_profiles_data((16, 64, 256), n_rows=50), start=(1, 1))._repr_html_()
    >>> figure.count('data-state="'), figure.count('data-state="1-1"')
    (27, 3)
    """
    if not isinstance(data, WeightProfiles):
        raise TypeError(f"data must be a WeightProfiles; got {type(data).__name__}")
    d_index, p_index = start
    if not (0 <= d_index < len(data.d_values) and 0 <= p_index < len(data.policies)):
        raise ValueError(f"start must index a d_k of {data.d_values} and a policy of {data.policies}; got {start}")
    weight_states, score_states, summaries = [], [], []
    for i, d_k in enumerate(data.d_values):
        for j, policy in enumerate(data.policies):
            key, shown = f"{i}-{j}", (i, j) == (d_index, p_index)
            weight_states.append(_bars(data.weights[i, j], key, shown))
            score_states.append(_bars(data.share[i, j], key, shown))
            summaries.append(
                f'<p data-state="{key}"{"" if shown else " hidden"}>dₖ = {d_k}, scores multiplied by '
                f"{_POLICY_WORDS[policy]}: their standard deviation is {data.score_std[i, j]:.3g}, "
                f"{data.outside[i, j]:.1%} of them lie beyond ±{data.edges[-1]:g}, and the largest of the "
                f"{data.n_keys} weights of a row is {data.weights[i, j, 0]:.2f} on average.</p>")
    keys = [(0, "1"), (0.5, f"{data.n_keys // 2}"), (1, f"{data.n_keys}")]
    scores = [(0, f"−{data.edges[-1]:g}"), (0.5, "0"), (1, f"{data.edges[-1]:g}")]
    radios = "".join(
        f'<label><input type="radio" name="explorer-scale" value="{j}"{" checked" if j == p_index else ""}> '
        f"{_POLICY_WORDS[policy]}</label>" for j, policy in enumerate(data.policies))
    values = " ".join(str(d_k) for d_k in data.d_values)
    markup = (
        f'<div class="regimes-explorer" data-d-values="{values}">'
        '<div class="explorer-controls">'
        f'<span><label for="explorer-d">Head dimension dₖ</label> = <output for="explorer-d">{data.d_values[d_index]}</output></span>'
        f'<input type="range" id="explorer-d" min="0" max="{len(data.d_values) - 1}" step="1" value="{d_index}" '
        f'aria-valuetext="dₖ = {data.d_values[d_index]}">'
        f'<fieldset><legend>Scores multiplied by</legend>{radios}</fieldset>'
        "</div>"
        '<div class="explorer-charts">'
        + _chart("The softmax weights of a row, largest first, averaged over rows",
                 "keys of a row, largest weight first", "weight", keys, weight_states)
        + _chart("The share of scaled scores in each bin", "scaled score", "share", scores, score_states)
        + "</div>"
        f'<div class="explorer-summary" aria-live="polite">{"".join(summaries)}</div>'
        "<noscript><p>The controls need JavaScript; the figure above shows every case.</p></noscript>"
        "</div>"
        '<script src="_static/regimes_explorer.js" defer></script>'
    )
    return InlineHTML(markup)


@dataclass(frozen=True)
class ExplorerNumbers:
    r"""The numbers the explorer's section states: the largest weight at the ends of the sweep under each policy.

    Attributes
    ----------
    rows, keys : int
        Rows per :math:`d_k`, and keys per row.
    d_first, d_last : int
        The smallest and the largest :math:`d_k`.
    none_first, none_last : float
        The mean largest weight without scaling, at ``d_first`` and at ``d_last``.
    linear_last, uniform : float
        With :math:`1/d_k`, at ``d_last``; and the uniform weight :math:`1/n`.
    sqrt_low, sqrt_high : float
        With :math:`1/\sqrt{d_k}`, the least and the most over the sweep.
    """

    rows: int
    keys: int
    d_first: int
    d_last: int
    none_first: float
    none_last: float
    linear_last: float
    uniform: float
    sqrt_low: float
    sqrt_high: float


def explorer_numbers(data: WeightProfiles) -> ExplorerNumbers:
    r"""The explorer section's numbers, checked against what the section says of them.

    Raises
    ------
    PageCheckError
        Unless, unscaled, the largest weight grows with :math:`d_k` to above
        0.9; with :math:`1/d_k` it ends within 10 % of :math:`1/n`; and with
        :math:`1/\sqrt{d_k}` it moves by less than 0.1 over the whole sweep.

    Examples
    --------
    >>> from attention_scaling.regimes import weight_profiles_data
    >>> from attention_scaling.site.regimes import explorer_numbers
    >>> numbers = explorer_numbers(weight_profiles_data(n_rows=400))
    >>> numbers.d_first, numbers.d_last, numbers.uniform
    (4, 4096, 0.0625)
    """
    largest = {policy: data.weights[:, j, 0] for j, policy in enumerate(data.policies)}
    numbers = ExplorerNumbers(
        rows=data.n_rows, keys=data.n_keys, d_first=data.d_values[0], d_last=data.d_values[-1],
        none_first=float(largest["none"][0]), none_last=float(largest["none"][-1]),
        linear_last=float(largest["linear"][-1]), uniform=1 / data.n_keys,
        sqrt_low=float(largest["sqrt"].min()), sqrt_high=float(largest["sqrt"].max()),
    )
    where = _where("regimes-explorer")
    require(bool(np.all(np.diff(largest["none"]) > 0)) and numbers.none_last > 0.9, where,
            "unscaled, the largest weight grows with d_k, to above 0.9", largest=largest["none"])
    require(abs(numbers.linear_last / numbers.uniform - 1) < 0.1, where,
            "divided by d_k, the largest weight ends within 10 % of 1/n", largest=numbers.linear_last)
    require(numbers.sqrt_high - numbers.sqrt_low < 0.1, where,
            "divided by sqrt(d_k), the largest weight moves by less than 0.1", largest=largest["sqrt"])
    return numbers


# -- The first page's example (docs/index.md, section index-example) -------------------------------


@dataclass(frozen=True)
class ExampleNumbers:
    r"""The first page's example: per scaling, the scores, the largest weight and the gains, summarised.

    Attributes
    ----------
    d_k, n_keys, n_queries : int
        The head dimension, the keys per query and the queries.
    uniform : float
        The uniform weight :math:`1/n`.
    grad_threshold, starved_ratio : float
        A query is starved when its gain at the logits is below ``grad_threshold``, ``starved_ratio`` times
        the median under :math:`1/\sqrt{d_k}` (:func:`~attention_scaling.gradients.starved_threshold`).
    score_mean_ratio : float
        The mean gain at the raw score, unscaled over :math:`1/\sqrt{d_k}`.
    none, sqrt, linear : dict of str to float
        Per scaling: ``std`` (the scores' sample standard deviation), ``max`` and ``max_se`` (the largest
        weight's mean and its standard error), ``grad`` and ``grad_se`` (the mean gain at the logits),
        ``grad_median``, ``grad_q10``, ``grad_q90``, ``grad_frac`` and ``grad_frac_se`` (the fraction
        starved), and at the raw score ``score_mean``, ``score_mean_se`` and ``score_median``.
    """

    d_k: int
    n_keys: int
    n_queries: int
    uniform: float
    grad_threshold: float
    starved_ratio: float
    score_mean_ratio: float
    none: dict
    sqrt: dict
    linear: dict


def example_numbers(d_k: int, scores: dict, weights: dict, gains: dict) -> ExampleNumbers:
    r"""Summarise and check the first page's example (``docs/index.md``, section index-example).

    The page computes, per scaling of :data:`attention_scaling.simulate.SCALINGS`, the scaled
    scores :math:`cs` of every query, their softmax weights and the gain at the logits; this
    function only summarises them, and checks what the page says of them.

    Parameters
    ----------
    d_k : int
        The head dimension; the scale :math:`c` of each scaling is ``SCALINGS[name](d_k)``.
    scores, weights, gains : dict of str to array_like
        Per scaling (none, sqrt, linear): the scaled scores, shape ``(n_queries, n_keys)``;
        their softmax weights, the same shape; and the gain at the logits
        :math:`\lVert J(cs) \rVert_F` of every query, shape ``(n_queries,)``.

    Returns
    -------
    ExampleNumbers

    Raises
    ------
    ValueError
        If a dict does not have the keys none, sqrt and linear, or the shapes disagree.
    PageCheckError
        Unless, as the page says: without scaling the largest weight averages
        above 0.9, its median gain at the logits is below a hundredth of the
        scaled one and its mean gain at the raw score is larger than the scaled
        one (by three standard errors); and dividing by :math:`d_k` leaves the
        largest weight within a tenth of the uniform :math:`1/n`.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling import attention_scores, softmax
    >>> from attention_scaling.gradients import softmax_jacobian_norm
    >>> from attention_scaling.simulate import SCALINGS
    >>> from attention_scaling.site.regimes import example_numbers
    >>> rng = np.random.default_rng(0)
    >>> q, k = rng.standard_normal((1000, 1, 512)), rng.standard_normal((1000, 8, 512))
    >>> scores = {name: attention_scores(q, k, scale=c(512))[:, 0, :] for name, c in SCALINGS.items()}
    >>> weights = {name: softmax(s) for name, s in scores.items()}
    >>> gains = {name: softmax_jacobian_norm(s) for name, s in scores.items()}
    >>> numbers = example_numbers(512, scores, weights, gains)
    >>> numbers.none["grad_median"] < 1e-3 and numbers.score_mean_ratio > 1
    True
    >>> numbers.linear["max"] < 1.1 * numbers.uniform  # divided by d_k: close to uniform
    True
    """
    for what, given in (("scores", scores), ("weights", weights), ("gains", gains)):
        if set(given) != set(GRADIENT_SCALINGS):
            raise ValueError(f"{what} must have the keys {GRADIENT_SCALINGS}; got {sorted(given)}")
    scores = {name: np.asarray(scores[name], dtype=np.float64) for name in GRADIENT_SCALINGS}
    weights = {name: np.asarray(weights[name], dtype=np.float64) for name in GRADIENT_SCALINGS}
    gains = {name: np.asarray(gains[name], dtype=np.float64) for name in GRADIENT_SCALINGS}
    n_queries, n_keys = scores["none"].shape
    for name in GRADIENT_SCALINGS:
        if scores[name].shape != (n_queries, n_keys) or weights[name].shape != (n_queries, n_keys) \
                or gains[name].shape != (n_queries,):
            raise ValueError(f"{name}: scores and weights must have one shape (n_queries, n_keys) and gains "
                             f"(n_queries,); got {scores[name].shape}, {weights[name].shape}, {gains[name].shape}")
    # Starved as everywhere on the site: against the median of the same gain under 1/sqrt(d_k).
    logit_threshold = starved_threshold(gains["sqrt"])
    score_threshold = starved_threshold(SCALINGS["sqrt"](d_k) * gains["sqrt"])
    rows, summaries, raw = {}, {}, {}
    for name in GRADIENT_SCALINGS:
        largest = weights[name].max(axis=-1)
        summary = summarise(gains[name], logit_threshold)
        score = summarise(SCALINGS[name](d_k) * gains[name], score_threshold)
        summaries[name], raw[name] = summary, score
        rows[name] = {
            "std": float(scores[name].std(ddof=1)),
            "max": float(largest.mean()), "max_se": float(largest.std(ddof=1) / math.sqrt(n_queries)),
            "grad": summary.mean, "grad_se": summary.mean_se, "grad_median": summary.median,
            "grad_q10": summary.quantile(0.1)[0], "grad_q90": summary.quantile(0.9)[0],
            "grad_frac": summary.fraction_below, "grad_frac_se": summary.fraction_se,
            "score_mean": score.mean, "score_mean_se": score.mean_se, "score_median": score.median,
        }
    where = "index.md, section index-example"
    require(rows["none"]["max"] > 0.9, where, "without scaling the largest weight averages above 0.9 (all but one-hot)",
            none_max=rows["none"]["max"])
    require(rows["linear"]["max"] < 1.1 / n_keys, where,
            "divided by d_k, the largest weight is within a tenth of the uniform 1/n",
            linear_max=rows["linear"]["max"], uniform=1 / n_keys)
    require(summaries["none"].quantile(0.5)[2] < 0.01 * summaries["sqrt"].quantile(0.5)[1], where,
            "without scaling the median gain at the logits is below a hundredth of the scaled one",
            none=summaries["none"].median, sqrt=summaries["sqrt"].median)
    require(raw["none"].mean - raw["sqrt"].mean > 3 * math.hypot(raw["none"].mean_se, raw["sqrt"].mean_se), where,
            "without scaling the mean gain at the raw score is larger than with 1/sqrt(d_k)",
            none=(raw["none"].mean, raw["none"].mean_se), sqrt=(raw["sqrt"].mean, raw["sqrt"].mean_se))
    return ExampleNumbers(d_k=int(d_k), n_keys=n_keys, n_queries=n_queries, uniform=1 / n_keys,
                          grad_threshold=logit_threshold, starved_ratio=STARVED_RATIO,
                          score_mean_ratio=raw["none"].mean / raw["sqrt"].mean, **rows)
