"""The figures of the page "Depth: rank collapse and the Lipschitz constant" (``docs/depth.md``)."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes

from attention_scaling.depth import POLICIES, LipschitzGrowth, RankCollapse
from attention_scaling.site.plots.style import OKABE_ITO, POLICY_STYLE, _panels, _record, style

__all__ = ["draw_lipschitz_growth", "draw_rank_collapse"]


def draw_rank_collapse(axes, data: RankCollapse) -> list:
    r"""The relative residual against depth, per scaling: pure attention (left) and with skip connections (right).

    Each policy is a median line over the seeds with a band from the 10 % to
    the 90 % quantile, on a logarithmic axis.

    Parameters
    ----------
    axes : sequence of two matplotlib.axes.Axes
    data : attention_scaling.depth.RankCollapse

    Returns
    -------
    list
        The lines, bands and legends.

    Raises
    ------
    ValueError
        If ``axes`` is not two Axes.
    TypeError
        If ``data`` is not a ``RankCollapse``.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from attention_scaling.depth import rank_collapse_data
    >>> from attention_scaling.site.plots import draw_rank_collapse
    >>> axes = Figure().subplots(1, 2)
    >>> len(draw_rank_collapse(axes, rank_collapse_data(depth=3, n_tokens=8, d=16, n_seeds=4)))
    14
    """
    panels = _panels(axes, 2, "rank-collapse")
    data = _record(data, RankCollapse, "rank-collapse")
    artists = []
    with style():
        for ax, skip in zip(panels, (False, True)):
            for policy in POLICIES:
                low, median, high = data.quantiles(policy, skip)
                line_style = dict(POLICY_STYLE[policy], markersize=3)
                (line,) = ax.plot(data.depth, median, **line_style)
                band = ax.fill_between(data.depth, low, high, color=line_style["color"], alpha=0.2, linewidth=0)
                artists += [line, band]
            ax.set(yscale="log", xlabel="depth (layers)", ylim=(1e-17, 2))
            ax.set_title("pure attention" if not skip else r"with skip connections $X + \mathrm{attn}(X)$",
                         fontsize=10)
            artists.append(ax.legend(loc="lower left" if skip else "upper right", fontsize=8))
        panels[0].set_ylabel(r"$\Vert X - \mathbf{1}\bar{x}^\top \Vert_F \,/\, \Vert X \Vert_F$")
    return artists


def draw_lipschitz_growth(ax: Axes, data: LipschitzGrowth) -> list:
    r"""The Jacobian's spectral norm at :math:`tX_0` against :math:`t`: dot-product against L2 self-attention.

    Medians over the seeds with 10–90 % bands on log-log axes; the dashed
    line is the median of the lower bound :math:`1/n + t^2\lambda_{\max}/\sqrt{d}`.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from attention_scaling.depth import lipschitz_growth_data
    >>> from attention_scaling.site.plots import draw_lipschitz_growth
    >>> ax = Figure().subplots()
    >>> len(draw_lipschitz_growth(ax, lipschitz_growth_data(t=(1.0, 4.0), n_seeds=3)))
    8
    """
    (ax,) = _panels(ax, 1, "lipschitz-growth")
    data = _record(data, LipschitzGrowth, "lipschitz-growth")
    series = (
        (data.dot_origin, {"color": OKABE_ITO["vermillion"], "marker": "o", "linestyle": "-",
                           "label": "dot product, first token at 0"}),
        (data.dot_generic, {"color": OKABE_ITO["orange"], "marker": "^", "linestyle": ":",
                            "label": "dot product, no token at 0"}),
        (data.l2_origin, {"color": OKABE_ITO["blue"], "marker": "s", "linestyle": "--",
                          "label": "L2, first token at 0"}),
    )
    artists = []
    with style():
        for values, line_style in series:
            low, median, high = np.quantile(values, (0.1, 0.5, 0.9), axis=0)
            (line,) = ax.plot(data.t, median, markersize=4, **line_style)
            artists += [line, ax.fill_between(data.t, low, high, color=line_style["color"], alpha=0.2, linewidth=0)]
        (bound,) = ax.plot(data.t, np.median(data.bound, axis=0), color=OKABE_ITO["black"], linestyle="-.",
                           linewidth=1, label=r"lower bound $1/n + t^2 \lambda_{\max}(C_0)/\sqrt{d}$")
        ax.set(xscale="log", yscale="log", xlabel=r"scale $t$ of the input $tX_0$",
               ylabel=r"$\Vert J_f(tX_0) \Vert_2$")
        ax.set_title(f"$n = {data.n_tokens}$ tokens, $d = {data.d}$, {data.n_seeds} seeds", fontsize=10)
        artists += [bound, ax.legend(loc="upper left", fontsize=8)]
    return artists
