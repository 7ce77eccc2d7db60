r"""Page support for ``docs/correlation.md``: one function per section, each returning a record.

The page computes its sweep, tail and norm growth in visible cells (the
sweep in the figure's cell); the functions here take those results, make the
checks the page states (raising
:class:`~attention_scaling.site.checks.PageCheckError` naming the section
and the check) and return frozen records whose fields are the numbers the
page quotes (glued by :func:`attention_scaling.site.glue_fields`). The
page's two tables are rendered here too, through
:func:`attention_scaling.site.tables.markdown_table`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from attention_scaling.correlation import CorrelatedLogits, NormGrowth, TailCheck, predicted_logit_mean
from attention_scaling.proofs import Proof, d_k as symbolic_d_k
from attention_scaling.proofs.engine import Math
from attention_scaling.site.checks import require
from attention_scaling.site.statements import aligned_display, displays
from attention_scaling.site.tables import markdown_table

__all__ = [
    "ChebyshevTail",
    "CorrelationThresholdAnswer",
    "CorrelatedSweep",
    "GrowthWithoutAlignment",
    "LogitGap",
    "MupScales",
    "SweepPoint",
    "chebyshev_tail",
    "correlated_sweep",
    "correlation_threshold_answer",
    "growth_without_alignment",
    "logit_gap",
    "mup_scales",
    "norm_growth_table",
    "tail_table",
    "aligned_display",
    "displays",
    "theorem_displays",
]

_PAGE = "correlation.md"

# The order of the scales in the page's tables: 1/sqrt(d_k), then 1/d_k.
_SCALES = ("sqrt", "linear")


def _where(section: str) -> str:
    return f"{_PAGE}, section {section}"


# -- Theorem statements ------------------------------------------------------------------

# The page's displayed equations beyond each theorem's statement: glue key -> steps shown.
# A key that is an equation label is pasted under that label.
_EXTRA_DISPLAYS = {
    "thm-correlated-scaling-limits": {"eq-correlated-linear": (3, 4), "eq-correlated-chebyshev": (6, 7, 8)},
    "thm-logit-norm-growth": {"thm-logit-norm-growth-spread": (2, 4), "eq-gain-ratio": (6,)},
}


def theorem_displays(*proofs: Proof) -> dict[str, Math]:
    r"""The glue values of the displayed equations of this page's theorems, each printed from checked steps.

    Parameters
    ----------
    *proofs : Proof
        Proofs the page has just run.

    Returns
    -------
    dict of str to Math
        :func:`displays` with this page's further displays.

    Examples
    --------
    >>> from attention_scaling.proofs import logit_norm_growth
    >>> from attention_scaling.site.correlation import theorem_displays
    >>> sorted(theorem_displays(logit_norm_growth()))
    ['eq-gain-ratio', 'thm-logit-norm-growth', 'thm-logit-norm-growth-spread']
    """
    return displays(proofs, _EXTRA_DISPLAYS)


# -- Tables ---------------------------------------------------------------------------


def tail_table(tail: TailCheck) -> str:
    r"""The observed tail and Chebyshev's bound per :math:`d_k`, as a Markdown table.

    The rows are those of :func:`~attention_scaling.correlation.linear_logit_tail`.

    Parameters
    ----------
    tail : TailCheck

    Returns
    -------
    str

    Raises
    ------
    TypeError
        If ``tail`` is not a :class:`~attention_scaling.correlation.TailCheck`.

    Examples
    --------
    >>> from attention_scaling.correlation import linear_logit_tail
    >>> from attention_scaling.site.correlation import tail_table
    >>> print(tail_table(linear_logit_tail([16], 0.5, 0.1, 100, seed=0)).splitlines()[0])
    | $d_k$ | fraction at least $\varepsilon$ from $\rho$ | Chebyshev bound |
    """
    if not isinstance(tail, TailCheck):
        raise TypeError(f"tail must be a TailCheck; got {type(tail).__name__}")
    cells = [
        [f"{d_k}", f"{fraction:.4f} ± {se:.4f}", f"{bound:.4f}"]
        for d_k, fraction, se, bound in zip(tail.d_k, tail.fraction, tail.fraction_se, tail.bound)
    ]
    return markdown_table(["$d_k$", r"fraction at least $\varepsilon$ from $\rho$", "Chebyshev bound"], cells,
                          align=["right"] * 3)


def norm_growth_table(growth: NormGrowth) -> str:
    """Logit spread and largest weight per gain and scale, as a Markdown table.

    The rows are those of :func:`~attention_scaling.correlation.norm_growth`.

    Parameters
    ----------
    growth : NormGrowth

    Returns
    -------
    str

    Raises
    ------
    TypeError
        If ``growth`` is not a :class:`~attention_scaling.correlation.NormGrowth`.

    Examples
    --------
    >>> from attention_scaling.correlation import norm_growth
    >>> from attention_scaling.site.correlation import norm_growth_table
    >>> print(norm_growth_table(norm_growth([1.0], n_queries=8)).splitlines()[0])
    | gain $g$ | logit s.d., $1/\\sqrt{d_k}$ | logit s.d., $1/d_k$ | largest weight, $1/\\sqrt{d_k}$ | largest weight, $1/d_k$ |
    """
    if not isinstance(growth, NormGrowth):
        raise TypeError(f"growth must be a NormGrowth; got {type(growth).__name__}")
    header = ["gain $g$", r"logit s.d., $1/\sqrt{d_k}$", "logit s.d., $1/d_k$", r"largest weight, $1/\sqrt{d_k}$",
              "largest weight, $1/d_k$"]
    rows = []
    for index, gain in enumerate(growth.gains):
        cells = [f"{gain:.3g}"]
        cells += [f"{growth.logit_std[scale][index]:.3g}" for scale in _SCALES]
        cells += [f"{growth.max_weight[scale][index]:.3f} ± {growth.max_weight_se[scale][index]:.1g}"
                  for scale in _SCALES]
        rows.append(cells)
    return markdown_table(header, rows, align=["right"] * 5)


# -- Section correlation-limits --------------------------------------------------------


@dataclass(frozen=True)
class LogitGap:
    r"""The gap between a correlated and an uncorrelated key under each scale.

    Attributes
    ----------
    rho : float
        The correlation.
    d_k : int
        The head dimension.
    sqrt_gap, linear_gap : float
        The proved mean logit under :math:`1/\sqrt{d_k}` and :math:`1/d_k`.
    """

    rho: float
    d_k: int
    sqrt_gap: float
    linear_gap: float


def logit_gap(rho: float = 0.5, d_k: int = 1024) -> LogitGap:
    r"""The proved mean logit, :math:`\rho\sqrt{d_k}` and :math:`\rho`, at one correlation and width.

    Parameters
    ----------
    rho : float, default 0.5
    d_k : int, default 1024
        The page's example.

    Returns
    -------
    LogitGap

    Examples
    --------
    >>> from attention_scaling.site.correlation import logit_gap
    >>> gap = logit_gap()
    >>> gap.sqrt_gap, gap.linear_gap
    (16.0, 0.5)
    """
    return LogitGap(
        rho=rho,
        d_k=d_k,
        sqrt_gap=float(predicted_logit_mean(rho, d_k, "sqrt")),
        linear_gap=float(predicted_logit_mean(rho, d_k, "linear")),
    )


# -- Section correlation-simulation ----------------------------------------------------


@dataclass(frozen=True)
class SweepPoint:
    r"""The moments of the scaled logit under one scale at the point the prose quotes, against their proved values.

    Attributes
    ----------
    mean, mean_se : float
        The sample mean and its standard error.
    predicted_mean : float
        The proved mean.
    std, std_se : float
        The sample standard deviation and its standard error.
    predicted_std : float
        The proved standard deviation.
    """

    mean: float
    mean_se: float
    predicted_mean: float
    std: float
    std_se: float
    predicted_std: float


@dataclass(frozen=True)
class CorrelatedSweep:
    r"""The seeded sweep of the figure, checked against the proved moments.

    Attributes
    ----------
    logits : attention_scaling.correlation.CorrelatedLogits
        The moments under both scales, as the figure's cell computed them.
    max_mean_z, max_std_z : float
        The largest distance, in standard errors, of a sample mean and of a
        sample standard deviation from its proved value.
    d_min, d_max : int
        The smallest and the largest :math:`d_k` of the sweep.
    points : int
        The number of points :math:`(\rho, d_k)`.
    sqrt, linear : SweepPoint
        The moments under :math:`1/\sqrt{d_k}` and :math:`1/d_k` at
        :math:`\rho = 0.5` and the largest :math:`d_k`.
    """

    logits: CorrelatedLogits
    max_mean_z: float
    max_std_z: float
    d_min: int
    d_max: int
    points: int
    sqrt: SweepPoint
    linear: SweepPoint


def correlated_sweep(sweep: CorrelatedLogits) -> CorrelatedSweep:
    r"""Check every sample mean and spread of the sweep against its proved value.

    Parameters
    ----------
    sweep : attention_scaling.correlation.CorrelatedLogits
        From :func:`~attention_scaling.correlation.correlated_logits_data`
        (the page's figure data); it must include :math:`\rho = 0.5`.

    Returns
    -------
    CorrelatedSweep

    Raises
    ------
    PageCheckError
        If a sample mean or standard deviation, under either scale, lies
        more than 3 standard errors from its proved value, or the sweep has
        no :math:`\rho = 0.5`.

    Examples
    --------
    >>> from attention_scaling.correlation import CorrelatedLogits, correlated_logit_sweep
    >>> from attention_scaling.site.correlation import correlated_sweep
    >>> record = correlated_sweep(CorrelatedLogits(**correlated_logit_sweep([16, 64], [0.0, 0.5], 2000, seed=0)))
    >>> record.points
    4
    """
    where = _where("correlation-simulation")
    for scale, moments in sweep.by_policy().items():
        require(np.all(np.abs(moments.mean_z) <= 3), where,
                "every sample mean lies within 3 standard errors of its proved value",
                scale=scale, mean_z=moments.mean_z.tolist())
        require(np.all(np.abs(moments.std_z) <= 3), where,
                "every sample standard deviation lies within 3 standard errors of its proved value",
                scale=scale, std_z=moments.std_z.tolist())
    linear = sweep.linear
    require(0.5 in linear.rho, where, "the sweep includes rho = 0.5, the point the prose quotes",
            rho=linear.rho.tolist())
    last = (list(linear.rho).index(0.5), -1)

    def point(moments) -> SweepPoint:
        return SweepPoint(float(moments.mean[last]), float(moments.mean_se[last]), float(moments.predicted_mean[last]),
                          float(moments.std[last]), float(moments.std_se[last]), float(moments.predicted_std[last]))

    return CorrelatedSweep(
        logits=sweep,
        # The two scales see the same draws, so their distances are the same; the page quotes 1/d_k's.
        max_mean_z=float(np.abs(linear.mean_z).max()),
        max_std_z=float(np.abs(linear.std_z).max()),
        d_min=int(linear.d_k[0]),
        d_max=int(linear.d_k[-1]),
        points=int(linear.mean.size),
        sqrt=point(sweep.sqrt),
        linear=point(linear),
    )


@dataclass(frozen=True)
class ChebyshevTail:
    r"""The observed tail of :math:`q \cdot k / d_k`, checked against Chebyshev's bound.

    Attributes
    ----------
    check : TailCheck
        As the page computed it.
    table : str
        The tail as a Markdown table (:func:`tail_table`).
    last_fraction, last_bound : float
        The observed fraction and Chebyshev's bound at the largest :math:`d_k`.
    """

    check: TailCheck
    table: str
    last_fraction: float
    last_bound: float


def chebyshev_tail(tail: TailCheck) -> ChebyshevTail:
    r"""Check that the observed tail stays below Chebyshev's bound and shrinks with :math:`d_k`.

    Parameters
    ----------
    tail : TailCheck
        From :func:`~attention_scaling.correlation.linear_logit_tail`.

    Returns
    -------
    ChebyshevTail

    Raises
    ------
    PageCheckError
        If the fraction plus 3 standard errors exceeds the bound at some
        :math:`d_k`, or the fraction does not fall strictly as :math:`d_k`
        grows.

    Examples
    --------
    >>> from attention_scaling.correlation import linear_logit_tail
    >>> from attention_scaling.site.correlation import chebyshev_tail
    >>> record = chebyshev_tail(linear_logit_tail([16, 64, 256], 0.5, 0.1, 2000, seed=0))
    >>> record.check.epsilon
    0.1
    """
    where = _where("correlation-simulation")
    require(np.all(tail.fraction + 3 * tail.fraction_se <= tail.bound), where,
            "the observed tail is below Chebyshev's bound with 3 standard errors to spare",
            fraction=tail.fraction.tolist(), fraction_se=tail.fraction_se.tolist(), bound=tail.bound.tolist())
    require(np.all(np.diff(tail.fraction) < 0), where, "the observed tail shrinks as d_k grows",
            d_k=tail.d_k.tolist(), fraction=tail.fraction.tolist())
    return ChebyshevTail(check=tail, table=tail_table(tail), last_fraction=float(tail.fraction[-1]),
                         last_bound=float(tail.bound[-1]))


# -- Section correlation-mup -----------------------------------------------------------


@dataclass(frozen=True)
class MupScales:
    r"""Where μP's :math:`8/d` meets :math:`1/\sqrt{d}`, and how far apart they are elsewhere.

    Attributes
    ----------
    agree : sympy.Set
        The head dimensions at which the two scales agree.
    ratio_256, ratio_1024 : float
        μP's logit over the standard one, :math:`8/\sqrt{d}`, at 256 and 1024.
    """

    agree: sp.Set
    ratio_256: float
    ratio_1024: float


def mup_scales(agree) -> MupScales:
    r"""Check where the two scales agree, and compute :math:`(8/d)/(1/\sqrt{d})` at two widths.

    Parameters
    ----------
    agree : sympy.Set
        The page's ``solveset`` of :math:`8/d = 1/\sqrt{d}` over :math:`d > 0`.

    Returns
    -------
    MupScales

    Raises
    ------
    PageCheckError
        If ``agree`` is not exactly :math:`\{64\}`.

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.site.correlation import mup_scales
    >>> round(mup_scales(sp.FiniteSet(64)).ratio_256, 6)
    0.5
    """
    require(agree == sp.FiniteSet(64), _where("correlation-mup"),
            "8/d and 1/sqrt(d) agree at d = 64 and nowhere else", agree=agree)

    def ratio(size: int) -> float:
        return float((8 / sp.Integer(size)) / (1 / sp.sqrt(size)))

    return MupScales(agree=agree, ratio_256=ratio(256), ratio_1024=ratio(1024))


# -- Section correlation-norms ---------------------------------------------------------


@dataclass(frozen=True)
class GrowthWithoutAlignment:
    r"""The norm growth of one head, checked against :math:`g^2` growth and the :math:`d_k^{1/4}` shift.

    Attributes
    ----------
    norms : NormGrowth
        As the page computed it.
    shift : int
        Rows of the gain grid by which :math:`1/d_k` lags :math:`1/\sqrt{d_k}`.
    table : str
        The growth as a Markdown table (:func:`norm_growth_table`).
    d_k_fourth_root : float
        :math:`d_k^{1/4}`, the gain by which :math:`1/d_k` lags :math:`1/\sqrt{d_k}`.
    uniform_weight : float
        :math:`1/n`, every weight of a uniform row of ``norms.n_keys`` keys.
    max_gain : float
        The largest gain of the grid.
    linear_first, linear_first_se : float
        Under :math:`1/d_k`, the mean largest weight at the first gain, and its standard error.
    linear_last, linear_last_se : float
        The same at the largest gain.
    """

    norms: NormGrowth
    shift: int
    table: str
    d_k_fourth_root: float
    uniform_weight: float
    max_gain: float
    linear_first: float
    linear_first_se: float
    linear_last: float
    linear_last_se: float


def growth_without_alignment(growth: NormGrowth, *, shift: int = 3) -> GrowthWithoutAlignment:
    r"""Check that the logits grow like :math:`g^2` and that :math:`1/d_k` only delays saturation.

    Parameters
    ----------
    growth : NormGrowth
        From :func:`~attention_scaling.correlation.norm_growth` on the page's
        grid of gains, :math:`1` to :math:`16` in steps of :math:`\sqrt2`.
    shift : int, default 3
        The grid index of :math:`d_k^{1/4}`: :math:`2^{1.5}` at
        :math:`d_k = 64`, three steps of :math:`\sqrt2`.

    Returns
    -------
    GrowthWithoutAlignment

    Raises
    ------
    PageCheckError
        Under either scale: if a logit at gain :math:`g` is not
        :math:`g^2` times its value at gain 1 (relative error :math:`10^{-12}`),
        or the largest weight does not rise strictly with the gain; or if
        gain ``shift`` is not :math:`d_k^{1/4}`, or the largest weights under
        :math:`1/d_k` do not repeat those under :math:`1/\sqrt{d_k}`
        ``shift`` rows later.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.correlation import norm_growth
    >>> from attention_scaling.site.correlation import growth_without_alignment
    >>> record = growth_without_alignment(norm_growth(2 ** (np.arange(5) / 2), n_queries=64))
    >>> record.max_gain
    4.0
    """
    where = _where("correlation-norms")
    gains = growth.gains
    for scale in _SCALES:
        spread = growth.logit_std[scale]
        require(growth.rescaling_error[scale].max() < 1e-12, where,
                "every logit is g^2 times its value at gain 1, up to rounding",
                scale=scale, rescaling_error=growth.rescaling_error[scale].tolist())
        require(np.allclose(spread / spread[0], gains**2, rtol=1e-12), where,
                "the spread of the logits grows like g^2", scale=scale, ratio=(spread / spread[0]).tolist())
        require(np.all(np.diff(growth.max_weight[scale]) > 0), where,
                "attention sharpens as the gain grows", scale=scale, max_weight=growth.max_weight[scale].tolist())
    require(shift < gains.size and np.isclose(growth.d_k**0.25, gains[shift]), where,
            "gain number `shift` of the grid is d_k^(1/4)", shift=shift, d_k=growth.d_k, gains=gains.tolist())
    by_d_k, by_root = growth.max_weight["linear"], growth.max_weight["sqrt"]
    require(np.allclose(by_d_k[shift:], by_root[:-shift], rtol=1e-9), where,
            "the largest weights under 1/d_k repeat those under 1/sqrt(d_k) `shift` rows later",
            shift=shift, linear=by_d_k.tolist(), sqrt=by_root.tolist())
    return GrowthWithoutAlignment(
        norms=growth,
        shift=shift,
        table=norm_growth_table(growth),
        d_k_fourth_root=float(growth.d_k**0.25),
        uniform_weight=1 / growth.n_keys,
        max_gain=float(gains[-1]),
        linear_first=float(by_d_k[0]),
        linear_first_se=float(growth.max_weight_se["linear"][0]),
        linear_last=float(by_d_k[-1]),
        linear_last_se=float(growth.max_weight_se["linear"][-1]),
    )


@dataclass(frozen=True)
class CorrelationThresholdAnswer:
    r"""Exercise ``ex-correlation-threshold``: the correlation at which the mean of :math:`q \cdot k` is one standard deviation.

    Attributes
    ----------
    d_k : int
        The width evaluated.
    threshold : float
        :math:`1/\sqrt{d_k - 1}` there.
    """

    d_k: int
    threshold: float


def correlation_threshold_answer(roots, threshold: float, d_k: int) -> CorrelationThresholdAnswer:
    r"""Check the roots :math:`\rho = \pm 1/\sqrt{d_k - 1}` and the positive one at ``d_k``.

    Parameters
    ----------
    roots : list of sympy.Expr
        What ``sympy.solve`` returned for :math:`\rho` in
        :math:`(\rho d_k)^2 = d_k(1 + \rho^2)`, with the proofs' symbol :math:`d_k`.
    threshold : float
        The positive root at ``d_k``.
    d_k : int
        The width.

    Returns
    -------
    CorrelationThresholdAnswer

    Raises
    ------
    PageCheckError
        If the roots are not :math:`\pm 1/\sqrt{d_k - 1}`, or ``threshold``
        is not the positive one at ``d_k``.

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs import d_k
    >>> from attention_scaling.site.correlation import correlation_threshold_answer
    >>> roots = [-1 / sp.sqrt(d_k - 1), 1 / sp.sqrt(d_k - 1)]
    >>> round(correlation_threshold_answer(roots, 1023**-0.5, 1024).threshold, 4)
    0.0313
    """
    where = "correlation.md, exercise ex-correlation-threshold"
    root = 1 / sp.sqrt(symbolic_d_k - 1)
    require(len(roots) == 2 and set(roots) == {root, -root}, where, "the roots are rho = +-1/sqrt(d_k - 1)", roots=roots)
    require(math.isclose(threshold, 1 / math.sqrt(d_k - 1), rel_tol=1e-12), where,
            "the positive root at this d_k", threshold=threshold, d_k=d_k)
    return CorrelationThresholdAnswer(int(d_k), float(threshold))
