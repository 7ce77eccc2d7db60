"""The figure of the section "Temperatures for longer contexts" (``docs/long-sequences.md``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes

from attention_scaling.site.plots.style import OKABE_ITO, _panels, _record, style
from attention_scaling.temperatures import METHODS, TemperatureSweep, multiplier

__all__ = ["METHOD_STYLE", "draw_length_multipliers"]

#: One colour, marker and line style per method, so the lines read in greyscale too.
METHOD_STYLE = {
    "fixed": {"color": OKABE_ITO["black"], "marker": "o", "linestyle": "-"},
    "su": {"color": OKABE_ITO["vermillion"], "marker": "s", "linestyle": "-"},
    "log": {"color": OKABE_ITO["blue"], "marker": "^", "linestyle": "--"},
    "yarn": {"color": OKABE_ITO["orange"], "marker": "D", "linestyle": "-."},
    "qwen": {"color": OKABE_ITO["sky_blue"], "marker": "v", "linestyle": ":"},
    "llama4": {"color": OKABE_ITO["purple"], "marker": "P", "linestyle": "--"},
    "sqrt-log": {"color": OKABE_ITO["green"], "marker": "X", "linestyle": ":"},
}


def draw_length_multipliers(axes: Sequence[Axes], data: TemperatureSweep) -> list:
    r"""Each method's logit multiplier against :math:`n`, and the measured :math:`H / \ln n` it gives Gaussian logits.

    Parameters
    ----------
    axes : sequence of two matplotlib.axes.Axes
        The multiplier panel and the entropy panel (both log-x).
    data : attention_scaling.temperatures.TemperatureSweep
        From :func:`~attention_scaling.temperatures.temperature_sweep`.

    Returns
    -------
    list
        Per method its multiplier line, its measured points (± 3 standard
        errors) and its plug-in line; then the legend.

    Raises
    ------
    ValueError
        If ``axes`` does not hold two Axes.
    TypeError
        If ``data`` is not a ``TemperatureSweep``.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from attention_scaling.temperatures import temperature_sweep
    >>> from attention_scaling.site.plots import draw_length_multipliers
    >>> axes = Figure().subplots(1, 2)
    >>> artists = draw_length_multipliers(axes, temperature_sweep((512, 4096), ("fixed", "su"), budget=2**14))
    >>> [ax.get_xscale() for ax in axes], axes[0].get_ylabel()
    (['log', 'log'], 'logit multiplier $m(n)$')
    """
    multiplier_ax, entropy_ax = _panels(axes, 2, "length-multipliers")
    data = _record(data, TemperatureSweep, "length-multipliers")
    grid = np.unique(np.geomspace(data.lengths.min(), data.lengths.max(), 200).round())
    plug_in = data.plug_in_fraction()
    artists = []
    with style():
        for i, method in enumerate(data.methods):
            look = METHOD_STYLE.get(method, {"color": OKABE_ITO["black"], "marker": "x", "linestyle": "-"})
            label = METHODS[method][0]
            artists += multiplier_ax.plot(grid, multiplier(method, grid), color=look["color"],
                                          linestyle=look["linestyle"], linewidth=1.5, label=label)
            artists.append(entropy_ax.errorbar(data.lengths, data.entropy_fraction[i], yerr=3 * data.entropy_fraction_se[i],
                                               fmt=look["marker"], color=look["color"], markersize=4))
            artists += entropy_ax.plot(data.lengths, plug_in[i], color=look["color"], linestyle=look["linestyle"],
                                       linewidth=1)
        multiplier_ax.set(xscale="log", xlabel="number of keys $n$", ylabel="logit multiplier $m(n)$")
        multiplier_ax.set_title("multiplier of the scaled logits", fontsize=9)
        artists.append(multiplier_ax.legend(fontsize=7, loc="upper left", handlelength=2.5))
        entropy_ax.set(xscale="log", xlabel="number of keys $n$", ylabel=r"$H / \ln n$")
        entropy_ax.set_title(rf"Gaussian logits, $\sigma = {data.spread:g}$: measured and plug-in", fontsize=9)
    return artists
