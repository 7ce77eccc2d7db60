r"""Page support for the section "Folding the constant into W_Q (T5)" (``docs/initialisation.md``, ``initialisation-folding``).

:func:`folding_section` measures one optimiser step of the scaled, unscaled
and folded heads (:func:`attention_scaling.folding.logit_updates`), checks
what the section's prose states about the ratios (raising
:class:`~attention_scaling.site.checks.PageCheckError` if a statement
fails) and returns a frozen record whose fields the page glues
(:func:`~attention_scaling.site.glue_fields`) and whose ``table`` it shows.
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

    Each ``*_max`` number is at the largest head dimension, ``d_k_max``.

    Attributes
    ----------
    measurement : LogitUpdates
        The seeded measurement; its ``n_seeds`` and ``lr`` are glued through it.
    table : str
        :func:`folding_table` of it.
    worst_sgd, worst_adam : float
        Largest relative deviation, over every d_k and seed, of the query-path
        ratio from :math:`c^2` (SGD) and from :math:`c` (Adam).
    d_k_max : int
        The largest head dimension measured.
    both_sgd_max, both_adam_max : float
        The median scaled/folded ratio with both matrices updated, under SGD and Adam.
    c2_max, c_max : float
        :math:`c^2 = 1/d_k` and :math:`c = 1/\\sqrt{d_k}`, their predictions on the :math:`W_Q` path.
    unscaled_k_sgd_max : float
        The median unscaled/folded ratio on the :math:`W_K` path under SGD.
    tolerance_sgd, tolerance_adam : float
        The largest relative deviation from the prediction that the checks allow.
    """

    measurement: LogitUpdates
    table: str
    worst_sgd: float
    worst_adam: float
    d_k_max: int
    both_sgd_max: float
    both_adam_max: float
    c2_max: float
    c_max: float
    unscaled_k_sgd_max: float
    tolerance_sgd: float
    tolerance_adam: float


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
    >>> from attention_scaling.site import glue_fields
    >>> from attention_scaling.site.folding import folding_section
    >>> section = folding_section(n_seeds=2)
    >>> section.worst_sgd < 1e-9, glue_fields(section, "fold")["fold_d_k_max"]
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
    d_k_max = result.d_ks[-1]
    return FoldingSection(
        measurement=result,
        table=folding_table(result),
        worst_sgd=worst["sgd"],
        worst_adam=worst["adam"],
        d_k_max=d_k_max,
        both_sgd_max=float(result.quantiles("sgd", "both")[1][-1]),
        both_adam_max=float(result.quantiles("adam", "both")[1][-1]),
        c2_max=1.0 / d_k_max,
        c_max=float(1.0 / np.sqrt(d_k_max)),
        unscaled_k_sgd_max=float(result.quantiles("sgd", "W_K", "unscaled")[1][-1]),
        tolerance_sgd=_TOLERANCE["sgd"],
        tolerance_adam=_TOLERANCE["adam"],
    )
