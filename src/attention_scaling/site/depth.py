r"""Page support for "Depth: rank collapse and the Lipschitz constant" (``docs/depth.md``).

:func:`collapse_section` and :func:`lipschitz_section` take the proofs the
page states and the seeded measurements, check what the prose says of them,
and return a :class:`DepthNumbers` whose :meth:`~DepthNumbers.glue_values`
are the numbers the prose quotes. :func:`contraction_answer` and
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
from attention_scaling.site import figures, plots
from attention_scaling.site.checks import require
from attention_scaling.site.statements import statements

__all__ = [
    "DepthNumbers",
    "collapse_glue",
    "collapse_section",
    "contraction_answer",
    "lipschitz_answer",
    "lipschitz_glue",
    "lipschitz_section",
    "partial_derivative",
]

#: The residual a pure-attention stack is said to have collapsed to.
COLLAPSED = 1e-6


@dataclass(frozen=True)
class DepthNumbers:
    """Glue keys and values of one section (or exercise) of the depth page."""

    values: dict

    def glue_values(self) -> dict[str, object]:
        """The page's glue keys and their values."""
        return dict(self.values)


def _counts(prefix: str, proof: Proof) -> dict[str, int]:
    return {f"{prefix}_{kind}": count for kind, count in proof.counts().items()}


def collapse_section(proof: Proof, data: RankCollapse, ratios: tuple[np.ndarray, np.ndarray],
                     ratios_linear: tuple[np.ndarray, np.ndarray]) -> DepthNumbers:
    r"""Check and collect the numbers of the rank-collapse section.

    Parameters
    ----------
    proof : Proof
        ``attention_contraction()``.
    data : RankCollapse
        From :func:`~attention_scaling.depth.rank_collapse_data`.
    ratios, ratios_linear : tuple of numpy.ndarray
        :func:`~attention_scaling.depth.contraction_ratios` at :math:`c = 1/\sqrt{d}` and :math:`c = 1/d`.

    Raises
    ------
    PageCheckError
        If a measured one-layer contraction exceeds the proved factor; if a
        pure-attention median does not reach 1e-6 within the depth, or the
        scales do not collapse in the order :math:`1/d_k` first, then
        :math:`1/\sqrt{d_k}`, then none (the prose: the smaller the scale, the
        faster); if for pure attention the doubly exponential fit is not the
        better one, or with skip connections the exponential fit is not; or
        if with skips a median ends below 1e-6.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.proofs import attention_contraction
    >>> from attention_scaling.depth import contraction_ratios, rank_collapse_data
    >>> from attention_scaling.site.depth import collapse_section
    >>> rng = np.random.default_rng(0)
    >>> numbers = collapse_section(attention_contraction(), rank_collapse_data(),
    ...                            contraction_ratios(rng, n_heads=8), contraction_ratios(rng, n_heads=8, scale=1 / 64))
    >>> numbers.glue_values()["collapse_linear_reach"], numbers.glue_values()["collapse_none_reach"]
    (3, 7)
    """
    where = "depth.md, section depth-rank-collapse"
    values: dict[str, object] = _counts("contraction", proof)
    for name, (ratio, factor) in (("sqrt", ratios), ("linear", ratios_linear)):
        worst = float(np.max(ratio / factor))
        require(worst <= 1.0, where, "one layer shrinks every column's spread by at most 1 - e^(-delta)", worst=worst)
        values.update({f"contraction_{name}_worst": worst, f"contraction_{name}_ratio": float(np.median(ratio)),
                       f"contraction_{name}_factor": float(np.median(factor)), "contraction_heads": int(ratio.size)})
    reach = {}
    for policy in POLICIES:
        median = data.quantiles(policy, False)[1]
        below = np.flatnonzero(median < COLLAPSED)
        require(below.size > 0, where, f"pure attention with policy {policy} collapses within the depth",
                last=float(median[-1]))
        reach[policy] = int(data.depth[below[0]])
        pure, skip = collapse_fits(median), collapse_fits(data.quantiles(policy, True)[1])
        require(pure.doubly_exponential, where, "for pure attention the doubly exponential fit is the better one",
                policy=policy, fit=pure)
        require(not skip.doubly_exponential, where, "with skip connections the exponential fit is the better one",
                policy=policy, fit=skip)
        skip_last = data.quantiles(policy, True)[:, -1]
        require(skip_last[1] > COLLAPSED, where, "with skip connections the residual stays above 1e-6",
                policy=policy, last=skip_last.tolist())
        values.update({
            f"collapse_{policy}_reach": reach[policy], f"collapse_{policy}_layer1": float(median[1]),
            f"collapse_{policy}_base": pure.base, f"collapse_{policy}_points": pure.points,
            f"collapse_{policy}_rms_exp": pure.rms_exponential, f"collapse_{policy}_rms_double": pure.rms_double,
            f"collapse_{policy}_skip_rms_exp": skip.rms_exponential,
            f"collapse_{policy}_skip_rms_double": skip.rms_double,
            f"collapse_{policy}_skip_last": float(skip_last[1]), f"collapse_{policy}_skip_last_low": float(skip_last[0]),
            f"collapse_{policy}_skip_last_high": float(skip_last[2]),
        })
    require(reach["linear"] <= reach["sqrt"] <= reach["none"], where,
            "the smaller the scale, the faster pure attention collapses", reach=reach)
    values.update(collapse_n=data.n_tokens, collapse_d=data.d, collapse_depth=int(data.depth[-1]),
                  collapse_seeds=data.n_seeds, collapse_seed=data.seed, collapse_threshold=COLLAPSED)
    return DepthNumbers(values)


def lipschitz_section(proof: Proof, data: LipschitzGrowth) -> DepthNumbers:
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
    >>> numbers = lipschitz_section(dot_product_not_lipschitz(), lipschitz_growth_data())
    >>> round(numbers.glue_values()["lip_slope"], 2)
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
    values: dict[str, object] = _counts("lipschitz", proof)
    values.update(
        lip_n=data.n_tokens, lip_d=data.d, lip_seeds=data.n_seeds, lip_seed=data.seed, lip_points=int(data.t.size),
        lip_t_min=float(data.t[0]), lip_t_max=float(data.t[-1]), lip_slope=slope,
        lip_dot_first=float(median[0]), lip_dot_last=last, lip_dot_last_low=last_low, lip_dot_last_high=last_high,
        lip_bound_last=float(np.median(data.bound[:, -1])), lip_l2_max=l2_max,
        lip_l2_last=float(np.median(data.l2_origin[:, -1])), lip_generic_peak=float(generic.max()),
        lip_generic_peak_t=float(data.t[int(np.argmax(generic))]), lip_generic_last=float(generic[-1]),
    )
    return DepthNumbers(values)


def contraction_answer(factor: float, layers: int, delta: float = 2.0, target: float = 1e-3) -> DepthNumbers:
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
    >>> contraction_answer(1 - math.exp(-2), 48).glue_values()["ex_contraction_layers"]
    48
    """
    where = "depth.md, exercise ex-contraction-layers"
    exact = 1 - math.exp(-delta)
    require(abs(factor - exact) <= 1e-12, where, "the factor is 1 - e^(-delta)", factor=factor, exact=exact)
    require(factor**layers <= target < factor ** (layers - 1), where, "the number of layers is the least that reaches "
            "the target", layers=layers)
    return DepthNumbers({"ex_contraction_delta": delta, "ex_contraction_factor": factor,
                         "ex_contraction_target": target, "ex_contraction_layers": layers})


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


def lipschitz_answer(t: float, target: float = 100.0) -> DepthNumbers:
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
    >>> round(lipschitz_answer(2 * math.sqrt(99.5)).glue_values()["ex_lipschitz_t"], 3)
    19.95
    """
    where = "depth.md, exercise ex-lipschitz-threshold"
    exact = 2 * math.sqrt(target - 0.5)
    require(abs(t - exact) <= 1e-9 * exact, where, "t = 2 sqrt(target - 1/2)", t=t, exact=exact)
    measured = partial_derivative(t)
    require(abs(measured - target) <= 1e-4 * target, where, "the finite difference agrees", measured=measured)
    return DepthNumbers({"ex_lipschitz_target": target, "ex_lipschitz_t": t, "ex_lipschitz_measured": measured})


def collapse_glue(proof: Proof, seed: int = 2103) -> dict[str, object]:
    r"""Everything the rank-collapse section glues: its numbers, the theorem's statement and ``fig-rank-collapse``.

    Runs :func:`~attention_scaling.depth.rank_collapse_data` and
    :func:`~attention_scaling.depth.contraction_ratios` (64 heads at each of
    :math:`c = 1/\sqrt{d}` and :math:`1/d`, from a generator seeded with
    ``seed``), checks them with :func:`collapse_section`, and draws the figure.

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
    values = collapse_section(proof, data, *ratios).glue_values()
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
    values = lipschitz_section(proof, data).glue_values()
    values.update(statements(proof))
    figure, axes = figures.new_figure("lipschitz-growth")
    plots.draw_lipschitz_growth(axes, data)
    values["fig-lipschitz-growth"] = figure
    return values
