"""The figures of the page "Bounded logits" (``docs/bounded-logits.md``)."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.axes import Axes

from attention_scaling.bounded_logits import CappedGradients, LargestWeights
from attention_scaling.site.plots.style import OKABE_ITO, POLICY_STYLE, _panels, _record, style

__all__ = ["draw_capped_gradients", "draw_dispersion"]

#: How each cap is drawn: colour, marker, line style (so the series differ without colour too).
_CAP_STYLE = {
    math.inf: {"color": OKABE_ITO["vermillion"], "marker": "o", "linestyle": "-", "label": "no scale, no cap"},
    50.0: {"color": OKABE_ITO["orange"], "marker": "D", "linestyle": "-.", "label": "no scale, cap 50"},
    10.0: {"color": OKABE_ITO["purple"], "marker": "v", "linestyle": ":", "label": "no scale, cap 10"},
}


def draw_capped_gradients(ax: Axes, data: CappedGradients) -> list:
    r"""Median :math:`\lVert \partial p/\partial s \rVert_F` per row against :math:`d_k`, for each cap, with the scaled reference.

    Each cap is a median line with its 95 % distribution-free interval as a
    band; the dashed line is the median with the scale :math:`1/\sqrt{d_k}`
    and no cap.

    Examples
    --------
    >>> import math
    >>> from matplotlib.figure import Figure
    >>> from attention_scaling.bounded_logits import capped_gradients
    >>> from attention_scaling.site.plots import draw_capped_gradients
    >>> ax = Figure().subplots()
    >>> len(draw_capped_gradients(ax, capped_gradients((16, 256), (math.inf, 50.0), n_rows=100)))
    6
    """
    (ax,) = _panels(ax, 1, "capped-gradients")
    data = _record(data, CappedGradients, "capped-gradients")
    artists = []
    with style():
        for row, cap in enumerate(data.caps):
            line_style = _CAP_STYLE.get(cap, {"color": OKABE_ITO["black"], "label": f"no scale, cap {cap:g}"})
            (line,) = ax.plot(data.d_values, data.medians[row, :, 0], markersize=4, **line_style)
            band = ax.fill_between(data.d_values, data.medians[row, :, 1], data.medians[row, :, 2],
                                   color=line_style["color"], alpha=0.2, linewidth=0)
            artists += [line, band]
        (reference,) = ax.plot(data.d_values, data.reference, markersize=4,
                               **dict(POLICY_STYLE["sqrt"], label=r"$1/\sqrt{d_k}$, no cap"))
        ax.set(xscale="log", yscale="log", xlabel=r"$d_k$",
               ylabel=r"median $\Vert \partial p / \partial s \Vert_F$ per row")
        ax.set_title(f"{data.n_keys} keys, {data.n_rows} rows per $d_k$", fontsize=10)
        artists += [reference, ax.legend(loc="lower left", fontsize=8)]
    return artists


def draw_dispersion(ax: Axes, data: LargestWeights) -> list:
    r"""The median largest weight of bounded logits against :math:`n`, between the bounds :math:`e^{\pm\delta}/n`.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from attention_scaling.bounded_logits import largest_weights
    >>> from attention_scaling.site.plots import draw_dispersion
    >>> ax = Figure().subplots()
    >>> len(draw_dispersion(ax, largest_weights((16, 256), 2.0, n_rows=10)))
    5
    """
    (ax,) = _panels(ax, 1, "dispersion")
    data = _record(data, LargestWeights, "dispersion")
    n = np.array(data.lengths, dtype=float)
    with style():
        (measured,) = ax.plot(n, data.largest[:, 0], color=OKABE_ITO["blue"], marker="s", markersize=4,
                              label=rf"median largest weight, logits uniform on $[0, {data.spread:g}]$")
        band = ax.fill_between(n, data.largest[:, 1], data.largest[:, 2], color=OKABE_ITO["blue"], alpha=0.2,
                               linewidth=0)
        (upper,) = ax.plot(n, data.bounds[:, 1], color=OKABE_ITO["black"], linestyle="--",
                           label=rf"$e^{{\delta}}/n$, $\delta = {data.spread:g}$")
        (lower,) = ax.plot(n, data.bounds[:, 0], color=OKABE_ITO["black"], linestyle=":",
                           label=rf"$e^{{-\delta}}/n$")
        ax.set(xscale="log", yscale="log", xlabel="number of keys $n$", ylabel="weight")
        ax.set_title(f"{data.n_rows} rows per $n$", fontsize=10)
        legend = ax.legend(loc="lower left", fontsize=8)
    return [measured, band, upper, lower, legend]
