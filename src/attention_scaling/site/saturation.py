r"""Page support for "Saturation and vanishing gradients" (``docs/saturation.md``).

One function per section. Each takes what the page's visible cells computed,
checks what the prose says of it, and returns a record whose
:meth:`glue_values` are the numbers the prose quotes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attention_scaling.simulate import mean_estimate
from attention_scaling.regimes import RegimeCurves, SaturationCurve
from attention_scaling.site.checks import require

__all__ = [
    "MarginTable",
    "OnsetNumbers",
    "SpreadNumbers",
    "WideHeadNumbers",
    "margin_table",
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
    weight : tuple of float
        The preferred weight :math:`p_1` at each.
    slope : tuple of float
        :math:`\partial p_1 / \partial x_1` at each.
    """

    margins: tuple[float, ...]
    weight: tuple[float, ...]
    slope: tuple[float, ...]

    def glue_values(self) -> dict[str, object]:
        """The page's glue keys (``onset_weight_<margin>``, ``onset_slope_<margin>``) and their values."""
        values: dict[str, object] = {}
        for margin, weight, slope in zip(self.margins, self.weight, self.slope):
            values[f"onset_weight_{margin:g}"] = weight
            values[f"onset_slope_{margin:g}"] = slope
        return values


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
    >>> round(table.glue_values()["onset_weight_10"], 4)
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
    return MarginTable(margins=tuple(margins.tolist()), weight=tuple(float(w) for w in weight),
                       slope=tuple(float(s) for s in slope))


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

    def glue_values(self) -> dict[str, object]:
        """The page's glue keys and their values."""
        return {"onset_margin": self.margin, "onset_n": self.n}


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

    def glue_values(self) -> dict[str, object]:
        """The page's glue keys and their values."""
        return {"saturation_d_k": self.d_k, "saturation_std": self.std, "gap_fraction": self.gap_fraction,
                "gap_fraction_se": self.gap_fraction_se}


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

    def glue_values(self) -> dict[str, object]:
        """The page's glue keys and their values."""
        return {"spread_n_keys": self.n_keys, "spread_at_1": self.at_1, "spread_at_8": self.at_8,
                "spread_peak": self.peak, "spread_peak_at": self.peak_at, "spread_at_0": self.at_0}


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
