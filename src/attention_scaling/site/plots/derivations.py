"""Figures of the derivation chapters: variance, score histograms, saturation, regimes, temperature."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes

from attention_scaling.regimes import (
    RegimeCurves,
    SaturationCurve,
    TemperaturePatterns,
    ThreeRegimes,
)
from attention_scaling.simulate import ScoreSamples, VarianceSweep
from attention_scaling.site.plots.style import OKABE_ITO, POLICY_STYLE, _band, _panels, _record, style

__all__ = [
    "draw_jacobian_vs_spread",
    "draw_logit_histograms",
    "draw_saturation_onset",
    "draw_temperature_patterns",
    "draw_three_regimes",
    "draw_variance_vs_dk",
]


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
