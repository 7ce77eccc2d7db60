"""The figure of the section "Saturated rows: the gap between the top two scores" (``docs/saturation.md``)."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes

from attention_scaling.site.plots.style import OKABE_ITO, _panels, _record, style
from attention_scaling.saturation import SaturatedRows

__all__ = ["draw_saturated_rows"]


def draw_saturated_rows(ax: Axes, data: SaturatedRows) -> list:
    r"""The fraction of unscaled rows with :math:`\lVert J \rVert_F \ge t` against :math:`d_k`, beside the bound.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The one panel (log-log axes).
    data : attention_scaling.saturation.SaturatedRows
        From :func:`~attention_scaling.saturation.saturated_rows_data`.

    Returns
    -------
    list
        The measured points with their intervals, the bound, the asymptote and the legend.

    Raises
    ------
    ValueError
        If ``ax`` is not one Axes.
    TypeError
        If ``data`` is not a ``SaturatedRows``.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from attention_scaling.saturation import saturated_rows_data
    >>> from attention_scaling.site.plots import draw_saturated_rows
    >>> ax = Figure().subplots()
    >>> len(draw_saturated_rows(ax, saturated_rows_data((16, 64), n_rows=100)))
    4
    >>> ax.get_xscale(), ax.get_yscale()
    ('log', 'log')
    """
    (ax,) = _panels(ax, 1, "saturated-rows")
    data = _record(data, SaturatedRows, "saturated-rows")
    with style():
        errors = np.vstack([data.fraction - data.fraction_low, data.fraction_high - data.fraction])
        measured = ax.errorbar(data.d_k, data.fraction, yerr=errors, color=OKABE_ITO["vermillion"], marker="o",
                               linestyle="-", capsize=3, label=r"measured, 95 % Wilson interval")
        (bound,) = ax.plot(data.d_k, data.bound, color=OKABE_ITO["blue"], marker="s", linestyle="--",
                           label=r"bound: mean of $F_G(\ell / \Vert q \Vert)$")
        (asymptote,) = ax.plot(data.d_k, data.asymptote, color=OKABE_ITO["black"], linestyle=":",
                               label=r"$f_G(0)\,\ell / \sqrt{d_k}$")
        ax.set(xscale="log", yscale="log", xlabel=r"$d_k$ (unscaled scores $q \cdot k_j$)",
               ylabel=rf"fraction of rows with $\Vert J \Vert_F \geq {data.t:g}$")
        ax.set_ylim(top=1.0)
        ax.set_title(f"rows that still pass a gradient, $n = {data.n_keys}$ keys", fontsize=10)
        legend = ax.legend(loc="lower left")
    return [measured, bound, asymptote, legend]
