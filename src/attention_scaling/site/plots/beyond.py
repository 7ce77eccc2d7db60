"""Figures of the chapters beyond the textbook argument: training, correlation, long sequences, logit growth."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes

from attention_scaling.correlation import CorrelatedLogits, predicted_logit_mean, predicted_logit_std
from attention_scaling.logit_growth import EntropyCollapse
from attention_scaling.long_sequences import LengthSweep, freezing_ratio, plug_in_entropy
from attention_scaling.site.plots.style import OKABE_ITO, POLICY_STYLE, RHO_STYLE, SPREAD_STYLE, _panels, _record, style
from attention_scaling.training import TrainingCurves

__all__ = [
    "draw_correlated_logits",
    "draw_entropy_collapse",
    "draw_long_sequence_entropy",
    "draw_training_curves",
]


def draw_training_curves(axes, data: TrainingCurves) -> list:
    """Training loss (top, log scale) and attention entropy (bottom), one column per :math:`d_k`.

    Both curves are running means over 10 steps: single batches are noisy,
    and on a log scale a lucky batch with loss near 0 would hide the trend.

    Parameters
    ----------
    axes : 2-D array of matplotlib.axes.Axes, shape (2, len(data.d_values))
        Loss panels in the first row, entropy panels in the second.
    data : attention_scaling.training.TrainingCurves
        From :func:`~attention_scaling.training.training_curves_data`.

    Returns
    -------
    list
        The loss and entropy lines of every run, then the legend.

    Raises
    ------
    ValueError
        If ``axes`` is not a 2 x len(d_values) grid of Axes.
    TypeError
        If ``data`` is not a ``TrainingCurves``.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from attention_scaling.training import TrainingCurves, ablation
    >>> from attention_scaling.site.plots import draw_training_curves
    >>> runs = ablation((4,), ("sqrt",), steps=12, batch=4)
    >>> axes = Figure().subplots(2, 1, squeeze=False)
    >>> len(draw_training_curves(axes, TrainingCurves(runs, (4,), ("sqrt",))))
    3
    """
    data = _record(data, TrainingCurves, "training-curves")
    columns = len(data.d_values)
    grid = np.asarray(axes, dtype=object)
    if grid.shape != (2, columns):
        raise ValueError(f"axes: training-curves draws on a 2 x {columns} grid of Axes; got shape {grid.shape}")
    _panels(grid, 2 * columns, "training-curves")
    artists = []
    window = np.ones(10) / 10
    with style():
        for column, d_k in enumerate(data.d_values):
            loss_ax, entropy_ax = grid[0, column], grid[1, column]
            for policy in data.policies:
                record = data.runs[d_k, policy]
                line_style = {key: value for key, value in POLICY_STYLE[policy].items() if key != "marker"}
                steps = np.arange(len(window) - 1, record.steps)
                artists += loss_ax.plot(steps, np.convolve(record.loss, window, mode="valid"), **line_style)
                artists += entropy_ax.plot(steps, np.convolve(record.entropy, window, mode="valid"), **line_style)
            loss_ax.set(yscale="log", ylabel="loss (nats)")
            loss_ax.set_title(f"$d_k = {d_k}$", fontsize=10)
            entropy_ax.set(xlabel="training step", ylabel="entropy (nats)")
        artists.append(grid[0, 0].legend(fontsize=8))
    return artists


def draw_correlated_logits(axes: Sequence[Axes], data: CorrelatedLogits) -> list:
    r"""The mean logit against :math:`d_k` under each scale, one series per :math:`\rho`, with the proved mean and spread.

    Points are Monte Carlo means with bars of three standard errors; lines
    are the proved means; shaded bands span one proved standard deviation of
    the logit either side of the line.

    Parameters
    ----------
    axes : sequence of two matplotlib.axes.Axes
        The panel divided by :math:`\sqrt{d_k}` and the one divided by :math:`d_k`.
    data : attention_scaling.correlation.CorrelatedLogits
        From :func:`~attention_scaling.correlation.correlated_logits_data`.

    Returns
    -------
    list
        Per panel and correlation the band, the line and the error bars; then the legend.

    Raises
    ------
    ValueError
        If ``axes`` does not hold two Axes.
    TypeError
        If ``data`` is not a ``CorrelatedLogits``.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from attention_scaling.correlation import correlated_logits_data
    >>> from attention_scaling.site.plots import draw_correlated_logits
    >>> axes = Figure().subplots(1, 2)
    >>> artists = draw_correlated_logits(axes, correlated_logits_data(n_samples=100))
    >>> [ax.get_title() for ax in axes]
    ['divided by $\\sqrt{d_k}$', 'divided by $d_k$']
    """
    panels = _panels(axes, 2, "correlated-logits")
    data = _record(data, CorrelatedLogits, "correlated-logits")
    titles = {"sqrt": r"divided by $\sqrt{d_k}$", "linear": r"divided by $d_k$"}
    artists = []
    with style():
        for ax, (policy, moments) in zip(panels, data.by_policy().items()):
            grid = np.geomspace(moments.d_k[0], moments.d_k[-1], 200)
            grid_d = np.unique(np.round(grid).astype(int))
            handles, labels = [], []
            for row, rho in enumerate(moments.rho):
                style_ = RHO_STYLE.get(float(rho), {"color": OKABE_ITO["black"], "marker": "x", "linestyle": "-"})
                mean = predicted_logit_mean(rho, grid_d, policy)
                spread = predicted_logit_std(rho, grid_d, policy)
                band = ax.fill_between(grid_d, mean - spread, mean + spread, color=style_["color"], alpha=0.12,
                                       linewidth=0)
                (line,) = ax.plot(grid_d, mean, color=style_["color"], linestyle=style_["linestyle"], linewidth=1.2)
                points = ax.errorbar(moments.d_k, moments.mean[row], yerr=3 * moments.mean_se[row],
                                     fmt=style_["marker"], color=style_["color"], markersize=5, capsize=2)
                artists += [band, line, points]
                # One legend entry per rho shows its marker over its line style.
                handles.append((line, points))
                labels.append(rf"$\rho = {rho:g}$")
            ax.set_xscale("log", base=2)
            ax.set(xlabel="head dimension $d_k$", ylabel=r"scaled logit $c\, q \cdot k$")
            ax.set_title(titles[policy], fontsize=10)
        # One legend serves both panels: their series look the same.
        artists.append(panels[0].legend(handles, labels, loc="upper left", fontsize=8))
    return artists


def draw_long_sequence_entropy(axes: Sequence[Axes], data: LengthSweep) -> list:
    r"""Measured entropy against :math:`n` with the plug-in line, its error against :math:`s^2/(2 \ln n)`, and the largest weight.

    Parameters
    ----------
    axes : sequence of three matplotlib.axes.Axes
        The entropy, the error and the largest-weight panel.
    data : attention_scaling.long_sequences.LengthSweep
        From :func:`~attention_scaling.long_sequences.long_sequence_entropy_data`.

    Returns
    -------
    list
        Per spread the entropy error bars, the plug-in line, the error bars
        of its error and of the largest weight; then the reference lines and legends.

    Raises
    ------
    ValueError
        If ``axes`` does not hold three Axes.
    TypeError
        If ``data`` is not a ``LengthSweep``.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from attention_scaling.long_sequences import long_sequence_entropy_data
    >>> from attention_scaling.site.plots import draw_long_sequence_entropy
    >>> axes = Figure().subplots(1, 3)
    >>> artists = draw_long_sequence_entropy(axes, long_sequence_entropy_data(budget=2**12))
    >>> [ax.get_xlabel() for ax in axes]
    ['number of keys $n$', '$\\sigma^2 / (2 \\ln n)$', 'number of keys $n$']
    """
    entropy_ax, error_ax, max_ax = _panels(axes, 3, "long-sequence-entropy")
    data = _record(data, LengthSweep, "long-sequence-entropy")
    n = data.n
    artists = []
    with style():
        for i, s in enumerate(data.spreads):
            look = SPREAD_STYLE.get(float(s), {"color": OKABE_ITO["black"], "marker": "x"})
            plug_in = plug_in_entropy(n, s)
            artists.append(entropy_ax.errorbar(n, data.entropy[i], yerr=3 * data.entropy_se[i], fmt=look["marker"],
                                               color=look["color"], markersize=4, label=f"$\\sigma = {s:g}$"))
            artists += entropy_ax.plot(n, plug_in, color=look["color"], linestyle="--", linewidth=1)
            artists.append(error_ax.errorbar(freezing_ratio(n, s), data.entropy[i] - plug_in,
                                             yerr=3 * data.entropy_se[i], fmt=look["marker"], color=look["color"],
                                             markersize=4))
            artists.append(max_ax.errorbar(n, data.max_weight[i], yerr=3 * data.max_weight_se[i],
                                           fmt=look["marker"] + "-", color=look["color"], markersize=4, linewidth=1))
        artists += entropy_ax.plot([], [], color=OKABE_ITO["black"], linestyle="--", linewidth=1,
                                   label=r"$\ln n - \sigma^2/2$")
        artists.append(entropy_ax.axhline(0.0, color=OKABE_ITO["black"], linewidth=0.6))
        entropy_ax.set(xscale="log", xlabel="number of keys $n$", ylabel="entropy (nats)")
        entropy_ax.set_title("entropy, measured and plug-in", fontsize=9)
        artists.append(entropy_ax.legend(fontsize=8, loc="upper left", handlelength=1.5))
        artists.append(error_ax.axhline(0.0, color=OKABE_ITO["black"], linewidth=0.6))
        artists.append(error_ax.axvline(1.0, color=OKABE_ITO["black"], linestyle=":", linewidth=1))
        error_ax.set(xlabel=r"$\sigma^2 / (2 \ln n)$", ylabel="measured $-$ plug-in (nats)")
        error_ax.set_title("error of the plug-in entropy", fontsize=9)
        artists += max_ax.plot(n, 1.0 / n, color=OKABE_ITO["black"], linestyle=":", linewidth=1, label="$1/n$")
        max_ax.set(xscale="log", yscale="log", xlabel="number of keys $n$", ylabel="largest weight")
        max_ax.set_title("largest weight", fontsize=9)
        artists.append(max_ax.legend(fontsize=8, loc="lower left"))
    return artists


def draw_entropy_collapse(axes: Sequence[Axes], data: EntropyCollapse) -> list:
    r"""Lowest row entropy against :math:`\boldsymbol\sigma`: random heads above the bound (left), worst-case heads on it (right, log scale).

    Parameters
    ----------
    axes : sequence of two matplotlib.axes.Axes
        The random-heads and the worst-case panel.
    data : attention_scaling.logit_growth.EntropyCollapse
        From :func:`~attention_scaling.logit_growth.entropy_collapse_data`.

    Returns
    -------
    list
        The markers and bound lines of both panels, the uniform line and the legends.

    Raises
    ------
    ValueError
        If ``axes`` does not hold two Axes.
    TypeError
        If ``data`` is not an ``EntropyCollapse``.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from attention_scaling.logit_growth import entropy_collapse_data
    >>> from attention_scaling.site.plots import draw_entropy_collapse
    >>> axes = Figure().subplots(1, 2)
    >>> artists = draw_entropy_collapse(axes, entropy_collapse_data(n_instances=5))
    >>> [ax.get_yscale() for ax in axes]
    ['linear', 'log']
    """
    random_ax, tight_ax = _panels(axes, 2, "entropy-collapse")
    data = _record(data, EntropyCollapse, "entropy-collapse")
    n_tokens = data.n_tokens
    bound_style = {"color": OKABE_ITO["black"], "linestyle": "-", "label": "bound of Zhai et al."}
    random = data.random
    artists = []
    with style():
        artists += random_ax.plot(random.sigma, random.min_entropy, linestyle="none", marker="o", markersize=3,
                                  color=OKABE_ITO["blue"], alpha=0.6, label="random heads")
        artists += random_ax.plot(data.log_grid, data.log_grid_bound, **bound_style)
        artists.append(random_ax.axhline(np.log(n_tokens), color=OKABE_ITO["black"], linestyle=":", linewidth=0.8,
                                         label=f"uniform, $\\ln {n_tokens}$"))
        random_ax.set(xscale="log", xlabel=r"$\boldsymbol{\sigma}$", ylabel="lowest row entropy (nats)",
                      ylim=(-0.1, np.log(n_tokens) + 0.3))
        random_ax.set_title(f"random heads, $T = {n_tokens}$", fontsize=10)
        artists.append(random_ax.legend(loc="lower left", fontsize=8))
        artists += tight_ax.plot(data.linear_grid, data.linear_grid_bound, **bound_style)
        artists += tight_ax.plot(data.tight_sigma, data.tight_entropy, linestyle="none", marker="s",
                                 color=OKABE_ITO["vermillion"], label="worst-case heads")
        tight_ax.set(yscale="log", xlabel=r"$\boldsymbol{\sigma}$", ylabel="entropy of row 1 (nats)")
        tight_ax.set_title("the bound is attained; log scale", fontsize=10)
        artists.append(tight_ax.legend(loc="lower left", fontsize=8))
    return artists
