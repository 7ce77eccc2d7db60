r"""How the site draws its figures: the style, the palette, and one ``draw_*`` helper per figure.

Each helper draws one figure's data (a record computed by the library, e.g.
:func:`attention_scaling.simulate.variance_vs_dk_data`) on Axes it is given,
and returns the artists it made. The caller owns the Figure: a page makes it
with :func:`attention_scaling.site.figures.new_figure`, which gives each
figure its registered size and grid, and glues it. Nothing here creates a
Figure, calls ``show()`` or saves a file.

Colours come from the Okabe–Ito palette, which stays distinguishable under
the common forms of colour blindness; every series also has its own marker or
line style, so the figures read in greyscale too.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from attention_scaling.correlation import CorrelatedLogits, predicted_logit_mean, predicted_logit_std
from attention_scaling.logit_growth import EntropyCollapse
from attention_scaling.long_context import LengthSweep, freezing_ratio, plug_in_entropy
from attention_scaling.simulate import ScoreSamples, VarianceSweep
from attention_scaling.regimes import (
    RegimeCurves,
    SaturationCurve,
    TemperaturePatterns,
    ThreeRegimes,
)
from attention_scaling.training import TrainingCurves

__all__ = [
    "OKABE_ITO",
    "POLICY_STYLE",
    "RHO_STYLE",
    "SPREAD_STYLE",
    "draw_correlated_logits",
    "draw_entropy_collapse",
    "draw_jacobian_vs_spread",
    "draw_logit_histograms",
    "draw_long_sequence_entropy",
    "draw_saturation_onset",
    "draw_temperature_patterns",
    "draw_three_regimes",
    "draw_training_curves",
    "draw_variance_vs_dk",
    "style",
]

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


def draw_variance_vs_dk(axes: Sequence[Axes], data: VarianceSweep) -> list:
    r"""Var[q.k] against :math:`d_k` with the proved line (left), and the variance after dividing by :math:`\sqrt{d_k}` (right).

    Parameters
    ----------
    axes : sequence of two matplotlib.axes.Axes
        The unscaled and the scaled panel.
    data : attention_scaling.simulate.VarianceSweep
        From :func:`~attention_scaling.simulate.variance_vs_dk_data`.

    Returns
    -------
    list
        The artists drawn: error bars, reference lines, legends.

    Raises
    ------
    ValueError
        If ``axes`` does not hold two Axes.
    TypeError
        If ``data`` is not a ``VarianceSweep``.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from attention_scaling.simulate import variance_vs_dk_data
    >>> from attention_scaling.site.plots import draw_variance_vs_dk
    >>> axes = Figure().subplots(1, 2)
    >>> artists = draw_variance_vs_dk(axes, variance_vs_dk_data(n_samples=200))
    >>> [ax.get_xlabel() for ax in axes]
    ['head dimension $d_k$', 'head dimension $d_k$']
    """
    raw, scaled = _panels(axes, 2, "variance-vs-dk")
    data = _record(data, VarianceSweep, "variance-vs-dk")
    d = data.d_k
    with style():
        artists = [
            raw.errorbar(d, data.variance, yerr=3 * data.variance_se, fmt="o", color=OKABE_ITO["blue"],
                         label="Monte Carlo ± 3 s.e."),
            *raw.plot(d, d, color=OKABE_ITO["black"], linestyle="--", label=r"proved: $d_k$"),
        ]
        raw.set(xscale="log", yscale="log", xlabel="head dimension $d_k$", ylabel=r"$\operatorname{Var}[q \cdot k]$")
        raw.set_title("unscaled scores", fontsize=10)
        artists.append(raw.legend())
        artists += [
            scaled.errorbar(d, data.variance / d, yerr=3 * data.variance_se / d, fmt="s", color=OKABE_ITO["blue"],
                            label="Monte Carlo ± 3 s.e."),
            scaled.axhline(1.0, color=OKABE_ITO["black"], linestyle="--", label="proved: 1"),
        ]
        scaled.set(xscale="log", ylim=(0.5, 1.5), xlabel="head dimension $d_k$",
                   ylabel="variance of the scaled scores")
        scaled.set_title(r"divided by $\sqrt{d_k}$", fontsize=10)
        artists.append(scaled.legend())
    return artists


def draw_logit_histograms(axes: Sequence[Axes], data: ScoreSamples) -> list:
    r"""Histograms of the scores, unscaled (left) and scaled (right), each with the normal density of the proved variance.

    Parameters
    ----------
    axes : sequence of two matplotlib.axes.Axes
        The unscaled and the scaled panel.
    data : attention_scaling.simulate.ScoreSamples
        From :func:`~attention_scaling.simulate.logit_histograms_data`.

    Returns
    -------
    list
        The artists drawn: per panel the histogram's bars, the density line and the legend.

    Raises
    ------
    ValueError
        If ``axes`` does not hold two Axes.
    TypeError
        If ``data`` is not a ``ScoreSamples``.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from attention_scaling.simulate import logit_histograms_data
    >>> from attention_scaling.site.plots import draw_logit_histograms
    >>> axes = Figure().subplots(1, 2)
    >>> artists = draw_logit_histograms(axes, logit_histograms_data(n_samples=500))
    >>> [line.get_label() for line in axes[1].get_lines()]
    ['normal, variance 1']
    """
    unscaled_ax, scaled_ax = _panels(axes, 2, "logit-histograms")
    data = _record(data, ScoreSamples, "logit-histograms")
    d_k = data.d_k
    panels = [
        (unscaled_ax, data.unscaled, float(d_k), "unscaled: $q \\cdot k$", OKABE_ITO["vermillion"]),
        (scaled_ax, data.scaled, 1.0, "scaled: $q \\cdot k / \\sqrt{d_k}$", OKABE_ITO["blue"]),
    ]
    artists = []
    with style():
        for ax, scores, variance, title, color in panels:
            _, _, bars = ax.hist(scores, bins=60, density=True, color=color, alpha=0.6, label="Monte Carlo")
            grid = np.linspace(-4.5, 4.5, 200) * np.sqrt(variance)
            density = np.exp(-(grid**2) / (2 * variance)) / np.sqrt(2 * np.pi * variance)
            (line,) = ax.plot(grid, density, color=OKABE_ITO["black"], label=f"normal, variance {variance:g}")
            ax.set(xlabel="score (logit)", ylabel="density")
            ax.set_title(f"{title}, $d_k = {d_k}$", fontsize=10)
            artists += [bars, line, ax.legend(loc="upper right", fontsize=8)]
    return artists


def draw_saturation_onset(ax: Axes, data: SaturationCurve) -> list:
    r"""The preferred weight and its slope as the margin grows, with the onset of saturation marked.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The one panel.
    data : attention_scaling.regimes.SaturationCurve
        From :func:`~attention_scaling.regimes.saturation_onset_data`.

    Returns
    -------
    list
        The weight and slope lines, the onset line and the legend.

    Raises
    ------
    ValueError
        If ``ax`` is not one Axes.
    TypeError
        If ``data`` is not a ``SaturationCurve``.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from attention_scaling.regimes import saturation_onset_data
    >>> from attention_scaling.site.plots import draw_saturation_onset
    >>> ax = Figure().subplots()
    >>> len(draw_saturation_onset(ax, saturation_onset_data(points=21)))
    4
    >>> ax.get_xlabel()
    'margin $x$ of the preferred score'
    """
    (ax,) = _panels(ax, 1, "saturation-onset")
    data = _record(data, SaturationCurve, "saturation-onset")
    with style():
        (weight,) = ax.plot(data.x, data.weight, color=OKABE_ITO["blue"], label="weight $p_1$")
        (slope,) = ax.plot(data.x, data.slope, color=OKABE_ITO["vermillion"], linestyle="--",
                           label=r"slope $\partial p_1 / \partial x_1$")
        onset = ax.axvline(data.onset, color=OKABE_ITO["black"], linestyle=":",
                           label="slope below a tenth of its peak")
        ax.set(xlabel="margin $x$ of the preferred score", ylabel="value", ylim=(0, 1.02))
        ax.set_title(f"softmax of $[x, 0, \\ldots, 0]$ with {data.n_scores} scores", fontsize=10)
        legend = ax.legend(loc="center right")
    return [weight, slope, onset, legend]


def draw_three_regimes(axes: Sequence[Axes], data: ThreeRegimes) -> list:
    r"""Entropy as a fraction of :math:`\ln n` (left) and the largest weight (right) against :math:`d_k`, one curve per policy.

    Parameters
    ----------
    axes : sequence of two matplotlib.axes.Axes
        The entropy and the largest-weight panel.
    data : attention_scaling.regimes.ThreeRegimes
        From :func:`~attention_scaling.regimes.three_regimes_data`.

    Returns
    -------
    list
        Per policy and panel a line and its band of three standard errors;
        then the uniform line and the legend.

    Raises
    ------
    ValueError
        If ``axes`` does not hold two Axes.
    TypeError
        If ``data`` is not a ``ThreeRegimes``.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from attention_scaling.regimes import three_regimes_data
    >>> from attention_scaling.site.plots import draw_three_regimes
    >>> axes = Figure().subplots(1, 2)
    >>> artists = draw_three_regimes(axes, three_regimes_data(n_queries=4))
    >>> print(axes[0].get_ylabel())
    entropy / $\ln n$
    """
    entropy_ax, max_ax = _panels(axes, 2, "three-regimes")
    data = _record(data, ThreeRegimes, "three-regimes")
    artists = []
    with style():
        for policy, curves in data.by_policy().items():
            style_ = POLICY_STYLE[policy]
            artists += _band(entropy_ax, curves.d_k, curves.entropy_fraction,
                             curves.entropy_se / np.log(curves.n_keys), style_)
            artists += _band(max_ax, curves.d_k, curves.max_weight, curves.max_weight_se, style_)
        n_keys = data.n_keys
        artists.append(max_ax.axhline(1 / n_keys, color=OKABE_ITO["black"], linewidth=0.8,
                                      label=f"uniform, $1/{n_keys}$"))
        entropy_ax.set(xscale="log", xlabel="head dimension $d_k$", ylabel=r"entropy / $\ln n$", ylim=(0, 1.05))
        max_ax.set(xscale="log", xlabel="head dimension $d_k$", ylabel="largest weight", ylim=(0, 1.05))
        entropy_ax.set_title(f"spread of attention, $n = {n_keys}$ keys", fontsize=10)
        max_ax.set_title("weight on the top key", fontsize=10)
        artists.append(max_ax.legend(loc="upper left", fontsize=8))
    return artists


def draw_jacobian_vs_spread(ax: Axes, data: RegimeCurves) -> list:
    """The mean Frobenius norm of the softmax Jacobian against the standard deviation of the scores.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The one panel.
    data : attention_scaling.regimes.RegimeCurves
        From :func:`~attention_scaling.regimes.jacobian_vs_spread_data`
        (its ``d_k`` field holds the spreads).

    Returns
    -------
    list
        The line and its band, the two marker lines and the legend.

    Raises
    ------
    ValueError
        If ``ax`` is not one Axes.
    TypeError
        If ``data`` is not a ``RegimeCurves``.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from attention_scaling.regimes import jacobian_vs_spread_data
    >>> from attention_scaling.site.plots import draw_jacobian_vs_spread
    >>> ax = Figure().subplots()
    >>> len(draw_jacobian_vs_spread(ax, jacobian_vs_spread_data(n_samples=10)))
    5
    >>> ax.get_xlabel()
    'standard deviation of the scores'
    """
    (ax,) = _panels(ax, 1, "jacobian-vs-spread")
    data = _record(data, RegimeCurves, "jacobian-vs-spread")
    with style():
        artists = _band(ax, data.d_k, data.jacobian_norm, data.jacobian_norm_se,
                        {"color": OKABE_ITO["blue"], "marker": None, "linestyle": "-", "label": "mean ± 3 s.e."})
        artists.append(ax.axvline(1.0, color=OKABE_ITO["green"], linestyle="--", label=r"scaled scores (s.d. 1)"))
        artists.append(ax.axvline(8.0, color=OKABE_ITO["vermillion"], linestyle=":",
                                  label=r"unscaled, $d_k = 64$ (s.d. 8)"))
        ax.set(xlabel="standard deviation of the scores", ylabel="Jacobian norm (Frobenius)", ylim=(0, None))
        ax.set_title(f"how much gradient softmax passes on, $n = {data.n_keys}$ keys", fontsize=10)
        artists.append(ax.legend(loc="upper right"))
    return artists


def draw_temperature_patterns(axes: Sequence[Axes], data: TemperaturePatterns) -> list:
    r"""Heat maps of the weights (queries by keys) for three temperatures, on one colour scale with one colour bar.

    Parameters
    ----------
    axes : sequence of three matplotlib.axes.Axes
        One panel per temperature; the colour bar takes space from all three.
    data : attention_scaling.regimes.TemperaturePatterns
        From :func:`~attention_scaling.regimes.temperature_patterns_data`.

    Returns
    -------
    list
        The three images, then the colour bar.

    Raises
    ------
    ValueError
        If ``axes`` does not hold three Axes or ``data`` does not hold three temperatures.
    TypeError
        If ``data`` is not a ``TemperaturePatterns``.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from attention_scaling.regimes import temperature_patterns_data
    >>> from attention_scaling.site.plots import draw_temperature_patterns
    >>> figure = Figure()
    >>> artists = draw_temperature_patterns(figure.subplots(1, 3), temperature_patterns_data())
    >>> len(figure.axes)   # three maps and a colour bar
    4
    """
    panels = _panels(axes, 3, "temperature-patterns")
    data = _record(data, TemperaturePatterns, "temperature-patterns")
    if len(data.weights) != 3:
        raise ValueError(f"data: temperature-patterns draws 3 temperatures; got {len(data.weights)}")
    titles = [r"$\tau = \sqrt{d_k}/2$", r"$\tau = \sqrt{d_k}$", r"$\tau = 2\sqrt{d_k}$"]
    artists = []
    with style():
        for ax, weights, title in zip(panels, data.weights, titles):
            artists.append(ax.imshow(weights, vmin=0.0, vmax=1.0, cmap="viridis"))
            ax.set(xlabel="key", ylabel="query", xticks=[], yticks=[])
            ax.grid(False)
            ax.set_title(title, fontsize=10)
        artists.append(panels[0].figure.colorbar(artists[-1], ax=panels, label="attention weight", shrink=0.9))
    return artists


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
    data : attention_scaling.long_context.LengthSweep
        From :func:`~attention_scaling.long_context.long_sequence_entropy_data`.

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
    >>> from attention_scaling.long_context import long_sequence_entropy_data
    >>> from attention_scaling.site.plots import draw_long_sequence_entropy
    >>> axes = Figure().subplots(1, 3)
    >>> artists = draw_long_sequence_entropy(axes, long_sequence_entropy_data(budget=2**12))
    >>> [ax.get_xlabel() for ax in axes]
    ['number of keys $n$', '$s^2 / (2 \\ln n)$', 'number of keys $n$']
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
                                               color=look["color"], markersize=4, label=f"$s = {s:g}$"))
            artists += entropy_ax.plot(n, plug_in, color=look["color"], linestyle="--", linewidth=1)
            artists.append(error_ax.errorbar(freezing_ratio(n, s), data.entropy[i] - plug_in,
                                             yerr=3 * data.entropy_se[i], fmt=look["marker"], color=look["color"],
                                             markersize=4))
            artists.append(max_ax.errorbar(n, data.max_weight[i], yerr=3 * data.max_weight_se[i],
                                           fmt=look["marker"] + "-", color=look["color"], markersize=4, linewidth=1))
        artists += entropy_ax.plot([], [], color=OKABE_ITO["black"], linestyle="--", linewidth=1,
                                   label=r"$\ln n - s^2/2$")
        artists.append(entropy_ax.axhline(0.0, color=OKABE_ITO["black"], linewidth=0.6))
        entropy_ax.set(xscale="log", xlabel="number of keys $n$", ylabel="entropy (nats)")
        entropy_ax.set_title("entropy, measured and plug-in", fontsize=9)
        artists.append(entropy_ax.legend(fontsize=8, loc="upper left", handlelength=1.5))
        artists.append(error_ax.axhline(0.0, color=OKABE_ITO["black"], linewidth=0.6))
        artists.append(error_ax.axvline(1.0, color=OKABE_ITO["black"], linestyle=":", linewidth=1))
        error_ax.set(xlabel=r"$s^2 / (2 \ln n)$", ylabel="measured $-$ plug-in (nats)")
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
