r"""The site's figures: seeded data, and plot functions that draw on given Axes.

Every figure has a ``*_data()`` function that computes its (seeded) numbers
and a ``*_figure(data)`` function that draws them. A page calls both, so the
numbers it quotes and the picture it shows come from the same arrays; the
command line (``python -m attention_scaling figures``) does the same through
:data:`FIGURES`. Nothing here calls ``show()`` or saves a file.

Colours come from the Okabe–Ito palette, which stays distinguishable under
the common forms of colour blindness; every series also has its own marker or
line style, so the figures read in greyscale too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from attention_scaling._attention import attention_scores, attention_weights
from attention_scaling.correlation import (
    LogitMoments,
    correlated_logit_sweep,
    predicted_logit_mean,
    predicted_logit_std,
)
from attention_scaling.long_context import LengthSweep, freezing_ratio, gaussian_logit_sweep, plug_in_entropy
from attention_scaling.simulate import (
    RegimeCurves,
    attention_regimes,
    dot_product_samples,
    dot_product_sweep,
    jacobian_norm_by_spread,
)
from attention_scaling._softmax import saturation_margin, softmax, softmax_jacobian

__all__ = [
    "FIGURES",
    "correlated_logits_data",
    "correlated_logits_figure",
    "FigureSpec",
    "POLICY_STYLE",
    "SPREAD_STYLE",
    "entropy_collapse_data",
    "entropy_collapse_figure",
    "jacobian_vs_spread_data",
    "jacobian_vs_spread_figure",
    "logit_histograms_data",
    "logit_histograms_figure",
    "long_sequence_entropy_data",
    "long_sequence_entropy_figure",
    "saturation_onset_data",
    "saturation_onset_figure",
    "style",
    "temperature_patterns_data",
    "temperature_patterns_figure",
    "three_regimes_data",
    "three_regimes_figure",
    "training_curves_data",
    "training_curves_figure",
    "variance_vs_dk_data",
    "variance_vs_dk_figure",
]

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

# The dimensions of every sweep: powers of two from 1 to 4096.
D_VALUES = tuple(2**i for i in range(13))


def style():
    """A context manager with the site's Matplotlib settings.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from attention_scaling.figures import style
    >>> with style():
    ...     plt.rcParams["svg.hashsalt"]
    'why-sqrt-dk'
    """
    return plt.rc_context(_RC)


def _new_figure(ncols: int, width: float = 7.0, height: float = 3.0) -> tuple[Figure, np.ndarray]:
    # Figure() rather than plt.figure(): nothing is registered with pyplot, so
    # pages and the export never accumulate open figures.
    figure = Figure(figsize=(width, height), layout="constrained")
    axes = figure.subplots(1, ncols, squeeze=False)[0]
    return figure, axes


def _band(ax, x, mean, se, style_: dict, z: float = 3.0):
    """A line with markers and a shaded band of ``z`` standard errors."""
    (line,) = ax.plot(x, mean, **style_)
    band = ax.fill_between(x, mean - z * se, mean + z * se, color=style_["color"], alpha=0.2, linewidth=0)
    return [line, band]


# -- F1: the variance of q.k against d_k ---------------------------------------------


def variance_vs_dk_data(n_samples: int = 4000, seed: int = 1) -> dict[str, np.ndarray]:
    """Monte Carlo mean and variance of q.k for d_k = 1, 2, 4, ..., 4096 (standard normal components).

    Examples
    --------
    >>> from attention_scaling.figures import variance_vs_dk_data
    >>> data = variance_vs_dk_data(n_samples=200)
    >>> data["d_k"][-1], data["variance"].shape
    (np.int64(4096), (13,))
    """
    return dot_product_sweep(D_VALUES, n_samples, seed=seed)


def variance_vs_dk_figure(data: dict[str, np.ndarray]) -> Figure:
    """F1: Var[q.k] against d_k with the proved line, and the variance after dividing by sqrt(d_k).

    Examples
    --------
    >>> from attention_scaling.figures import variance_vs_dk_data, variance_vs_dk_figure
    >>> figure = variance_vs_dk_figure(variance_vs_dk_data(n_samples=200))
    >>> [ax.get_xlabel() for ax in figure.axes]
    ['head dimension $d_k$', 'head dimension $d_k$']
    """
    with style():
        figure, (raw, scaled) = _new_figure(2)
        d = data["d_k"]
        raw.errorbar(d, data["variance"], yerr=3 * data["variance_se"], fmt="o", color=OKABE_ITO["blue"],
                     label="Monte Carlo ± 3 s.e.")
        raw.plot(d, d, color=OKABE_ITO["black"], linestyle="--", label=r"proved: $d_k$")
        raw.set(xscale="log", yscale="log", xlabel="head dimension $d_k$", ylabel=r"$\operatorname{Var}[q \cdot k]$")
        raw.set_title("unscaled scores", fontsize=10)
        raw.legend()
        scaled.errorbar(d, data["variance"] / d, yerr=3 * data["variance_se"] / d, fmt="s", color=OKABE_ITO["blue"],
                        label="Monte Carlo ± 3 s.e.")
        scaled.axhline(1.0, color=OKABE_ITO["black"], linestyle="--", label="proved: 1")
        scaled.set(xscale="log", ylim=(0.5, 1.5), xlabel="head dimension $d_k$",
                   ylabel="variance of the scaled scores")
        scaled.set_title(r"divided by $\sqrt{d_k}$", fontsize=10)
        scaled.legend()
    return figure


# -- F2: histograms of the scores at d_k = 64 -------------------------------------------


def logit_histograms_data(d_k: int = 64, n_samples: int = 20_000, seed: int = 2) -> dict:
    """Seeded scores q.k at one d_k, unscaled and divided by sqrt(d_k).

    Examples
    --------
    >>> from attention_scaling.figures import logit_histograms_data
    >>> data = logit_histograms_data(n_samples=100)
    >>> data["d_k"], data["unscaled"].shape
    (64, (100,))
    """
    unscaled = dot_product_samples(d_k, n_samples, seed=seed)
    return {"d_k": d_k, "unscaled": unscaled, "scaled": unscaled / np.sqrt(d_k)}


def logit_histograms_figure(data: dict) -> Figure:
    """F2: the distribution of the scores, unscaled and scaled, each with the normal density of the proved variance.

    Examples
    --------
    >>> from attention_scaling.figures import logit_histograms_data, logit_histograms_figure
    >>> figure = logit_histograms_figure(logit_histograms_data(n_samples=500))
    >>> len(figure.axes)
    2
    """
    with style():
        figure, axes = _new_figure(2)
        d_k = data["d_k"]
        panels = [
            (axes[0], data["unscaled"], float(d_k), "unscaled: $q \\cdot k$", OKABE_ITO["vermillion"]),
            (axes[1], data["scaled"], 1.0, "scaled: $q \\cdot k / \\sqrt{d_k}$", OKABE_ITO["blue"]),
        ]
        for ax, scores, variance, title, color in panels:
            ax.hist(scores, bins=60, density=True, color=color, alpha=0.6, label="Monte Carlo")
            grid = np.linspace(-4.5, 4.5, 200) * np.sqrt(variance)
            density = np.exp(-(grid**2) / (2 * variance)) / np.sqrt(2 * np.pi * variance)
            ax.plot(grid, density, color=OKABE_ITO["black"], label=f"normal, variance {variance:g}")
            ax.set(xlabel="score (logit)", ylabel="density")
            ax.set_title(f"{title}, $d_k = {d_k}$", fontsize=10)
            ax.legend(loc="upper right", fontsize=8)
    return figure


# -- F3: softmax([x, 0, 0, 0]) ------------------------------------------------------------


def saturation_onset_data(n: int = 4, x_max: float = 10.0, points: int = 401) -> dict:
    """softmax([x, 0, ..., 0]) and its slope d p_1 / d x_1 for x in [0, x_max].

    Examples
    --------
    >>> from attention_scaling.figures import saturation_onset_data
    >>> data = saturation_onset_data(points=11)
    >>> round(float(data["weight"][0]), 2)
    0.25
    """
    x = np.linspace(0.0, x_max, points)
    scores = np.zeros((points, n))
    scores[:, 0] = x
    weights = softmax(scores)
    return {
        "n": n,
        "x": x,
        "weight": weights[:, 0],
        "slope": softmax_jacobian(weights)[:, 0, 0],
        "onset": saturation_margin(n),
    }


def saturation_onset_figure(data: dict) -> Figure:
    """F3: the preferred weight and its slope as the margin grows, with the onset of saturation marked.

    Examples
    --------
    >>> from attention_scaling.figures import saturation_onset_data, saturation_onset_figure
    >>> saturation_onset_figure(saturation_onset_data()).axes[0].get_xlabel()
    'margin $x$ of the preferred score'
    """
    with style():
        figure, (ax,) = _new_figure(1, width=7.0, height=3.0)
        ax.plot(data["x"], data["weight"], color=OKABE_ITO["blue"], label="weight $p_1$")
        ax.plot(data["x"], data["slope"], color=OKABE_ITO["vermillion"], linestyle="--",
                label=r"slope $\partial p_1 / \partial x_1$")
        ax.axvline(data["onset"], color=OKABE_ITO["black"], linestyle=":", label="slope below a tenth of its peak")
        ax.set(xlabel="margin $x$ of the preferred score", ylabel="value", ylim=(0, 1.02))
        ax.set_title(f"softmax of $[x, 0, \\ldots, 0]$ with {data['n']} scores", fontsize=10)
        ax.legend(loc="center right")
    return figure


# -- F4: the three regimes ------------------------------------------------------------------


def three_regimes_data(n_keys: int = 16, n_queries: int = 128, seed: int = 3) -> dict[str, RegimeCurves]:
    """Attention statistics against d_k under the three scaling policies (same draws for each).

    Examples
    --------
    >>> from attention_scaling.figures import three_regimes_data
    >>> sorted(three_regimes_data(n_queries=4))
    ['linear', 'none', 'sqrt']
    """
    return {
        policy: attention_regimes(D_VALUES, policy, n_keys=n_keys, n_queries=n_queries, seed=seed)
        for policy in ("none", "sqrt", "linear")
    }


def three_regimes_figure(data: dict[str, RegimeCurves]) -> Figure:
    r"""F4: entropy (as a fraction of ln n) and the largest weight against d_k, one curve per policy.

    Examples
    --------
    >>> from attention_scaling.figures import three_regimes_data, three_regimes_figure
    >>> figure = three_regimes_figure(three_regimes_data(n_queries=4))
    >>> print(figure.axes[0].get_ylabel())
    entropy / $\ln n$
    """
    with style():
        figure, (entropy_ax, max_ax) = _new_figure(2)
        for policy, curves in data.items():
            style_ = POLICY_STYLE[policy]
            _band(entropy_ax, curves.d_k, curves.entropy_fraction, curves.entropy_se / np.log(curves.n_keys), style_)
            _band(max_ax, curves.d_k, curves.max_weight, curves.max_weight_se, style_)
        n_keys = next(iter(data.values())).n_keys
        max_ax.axhline(1 / n_keys, color=OKABE_ITO["black"], linewidth=0.8, label=f"uniform, $1/{n_keys}$")
        entropy_ax.set(xscale="log", xlabel="head dimension $d_k$", ylabel=r"entropy / $\ln n$", ylim=(0, 1.05))
        max_ax.set(xscale="log", xlabel="head dimension $d_k$", ylabel="largest weight", ylim=(0, 1.05))
        entropy_ax.set_title(f"spread of attention, $n = {n_keys}$ keys", fontsize=10)
        max_ax.set_title("weight on the top key", fontsize=10)
        max_ax.legend(loc="upper left", fontsize=8)
    return figure


# -- F5: Jacobian norm against the spread of the scores -----------------------------------------


def jacobian_vs_spread_data(n_keys: int = 16, n_samples: int = 2000, seed: int = 5) -> RegimeCurves:
    """Softmax statistics for N(0, s^2) scores, s from 0 to 12.

    Examples
    --------
    >>> from attention_scaling.figures import jacobian_vs_spread_data
    >>> jacobian_vs_spread_data(n_samples=10).d_k[-1]
    np.float64(12.0)
    """
    return jacobian_norm_by_spread(np.linspace(0.0, 12.0, 49), n_keys=n_keys, n_samples=n_samples, seed=seed)


def jacobian_vs_spread_figure(data: RegimeCurves) -> Figure:
    """F5: the mean Frobenius norm of the softmax Jacobian against the standard deviation of the scores.

    Examples
    --------
    >>> from attention_scaling.figures import jacobian_vs_spread_data, jacobian_vs_spread_figure
    >>> jacobian_vs_spread_figure(jacobian_vs_spread_data(n_samples=10)).axes[0].get_xlabel()
    'standard deviation of the scores'
    """
    with style():
        figure, (ax,) = _new_figure(1, width=7.0, height=3.0)
        _band(ax, data.d_k, data.jacobian_norm, data.jacobian_norm_se,
              {"color": OKABE_ITO["blue"], "marker": None, "linestyle": "-", "label": "mean ± 3 s.e."})
        ax.axvline(1.0, color=OKABE_ITO["green"], linestyle="--", label=r"scaled scores (s.d. 1)")
        ax.axvline(8.0, color=OKABE_ITO["vermillion"], linestyle=":", label=r"unscaled, $d_k = 64$ (s.d. 8)")
        ax.set(xlabel="standard deviation of the scores", ylabel="Jacobian norm (Frobenius)", ylim=(0, None))
        ax.set_title(f"how much gradient softmax passes on, $n = {data.n_keys}$ keys", fontsize=10)
        ax.legend(loc="upper right")
    return figure


# -- F6: attention patterns at three temperatures -----------------------------------------------


def temperature_patterns_data(d_k: int = 64, n: int = 10, seed: int = 6) -> dict:
    """Attention weights of one seeded head for temperatures 0.5, 1 and 2 times sqrt(d_k).

    Examples
    --------
    >>> from attention_scaling.figures import temperature_patterns_data
    >>> data = temperature_patterns_data()
    >>> [round(t / 8, 1) for t in data["temperatures"]]
    [0.5, 1.0, 2.0]
    """
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, d_k))
    k = rng.standard_normal((n, d_k))
    temperatures = [factor * float(np.sqrt(d_k)) for factor in (0.5, 1.0, 2.0)]
    return {
        "d_k": d_k,
        "temperatures": temperatures,
        "weights": [attention_weights(q, k, scale=1 / tau) for tau in temperatures],
    }


def temperature_patterns_figure(data: dict) -> Figure:
    """F6: heat maps of the weights (queries by keys) for the three temperatures, on one colour scale.

    Examples
    --------
    >>> from attention_scaling.figures import temperature_patterns_data, temperature_patterns_figure
    >>> len(temperature_patterns_figure(temperature_patterns_data()).axes)   # three maps and a colour bar
    4
    """
    titles = [r"$\tau = \sqrt{d_k}/2$", r"$\tau = \sqrt{d_k}$", r"$\tau = 2\sqrt{d_k}$"]
    with style():
        figure, axes = _new_figure(3, width=7.0, height=2.7)
        for ax, weights, title in zip(axes, data["weights"], titles):
            image = ax.imshow(weights, vmin=0.0, vmax=1.0, cmap="viridis")
            ax.set(xlabel="key", ylabel="query", xticks=[], yticks=[])
            ax.grid(False)
            ax.set_title(title, fontsize=10)
        figure.colorbar(image, ax=list(axes), label="attention weight", shrink=0.9)
    return figure


# -- F7: training with each scale ------------------------------------------------------------


def training_curves_data(seed: int = 0) -> dict:
    """The default training ablation: d_k in {16, 64, 256} under the three policies, one learning rate.

    Examples
    --------
    >>> from attention_scaling.figures import training_curves_data
    >>> sorted(training_curves_data()["runs"])[:2]
    [(16, 'linear'), (16, 'none')]
    """
    from attention_scaling.training import ablation

    return {"runs": ablation(seed=seed)}


def training_curves_figure(data: dict) -> Figure:
    """F7: training loss (log scale) and attention entropy, one column per d_k.

    Both curves are running means over 10 steps: single batches are noisy,
    and on a log scale a lucky batch with loss near 0 would hide the trend.

    Examples
    --------
    >>> from attention_scaling.figures import training_curves_data, training_curves_figure
    >>> len(training_curves_figure(training_curves_data()).axes)
    6
    """
    runs = data["runs"]
    d_values = sorted({d_k for d_k, _ in runs})
    with style():
        figure = Figure(figsize=(7.0, 4.6), layout="constrained")
        axes = figure.subplots(2, len(d_values), sharex=True, squeeze=False)
        for column, d_k in enumerate(d_values):
            loss_ax, entropy_ax = axes[0, column], axes[1, column]
            for policy in ("none", "sqrt", "linear"):
                record = runs[d_k, policy]
                line_style = {key: value for key, value in POLICY_STYLE[policy].items() if key != "marker"}
                window = np.ones(10) / 10
                steps = np.arange(len(window) - 1, record.steps)
                loss_ax.plot(steps, np.convolve(record.loss, window, mode="valid"), **line_style)
                entropy_ax.plot(steps, np.convolve(record.entropy, window, mode="valid"), **line_style)
            loss_ax.set(yscale="log", ylabel="loss (nats)")
            loss_ax.set_title(f"$d_k = {d_k}$", fontsize=10)
            entropy_ax.set(xlabel="training step", ylabel="entropy (nats)")
        axes[0, 0].legend(fontsize=8)
    return figure


# -- F8: logits of correlated queries and keys under the two scales -----------------------------

# Correlations drawn in F8, with how each is drawn: colour, marker and the
# line style of its prediction, so the series differ without colour too.
_RHO_STYLE = {
    0.0: {"color": OKABE_ITO["blue"], "marker": "o", "linestyle": "-"},
    0.1: {"color": OKABE_ITO["orange"], "marker": "s", "linestyle": "--"},
    0.5: {"color": OKABE_ITO["vermillion"], "marker": "^", "linestyle": ":"},
}


def correlated_logits_data(n_samples: int = 4000, seed: int = 2024) -> dict[str, LogitMoments]:
    """Seeded mean and spread of the scaled logit for d_k = 16, ..., 1024 and rho = 0, 0.1, 0.5.

    Examples
    --------
    >>> from attention_scaling.figures import correlated_logits_data
    >>> data = correlated_logits_data(n_samples=100)
    >>> sorted(data), data["sqrt"].mean.shape
    (['linear', 'sqrt'], (3, 7))
    """
    return correlated_logit_sweep([2**i for i in range(4, 11)], list(_RHO_STYLE), n_samples, seed=seed)


def correlated_logits_figure(data: dict[str, LogitMoments]) -> Figure:
    r"""F8: the mean logit against d_k under each scale, one series per rho, with the proved mean and spread.

    Points are Monte Carlo means with bars of three standard errors; lines
    are the proved means; shaded bands span one proved standard deviation of
    the logit either side of the line.

    Examples
    --------
    >>> from attention_scaling.figures import correlated_logits_data, correlated_logits_figure
    >>> figure = correlated_logits_figure(correlated_logits_data(n_samples=100))
    >>> [ax.get_title() for ax in figure.axes]
    ['divided by $\\sqrt{d_k}$', 'divided by $d_k$']
    """
    titles = {"sqrt": r"divided by $\sqrt{d_k}$", "linear": r"divided by $d_k$"}
    with style():
        figure, axes = _new_figure(2, width=7.0, height=3.2)
        for ax, policy in zip(axes, ("sqrt", "linear")):
            moments = data[policy]
            grid = np.geomspace(moments.d_k[0], moments.d_k[-1], 200)
            grid_d = np.unique(np.round(grid).astype(int))
            handles, labels = [], []
            for row, rho in enumerate(moments.rho):
                style_ = _RHO_STYLE.get(float(rho), {"color": OKABE_ITO["black"], "marker": "x", "linestyle": "-"})
                mean = predicted_logit_mean(rho, grid_d, policy)
                spread = predicted_logit_std(rho, grid_d, policy)
                ax.fill_between(grid_d, mean - spread, mean + spread, color=style_["color"], alpha=0.12, linewidth=0)
                (line,) = ax.plot(grid_d, mean, color=style_["color"], linestyle=style_["linestyle"], linewidth=1.2)
                points = ax.errorbar(moments.d_k, moments.mean[row], yerr=3 * moments.mean_se[row],
                                     fmt=style_["marker"], color=style_["color"], markersize=5, capsize=2)
                # One legend entry per rho shows its marker over its line style.
                handles.append((line, points))
                labels.append(rf"$\rho = {rho:g}$")
            ax.set_xscale("log", base=2)
            ax.set(xlabel="head dimension $d_k$", ylabel=r"scaled logit $c\, q \cdot k$")
            ax.set_title(titles[policy], fontsize=10)
        axes[0].legend(handles, labels, loc="upper left", fontsize=8)
    return figure


# -- F9: entropy and largest weight against the number of keys ----------------------------------

#: How each spread s of the Gaussian logits is drawn in F9.
SPREAD_STYLE = {
    0.5: {"color": OKABE_ITO["blue"], "marker": "o"},
    1.0: {"color": OKABE_ITO["green"], "marker": "s"},
    2.0: {"color": OKABE_ITO["orange"], "marker": "^"},
    3.0: {"color": OKABE_ITO["vermillion"], "marker": "D"},
}


def long_sequence_entropy_data(seed: int = 8, budget: int = 2**19) -> LengthSweep:
    """Softmax over n = 16, 64, ..., 65536 Gaussian logits with s = 0.5, 1, 2, 3 (seeded).

    Examples
    --------
    >>> from attention_scaling.figures import long_sequence_entropy_data
    >>> data = long_sequence_entropy_data(budget=2**12)
    >>> data.n.tolist(), data.spreads.tolist()
    ([16, 64, 256, 1024, 4096, 16384, 65536], [0.5, 1.0, 2.0, 3.0])
    """
    return gaussian_logit_sweep([4**k for k in range(2, 9)], list(SPREAD_STYLE), seed=seed, budget=budget)


def long_sequence_entropy_figure(data: LengthSweep) -> Figure:
    r"""F9: measured entropy against n with the plug-in line, its error against s^2/(2 ln n), and the largest weight.

    Examples
    --------
    >>> from attention_scaling.figures import long_sequence_entropy_data, long_sequence_entropy_figure
    >>> figure = long_sequence_entropy_figure(long_sequence_entropy_data(budget=2**12))
    >>> [ax.get_xlabel() for ax in figure.axes]
    ['number of keys $n$', '$s^2 / (2 \\ln n)$', 'number of keys $n$']
    """
    with style():
        figure, (entropy_ax, error_ax, max_ax) = _new_figure(3, width=7.0, height=3.3)
        n = data.n
        for i, s in enumerate(data.spreads):
            look = SPREAD_STYLE.get(float(s), {"color": OKABE_ITO["black"], "marker": "x"})
            label = f"$s = {s:g}$"
            plug_in = plug_in_entropy(n, s)
            entropy_ax.errorbar(n, data.entropy[i], yerr=3 * data.entropy_se[i], fmt=look["marker"],
                                color=look["color"], markersize=4, label=label)
            entropy_ax.plot(n, plug_in, color=look["color"], linestyle="--", linewidth=1)
            error_ax.errorbar(freezing_ratio(n, s), data.entropy[i] - plug_in, yerr=3 * data.entropy_se[i],
                              fmt=look["marker"], color=look["color"], markersize=4)
            max_ax.errorbar(n, data.max_weight[i], yerr=3 * data.max_weight_se[i], fmt=look["marker"] + "-",
                            color=look["color"], markersize=4, linewidth=1)
        entropy_ax.plot([], [], color=OKABE_ITO["black"], linestyle="--", linewidth=1, label=r"$\ln n - s^2/2$")
        entropy_ax.axhline(0.0, color=OKABE_ITO["black"], linewidth=0.6)
        entropy_ax.set(xscale="log", xlabel="number of keys $n$", ylabel="entropy (nats)")
        entropy_ax.set_title("entropy, measured and plug-in", fontsize=9)
        entropy_ax.legend(fontsize=8, loc="upper left", handlelength=1.5)
        error_ax.axhline(0.0, color=OKABE_ITO["black"], linewidth=0.6)
        error_ax.axvline(1.0, color=OKABE_ITO["black"], linestyle=":", linewidth=1)
        error_ax.set(xlabel=r"$s^2 / (2 \ln n)$", ylabel="measured $-$ plug-in (nats)")
        error_ax.set_title("error of the plug-in entropy", fontsize=9)
        max_ax.plot(n, 1.0 / n, color=OKABE_ITO["black"], linestyle=":", linewidth=1, label="$1/n$")
        max_ax.set(xscale="log", yscale="log", xlabel="number of keys $n$", ylabel="largest weight")
        max_ax.set_title("largest weight", fontsize=9)
        max_ax.legend(fontsize=8, loc="lower left")
    return figure


# -- F10: entropy collapse against sigma (Zhai et al.'s bound) -------------------------------------


def entropy_collapse_data(n_tokens: int = 16, n_instances: int = 200, seed: int = 8) -> dict:
    """Lowest row entropy of random heads and of worst-case heads against sigma, with Zhai et al.'s bound.

    Examples
    --------
    >>> from attention_scaling.figures import entropy_collapse_data
    >>> data = entropy_collapse_data(n_instances=5)
    >>> data["n_tokens"], data["random"].sigma.shape
    (16, (5,))
    """
    from attention_scaling.logit_growth import (
        entropy_bound_check,
        entropy_from_logits,
        tight_instance,
        zhai_entropy_bound,
    )

    random = entropy_bound_check(n_instances, seed=seed, n_tokens=(n_tokens, n_tokens), sigma_range=(1e-2, 1e3))
    tight_sigma = np.linspace(0.0, 12.0, 13)
    tight_entropy = []
    for sigma in tight_sigma:
        x, w_q, w_k = tight_instance(n_tokens, float(sigma))
        tight_entropy.append(entropy_from_logits(attention_scores(x @ w_q, x @ w_k, scale=1.0))[0])
    log_grid, linear_grid = np.geomspace(1e-2, 1e3, 300), np.linspace(0.0, 12.0, 200)
    return {
        "n_tokens": n_tokens,
        "random": random,
        "log_grid": log_grid,
        "log_grid_bound": zhai_entropy_bound(log_grid, n_tokens),
        "linear_grid": linear_grid,
        "linear_grid_bound": zhai_entropy_bound(linear_grid, n_tokens),
        "tight_sigma": tight_sigma,
        "tight_entropy": np.array(tight_entropy),
    }


def entropy_collapse_figure(data: dict) -> Figure:
    r"""F10: lowest row entropy against sigma: random heads above the bound (left), worst-case heads on it (right, log scale).

    Examples
    --------
    >>> from attention_scaling.figures import entropy_collapse_data, entropy_collapse_figure
    >>> figure = entropy_collapse_figure(entropy_collapse_data(n_instances=5))
    >>> [ax.get_yscale() for ax in figure.axes]
    ['linear', 'log']
    """
    n_tokens = data["n_tokens"]
    bound_style = {"color": OKABE_ITO["black"], "linestyle": "-", "label": "bound of Zhai et al."}
    with style():
        figure, (random_ax, tight_ax) = _new_figure(2, height=3.2)
        random = data["random"]
        random_ax.plot(random.sigma, random.min_entropy, linestyle="none", marker="o", markersize=3,
                       color=OKABE_ITO["blue"], alpha=0.6, label="random heads")
        random_ax.plot(data["log_grid"], data["log_grid_bound"], **bound_style)
        random_ax.axhline(np.log(n_tokens), color=OKABE_ITO["black"], linestyle=":", linewidth=0.8,
                          label=f"uniform, $\\ln {n_tokens}$")
        random_ax.set(xscale="log", xlabel=r"$\boldsymbol{\sigma}$", ylabel="lowest row entropy (nats)",
                      ylim=(-0.1, np.log(n_tokens) + 0.3))
        random_ax.set_title(f"random heads, $T = {n_tokens}$", fontsize=10)
        random_ax.legend(loc="lower left", fontsize=8)
        tight_ax.plot(data["linear_grid"], data["linear_grid_bound"], **bound_style)
        tight_ax.plot(data["tight_sigma"], data["tight_entropy"], linestyle="none", marker="s",
                      color=OKABE_ITO["vermillion"], label="worst-case heads")
        tight_ax.set(yscale="log", xlabel=r"$\boldsymbol{\sigma}$", ylabel="entropy of row 1 (nats)")
        tight_ax.set_title("the bound is attained; log scale", fontsize=10)
        tight_ax.legend(loc="lower left", fontsize=8)
    return figure


# -- Registry -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FigureSpec:
    """How to make one figure: its data, its drawing, and what it shows."""

    data: Callable[[], object]
    draw: Callable[[object], Figure]
    title: str

    def make(self) -> Figure:
        """Compute the default data and draw it."""
        return self.draw(self.data())


#: Every figure of the site, by the name used in file names and labels.
FIGURES: dict[str, FigureSpec] = {
    "variance-vs-dk": FigureSpec(variance_vs_dk_data, variance_vs_dk_figure, "Var[q.k] against d_k"),
    "logit-histograms": FigureSpec(logit_histograms_data, logit_histograms_figure, "Scores at d_k = 64"),
    "saturation-onset": FigureSpec(saturation_onset_data, saturation_onset_figure, "softmax([x, 0, 0, 0])"),
    "three-regimes": FigureSpec(three_regimes_data, three_regimes_figure, "The three regimes"),
    "jacobian-vs-spread": FigureSpec(jacobian_vs_spread_data, jacobian_vs_spread_figure, "Jacobian norm against spread"),
    "temperature-patterns": FigureSpec(temperature_patterns_data, temperature_patterns_figure, "Temperatures"),
    "training-curves": FigureSpec(training_curves_data, training_curves_figure, "Training with each scale"),
    "correlated-logits": FigureSpec(correlated_logits_data, correlated_logits_figure,
                                    "Logits of correlated queries and keys under each scale"),
    "long-sequence-entropy": FigureSpec(long_sequence_entropy_data, long_sequence_entropy_figure,
                                        "Entropy against the number of keys"),
    "entropy-collapse": FigureSpec(entropy_collapse_data, entropy_collapse_figure, "Entropy collapse against sigma"),
}
