r"""Page support for "Depth: rank collapse and the Lipschitz constant" (``docs/depth.md``).

:func:`contraction_section`, :func:`collapse_section` and
:func:`lipschitz_section` take the proofs the page states and the seeded
measurements, check what the prose says of them, and return records whose
fields are the numbers the prose quotes (glued by
:func:`attention_scaling.site.glue_fields`). :func:`contraction_answer` and
:func:`lipschitz_answer` check the two exercises.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attention_scaling.depth import (
    POLICIES,
    LipschitzGrowth,
    RankCollapse,
    collapse_fits,
    contraction_ratios,
    dot_product_self_attention,
    lipschitz_growth_data,
    rank_collapse_data,
)
from attention_scaling.gradients import quantile_interval
from attention_scaling.proofs import Proof
from attention_scaling.site import figures, glue_fields, plots
from attention_scaling.site.checks import require
from attention_scaling.site.statements import statements

__all__ = [
    "CollapseSection",
    "ContractionAnswer",
    "ContractionScale",
    "ContractionSection",
    "LipschitzAnswer",
    "LipschitzSection",
    "PolicyCollapse",
    "collapse_glue",
    "collapse_section",
    "contraction_answer",
    "contraction_section",
    "lipschitz_answer",
    "lipschitz_glue",
    "lipschitz_section",
    "partial_derivative",
]

#: The residual a pure-attention stack is said to have collapsed to.
COLLAPSED = 1e-6


@dataclass(frozen=True)
class ContractionScale:
    r"""One layer's contraction at one scale :math:`c`, over the measured heads.

    Attributes
    ----------
    worst : float
        The largest ratio of a head's measured contraction to its proved factor (at most 1).
    ratio : float
        The median measured contraction of a column's spread by one layer.
    factor : float
        The median proved factor :math:`1 - e^{-\delta}`.
    """

    worst: float
    ratio: float
    factor: float


@dataclass(frozen=True)
class ContractionSection:
    r"""What the page states of one layer's contraction: the theorem's steps and the measured heads.

    Attributes
    ----------
    steps : dict of str to int
        The steps of the proof of ``thm-attention-contraction``, by kind.
    heads : int
        Random heads measured at each scale.
    sqrt, linear : ContractionScale
        At :math:`c = 1/\sqrt{d}` and :math:`c = 1/d`.
    """

    steps: dict[str, int]
    heads: int
    sqrt: ContractionScale
    linear: ContractionScale


def contraction_section(proof: Proof, ratios: tuple[np.ndarray, np.ndarray],
                        ratios_linear: tuple[np.ndarray, np.ndarray]) -> ContractionSection:
    r"""Check and collect the numbers of one layer's contraction, in the rank-collapse section.

    Parameters
    ----------
    proof : Proof
        ``attention_contraction()``.
    ratios, ratios_linear : tuple of numpy.ndarray
        :func:`~attention_scaling.depth.contraction_ratios` at :math:`c = 1/\sqrt{d}` and :math:`c = 1/d`.

    Raises
    ------
    PageCheckError
        If a measured one-layer contraction exceeds the proved factor.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.proofs import attention_contraction
    >>> from attention_scaling.depth import contraction_ratios
    >>> from attention_scaling.site.depth import contraction_section
    >>> rng = np.random.default_rng(0)
    >>> section = contraction_section(attention_contraction(), contraction_ratios(rng, n_heads=8),
    ...                               contraction_ratios(rng, n_heads=8, scale=1 / 64))
    >>> section.heads, section.sqrt.worst <= 1
    (8, True)
    """
    where = "depth.md, section depth-rank-collapse"
    scales = {}
    for name, (ratio, factor) in (("sqrt", ratios), ("linear", ratios_linear)):
        worst = float(np.max(ratio / factor))
        require(worst <= 1.0, where, "one layer shrinks every column's spread by at most 1 - e^(-delta)", worst=worst)
        scales[name] = ContractionScale(worst, float(np.median(ratio)), float(np.median(factor)))
    return ContractionSection(steps=proof.counts(), heads=int(ratios_linear[0].size), **scales)


@dataclass(frozen=True)
class PolicyCollapse:
    r"""A stack's residual under one scaling policy: how fast it collapses without skips, and where it ends with them.

    Attributes
    ----------
    reach : int
        The first depth at which the median pure-attention residual is below ``COLLAPSED``.
    layer1 : float
        The median pure-attention residual after one layer.
    base, points, rms_exp, rms_double : float, int, float, float
        The fits of the pure-attention median (:class:`~attention_scaling.depth.CollapseFit`):
        the doubly exponential base, the layers fitted, and the RMS errors of
        the exponential and the doubly exponential fit.
    skip_rms_exp, skip_rms_double : float
        The RMS errors of the two fits with skip connections.
    skip_last, skip_last_low, skip_last_high : float
        With skip connections, the median residual at the last depth and its 10 % and 90 % quantiles.
    """

    reach: int
    layer1: float
    base: float
    points: int
    rms_exp: float
    rms_double: float
    skip_rms_exp: float
    skip_rms_double: float
    skip_last: float
    skip_last_low: float
    skip_last_high: float


@dataclass(frozen=True)
class CollapseSection:
    r"""What the page states of the stacked layers of ``fig-rank-collapse``.

    Attributes
    ----------
    none, sqrt, linear : PolicyCollapse
        Without scaling, at :math:`c = 1/\sqrt{d_k}` and at :math:`c = 1/d_k`.
    n, d : int
        Tokens and width.
    depth : int
        Layers stacked.
    seeds, seed : int
        Stacks per policy, and the generator's seed.
    threshold : float
        The residual a stack is said to have collapsed to, ``COLLAPSED``.
    """

    none: PolicyCollapse
    sqrt: PolicyCollapse
    linear: PolicyCollapse
    n: int
    d: int
    depth: int
    seeds: int
    seed: int
    threshold: float


def collapse_section(data: RankCollapse) -> CollapseSection:
    r"""Check and collect the numbers of the stacked layers, in the rank-collapse section.

    Parameters
    ----------
    data : RankCollapse
        From :func:`~attention_scaling.depth.rank_collapse_data`.

    Raises
    ------
    PageCheckError
        If a pure-attention median does not reach 1e-6 within the depth, or
        the scales do not collapse in the order :math:`1/d_k` first, then
        :math:`1/\sqrt{d_k}`, then none (the prose: the smaller the scale, the
        faster); if for pure attention the doubly exponential fit is not the
        better one, or with skip connections the exponential fit is not; or
        if with skips a median ends below 1e-6.

    Examples
    --------
    >>> from attention_scaling.depth import rank_collapse_data
    >>> from attention_scaling.site.depth import collapse_section
    >>> section = collapse_section(rank_collapse_data())
    >>> section.linear.reach, section.none.reach
    (3, 7)
    """
    where = "depth.md, section depth-rank-collapse"
    policies = {}
    for policy in POLICIES:
        median = data.quantiles(policy, False)[1]
        below = np.flatnonzero(median < COLLAPSED)
        require(below.size > 0, where, f"pure attention with policy {policy} collapses within the depth",
                last=float(median[-1]))
        pure, skip = collapse_fits(median), collapse_fits(data.quantiles(policy, True)[1])
        require(pure.doubly_exponential, where, "for pure attention the doubly exponential fit is the better one",
                policy=policy, fit=pure)
        require(not skip.doubly_exponential, where, "with skip connections the exponential fit is the better one",
                policy=policy, fit=skip)
        skip_last = data.quantiles(policy, True)[:, -1]
        require(skip_last[1] > COLLAPSED, where, "with skip connections the residual stays above 1e-6",
                policy=policy, last=skip_last.tolist())
        policies[policy] = PolicyCollapse(
            reach=int(data.depth[below[0]]), layer1=float(median[1]), base=pure.base, points=pure.points,
            rms_exp=pure.rms_exponential, rms_double=pure.rms_double,
            skip_rms_exp=skip.rms_exponential, skip_rms_double=skip.rms_double,
            skip_last=float(skip_last[1]), skip_last_low=float(skip_last[0]), skip_last_high=float(skip_last[2]),
        )
    reach = {policy: collapse.reach for policy, collapse in policies.items()}
    require(reach["linear"] <= reach["sqrt"] <= reach["none"], where,
            "the smaller the scale, the faster pure attention collapses", reach=reach)
    return CollapseSection(**policies, n=data.n_tokens, d=data.d, depth=int(data.depth[-1]), seeds=data.n_seeds,
                           seed=data.seed, threshold=COLLAPSED)


@dataclass(frozen=True)
class LipschitzSection:
    r"""What the page states of ``fig-lipschitz-growth``: the theorem's steps and the measured norms.

    Attributes
    ----------
    steps : dict of str to int
        The steps of the proof of ``thm-dot-product-not-lipschitz``, by kind.
    n, d : int
        Tokens and width of :math:`X_0`.
    seeds, seed : int
        Inputs drawn, and the generator's seed.
    points : int
        Scales :math:`t` measured.
    t_min, t_max : float
        The smallest and the largest :math:`t`.
    slope : float
        The log-log slope of the median dot-product norm over the last four scales.
    dot_first, dot_last : float
        The median dot-product norm with a token at the origin, at the first and the last :math:`t`.
    dot_last_low, dot_last_high : float
        The 95 % distribution-free interval of ``dot_last``.
    bound_last : float
        The median lower bound :math:`1/n + t^2\lambda_{\max}/\sqrt{d}` at the last :math:`t`.
    l2_max, l2_last : float
        The largest L2 norm measured, and its median at the last :math:`t`.
    generic_peak, generic_peak_t, generic_last : float
        Without a token at the origin: the peak of the median dot-product
        norm, the :math:`t` of the peak, and the median at the last :math:`t`.
    """

    steps: dict[str, int]
    n: int
    d: int
    seeds: int
    seed: int
    points: int
    t_min: float
    t_max: float
    slope: float
    dot_first: float
    dot_last: float
    dot_last_low: float
    dot_last_high: float
    bound_last: float
    l2_max: float
    l2_last: float
    generic_peak: float
    generic_peak_t: float
    generic_last: float


def lipschitz_section(proof: Proof, data: LipschitzGrowth) -> LipschitzSection:
    r"""Check and collect the numbers of the Lipschitz section.

    Raises
    ------
    PageCheckError
        If a measured dot-product norm with a token at the origin lies below the
        lower bound :math:`1/n + t^2\lambda_{\max}/\sqrt{d}` (relative
        tolerance 1e-6, the finite differences' error); if its median does not
        grow at least a hundredfold, with a log-log slope over the last four
        scales between 1.8 and 2.2 (the prose: like :math:`t^2`); if an L2 norm
        exceeds 3; or if the generic dot-product median at the largest scale is
        not below half its peak (the prose: it rises, then falls).

    Examples
    --------
    >>> from attention_scaling.proofs import dot_product_not_lipschitz
    >>> from attention_scaling.depth import lipschitz_growth_data
    >>> from attention_scaling.site.depth import lipschitz_section
    >>> section = lipschitz_section(dot_product_not_lipschitz(), lipschitz_growth_data())
    >>> round(section.slope, 2)
    1.93
    """
    where = "depth.md, section depth-lipschitz"
    require(bool(np.all(data.dot_origin >= data.bound * (1 - 1e-6))), where,
            "the measured norm is at least the lower bound 1/n + t^2 lambda_max / sqrt(d)")
    median = np.median(data.dot_origin, axis=0)
    slope = float(np.polyfit(np.log(data.t[-4:]), np.log(median[-4:]), 1)[0])
    require(median[-1] >= 100 * median[0] and 1.8 <= slope <= 2.2, where,
            "the dot-product norm grows like t^2", first=float(median[0]), last=float(median[-1]), slope=slope)
    l2_max = float(np.max(data.l2_origin))
    require(l2_max <= 3.0, where, "the L2 norm stays below 3 at every point measured", largest=l2_max)
    generic = np.median(data.dot_generic, axis=0)
    require(generic[-1] < 0.5 * generic.max(), where, "without a token at the origin the norm rises, then falls",
            generic=generic.tolist())
    last, last_low, last_high = quantile_interval(data.dot_origin[:, -1], 0.5)
    return LipschitzSection(
        steps=proof.counts(), n=data.n_tokens, d=data.d, seeds=data.n_seeds, seed=data.seed, points=int(data.t.size),
        t_min=float(data.t[0]), t_max=float(data.t[-1]), slope=slope,
        dot_first=float(median[0]), dot_last=last, dot_last_low=last_low, dot_last_high=last_high,
        bound_last=float(np.median(data.bound[:, -1])), l2_max=l2_max,
        l2_last=float(np.median(data.l2_origin[:, -1])), generic_peak=float(generic.max()),
        generic_peak_t=float(data.t[int(np.argmax(generic))]), generic_last=float(generic[-1]),
    )


@dataclass(frozen=True)
class ContractionAnswer:
    r"""Exercise ``ex-contraction-layers``: the factor :math:`1 - e^{-\delta}` and the layers it takes to reach a target.

    Attributes
    ----------
    delta : float
        :math:`\delta`.
    factor : float
        :math:`1 - e^{-\delta}`.
    target : float
        The residual to reach.
    layers : int
        The least :math:`L` with ``factor**L <= target``.
    """

    delta: float
    factor: float
    target: float
    layers: int


def contraction_answer(factor: float, layers: int, delta: float = 2.0, target: float = 1e-3) -> ContractionAnswer:
    r"""Check the exercise ``ex-contraction-layers``: the factor :math:`1 - e^{-\delta}` and the layers to reach ``target``.

    Raises
    ------
    PageCheckError
        If ``factor`` is not :math:`1 - e^{-\delta}` or ``layers`` is not the
        least :math:`L` with ``factor**L <= target``.

    Examples
    --------
    >>> import math
    >>> from attention_scaling.site.depth import contraction_answer
    >>> contraction_answer(1 - math.exp(-2), 48).layers
    48
    """
    where = "depth.md, exercise ex-contraction-layers"
    exact = 1 - math.exp(-delta)
    require(abs(factor - exact) <= 1e-12, where, "the factor is 1 - e^(-delta)", factor=factor, exact=exact)
    require(factor**layers <= target < factor ** (layers - 1), where, "the number of layers is the least that reaches "
            "the target", layers=layers)
    return ContractionAnswer(delta=delta, factor=factor, target=target, layers=layers)


def partial_derivative(t: float, step: float = 1e-6) -> float:
    r""":math:`\partial f_1/\partial x_1` of dot-product self-attention at :math:`X = (0, t)^\top` (:math:`d = 1`), by central differences.

    Examples
    --------
    >>> from attention_scaling.site.depth import partial_derivative
    >>> round(partial_derivative(2.0), 6)
    1.5
    """
    up = dot_product_self_attention(np.array([[step], [t]]))[0, 0]
    down = dot_product_self_attention(np.array([[-step], [t]]))[0, 0]
    return float((up - down) / (2 * step))


@dataclass(frozen=True)
class LipschitzAnswer:
    r"""Exercise ``ex-lipschitz-threshold``: the :math:`t` at which :math:`\partial f_1/\partial x_1` reaches a target.

    Attributes
    ----------
    target : float
        The value the derivative is to reach.
    t : float
        :math:`2\sqrt{\text{target} - 1/2}`.
    measured : float
        The derivative there, by central differences (:func:`partial_derivative`).
    """

    target: float
    t: float
    measured: float


def lipschitz_answer(t: float, target: float = 100.0) -> LipschitzAnswer:
    r"""Check the exercise ``ex-lipschitz-threshold``: the :math:`t` at which :math:`\partial f_1/\partial x_1` reaches ``target``.

    Raises
    ------
    PageCheckError
        If ``t`` is not :math:`2\sqrt{\text{target} - 1/2}`, or the finite-difference
        derivative there differs from ``target`` by more than 1e-4.

    Examples
    --------
    >>> import math
    >>> from attention_scaling.site.depth import lipschitz_answer
    >>> round(lipschitz_answer(2 * math.sqrt(99.5)).t, 3)
    19.95
    """
    where = "depth.md, exercise ex-lipschitz-threshold"
    exact = 2 * math.sqrt(target - 0.5)
    require(abs(t - exact) <= 1e-9 * exact, where, "t = 2 sqrt(target - 1/2)", t=t, exact=exact)
    measured = partial_derivative(t)
    require(abs(measured - target) <= 1e-4 * target, where, "the finite difference agrees", measured=measured)
    return LipschitzAnswer(target=target, t=t, measured=measured)


def collapse_glue(proof: Proof, seed: int = 2103) -> dict[str, object]:
    r"""Everything the rank-collapse section glues: its numbers, the theorem's statement and ``fig-rank-collapse``.

    Runs :func:`~attention_scaling.depth.rank_collapse_data` and
    :func:`~attention_scaling.depth.contraction_ratios` (64 heads at each of
    :math:`c = 1/\sqrt{d}` and :math:`1/d`, from a generator seeded with
    ``seed``), checks them with :func:`contraction_section` and
    :func:`collapse_section`, and draws the figure.

    Examples
    --------
    >>> from attention_scaling.proofs import attention_contraction
    >>> from attention_scaling.site.depth import collapse_glue
    >>> values = collapse_glue(attention_contraction())
    >>> "fig-rank-collapse" in values and "thm-attention-contraction" in values
    True
    """
    data = rank_collapse_data()
    rng = np.random.default_rng(seed)
    ratios = contraction_ratios(rng), contraction_ratios(rng, scale=1 / 64)
    values = glue_fields(contraction_section(proof, *ratios), "contraction")
    values |= glue_fields(collapse_section(data), "collapse")
    values.update(statements(proof), contraction_seed=seed)
    figure, axes = figures.new_figure("rank-collapse")
    plots.draw_rank_collapse(axes, data)
    values["fig-rank-collapse"] = figure
    return values


def lipschitz_glue(proof: Proof) -> dict[str, object]:
    r"""Everything the Lipschitz section glues: its numbers, the theorem's statement and ``fig-lipschitz-growth``.

    Examples
    --------
    >>> from attention_scaling.proofs import dot_product_not_lipschitz
    >>> from attention_scaling.site.depth import lipschitz_glue
    >>> sorted(key for key in lipschitz_glue(dot_product_not_lipschitz()) if not key.startswith("lip"))
    ['fig-lipschitz-growth', 'thm-dot-product-not-lipschitz']
    """
    data = lipschitz_growth_data()
    values = glue_fields(lipschitz_section(proof, data), "lip")
    values.update(statements(proof))
    figure, axes = figures.new_figure("lipschitz-growth")
    plots.draw_lipschitz_growth(axes, data)
    values["fig-lipschitz-growth"] = figure
    return values
