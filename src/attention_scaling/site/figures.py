r"""Every figure of the site, by name: where its data comes from, its size and grid, and its draw helper.

A page makes a figure's Figure with :func:`new_figure`, draws its data with
the figure's helper from :mod:`attention_scaling.site.plots` and glues it;
the command line (``python -m attention_scaling figures``) makes each figure
from its default data with :func:`make_figure`. Both get the same size and
grid from ``FIGURES``, so an exported file shows what the page shows.

Every figure is registered with :func:`register_figure`: those of the first
chapters here, a newer page's from its own support module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from matplotlib.figure import Figure

from attention_scaling.correlation import correlated_logits_data
from attention_scaling.depth import lipschitz_growth_data, rank_collapse_data
from attention_scaling.saturation import gradient_distribution
from attention_scaling.logit_growth import entropy_collapse_data
from attention_scaling.long_sequences import long_sequence_entropy_data
from attention_scaling.simulate import logit_histograms_data, variance_vs_dk_data
from attention_scaling.regimes import (
    jacobian_vs_spread_data,
    saturation_onset_data,
    temperature_patterns_data,
    three_regimes_data,
)
from attention_scaling.site import import_pages, plots
from attention_scaling.saturation import saturated_rows_data
from attention_scaling.training import training_curves_data
from attention_scaling.tuning import tuned_learning_rates_data
from attention_scaling.temperatures import temperature_sweep
from attention_scaling.bounded_logits import capped_gradients, largest_weights

__all__ = ["FIGURES", "FigureSpec", "make_figure", "new_figure", "register_figure"]


@dataclass(frozen=True)
class FigureSpec:
    """How to make one figure: its data, its layout, its drawing, and what it shows.

    Attributes
    ----------
    data : callable
        Computes the figure's default (seeded) data record.
    draw : callable
        ``draw(axes, data)``, a helper of ``attention_scaling.site.plots``.
    title : str
        What the figure shows, in a few words.
    nrows, ncols : int, default 1
        The grid of Axes.
    width, height : float, default 7.0 and 3.0
        The size in inches.
    sharex : bool, default False
        Whether the Axes share their x axis.
    """

    data: Callable[[], Any]
    draw: Callable[[Any, Any], list]
    title: str
    nrows: int = 1
    ncols: int = 1
    width: float = 7.0
    height: float = 3.0
    sharex: bool = False

    def new_figure(self) -> tuple[Figure, Any]:
        """An empty Figure of this size, and its Axes as ``draw`` takes them.

        The Axes come as from ``Figure.subplots``: one Axes for a single
        panel, a 1-D array for one row, a 2-D array for a grid.
        """
        with plots.style():
            # Figure() rather than plt.figure(): nothing is registered with
            # pyplot, so pages and the export never accumulate open figures.
            figure = Figure(figsize=(self.width, self.height), layout="constrained")
            axes = figure.subplots(self.nrows, self.ncols, sharex=self.sharex)
        return figure, axes

    def make(self, data=None) -> Figure:
        """Draw ``data`` (by default, the default data) on a new Figure."""
        figure, axes = self.new_figure()
        self.draw(axes, self.data() if data is None else data)
        return figure


#: Every figure of the site, by the name used in file names and labels (``fig-<name>``),
#: in the order registered: the first chapters' below, a newer page's from its support module.
FIGURES: dict[str, FigureSpec] = {}


def register_figure(name: str, data: Callable[[], Any], draw: Callable[[Any, Any], list], title: str,
                    **layout) -> FigureSpec:
    """Register a page's figure, from the page's support module; return its spec.

    Parameters
    ----------
    name : str
        The figure's name: its label is ``fig-<name>`` and its file ``<name>.svg``.
    data, draw, title
        As the attributes of :class:`FigureSpec`.
    **layout
        ``nrows``, ``ncols``, ``width``, ``height``, ``sharex``, as :class:`FigureSpec` takes them.

    Returns
    -------
    FigureSpec
        Also kept in ``FIGURES[name]``.

    Raises
    ------
    ValueError
        If a figure of that name is registered already.

    Examples
    --------
    >>> from attention_scaling.site.figures import FIGURES, register_figure
    >>> spec = register_figure("demo-line", lambda: [0, 1], lambda axes, data: axes.plot(data), "A line")
    >>> FIGURES["demo-line"] is spec, spec.make().axes[0].lines[0].get_ydata().tolist()
    (True, [0, 1])
    >>> register_figure("demo-line", spec.data, spec.draw, "Again")
    Traceback (most recent call last):
    ...
    ValueError: the figure demo-line is registered twice: give the second figure a name of its own
    >>> del FIGURES["demo-line"]  # the example leaves the registry as it found it
    """
    if name in FIGURES:
        raise ValueError(f"the figure {name} is registered twice: give the second figure a name of its own")
    FIGURES[name] = FigureSpec(data, draw, title, **layout)
    return FIGURES[name]


# The figures of the first chapters, whose data and drawings live in the library and in plots.
register_figure("variance-vs-dk", variance_vs_dk_data, plots.draw_variance_vs_dk, "Var[q.k] against d_k", ncols=2)
register_figure("logit-histograms", logit_histograms_data, plots.draw_logit_histograms, "Scores at d_k = 64", ncols=2)
register_figure("saturation-onset", saturation_onset_data, plots.draw_saturation_onset, "softmax([x, 0, 0, 0])")
register_figure("three-regimes", three_regimes_data, plots.draw_three_regimes, "The three regimes", ncols=2)
# The first page shows the same drawing, as its one figure, under a label of its own.
register_figure("index-three-regimes", three_regimes_data, plots.draw_three_regimes, "The three regimes (first page)", ncols=2)
register_figure("jacobian-vs-spread", jacobian_vs_spread_data, plots.draw_jacobian_vs_spread,
                "Jacobian norm against spread")
register_figure("temperature-patterns", temperature_patterns_data, plots.draw_temperature_patterns,
                "Temperatures", ncols=3, height=2.7)
register_figure("training-curves", training_curves_data, plots.draw_training_curves,
                "Training with each scale", nrows=2, ncols=3, height=4.6, sharex=True)
register_figure("tuned-learning-rates", tuned_learning_rates_data, plots.draw_tuned_learning_rates,
                "Final loss against learning rate under each scale", nrows=2, ncols=3, height=5.0)
register_figure("correlated-logits", correlated_logits_data, plots.draw_correlated_logits,
                "Logits of correlated queries and keys under each scale", ncols=2, height=3.2)
register_figure("long-sequence-entropy", long_sequence_entropy_data, plots.draw_long_sequence_entropy,
                "Entropy against the number of keys", ncols=3, height=3.3)
register_figure("entropy-collapse", entropy_collapse_data, plots.draw_entropy_collapse,
                "Entropy collapse against sigma", ncols=2, height=3.2)
register_figure("saturated-rows", saturated_rows_data, plots.draw_saturated_rows,
                "Rows that still pass a gradient, against d_k", height=3.4)
register_figure("gradient-distribution", gradient_distribution, plots.draw_gradient_distribution,
                "Gradient sizes per row against d_k", ncols=3, height=3.0)
register_figure("rank-collapse", rank_collapse_data, plots.draw_rank_collapse,
                "Relative residual against depth under each scale", ncols=2, height=3.2)
register_figure("lipschitz-growth", lipschitz_growth_data, plots.draw_lipschitz_growth,
                "Jacobian norm of self-attention against the input scale", height=3.4)
register_figure("length-multipliers", temperature_sweep, plots.draw_length_multipliers,
                "Logit multiplier against n, and the entropy it gives", ncols=2, height=3.6)
register_figure("capped-gradients", capped_gradients, plots.draw_capped_gradients,
                "Softmax gradient per row against d_k, with and without a cap", height=3.4)
register_figure("dispersion", largest_weights, plots.draw_dispersion,
                "The largest weight of bounded logits against n", height=3.2)


def _spec(name: str) -> FigureSpec:
    if name not in FIGURES:
        # A figure of a newer page is registered when its support module is imported.
        import_pages()
    if name not in FIGURES:
        raise ValueError(f"name must be one of the site's figures {sorted(FIGURES)}; got {name!r}")
    return FIGURES[name]


def new_figure(name: str) -> tuple[Figure, Any]:
    """An empty Figure for the named figure, with its registered size and grid, and its Axes.

    Parameters
    ----------
    name : str
        A key of ``FIGURES``, e.g. ``"three-regimes"``.

    Returns
    -------
    figure : matplotlib.figure.Figure
        Not registered with pyplot; the caller owns it.
    axes : matplotlib.axes.Axes or numpy.ndarray of them
        As the figure's draw helper takes them.

    Raises
    ------
    ValueError
        If ``name`` is not a figure of the site.

    Examples
    --------
    >>> from attention_scaling.site.figures import new_figure
    >>> figure, axes = new_figure("three-regimes")
    >>> axes.shape, [float(size) for size in figure.get_size_inches()]
    ((2,), [7.0, 3.0])
    """
    return _spec(name).new_figure()


def make_figure(name: str, data=None) -> Figure:
    """The named figure, drawn from ``data`` or, by default, from its default data.

    Parameters
    ----------
    name : str
        A key of ``FIGURES``.
    data : optional
        The record to draw, as the figure's data function returns it.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        If ``name`` is not a figure of the site.

    Examples
    --------
    >>> from attention_scaling.site.figures import make_figure
    >>> make_figure("saturation-onset").axes[0].get_xlabel()
    'margin $x$ of the preferred score'
    """
    return _spec(name).make(data)
