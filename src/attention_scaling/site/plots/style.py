"""The site's figure style and palette, and the small helpers every ``draw_*`` shares."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

__all__ = ["OKABE_ITO", "POLICY_STYLE", "RHO_STYLE", "SPREAD_STYLE", "style"]

#: The Okabe–Ito palette, by colour name.
OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "green": "#009E73",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
}

#: How each scaling policy is drawn, everywhere on the site.
POLICY_STYLE = {
    "none": {"color": OKABE_ITO["vermillion"], "marker": "o", "linestyle": "-", "label": "no scaling"},
    "sqrt": {"color": OKABE_ITO["blue"], "marker": "s", "linestyle": "--", "label": r"$1/\sqrt{d_k}$"},
    "linear": {"color": OKABE_ITO["green"], "marker": "^", "linestyle": ":", "label": r"$1/d_k$"},
}

#: How each correlation rho is drawn in the correlated-logits figure: colour,
#: marker and the line style of its prediction, so the series differ without colour too.
RHO_STYLE = {
    0.0: {"color": OKABE_ITO["blue"], "marker": "o", "linestyle": "-"},
    0.1: {"color": OKABE_ITO["orange"], "marker": "s", "linestyle": "--"},
    0.5: {"color": OKABE_ITO["vermillion"], "marker": "^", "linestyle": ":"},
}

#: How each spread s of the Gaussian logits is drawn in the long-sequence figure.
SPREAD_STYLE = {
    0.5: {"color": OKABE_ITO["blue"], "marker": "o"},
    1.0: {"color": OKABE_ITO["green"], "marker": "s"},
    2.0: {"color": OKABE_ITO["orange"], "marker": "^"},
    3.0: {"color": OKABE_ITO["vermillion"], "marker": "D"},
}

_RC = {
    # 7-inch figures at 130 dpi are a little wider than the text column, so
    # the browser scales them down and they stay sharp.
    "figure.dpi": 130,
    "savefig.dpi": 150,
    "font.size": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.frameon": False,
    # Fixed ids and no dates, so an exported SVG or PDF is identical on every run.
    "svg.hashsalt": "why-sqrt-dk",
    "svg.fonttype": "path",
}


def style():
    """A context manager with the site's Matplotlib settings.

    Axes read some settings when they are made (spines, grid) and artists
    when they are drawn, so a Figure, its Axes and the drawing all belong
    inside it; every ``draw_*`` helper enters it for its own part.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from attention_scaling.site.plots import style
    >>> with style():
    ...     plt.rcParams["svg.hashsalt"]
    'why-sqrt-dk'
    """
    return plt.rc_context(_RC)


def _panels(axes, count: int, figure: str) -> list[Axes]:
    """The Axes of a figure as a flat list, refusing the wrong number of panels."""
    panels = [axes] if isinstance(axes, Axes) else list(np.asarray(axes, dtype=object).ravel())
    if len(panels) != count or not all(isinstance(ax, Axes) for ax in panels):
        raise ValueError(f"axes: {figure} draws on {count} Axes; got {len(panels)} item(s) of "
                         f"{sorted({type(ax).__name__ for ax in panels})}")
    return panels


def _record(data, kind: type, figure: str):
    if not isinstance(data, kind):
        raise TypeError(f"data: {figure} draws a {kind.__name__}; got {type(data).__name__}")
    return data


def _band(ax: Axes, x, mean, se, style_: dict, z: float = 3.0) -> list:
    """A line with markers and a shaded band of ``z`` standard errors."""
    (line,) = ax.plot(x, mean, **style_)
    band = ax.fill_between(x, mean - z * se, mean + z * se, color=style_["color"], alpha=0.2, linewidth=0)
    return [line, band]
