r"""Page support for "Saturation and vanishing gradients" (``docs/saturation.md``).

One function per section. Each takes what the page's visible cells computed,
checks what the prose says of it, and returns a record whose fields are the
numbers the prose quotes, glued by :func:`~attention_scaling.site.glue_fields`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attention_scaling.gradients import GRADIENT_SCALINGS, STARVED_RATIO
from attention_scaling.proofs import Proof
from attention_scaling.saturation import (
    GradientDistribution, MeanJacobian, SaturatedRows, gap_density_at_zero, gap_distribution, gap_threshold,
)
from attention_scaling.simulate import mean_estimate
from attention_scaling.regimes import RegimeCurves, SaturationCurve
from attention_scaling.site.checks import require
from attention_scaling.site.tables import markdown_table

__all__ = [
    "DistributionNumbers",
    "GapNumbers",
    "MarginTable",
    "MeanLimitNumbers",
    "OnsetNumbers",
    "SpreadNumbers",
    "WideHeadNumbers",
    "distribution_numbers",
    "distribution_table",
    "gap_numbers",
    "margin_table",
    "mean_limit_numbers",
    "onset_numbers",
    "spread_numbers",
    "wide_head_numbers",
]

_PAGE = "saturation.md"


def _where(section: str) -> str:
    return f"{_PAGE}, section {section}"


# A tenth of the largest slope p(1 - p) = 1/4: where the page says saturation begins.
_SATURATED_SLOPE = 0.25 / 10


@dataclass(frozen=True)
class MarginTable:
    r"""Softmax of :math:`[x, 0, \dots, 0]` at a few margins :math:`x`.

    Attributes
    ----------
    margins : tuple of float
        The margins.
    weight, slope : dict of str to float
        The preferred weight :math:`p_1` and :math:`\partial p_1 / \partial x_1` at each margin,
        keyed by the margin as text (``"10"`` for 10.0).
    """

    margins: tuple[float, ...]
    weight: dict[str, float]
    slope: dict[str, float]


def margin_table(margins, weight, slope) -> MarginTable:
    r"""The numbers of the table in "Where saturation begins".

    Parameters
    ----------
    margins : array_like, shape (m,)
        Increasing margins, the first at most 0.
    weight : array_like, shape (m,)
        The preferred weight :math:`p_1` of softmax of :math:`[x, 0, \dots, 0]` at each margin.
    slope : array_like, shape (m,)
        The Jacobian's diagonal entry :math:`\partial p_1 / \partial x_1` at each margin.

    Returns
    -------
    MarginTable

    Raises
    ------
    ValueError
        If the three do not have the same length.
    PageCheckError
        If a slope differs from :math:`p_1(1 - p_1)` (the softmax Jacobian theorem),
        if the largest slope is not where :math:`p_1` is nearest :math:`\tfrac12`,
        or if at the largest margin :math:`p_1` is not above 0.999 with a slope below
        :math:`10^{-3}` (the prose: "nearly all the weight", "barely moves anything").

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling import softmax, softmax_jacobian
    >>> from attention_scaling.site.saturation import margin_table
    >>> margins = np.array([0.0, 1.0, 10.0])
    >>> scores = np.zeros((3, 4))
    >>> scores[:, 0] = margins
    >>> weights = softmax(scores)
    >>> table = margin_table(margins, weights[:, 0], softmax_jacobian(weights)[:, 0, 0])
    >>> round(table.weight["10"], 4)
    0.9999
    """
    margins, weight, slope = (np.asarray(values, dtype=np.float64) for values in (margins, weight, slope))
    if not margins.ndim == 1 or margins.shape != weight.shape or margins.shape != slope.shape:
        raise ValueError(f"margins, weight and slope must be 1-D of one length; got shapes "
                         f"{margins.shape}, {weight.shape}, {slope.shape}")
    require(np.allclose(slope, weight * (1 - weight), rtol=0, atol=1e-12), _where("saturation-onset"),
            "each slope equals p_1 (1 - p_1)", slope=slope.tolist(), weight=weight.tolist())
    require(np.argmax(slope) == np.argmin(np.abs(weight - 0.5)), _where("saturation-onset"),
            "the slope peaks where p_1 passes through 1/2", slope=slope.tolist(), weight=weight.tolist())
    require(weight[-1] > 0.999 and slope[-1] < 1e-3, _where("saturation-onset"),
            "at the largest margin the preferred key holds nearly all the weight and barely responds",
            margin=float(margins[-1]), weight=float(weight[-1]), slope=float(slope[-1]))
    keys = [f"{margin:g}" for margin in margins.tolist()]
    return MarginTable(margins=tuple(margins.tolist()), weight={key: float(w) for key, w in zip(keys, weight)},
                       slope={key: float(s) for key, s in zip(keys, slope)})


@dataclass(frozen=True)
class OnsetNumbers:
    r"""Where softmax of :math:`[x, 0, \dots, 0]` saturates.

    Attributes
    ----------
    margin : float
        The margin past which the slope stays below a tenth of :math:`\tfrac14`.
    n : int
        The number of scores.
    """

    margin: float
    n: int


def onset_numbers(onset: SaturationCurve) -> OnsetNumbers:
    r"""The numbers of the figure in "Where saturation begins".

    Parameters
    ----------
    onset : attention_scaling.regimes.SaturationCurve
        The figure's data.

    Returns
    -------
    OnsetNumbers

    Raises
    ------
    PageCheckError
        If the slope on the grid rises back to a tenth of its peak past the
        marked margin, or is below it anywhere between :math:`p_1 = \tfrac12`
        and that margin.

    Examples
    --------
    >>> from attention_scaling.regimes import saturation_onset_data
    >>> from attention_scaling.site.saturation import onset_numbers
    >>> numbers = onset_numbers(saturation_onset_data())
    >>> round(numbers.margin, 2), numbers.n
    (4.74, 4)
    """
    past = onset.x > onset.onset
    before = (onset.x < onset.onset) & (onset.weight > 0.5)
    require(np.all(onset.slope[past] < _SATURATED_SLOPE), _where("saturation-onset"),
            "past the marked margin the slope stays below a tenth of its peak",
            margin=onset.onset, largest_slope_past=float(onset.slope[past].max(initial=0.0)))
    require(np.all(onset.slope[before] >= _SATURATED_SLOPE), _where("saturation-onset"),
            "before the marked margin the slope has not yet fallen to a tenth of its peak",
            margin=onset.onset, smallest_slope_before=float(onset.slope[before].min(initial=1.0)))
    return OnsetNumbers(margin=float(onset.onset), n=int(onset.n_scores))


@dataclass(frozen=True)
class WideHeadNumbers:
    r"""How often two unscaled scores of a wide head differ by more than 10.

    Attributes
    ----------
    d_k : int
        The head dimension.
    std : float
        The standard deviation :math:`\sqrt{d_k}` of the unscaled scores.
    gap_fraction, gap_fraction_se : float
        The fraction of queries whose two scores differ by more than 10, and its standard error.
    """

    d_k: int
    std: float
    gap_fraction: float
    gap_fraction_se: float


def wide_head_numbers(d_k: int, wide_gap) -> WideHeadNumbers:
    r"""The numbers of the section "How wide heads reach saturation".

    Parameters
    ----------
    d_k : int
        The head dimension of the page's sample.
    wide_gap : array_like of bool
        Per query, whether its two scores differ by more than 10.

    Returns
    -------
    WideHeadNumbers

    Raises
    ------
    PageCheckError
        If at most half of the queries have such a gap: the prose calls these
        margins typical at this width.

    Examples
    --------
    >>> from attention_scaling.site.saturation import wide_head_numbers
    >>> wide_head_numbers(512, [True, True, False, True]).gap_fraction
    0.75
    """
    gap = mean_estimate(np.asarray(wide_gap, dtype=bool))
    require(gap.value > 0.5, _where("saturation-dk"), "a gap of more than 10 between two scores is typical at this d_k",
            d_k=d_k, gap_fraction=gap.value)
    return WideHeadNumbers(d_k=int(d_k), std=float(np.sqrt(d_k)), gap_fraction=gap.value,
                           gap_fraction_se=gap.standard_error)


@dataclass(frozen=True)
class SpreadNumbers:
    """The softmax Jacobian's mean norm at a few spreads of the scores.

    Attributes
    ----------
    n_keys : int
        Scores per row.
    at_0, at_1, at_8 : float
        The mean norm at spreads 0, 1 and 8.
    peak, peak_at : float
        The largest mean norm on the grid and the spread where it is.
    """

    n_keys: int
    at_0: float
    at_1: float
    at_8: float
    peak: float
    peak_at: float


def spread_numbers(spread: RegimeCurves) -> SpreadNumbers:
    """The numbers of the section "Gradient against the spread of the scores".

    Parameters
    ----------
    spread : attention_scaling.regimes.RegimeCurves
        The figure's data; its ``d_k`` field holds the spreads, which must include 0, 1 and 8.

    Returns
    -------
    SpreadNumbers

    Raises
    ------
    ValueError
        If the spreads do not include 0, 1 and 8.
    PageCheckError
        Unless, as the prose says, the norm at spread 1 is within 10 % of the
        peak, it keeps falling from spread 8 on, and it is lower at spread 0
        than at spread 1 (the curve is not monotone).

    Examples
    --------
    >>> from attention_scaling.regimes import jacobian_vs_spread_data
    >>> from attention_scaling.site.saturation import spread_numbers
    >>> numbers = spread_numbers(jacobian_vs_spread_data(n_samples=500))
    >>> numbers.at_0 < numbers.at_1 and numbers.at_8 < numbers.at_1
    True
    """
    s, norm = spread.d_k, spread.jacobian_norm
    at = {}
    for target in (0.0, 1.0, 8.0):
        index = int(np.argmin(np.abs(s - target)))
        if not math.isclose(float(s[index]), target, abs_tol=1e-9):
            raise ValueError(f"spread must include the spreads 0, 1 and 8; nearest to {target:g} is {s[index]!r}")
        at[target] = float(norm[index])
    peak = int(np.argmax(norm))
    numbers = SpreadNumbers(n_keys=int(spread.n_keys), at_0=at[0.0], at_1=at[1.0], at_8=at[8.0],
                            peak=float(norm[peak]), peak_at=float(s[peak]))
    require(numbers.at_1 >= 0.9 * numbers.peak, _where("saturation-spread"),
            "at spread 1 the norm is close to the largest on the curve",
            at_1=numbers.at_1, peak=numbers.peak)
    require(np.all(np.diff(norm[s >= 8.0]) < 0), _where("saturation-spread"), "from spread 8 on the norm keeps falling",
            norms=norm[s >= 8.0].tolist())
    require(numbers.at_0 < numbers.at_1, _where("saturation-spread"),
            "with all scores equal the norm is lower than at spread 1",
            at_0=numbers.at_0, at_1=numbers.at_1)
    return numbers


# -- The gradient, row by row (saturation-distribution) ---------------------------------------

# How each quantity of attention_scaling.gradients is named in tables and glue keys.
_QUANTITY_NAMES = {
    "logit": ("gain at the logits", r"$\lVert J(cs)\rVert_F$"),
    "score": ("gain at the raw score", r"$c\,\lVert J(cs)\rVert_F$"),
    "w_q": ("gradient of $W_Q$", r"$\lVert \partial L/\partial W_Q\rVert_F$"),
    "w_k": ("gradient of $W_K$", r"$\lVert \partial L/\partial W_K\rVert_F$"),
}
_SCALING_NAMES = {"none": "none", "sqrt": r"$1/\sqrt{d_k}$", "linear": "$1/d_k$"}


def _number(value: float) -> str:
    return f"{value:.3g}"


def distribution_table(data: GradientDistribution, d_k: int = 512) -> str:
    r"""The section's table: every quantity under every scaling at one :math:`d_k`, as Markdown.

    Parameters
    ----------
    data : attention_scaling.saturation.GradientDistribution
        The figure's data.
    d_k : int, default 512
        A head dimension of the sweep.

    Returns
    -------
    str

    Raises
    ------
    TypeError
        If ``data`` is not a ``GradientDistribution``.
    ValueError
        If ``d_k`` is not in the sweep.

    Examples
    --------
    >>> from attention_scaling.saturation import gradient_distribution
    >>> from attention_scaling.site.saturation import distribution_table
    >>> print(distribution_table(gradient_distribution([512], n_queries=60)).splitlines()[0])
    | quantity | scaling | median [95 % interval] | 10 % | 90 % | threshold | fraction below [95 %] | mean ± SE |
    """
    if not isinstance(data, GradientDistribution):
        raise TypeError(f"data must be a GradientDistribution; got {type(data).__name__}")
    rows = []
    for quantity, (words, symbol) in _QUANTITY_NAMES.items():
        for scaling in GRADIENT_SCALINGS:
            summary = data.summary(quantity, scaling, d_k)
            median, low, high = summary.quantile(0.5)
            rows.append([
                f"{words}, {symbol}", _SCALING_NAMES[scaling],
                f"{_number(median)} [{_number(low)}, {_number(high)}]",
                _number(summary.quantile(0.1)[0]), _number(summary.quantile(0.9)[0]),
                _number(summary.threshold), f"{summary.fraction_below:.3f} [{summary.fraction_low:.3f}, {summary.fraction_high:.3f}]",
                f"{_number(summary.mean)} ± {_number(summary.mean_se)}",
            ])
    return markdown_table(["quantity", "scaling", "median [95 % interval]", "10 %", "90 %", "threshold",
                           "fraction below [95 %]", "mean ± SE"], rows,
                          align=["left", "left", "right", "right", "right", "right", "right", "right"])


@dataclass(frozen=True)
class DistributionNumbers:
    r"""The numbers the section "The gradient, row by row" quotes.

    Attributes
    ----------
    n_queries, n_keys, d_model, seed, weight_draws, rows_per_draw : int
        The sweep's settings: ``rows_per_draw`` rows share each of its ``weight_draws`` draws of weights.
    ratio : float
        A row is starved below ``ratio`` times the median gain under :math:`1/\sqrt{d_k}`.
    d_k, widest, smallest, sizes : int
        The head dimension quoted; the widest and the smallest of the sweep, and how many it has.
    logit, score, w_q, w_k : dict
        Per quantity, ``{scaling: {statistic: value}}`` at ``d_k``: the ``median`` and its interval
        (``median_low``, ``median_high``), ``q10``, ``q90``, the fraction ``frac`` below ``threshold`` and
        its Wilson interval (``frac_low``, ``frac_high``), ``mean`` and ``mean_se``; without scaling also,
        at the widest :math:`d_k`, ``frac_widest`` (``frac_widest_low``, ``frac_widest_high``) and ``median_widest``.
    score_mean_ratio, logit_median_ratio : float
        Unscaled over :math:`1/\sqrt{d_k}`, the mean gain at the raw score; the inverse, the median at the logits.
    scaled_mean_smallest, scaled_mean_widest : float
        :math:`\sqrt{d_k}` times the mean unscaled gain at the logits, at the smallest and the widest :math:`d_k`.
    """

    n_queries: int
    n_keys: int
    d_model: int
    seed: int
    weight_draws: int
    rows_per_draw: int
    ratio: float
    d_k: int
    widest: int
    smallest: int
    sizes: int
    logit: dict
    score: dict
    w_q: dict
    w_k: dict
    score_mean_ratio: float
    logit_median_ratio: float
    scaled_mean_smallest: float
    scaled_mean_widest: float


def distribution_numbers(data: GradientDistribution, d_k: int = 512) -> DistributionNumbers:
    r"""The numbers of the section "The gradient, row by row", checked against what the prose says.

    Parameters
    ----------
    data : attention_scaling.saturation.GradientDistribution
        The figure's data; its sweep must include ``d_k`` and 16.
    d_k : int, default 512
        The head dimension the prose quotes (the first page's example).

    Returns
    -------
    DistributionNumbers

    Raises
    ------
    TypeError
        If ``data`` is not a ``GradientDistribution``.
    ValueError
        If the sweep does not include ``d_k`` and 16.
    PageCheckError
        Unless, as the prose says, at ``d_k`` without scaling: the median gain
        at the logits (its whole interval) is below a hundredth of the one
        with :math:`1/\sqrt{d_k}` (the median collapses) while the 90 %
        quantile is within a factor 2 of it (a tenth of the rows still get
        about as much); the mean gain at the raw score and the mean
        :math:`W_Q` and :math:`W_K` gradients are larger than with
        :math:`1/\sqrt{d_k}` by more than three standard errors of the
        difference; the median :math:`W_Q` gradient is smaller; and the
        fraction of starved rows grows from ``d_k`` to the widest
        :math:`d_k`, where it is above one half for every quantity.

    Examples
    --------
    >>> from attention_scaling.saturation import gradient_distribution
    >>> from attention_scaling.site.saturation import distribution_numbers
    >>> numbers = distribution_numbers(gradient_distribution([16, 512, 4096], n_queries=1000))
    >>> numbers.logit["none"]["median"] < 1e-3 < numbers.logit["sqrt"]["median"]
    True
    """
    if not isinstance(data, GradientDistribution):
        raise TypeError(f"data must be a GradientDistribution; got {type(data).__name__}")
    if d_k not in data.d_k or 16 not in data.d_k:
        raise ValueError(f"data must include d_k = {d_k} and d_k = 16; got {data.d_k}")
    widest = max(data.d_k)
    quantities: dict[str, dict] = {}
    for quantity in _QUANTITY_NAMES:
        quantities[quantity] = {}
        for scaling in GRADIENT_SCALINGS:
            summary = data.summary(quantity, scaling, d_k)
            median, low, high = summary.quantile(0.5)
            quantities[quantity][scaling] = {
                "median": median, "median_low": low, "median_high": high,
                "q10": summary.quantile(0.1)[0], "q90": summary.quantile(0.9)[0],
                "frac": summary.fraction_below, "frac_low": summary.fraction_low,
                "frac_high": summary.fraction_high, "mean": summary.mean,
                "mean_se": summary.mean_se, "threshold": summary.threshold,
            }
        wide = data.summary(quantity, "none", widest)
        quantities[quantity]["none"].update(frac_widest=wide.fraction_below, frac_widest_low=wide.fraction_low,
                                            frac_widest_high=wide.fraction_high, median_widest=wide.median)
    none, sqrt = (data.summary("logit", scaling, d_k) for scaling in ("none", "sqrt"))
    raw_none, raw_sqrt = (data.summary("score", scaling, d_k) for scaling in ("none", "sqrt"))
    where = _where("saturation-distribution")
    require(none.quantile(0.5)[2] < 0.01 * sqrt.quantile(0.5)[1], where,
            "without scaling the median gain at the logits is below a hundredth of the one with 1/sqrt(d_k)",
            d_k=d_k, none_median_high=none.quantile(0.5)[2], sqrt_median_low=sqrt.quantile(0.5)[1])
    require(none.quantile(0.9)[0] > 0.5 * sqrt.quantile(0.9)[0], where,
            "without scaling the 90 % quantile of the gain at the logits is within a factor 2 of the scaled one",
            d_k=d_k, none_q90=none.quantile(0.9)[0], sqrt_q90=sqrt.quantile(0.9)[0])
    for quantity in ("score", "w_q", "w_k"):
        a, b = data.summary(quantity, "none", d_k), data.summary(quantity, "sqrt", d_k)
        require(a.mean - b.mean > 3 * math.hypot(a.mean_se, b.mean_se), where,
                f"without scaling the mean {quantity} gradient is larger than with 1/sqrt(d_k)",
                d_k=d_k, none=(a.mean, a.mean_se), sqrt=(b.mean, b.mean_se))
    require(data.summary("w_q", "none", d_k).quantile(0.5)[2] < data.summary("w_q", "sqrt", d_k).quantile(0.5)[1],
            where, "without scaling the median W_Q gradient is smaller than with 1/sqrt(d_k)", d_k=d_k)
    for quantity in _QUANTITY_NAMES:
        at, wide = data.summary(quantity, "none", d_k), data.summary(quantity, "none", widest)
        require(wide.fraction_low > max(0.5, at.fraction_high), where,
                f"the fraction of starved rows ({quantity}) grows to more than one half at the widest d_k",
                at=(d_k, at.fraction_below), widest=(widest, wide.fraction_below))
    return DistributionNumbers(
        n_queries=data.n_queries, n_keys=data.n_keys, d_model=data.d_model, seed=data.seed,
        weight_draws=data.n_weight_draws, rows_per_draw=data.n_queries // data.n_weight_draws, ratio=STARVED_RATIO,
        d_k=d_k, widest=widest, smallest=min(data.d_k), sizes=len(data.d_k), **quantities,
        score_mean_ratio=raw_none.mean / raw_sqrt.mean, logit_median_ratio=sqrt.median / none.median,
        # sqrt(d_k) E||J||: the mean of the unscaled gain decays only like d_k^(-1/2).
        scaled_mean_smallest=math.sqrt(min(data.d_k)) * data.summary("logit", "none", min(data.d_k)).mean,
        scaled_mean_widest=math.sqrt(widest) * data.summary("logit", "none", widest).mean)


# -- The section on saturated rows: the gap between the top two scores ----------

_GAP_WHERE = "saturation.md, section saturation-gap"


@dataclass(frozen=True)
class GapNumbers:
    r"""The numbers of the section on saturated rows (:func:`gap_numbers`).

    Attributes
    ----------
    jacobian, probability : dict of str to int
        The steps of each theorem, by kind (:meth:`~attention_scaling.proofs.Proof.counts`).
    n, rows, seed : int
        The keys per row, the rows per :math:`d_k` and the seed of the sweep.
    t, ell, f0, f0_two : float
        The threshold :math:`t` on the norm and its :math:`\ell`; :math:`f_G(0)` for ``n`` keys and for two.
    mc : dict
        The Monte Carlo check of :math:`F_G`: the gap ``g``, the estimate ``share`` of :math:`P(G \le g)`
        and its ``se``, the ``integral``, and ``n``, the rows drawn.
    slope : float
        The log-log slope of the measured fraction against :math:`d_k`.
    scaled_mean : dict of str to float
        The ``low`` and ``high`` ends of :math:`\sqrt{d_k}` times the mean norm over the sweep.
    median_last : float
        The median norm at the largest :math:`d_k`.
    dk, fraction, bound, asymptote : dict of str to float
        At the smallest (``first``) and the largest (``last``) :math:`d_k`: it, the measured fraction
        with its interval (``first_low``, ``first_high``, ...), the bound and the asymptote.
    """

    jacobian: dict[str, int]
    probability: dict[str, int]
    n: int
    rows: int
    seed: int
    t: float
    ell: float
    f0: float
    f0_two: float
    mc: dict
    slope: float
    scaled_mean: dict[str, float]
    median_last: float
    dk: dict[str, int]
    fraction: dict[str, float]
    bound: dict[str, float]
    asymptote: dict[str, float]


def gap_numbers(jacobian: Proof, probability: Proof, mc_gap: float, mc_share: float, mc_se: float,
                data: SaturatedRows, mc_samples: int = 20_000) -> GapNumbers:
    r"""Check and collect the numbers of "Saturated rows: the gap between the top two scores".

    Parameters
    ----------
    jacobian, probability : Proof
        ``saturated_jacobian()`` and ``gap_probability()``.
    mc_gap, mc_share, mc_se : float
        A gap :math:`g`, and a seeded Monte Carlo estimate of :math:`P(G \le g)` for
        ``data.n_keys`` standard normals with its standard error.
    data : SaturatedRows
        The sweep over :math:`d_k` of :func:`~attention_scaling.saturation.saturated_rows_data`.
    mc_samples : int, default 20 000
        How many rows the Monte Carlo estimate drew.

    Returns
    -------
    GapNumbers

    Raises
    ------
    PageCheckError
        If the Monte Carlo estimate is more than 4 standard errors from the
        integral; if a row breaks :math:`\lVert J \rVert_F \le 4(n-1)e^{-\Delta}`;
        if a measured fraction's 95 % interval lies above the bound; if the
        fraction does not fall as :math:`d_k` grows, with a log-log slope over
        the sweep between -0.65 and -0.35 (the prose: "like
        :math:`1/\sqrt{d_k}`"); or if the median norm at the largest
        :math:`d_k` is not below a thousandth of the mean there, while :math:`\sqrt{d_k}` times
        the mean stays between 0.8 and 2 (the prose: the mean decays only like
        :math:`d_k^{-1/2}` while the median collapses).

    Examples
    --------
    >>> from attention_scaling.proofs import gap_probability, saturated_jacobian
    >>> from attention_scaling.saturation import gap_monte_carlo, saturated_rows_data
    >>> from attention_scaling.site.saturation import gap_numbers
    >>> (share,), (se,) = gap_monte_carlo([0.5], 8, seed=3)
    >>> numbers = gap_numbers(saturated_jacobian(), gap_probability(), 0.5, share, se, saturated_rows_data())
    >>> round(numbers.f0, 3)
    1.424
    """
    n, t = data.n_keys, data.t
    integral = float(gap_distribution(mc_gap, n))
    require(abs(mc_share - integral) <= 4 * mc_se, _GAP_WHERE, "the Monte Carlo estimate of F_G agrees with the integral",
            estimate=mc_share, standard_error=mc_se, integral=integral)
    require(data.within_bound, _GAP_WHERE, "every measured row satisfies ||J||_F <= 4(n - 1) e^(-Delta)")
    require(bool(np.all(data.fraction_low <= data.bound)), _GAP_WHERE, "no measured fraction lies above the bound",
            low=data.fraction_low.tolist(), bound=data.bound.tolist())
    slope = float(np.polyfit(np.log(data.d_k), np.log(data.fraction), 1)[0])
    require(bool(np.all(np.diff(data.fraction) < 0)) and -0.65 <= slope <= -0.35, _GAP_WHERE,
            "the fraction of rows passing a gradient falls like 1/sqrt(d_k)", fraction=data.fraction.tolist(),
            slope=slope)
    scaled_mean = np.sqrt(data.d_k) * data.mean_norm
    collapsed = data.median_norm[-1] < 1e-3 * data.mean_norm[-1]
    require(bool(np.all((0.8 <= scaled_mean) & (scaled_mean <= 2.0))) and collapsed, _GAP_WHERE,
            "sqrt(d_k) times the mean norm stays of order 1 while the median collapses",
            scaled_mean=scaled_mean.tolist(), median=data.median_norm.tolist())
    ends = ((0, "first"), (-1, "last"))
    fraction = {}
    for position, tag in ends:
        fraction[tag] = float(data.fraction[position])
        fraction[f"{tag}_low"] = float(data.fraction_low[position])
        fraction[f"{tag}_high"] = float(data.fraction_high[position])
    return GapNumbers(
        jacobian=jacobian.counts(), probability=probability.counts(), n=n, rows=data.n_rows, seed=data.seed, t=t,
        ell=gap_threshold(n, t), f0=gap_density_at_zero(n), f0_two=1 / math.sqrt(math.pi),
        mc={"g": float(mc_gap), "share": float(mc_share), "se": float(mc_se), "integral": integral, "n": int(mc_samples)},
        slope=slope, scaled_mean={"low": float(scaled_mean.min()), "high": float(scaled_mean.max())},
        median_last=float(data.median_norm[-1]), dk={tag: int(data.d_k[position]) for position, tag in ends},
        fraction=fraction, bound={tag: float(data.bound[position]) for position, tag in ends},
        asymptote={tag: float(data.asymptote[position]) for position, tag in ends})


# -- The mean Jacobian's exact rate (section saturation-gap) ---------------------------------------


@dataclass(frozen=True)
class MeanLimitNumbers:
    r"""The numbers of :prf:ref:`thm-mean-jacobian-limit` and its measurement (:func:`mean_limit_numbers`).

    Attributes
    ----------
    steps : dict of str to int
        The proof's steps, by kind (:meth:`~attention_scaling.proofs.Proof.counts`).
    rows, seed, z : int
        The rows per :math:`d_k` and the seed of the measurement; the standard errors of the check.
    limit, standard, standard_se, ratio_limit : float
        :math:`f_G(0)`; :math:`\operatorname{E}\lVert J(Z) \rVert_F` and its standard error; the limit of
        the ratio of mean gains at the raw score.
    ratio_d_k : int
        The head dimension at which the distribution sweep measured that ratio.
    ratio_measured, ratio_measured_se : float
        The ratio it measured, and its standard error (delta method).
    shortfall_first : float
        How far below :math:`f_G(0)`, relatively, the smallest :math:`d_k` is.
    dk, scaled, scaled_se : dict
        At the smallest, middle and largest :math:`d_k` (``first``, ``mid``, ``last``): it, and
        :math:`\sqrt{d_k}` times the mean norm with its standard error.
    """

    steps: dict[str, int]
    rows: int
    seed: int
    z: int
    limit: float
    standard: float
    standard_se: float
    ratio_limit: float
    ratio_d_k: int
    ratio_measured: float
    ratio_measured_se: float
    shortfall_first: float
    dk: dict[str, int]
    scaled: dict[str, float]
    scaled_se: dict[str, float]


def mean_limit_numbers(proof: Proof, data: MeanJacobian, gains: GradientDistribution,
                       d_k: int = 512) -> MeanLimitNumbers:
    r"""Check and summarise :prf:ref:`thm-mean-jacobian-limit` against its measurement.

    Parameters
    ----------
    proof : attention_scaling.proofs.Proof
        ``mean_jacobian_limit()``.
    data : attention_scaling.saturation.MeanJacobian
        From :func:`~attention_scaling.saturation.mean_jacobian_data`, with at least two :math:`d_k`.
    gains : attention_scaling.saturation.GradientDistribution
        The distribution sweep of the same page, which includes ``d_k``.
    d_k : int, default 512
        Where the measured ratio of mean gains is quoted.

    Returns
    -------
    MeanLimitNumbers

    Raises
    ------
    TypeError, ValueError
        For the wrong proof or records, or a sweep without ``d_k``.
    PageCheckError
        Unless, as the page says, :math:`\sqrt{d_k}` times the mean norm
        lies within 3 standard errors of :math:`f_G(0)` at the largest
        :math:`d_k` and is closer to it there than at the smallest (its
        bias at finite :math:`d_k` is not modelled, so the largest
        :math:`d_k` should be large enough to make it small).

    Examples
    --------
    >>> from attention_scaling.proofs import mean_jacobian_limit
    >>> from attention_scaling.saturation import gradient_distribution, mean_jacobian_data
    >>> from attention_scaling.site.saturation import mean_limit_numbers
    >>> data = mean_jacobian_data((512, 65536), n_rows=400_000)
    >>> numbers = mean_limit_numbers(mean_jacobian_limit(), data, gradient_distribution([512], n_queries=200))
    >>> round(numbers.limit, 3), round(numbers.ratio_limit, 1)
    (1.424, 3.9)
    """
    if not isinstance(proof, Proof) or proof.label != "thm-mean-jacobian-limit":
        raise TypeError("proof must be the Proof of thm-mean-jacobian-limit (mean_jacobian_limit())")
    if not isinstance(data, MeanJacobian) or len(data.d_k) < 2:
        raise TypeError("data must be a MeanJacobian (mean_jacobian_data()) with at least two d_k")
    if not isinstance(gains, GradientDistribution) or d_k not in gains.d_k:
        raise ValueError(f"gains must be a GradientDistribution that includes d_k = {d_k}")
    (first, first_se), (last, last_se) = data.scaled_mean[0], data.scaled_mean[-1]
    z = 3  # standard errors, as the page says
    require(abs(last - data.limit) <= z * last_se and abs(last - data.limit) < abs(first - data.limit), _GAP_WHERE,
            "sqrt(d_k) times the mean Jacobian norm is closer to f_G(0) at the largest d_k than at the smallest, "
            "and within 3 standard errors of it there", measured=data.scaled_mean.tolist(), limit=data.limit)
    none, scaled = (gains.summary("score", scaling, d_k) for scaling in ("none", "sqrt"))
    ratio = none.mean / scaled.mean
    tags = ((0, "first"), (len(data.d_k) // 2, "mid"), (-1, "last"))
    return MeanLimitNumbers(
        steps=proof.counts(), rows=data.n_rows, seed=data.seed, z=z, limit=data.limit, standard=data.standard_mean[0],
        standard_se=data.standard_mean[1], ratio_limit=data.ratio_limit, ratio_d_k=d_k, ratio_measured=ratio,
        ratio_measured_se=ratio * math.hypot(none.mean_se / none.mean, scaled.mean_se / scaled.mean),
        shortfall_first=float(1 - first / data.limit), dk={tag: data.d_k[position] for position, tag in tags},
        scaled={tag: float(data.scaled_mean[position][0]) for position, tag in tags},
        scaled_se={tag: float(data.scaled_mean[position][1]) for position, tag in tags})
