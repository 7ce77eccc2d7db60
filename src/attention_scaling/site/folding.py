r"""Page support for the section "Folding the constant into W_Q (T5)" (``docs/initialisation.md``, ``initialisation-folding``).

:func:`folding_section` measures one optimiser step of the scaled, unscaled
and folded heads (:func:`attention_scaling.folding.logit_updates`), checks
what the section's prose states about the ratios (raising
:class:`~attention_scaling.site.checks.PageCheckError` if a statement
fails) and returns a frozen record whose ``glue_values()`` maps each glue
key of the prose to its value, and whose ``table`` the page shows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_scaling.folding import OPTIMISERS, PATHS, LogitUpdates, logit_updates
from attention_scaling.site.checks import require
from attention_scaling.site.tables import markdown_table

__all__ = ["FoldingSection", "folding_section", "folding_table"]

# Relative agreement the prose claims between a measured query-path ratio and thm-logit-update's
# prediction. SGD's is exact up to rounding (the score is linear in W_Q when only W_Q moves);
# Adam's step is g/(|g| + eps), which differs from sign(g) by eps/|g|: a few 1e-6 for the
# smallest gradient entries of these draws, so Adam is held to 1e-4.
_TOLERANCE = {"sgd": 1e-9, "adam": 1e-4}

_OPTIMISER_NAMES = {"sgd": "SGD", "adam": "Adam"}
_PATH_NAMES = {"W_Q": "$W_Q$ only", "W_K": "$W_K$ only", "both": "both"}


def folding_table(result: LogitUpdates) -> str:
    r"""A Markdown table of the scaled/folded ratios: median and 10 %–90 % quantiles over seeds, with the prediction.

    Examples
    --------
    >>> from attention_scaling.folding import logit_updates
    >>> from attention_scaling.site.folding import folding_table
    >>> print(folding_table(logit_updates((4,), n_seeds=2, d_model=8, batch=4, n=4)).splitlines()[0])
    | optimiser | step on | predicted | $d_k = 4$ |
    """
    header = ["optimiser", "step on", "predicted", *(f"$d_k = {d_k}$" for d_k in result.d_ks)]
    rows = []
    for optimiser in OPTIMISERS:
        for path in PATHS:
            low, median, high = result.quantiles(optimiser, path)
            predicted = {"W_Q": "$c^2$" if optimiser == "sgd" else "$c$", "W_K": "1", "both": "—"}[path]
            cells = [f"{m:.4g} [{lo:.4g}, {hi:.4g}]" for lo, m, hi in zip(low, median, high)]
            rows.append([_OPTIMISER_NAMES[optimiser], _PATH_NAMES[path], predicted, *cells])
    return markdown_table(header, rows, align=["left", "left", "center"] + ["right"] * len(result.d_ks))


@dataclass(frozen=True)
class FoldingSection:
    """What section ``initialisation-folding`` shows.

    Attributes
    ----------
    measurement : LogitUpdates
        The seeded measurement.
    table : str
        :func:`folding_table` of it.
    worst_sgd, worst_adam : float
        Largest relative deviation, over every d_k and seed, of the query-path
        ratio from :math:`c^2` (SGD) and from :math:`c` (Adam).
    """

    measurement: LogitUpdates
    table: str
    worst_sgd: float
    worst_adam: float

    def glue_values(self) -> dict[str, object]:
        """The glue keys of the section's prose and their values."""
        m = self.measurement
        both_sgd, both_adam = m.quantiles("sgd", "both")[1], m.quantiles("adam", "both")[1]
        unscaled_sgd_k = m.quantiles("sgd", "W_K", "unscaled")[1]
        return {
            "fold_n_seeds": m.n_seeds,
            "fold_lr": m.lr,
            "fold_d_k_max": m.d_ks[-1],
            "fold_worst_sgd": self.worst_sgd,
            "fold_worst_adam": self.worst_adam,
            "fold_both_sgd_max": float(both_sgd[-1]),
            "fold_both_adam_max": float(both_adam[-1]),
            "fold_c2_max": 1.0 / m.d_ks[-1],
            "fold_c_max": float(1.0 / np.sqrt(m.d_ks[-1])),
            "fold_unscaled_k_sgd_max": float(unscaled_sgd_k[-1]),
            "fold_tolerance_sgd": _TOLERANCE["sgd"],
            "fold_tolerance_adam": _TOLERANCE["adam"],
        }


def folding_section(**kwargs) -> FoldingSection:
    r"""Measure the logit updates and check what the section says of them.

    Checks that on the :math:`W_Q` path the scaled/folded ratio equals
    :math:`c^2` under SGD and :math:`c` under Adam, and on the :math:`W_K`
    path 1, to a relative ``1e-9`` (SGD) and ``1e-4`` (Adam, whose
    :math:`\epsilon` shows) for every :math:`d_k` and seed; and
    that with both matrices updated the median ratio lies between the two
    paths' predictions and falls with :math:`d_k`.

    Parameters
    ----------
    **kwargs
        Passed to :func:`~attention_scaling.folding.logit_updates` (the page uses its defaults).

    Raises
    ------
    PageCheckError
        If one of these statements fails.

    Examples
    --------
    >>> from attention_scaling.site.folding import folding_section
    >>> section = folding_section(n_seeds=2)
    >>> section.worst_sgd < 1e-9, section.glue_values()["fold_d_k_max"]
    (True, 256)
    """
    where = "initialisation-folding"
    result = logit_updates(**kwargs)
    worst = {}
    for optimiser in OPTIMISERS:
        predicted = result.prediction(optimiser, "W_Q")[:, None]
        deviation = np.abs(result.scaled_over_folded[optimiser, "W_Q"] / predicted - 1)
        worst[optimiser] = float(deviation.max())
        require(worst[optimiser] < _TOLERANCE[optimiser], where,
                f"{optimiser}: the W_Q-path ratio is the prediction to {_TOLERANCE[optimiser]:g}",
                worst=worst[optimiser])
        key_deviation = float(np.abs(result.scaled_over_folded[optimiser, "W_K"] - 1).max())
        require(key_deviation < _TOLERANCE[optimiser], where,
                f"{optimiser}: the W_K-path ratio is 1 to {_TOLERANCE[optimiser]:g}", worst=key_deviation)
        both = result.quantiles(optimiser, "both")[1]
        require(np.all((both > result.prediction(optimiser, "W_Q")) & (both < 1)) and np.all(np.diff(both) < 0),
                where, f"{optimiser}: the median ratio of the full step lies between the paths' and falls with d_k",
                median=both)
    return FoldingSection(result, folding_table(result), worst["sgd"], worst["adam"])
