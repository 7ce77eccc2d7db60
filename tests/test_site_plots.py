"""Draw helpers: each draws a small data record on given Axes and returns what it drew."""

import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.colorbar import Colorbar
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.legend import Legend
from matplotlib.lines import Line2D

from attention_scaling.correlation import correlated_logits_data
from attention_scaling.logit_growth import entropy_collapse_data
from attention_scaling.long_sequences import long_sequence_entropy_data
from attention_scaling.simulate import ScoreSamples, VarianceSweep
from attention_scaling.regimes import (
    SaturationCurve,
    TemperaturePatterns,
    jacobian_vs_spread_data,
    three_regimes_data,
)
from attention_scaling.site import plots
from attention_scaling.training import TrainingCurves, ablation

BLUE, BLACK = plots.OKABE_ITO["blue"], plots.OKABE_ITO["black"]


def panels(n, rows=1):
    return Figure().subplots(rows, n, squeeze=False)[0] if rows == 1 else Figure().subplots(rows, n, squeeze=False)


def kinds(artists):
    """The type of each artist, as the classes the tests name (fill_between's collection is a PolyCollection)."""
    named = (PolyCollection, Line2D, ErrorbarContainer, Legend, AxesImage, Colorbar)
    return [next((kind for kind in named if isinstance(artist, kind)), type(artist)) for artist in artists]


def test_variance_vs_dk_draws_the_estimates_against_the_proved_lines():
    d = np.array([1, 2, 4])
    data = VarianceSweep(d_k=d, n_samples=10, mean=np.zeros(3), mean_se=np.ones(3),
                         variance=np.array([1.1, 1.9, 4.2]), variance_se=np.array([0.1, 0.2, 0.4]))
    raw, scaled = axes = panels(2)
    artists = plots.draw_variance_vs_dk(axes, data)
    assert kinds(artists) == [ErrorbarContainer, Line2D, Legend, ErrorbarContainer, Line2D, Legend]
    points, proved = artists[0][0], artists[1]
    assert np.array_equal(points.get_ydata(), data.variance) and np.array_equal(proved.get_ydata(), d)
    # The right panel divides by d_k; its proved line is 1.
    assert np.allclose(artists[3][0].get_ydata(), data.variance / d)
    assert list(artists[4].get_ydata()) == [1.0, 1.0]
    assert raw.get_yscale() == "log" and scaled.get_ylim() == (0.5, 1.5)
    assert points.get_color() == BLUE and proved.get_color() == BLACK


def test_logit_histograms_draws_a_histogram_and_the_proved_density_per_panel():
    scores = np.array([-16.0, -8.0, 0.0, 8.0, 16.0])
    axes = panels(2)
    artists = plots.draw_logit_histograms(axes, ScoreSamples(d_k=64, unscaled=scores, scaled=scores / 8))
    bars_left, density_left, _, bars_right, density_right, _ = artists
    assert len(bars_left) == len(bars_right) == 60
    # The normal density of variance d_k peaks at 1/sqrt(2 pi d_k), of variance 1 at 1/sqrt(2 pi).
    assert density_left.get_ydata().max() == pytest.approx(1 / np.sqrt(2 * np.pi * 64), rel=1e-3)
    assert density_right.get_ydata().max() == pytest.approx(1 / np.sqrt(2 * np.pi), rel=1e-3)
    assert axes[0].get_title() == "unscaled: $q \\cdot k$, $d_k = 64$"


def test_saturation_onset_marks_the_onset():
    x = np.linspace(0, 4, 5)
    weight = np.array([0.25, 0.47, 0.71, 0.87, 0.95])
    data = SaturationCurve(n_scores=4, x=x, weight=weight, slope=weight * (1 - weight), onset=2.5)
    ax = Figure().subplots()
    weight_line, slope_line, onset, legend = plots.draw_saturation_onset(ax, data)
    assert np.array_equal(weight_line.get_ydata(), weight) and slope_line.get_linestyle() == "--"
    assert list(onset.get_xdata()) == [2.5, 2.5]
    assert [text.get_text() for text in legend.get_texts()][-1] == "slope below a tenth of its peak"
    assert "with 4 scores" in ax.get_title()


def test_three_regimes_draws_a_band_per_policy_in_the_policy_colours():
    data = three_regimes_data(n_keys=4, n_queries=4, seed=3)
    entropy_ax, max_ax = axes = panels(2)
    artists = plots.draw_three_regimes(axes, data)
    assert kinds(artists) == [Line2D, PolyCollection] * 6 + [Line2D, Legend]
    colours = [line.get_color() for line in entropy_ax.get_lines()]
    assert colours == [plots.POLICY_STYLE[policy]["color"] for policy in ("none", "sqrt", "linear")]
    assert list(artists[-2].get_ydata()) == [0.25, 0.25]  # the uniform weight 1/n
    assert [text.get_text() for text in artists[-1].get_texts()][:3] == ["no scaling", r"$1/\sqrt{d_k}$", r"$1/d_k$"]


def test_jacobian_vs_spread_marks_the_scaled_and_unscaled_spreads():
    data = jacobian_vs_spread_data(n_keys=4, n_samples=5, seed=5)
    ax = Figure().subplots()
    line, band, scaled, unscaled, legend = plots.draw_jacobian_vs_spread(ax, data)
    assert isinstance(band, PolyCollection) and isinstance(legend, Legend)
    assert np.array_equal(line.get_ydata(), data.jacobian_norm)
    assert list(scaled.get_xdata()) == [1.0, 1.0] and list(unscaled.get_xdata()) == [8.0, 8.0]


def test_temperature_patterns_draws_three_maps_on_one_scale_and_a_colour_bar():
    eye = np.eye(3)
    data = TemperaturePatterns(d_k=4, temperatures=(1.0, 2.0, 4.0), weights=(eye, eye / 2 + 0.1, np.full((3, 3), 1 / 3)))
    figure = Figure()
    artists = plots.draw_temperature_patterns(figure.subplots(1, 3), data)
    assert kinds(artists) == [AxesImage] * 3 + [Colorbar]
    assert all(image.get_clim() == (0.0, 1.0) for image in artists[:3])
    assert np.array_equal(artists[0].get_array(), eye)
    assert len(figure.axes) == 4


def test_temperature_patterns_needs_three_temperatures():
    data = TemperaturePatterns(d_k=4, temperatures=(1.0,), weights=(np.eye(2),))
    with pytest.raises(ValueError, match="draws 3 temperatures; got 1"):
        plots.draw_temperature_patterns(panels(3), data)


def test_training_curves_draws_smoothed_loss_and_entropy_per_run():
    runs = ablation((2, 4), ("none", "sqrt"), steps=12, batch=2, n=3, d_model=4)
    data = TrainingCurves(runs, (2, 4), ("none", "sqrt"))
    axes = panels(2, rows=2)
    artists = plots.draw_training_curves(axes, data)
    assert kinds(artists) == [Line2D] * 8 + [Legend]
    first_loss = artists[0]
    # A running mean over 10 steps: 12 steps give 3 points, the first the mean of steps 0-9.
    assert first_loss.get_xdata().tolist() == [9, 10, 11]
    assert first_loss.get_ydata()[0] == pytest.approx(runs[2, "none"].loss[:10].mean())
    assert axes[0, 1].get_title() == "$d_k = 4$" and axes[0, 0].get_yscale() == "log"


def test_training_curves_needs_a_grid_matching_the_dimensions():
    runs = ablation((2,), ("sqrt",), steps=10, batch=2, n=3, d_model=4)
    with pytest.raises(ValueError, match=r"2 x 1 grid of Axes; got shape \(2,\)"):
        plots.draw_training_curves(panels(2), TrainingCurves(runs, (2,), ("sqrt",)))


def test_correlated_logits_draws_a_series_per_rho_and_one_legend():
    data = correlated_logits_data(n_samples=20, seed=1)
    axes = panels(2)
    artists = plots.draw_correlated_logits(axes, data)
    assert kinds(artists) == [PolyCollection, Line2D, ErrorbarContainer] * 6 + [Legend]
    assert [text.get_text() for text in artists[-1].get_texts()] == [r"$\rho = 0$", r"$\rho = 0.1$", r"$\rho = 0.5$"]
    # Divided by d_k the proved mean is rho itself, a flat line.
    rho_half = artists[3 * 5 + 1]
    assert np.allclose(rho_half.get_ydata(), 0.5)
    assert axes[0].get_xscale() == "log" and axes[1].get_legend() is None


def test_long_sequence_entropy_draws_every_spread_on_three_panels():
    data = long_sequence_entropy_data(seed=8, budget=2**8)
    artists = plots.draw_long_sequence_entropy(panels(3), data)
    per_spread = [ErrorbarContainer, Line2D, ErrorbarContainer, ErrorbarContainer]
    assert kinds(artists) == per_spread * 4 + [Line2D, Line2D, Legend, Line2D, Line2D, Line2D, Legend]
    assert artists[0][0].get_color() == plots.SPREAD_STYLE[0.5]["color"]


def test_entropy_collapse_draws_heads_and_the_bound():
    data = entropy_collapse_data(n_tokens=4, n_instances=6, seed=8)
    random_ax, tight_ax = axes = panels(2)
    artists = plots.draw_entropy_collapse(axes, data)
    assert kinds(artists) == [Line2D, Line2D, Line2D, Legend, Line2D, Line2D, Legend]
    assert np.array_equal(artists[0].get_xdata(), data.random.sigma)
    assert artists[2].get_ydata()[0] == pytest.approx(np.log(4))
    assert random_ax.get_xscale() == "log" and tight_ax.get_yscale() == "log"


@pytest.mark.parametrize(
    "draw, count",
    [(plots.draw_variance_vs_dk, 2), (plots.draw_saturation_onset, 1), (plots.draw_temperature_patterns, 3),
     (plots.draw_long_sequence_entropy, 3)],
)
def test_the_wrong_number_of_axes_is_refused(draw, count):
    with pytest.raises(ValueError, match=f"draws on {count} Axes; got {count + 1} item"):
        draw(panels(count + 1), None)


def test_the_wrong_record_is_refused():
    with pytest.raises(TypeError, match="variance-vs-dk draws a VarianceSweep; got dict"):
        plots.draw_variance_vs_dk(panels(2), {"d_k": [1]})


def test_helpers_draw_in_the_site_style_without_leaking_it():
    import matplotlib as mpl

    before = mpl.rcParams["legend.frameon"]
    axes = panels(2)
    d = np.array([1, 2])
    data = VarianceSweep(d_k=d, n_samples=4, mean=np.zeros(2), mean_se=np.ones(2), variance=d * 1.0,
                         variance_se=np.ones(2))
    legend = plots.draw_variance_vs_dk(axes, data)[2]
    assert legend.get_frame_on() is False
    assert mpl.rcParams["legend.frameon"] == before
