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

Helpers live in submodules by chapter (``derivations``, ``beyond``, ``gap``, ``gradients``) and the
shared style in ``style``; all are importable from here, e.g.
``attention_scaling.site.plots.draw_three_regimes``.
"""

from attention_scaling.site.plots.beyond import (
    draw_correlated_logits,
    draw_entropy_collapse,
    draw_long_sequence_entropy,
    draw_training_curves,
)
from attention_scaling.site.plots.derivations import (
    draw_jacobian_vs_spread,
    draw_logit_histograms,
    draw_saturation_onset,
    draw_temperature_patterns,
    draw_three_regimes,
    draw_variance_vs_dk,
)
from attention_scaling.site.plots.depth import draw_lipschitz_growth, draw_rank_collapse
from attention_scaling.site.plots.gap import draw_saturated_rows
from attention_scaling.site.plots.gradients import draw_gradient_distribution
from attention_scaling.site.plots.style import OKABE_ITO, POLICY_STYLE, RHO_STYLE, SPREAD_STYLE, style
from attention_scaling.site.plots.training import draw_tuned_learning_rates
from attention_scaling.site.plots.temperatures import draw_length_multipliers
from attention_scaling.site.plots.bounded import draw_capped_gradients, draw_dispersion

__all__ = [
    "OKABE_ITO",
    "POLICY_STYLE",
    "RHO_STYLE",
    "SPREAD_STYLE",
    "draw_correlated_logits",
    "draw_entropy_collapse",
    "draw_gradient_distribution",
    "draw_jacobian_vs_spread",
    "draw_logit_histograms",
    "draw_long_sequence_entropy",
    "draw_saturated_rows",
    "draw_saturation_onset",
    "draw_temperature_patterns",
    "draw_three_regimes",
    "draw_training_curves",
    "draw_tuned_learning_rates",
    "draw_variance_vs_dk",
    "style",
    "draw_lipschitz_growth",
    "draw_rank_collapse",
    "draw_length_multipliers",
    "draw_capped_gradients",
    "draw_dispersion",
]
