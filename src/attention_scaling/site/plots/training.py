r"""The figure of the tuned training ablation: final loss against learning rate, per scale and :math:`d_k`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes

from attention_scaling.site.plots.style import OKABE_ITO, POLICY_STYLE, style
from attention_scaling.tuning import LearningRateTuning

__all__ = ["TUNED_STYLE", "draw_tuned_learning_rates"]

#: How each variant of the tuning is drawn: the scaling policies as everywhere
#: on the site, and T5's folding in its own colour, marker and line style.
TUNED_STYLE = {
    **POLICY_STYLE,
    "t5": {"color": OKABE_ITO["purple"], "marker": "D", "linestyle": "-.", "label": r"T5: $1/\sqrt{d_k}$ in $W_Q$"},
}

# Losses above this many nats are left out: a rate that far above its stable
# range reaches losses up to 1e300, which would flatten every other curve.
# Uniform attention over 16 keys scores ln 16 = 2.8.
_LOSS_CEILING = 10.0

_OPTIMIZER_NAMES = {"adam": "Adam", "sgd": "SGD"}

# Every panel shows losses from 0.01 or less up to this, on one log scale: the
# room above the ceiling holds the legend, clear of the curves.
_LOSS_TOP = 100.0


def draw_tuned_learning_rates(axes, data: Sequence[LearningRateTuning]) -> list:
    r"""Final loss against learning rate, one row per tuning (optimiser) and one column per :math:`d_k`.

    Each curve is a variant's selection score on the grid (the final loss
    averaged over the tuning seeds); a large hollow marker rings the selected
    rate, and an error bar at it spans the final losses of the fresh
    evaluation seeds (minimum to maximum) around their mean.

    Parameters
    ----------
    axes : 2-D array of matplotlib.axes.Axes, shape (len(data), len(d_values))
        One row per tuning.
    data : sequence of attention_scaling.tuning.LearningRateTuning
        E.g. ``(adam, sgd)`` from
        :func:`~attention_scaling.tuning.tuned_learning_rates_data`; all with
        the same ``d_values``.

    Returns
    -------
    list
        For every panel and variant: the curve, the ring and the error bar;
        then the legend.

    Raises
    ------
    TypeError
        If ``data`` is not a non-empty sequence of ``LearningRateTuning``.
    ValueError
        If the tunings have different ``d_values``, or ``axes`` is not a
        ``len(data)`` x ``len(d_values)`` grid of Axes.

    Notes
    -----
    Rates whose score is not finite (a tuning run diverged) or above 10 nats
    are not drawn.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from attention_scaling.tuning import tune_learning_rates
    >>> from attention_scaling.site.plots import draw_tuned_learning_rates
    >>> tuned = tune_learning_rates((4,), ("sqrt",), (1e-2, 1e-1), steps=6, batch=4, window=2, eval_seeds=(2,))
    >>> axes = Figure().subplots(1, 1, squeeze=False)
    >>> len(draw_tuned_learning_rates(axes, [tuned]))
    4
    """
    if isinstance(data, LearningRateTuning) or not isinstance(data, Sequence) or not data \
            or not all(isinstance(row, LearningRateTuning) for row in data):
        raise TypeError(f"data: tuned-learning-rates draws a sequence of LearningRateTuning; got {data!r:.80}")
    d_values = data[0].d_values
    if any(row.d_values != d_values for row in data):
        raise ValueError(f"data: every tuning must have the same d_values; got {[row.d_values for row in data]}")
    grid = np.asarray(axes, dtype=object)
    shape = (len(data), len(d_values))
    if grid.shape != shape or not all(isinstance(ax, Axes) for ax in grid.ravel()):
        raise ValueError(f"axes: tuned-learning-rates draws on a {shape[0]} x {shape[1]} grid of Axes; "
                         f"got shape {grid.shape}")
    artists = []
    with style():
        for row, tuning in enumerate(data):
            lrs = np.asarray(tuning.lrs)
            for column, d_k in enumerate(d_values):
                ax = grid[row, column]
                for variant in tuning.variants:
                    look = TUNED_STYLE[variant]
                    scores = np.asarray(tuning.scores[variant, d_k], dtype=float)
                    shown = np.where(np.isfinite(scores) & (scores <= _LOSS_CEILING), scores, np.nan)
                    artists += ax.plot(lrs, shown, markersize=4, **look)
                    best = tuning.best[variant, d_k]
                    artists += ax.plot(lrs[best], scores[best], linestyle="none", marker="o", markersize=11,
                                       markerfacecolor="none", markeredgecolor=look["color"], markeredgewidth=1.5)
                    losses = tuning.eval_loss[variant, d_k]
                    mean = float(np.mean(losses))
                    spread = [[mean - float(np.min(losses))], [float(np.max(losses)) - mean]]
                    artists.append(ax.errorbar(lrs[best], mean, yerr=spread, color=look["color"], capsize=3,
                                               marker="_", markersize=8, linewidth=1.2))
                ax.set(xscale="log", yscale="log")
                ax.set_ylim(top=_LOSS_TOP)
                ax.set_title(f"{_OPTIMIZER_NAMES[tuning.optimizer]}, $d_k = {d_k}$", fontsize=10)
                if column == 0:
                    ax.set_ylabel(f"{_OPTIMIZER_NAMES[tuning.optimizer]}: final loss (nats)")
                ax.set_xlabel("learning rate")
        artists.append(grid[0, 0].legend(fontsize=7, loc="upper center", ncols=2, handlelength=2.5,
                                         columnspacing=0.8))
    return artists
