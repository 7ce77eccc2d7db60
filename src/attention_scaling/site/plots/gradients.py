r"""The figure of the gradient distributions: median and 10–90 % band against :math:`d_k`, per scaling."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.axes import Axes

from attention_scaling.gradients import GRADIENT_SCALINGS
from attention_scaling.saturation import GradientDistribution
from attention_scaling.site.plots.style import POLICY_STYLE, _panels, _record, style

__all__ = ["draw_gradient_distribution"]

# The panels, left to right: the quantity and its axis label.
_PANELS = (
    ("logit", r"$\Vert J(cs) \Vert_F$", "at the logits $z = cs$"),
    ("score", r"$c\,\Vert J(cs) \Vert_F$", "at the raw score $s = q \\cdot k$"),
    ("w_q", r"$\Vert \partial L / \partial W_Q \Vert_F$", "at $W_Q$ (projected head)"),
)


def draw_gradient_distribution(axes: Sequence[Axes], data: GradientDistribution) -> list:
    r"""Per-row gradient sizes against :math:`d_k`: the median and the band from the 10 % to the 90 % quantile.

    Three panels, each with one curve per scaling on log axes: the gain at
    the logits :math:`\lVert J(cs) \rVert_F`, at the raw score
    :math:`c\lVert J(cs) \rVert_F`, and :math:`\lVert \partial L / \partial W_Q \rVert_F`;
    a dotted line adds the mean without scaling.

    Parameters
    ----------
    axes : sequence of three matplotlib.axes.Axes
        The logit, raw-score and :math:`W_Q` panels.
    data : attention_scaling.saturation.GradientDistribution
        From :func:`~attention_scaling.saturation.gradient_distribution`.

    Returns
    -------
    list
        Per panel and scaling the median line and its band, then the
        unscaled mean's line; then the legend.

    Raises
    ------
    ValueError
        If ``axes`` does not hold three Axes.
    TypeError
        If ``data`` is not a ``GradientDistribution``.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from attention_scaling.saturation import gradient_distribution
    >>> from attention_scaling.site.plots import draw_gradient_distribution
    >>> axes = Figure().subplots(1, 3)
    >>> artists = draw_gradient_distribution(axes, gradient_distribution([16, 256], n_queries=60))
    >>> axes[0].get_yscale(), len(artists)
    ('log', 22)
    """
    panels = _panels(axes, 3, "gradient-distribution")
    data = _record(data, GradientDistribution, "gradient-distribution")
    artists = []
    with style():
        for ax, (quantity, label, title) in zip(panels, _PANELS):
            for scaling in GRADIENT_SCALINGS:
                style_ = POLICY_STYLE[scaling]
                median = data.curve(quantity, scaling, 0.5)[0]
                low, high = data.curve(quantity, scaling, 0.1)[0], data.curve(quantity, scaling, 0.9)[0]
                (line,) = ax.plot(data.d_k, median, **style_)
                band = ax.fill_between(data.d_k, low, high, color=style_["color"], alpha=0.18, linewidth=0)
                artists += [line, band]
            # The unscaled mean, to show how far above the typical row the near-ties pull it.
            means = [data.summary(quantity, "none", d).mean for d in data.d_k]
            (mean,) = ax.plot(data.d_k, means, color=POLICY_STYLE["none"]["color"], linewidth=1.0,
                              linestyle=(0, (1, 1.5)), label="no scaling, mean")
            artists.append(mean)
            ax.set(xscale="log", yscale="log", xlabel="head dimension $d_k$", ylabel=label)
            ax.set_title(title, fontsize=9)
        artists.append(panels[0].legend(loc="lower left", fontsize=7))
    return artists
