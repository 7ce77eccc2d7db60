r"""Page support for "Training with each scale" (``docs/training.md``).

One function per section: the gradient check, the learning curves (the
figure's data is computed and drawn on the page), the table of where
training ends, and the tuned learning rates (their numbers and table). Each checks what the prose says and returns a record whose
fields are the numbers the prose quotes, glued by :func:`~attention_scaling.site.glue_fields`, or a Markdown table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attention_scaling._checks import integer_at_least
from attention_scaling.site.checks import require
from attention_scaling.site.tables import markdown_table
from attention_scaling.training import TrainingCurves, TrainingRecord
from attention_scaling.tuning import VARIANTS, LearningRateTuning, folding_gap as _folding_gap, sign_test

__all__ = [
    "CurveNumbers",
    "GradientCheck",
    "TunedNumbers",
    "ablation_table",
    "curve_numbers",
    "gradient_numbers",
    "ranking_table",
    "tuned_numbers",
    "tuning_table",
]

_PAGE = "training.md"


def _where(section: str) -> str:
    return f"{_PAGE}, section {section}"


# The hand-written gradient must agree with central differences to this
# relative error; with a step of 1e-6 in float64 agreement is about 1e-9.
_GRADIENT_TOLERANCE = 1e-6


@dataclass(frozen=True)
class GradientCheck:
    """How far the hand-written gradient is from central finite differences.

    Attributes
    ----------
    error : float
        The largest relative difference.
    tolerance : float
        The largest the page accepts.
    """

    error: float
    tolerance: float


def gradient_numbers(error: float) -> GradientCheck:
    """The section "The task and the model": the gradient check of the page's cell.

    Parameters
    ----------
    error : float
        The largest relative difference between the hand-written gradient and
        central differences (:func:`~attention_scaling.retrieval.gradient_check`).

    Returns
    -------
    GradientCheck

    Raises
    ------
    PageCheckError
        If ``error`` is not below :math:`10^{-6}`.

    Examples
    --------
    >>> from attention_scaling.site import glue_fields
    >>> from attention_scaling.site.training import gradient_numbers
    >>> glue_fields(gradient_numbers(1e-9), "training_gradient")
    {'training_gradient_error': 1e-09, 'training_gradient_tolerance': 1e-06}
    """
    error = float(error)
    require(error < _GRADIENT_TOLERANCE, _where("training-task"),
            "the hand-written gradient agrees with central differences",
            error=error, tolerance=_GRADIENT_TOLERANCE)
    return GradientCheck(error=error, tolerance=_GRADIENT_TOLERANCE)


@dataclass(frozen=True)
class CurveNumbers:
    r"""Where each run of the ablation starts, and how it was trained.

    Attributes
    ----------
    start_loss : dict
        ``{policy: {str(d_k): loss of the initial weights}}``; string keys,
        so that each is glued as ``<prefix>_start_loss_<policy>_<d_k>``.
    uniform_loss : float
        :math:`\ln n`, the loss of uniform attention over :math:`n` keys.
    steps : int
        Training steps of every run.
    lr : float
        The shared learning rate.
    """

    start_loss: dict[str, dict[str, float]]
    uniform_loss: float
    steps: int
    lr: float


def curve_numbers(training: TrainingCurves, n_keys: int = 16) -> CurveNumbers:
    r"""The section "Learning curves": the first loss of every run.

    Parameters
    ----------
    training : attention_scaling.training.TrainingCurves
        The figure's data; its runs must include the policy ``"none"``.
    n_keys : int, default 16
        Keys per example of the task (the ablation's default), for the
        loss of uniform attention.

    Returns
    -------
    CurveNumbers

    Raises
    ------
    PageCheckError
        Unless, without scaling, the first loss grows with :math:`d_k` and is
        above the uniform :math:`\ln n` at every :math:`d_k` (the prose: "the
        untrained head is already confidently wrong").

    Examples
    --------
    >>> from attention_scaling.site import glue_fields
    >>> from attention_scaling.training import TrainingCurves, ablation
    >>> from attention_scaling.site.training import curve_numbers
    >>> runs = ablation((16, 256), ("none", "sqrt"), steps=2)
    >>> numbers = curve_numbers(TrainingCurves(runs, (16, 256), ("none", "sqrt")))
    >>> sorted(glue_fields(numbers, "training"))[:2]
    ['training_lr', 'training_start_loss_none_16']
    """
    n_keys = integer_at_least(n_keys, "n_keys", 2)
    start: dict[str, dict[str, float]] = {}
    for (d_k, policy), record in training.runs.items():
        start.setdefault(policy, {})[str(d_k)] = float(record.loss[0])
    uniform = float(math.log(n_keys))
    unscaled = [start["none"][str(d_k)] for d_k in training.d_values]
    require(all(a < b for a, b in zip(unscaled, unscaled[1:])), _where("training-curves"),
            "without scaling the first loss grows with d_k", d_values=training.d_values, first_loss=unscaled)
    require(min(unscaled) > uniform, _where("training-curves"),
            "without scaling the first loss is above that of uniform attention",
            first_loss=unscaled, uniform=uniform)
    first = next(iter(training.runs.values()))
    return CurveNumbers(start_loss=start, uniform_loss=uniform, steps=first.steps, lr=first.lr)


def ablation_table(results: dict[tuple[int, str], TrainingRecord], *, window: int = 10) -> str:
    """A Markdown table of each run's final loss, accuracy and entropy.

    Parameters
    ----------
    results : dict
        As returned by :func:`~attention_scaling.training.ablation`.
    window : int, default 10
        How many final steps each number averages.

    Returns
    -------
    str
        One row per run, plus the step at which it diverged, if it did.

    Raises
    ------
    TypeError
        If ``results`` is not a dict of training records.

    Examples
    --------
    >>> from attention_scaling.training import ablation
    >>> from attention_scaling.site.training import ablation_table
    >>> print(ablation_table(ablation((4,), ("sqrt",), steps=3, batch=4), window=2).splitlines()[0])
    | $d_k$ | policy | scale | loss | accuracy | entropy | diverged |
    """
    window = integer_at_least(window, "window", 1)
    if not isinstance(results, dict) or not all(isinstance(r, TrainingRecord) for r in results.values()):
        raise TypeError(f"results must be the dict returned by ablation; got {type(results).__name__}")
    rows = []
    for record in results.values():
        final = record.final(window)
        diverged = "-" if record.diverged_at is None else f"step {record.diverged_at}"
        rows.append([record.d_k, record.policy, f"{record.scale:.4g}", f"{final['loss']:.3f}",
                     f"{final['accuracy']:.3f}", f"{final['entropy']:.3f}", diverged])
    return markdown_table(
        ["$d_k$", "policy", "scale", "loss", "accuracy", "entropy", "diverged"],
        rows,
        align=["right", "left", "right", "right", "right", "right", "left"],
    )


# -- A learning rate for each scale ----------------------------------------------------

# T5's folded head must compute the scaled head's scores at initialisation up
# to rounding: c * (x W_Q) . k and (x c W_Q) . k differ by a few ulps, a
# relative 1e-16; 1e-12 leaves room and still fails any wrong folding factor.
_FOLDING_TOLERANCE = 1e-12

# The rate shared by every variant in the comparison "one rate for all": the
# page's learning curves use it, and both tuning grids contain it.
_SHARED_LR = 1e-2

# What the page calls each variant, in its tables.
_VARIANT_NAMES = {"none": "no scaling", "sqrt": r"$1/\sqrt{d_k}$", "linear": "$1/d_k$",
                  "t5": r"T5: $1/\sqrt{d_k}$ folded into $W_Q$"}


@dataclass(frozen=True)
class TunedNumbers:
    r"""The numbers of the section "A learning rate for each scale".

    Attributes
    ----------
    folding_gap : float
        The largest relative difference, at initialisation, between the
        scores of T5's folded head and of the scaled head.
    steps, batch, window : int
        The runs' settings, shared by both tunings.
    n_tuning_seeds, n_eval_seeds : int
        How many seeds select the rates, and how many evaluate them.
    shared_lr : float
        The rate shared by every variant in the comparison "one rate for all".
    adam, sgd : dict
        Each tuning's numbers, by name: the grid (``lr_lo``, ``lr_hi``,
        ``grid_size``); for each variant and :math:`d_k`,
        ``[variant][str(d_k)]``, the selected rate ``lr`` and the mean,
        smallest and largest evaluation loss (``loss``, ``loss_lo``,
        ``loss_hi``); and for each :math:`d_k`, ``[name][str(d_k)]``, the
        measured ratio of the selected rates of ``"none"`` and ``"sqrt"``
        (``ratio``) and its prediction (``predicted``), and the spread of the
        variants' final losses at the shared rate and tuned
        (``shared_spread``, ``tuned_spread``). Glued, with the prefix
        ``training_tuned``, as ``training_tuned_adam_sqrt_16_lr``,
        ``training_tuned_sgd_ratio_64`` and so on.
    t5_vs_sqrt : float
        The largest ratio (either way) of the mean evaluation losses of T5's
        head and the scaled head.
    n_comparisons : int
        The comparisons of :func:`ranking_table`: the head without scaling
        against each other variant.
    rank_level : float
        A comparison is ranked where its p-value times ``n_comparisons`` is below this.
    all_seeds_p, family_p : float
        The sign test's p-value when every evaluation seed falls on one side,
        and that times ``n_comparisons``.
    eval_first, eval_last : int
        The first and last evaluation seeds.
    ranked_higher, ranked_lower, unranked : int
        How many comparisons rank the head without scaling higher, lower, and neither.
    """

    folding_gap: float
    steps: int
    batch: int
    window: int
    n_tuning_seeds: int
    n_eval_seeds: int
    shared_lr: float
    adam: dict[str, object]
    sgd: dict[str, object]
    t5_vs_sqrt: float
    n_comparisons: int
    rank_level: float
    all_seeds_p: float
    family_p: float
    eval_first: int
    eval_last: int
    ranked_higher: int
    ranked_lower: int
    unranked: int


def _tuned_check(tuning: LearningRateTuning, expected: str) -> LearningRateTuning:
    if not isinstance(tuning, LearningRateTuning):
        raise TypeError(f"the {expected} tuning must be a LearningRateTuning; got {type(tuning).__name__}")
    if tuning.optimizer != expected or set(tuning.variants) != set(VARIANTS):
        raise ValueError(f"the {expected} tuning must use {expected} and every variant {tuple(VARIANTS)}; "
                         f"got {tuning.optimizer!r} and {tuning.variants}")
    return tuning


def tuned_numbers(adam: LearningRateTuning, sgd: LearningRateTuning) -> TunedNumbers:
    r"""The section "A learning rate for each scale": selected rates, spreads, ratios, and the checks of its prose.

    Parameters
    ----------
    adam, sgd : attention_scaling.tuning.LearningRateTuning
        The two tunings of the page, with every variant; their runs share
        the steps, batch, window and seeds.

    Returns
    -------
    TunedNumbers

    Raises
    ------
    TypeError, ValueError
        If a tuning is not a ``LearningRateTuning`` of the named optimiser
        with every variant, or the two differ in their settings.
    PageCheckError
        Unless what the prose says holds: the folded head starts with the
        scaled head's scores at every :math:`d_k` of the tunings
        (:func:`~attention_scaling.tuning.folding_gap` below
        :math:`10^{-12}`, on the first batch of the first tuning seed); no
        selected rate is at an end of its grid; both grids contain the
        shared rate :math:`10^{-2}`; at every :math:`d_k` and for both
        optimisers, the variants' final losses are closer together tuned
        than at the shared rate; the ratio of the selected rates of
        ``"none"`` and ``"sqrt"`` is the same at every :math:`d_k`; and T5's
        selected rate is below that of :math:`1/\sqrt{d_k}`; with
        :math:`1/d_k`, SGD's selected rate grows with :math:`d_k`; and every
        seed on one side is enough to rank a comparison (the page says so).

    Examples
    --------
    The page's tunings (80 steps at three widths, about 10 s) pass every
    check. Runs of 20 steps are too short for what the prose says: with
    :math:`1/d_k`, Adam wants a rate beyond the grid.

    >>> from attention_scaling.tuning import tuned_learning_rates_data
    >>> from attention_scaling.site.training import tuned_numbers
    >>> adam, sgd = tuned_learning_rates_data(d_values=(64,), steps=20, window=5, tuning_seeds=(0,), eval_seeds=(1,))
    >>> tuned_numbers(adam, sgd)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attention_scaling.site.checks.PageCheckError: training.md, section training-tuned: check failed: every selected adam rate is inside its grid (on_edge=[('linear', 64)], ...)
    """
    adam, sgd = _tuned_check(adam, "adam"), _tuned_check(sgd, "sgd")
    settings = ("d_values", "steps", "batch", "window", "tuning_seeds", "eval_seeds")
    if any(getattr(adam, name) != getattr(sgd, name) for name in settings):
        raise ValueError("the adam and sgd tunings must share " + ", ".join(settings))
    where = _where("training-tuned")
    folding_gap = max(_folding_gap(d_k, "sqrt", seed=adam.tuning_seeds[0], batch=adam.batch)
                      for d_k in adam.d_values)
    require(folding_gap < _FOLDING_TOLERANCE, where,
            "T5's folded head computes the scaled head's scores at initialisation",
            gap=folding_gap, tolerance=_FOLDING_TOLERANCE)
    by_optimiser: dict[str, dict[str, object]] = {}
    t5_vs_sqrt = 1.0
    for tuning in (adam, sgd):
        opt = tuning.optimizer
        edges = tuning.on_edge()
        require(not edges, where, f"every selected {opt} rate is inside its grid", on_edge=edges, grid=tuning.lrs)
        shared = [i for i, lr in enumerate(tuning.lrs) if math.isclose(lr, _SHARED_LR, rel_tol=1e-9)]
        require(len(shared) == 1, where, f"the {opt} grid contains the shared rate", grid=tuning.lrs)
        numbers: dict[str, object] = {"lr_lo": tuning.lrs[0], "lr_hi": tuning.lrs[-1], "grid_size": len(tuning.lrs)}
        numbers |= {variant: {} for variant in tuning.variants}
        numbers |= {name: {} for name in ("ratio", "predicted", "shared_spread", "tuned_spread")}
        for d_k in tuning.d_values:
            means = {}
            for variant in tuning.variants:
                losses = np.asarray(tuning.eval_loss[variant, d_k], dtype=float)
                means[variant] = float(np.mean(losses))
                numbers[variant][str(d_k)] = {"lr": tuning.best_lr(variant, d_k), "loss": means[variant],
                                              "loss_lo": float(np.min(losses)), "loss_hi": float(np.max(losses))}
            at_shared = [float(tuning.scores[v, d_k][shared[0]]) for v in tuning.variants]
            shared_spread = max(at_shared) / min(at_shared)
            tuned_spread = max(means.values()) / min(means.values())
            require(tuned_spread < shared_spread, where,
                    f"the variants' final losses are closer tuned than at the shared rate ({opt}, d_k = {d_k})",
                    tuned=tuned_spread, shared=shared_spread)
            require(tuning.best_lr("t5", d_k) < tuning.best_lr("sqrt", d_k), where,
                    f"T5's selected rate is below that of 1/sqrt(d_k) ({opt}, d_k = {d_k})",
                    t5=tuning.best_lr("t5", d_k), sqrt=tuning.best_lr("sqrt", d_k))
            # The update of a score is proportional to c^2 under SGD and to c under
            # Adam, so matching "none" (c = 1) to "sqrt" needs a rate c_sqrt^2 or c_sqrt times.
            power = 2 if opt == "sgd" else 1
            numbers["ratio"][str(d_k)] = tuning.best_lr("none", d_k) / tuning.best_lr("sqrt", d_k)
            numbers["predicted"][str(d_k)] = d_k ** (-power / 2)
            numbers["shared_spread"][str(d_k)] = shared_spread
            numbers["tuned_spread"][str(d_k)] = tuned_spread
        ratios = [numbers["ratio"][str(d_k)] for d_k in tuning.d_values]
        require(np.allclose(ratios, ratios[0], rtol=1e-9) and ratios[0] < 1, where,
                f"no scaling's selected rate is below that of 1/sqrt(d_k) by the same ratio at every d_k ({opt})",
                ratios=ratios)
        t5_vs_sqrt = max(t5_vs_sqrt, max(max(a / b, b / a) for d_k in tuning.d_values
                                         for a, b in [(float(np.mean(tuning.eval_loss["t5", d_k])),
                                                       float(np.mean(tuning.eval_loss["sqrt", d_k])))]))
        by_optimiser[opt] = numbers
    linear_sgd = [sgd.best_lr("linear", d_k) for d_k in sgd.d_values]
    require(all(a < b for a, b in zip(linear_sgd, linear_sgd[1:])), where,
            "with 1/d_k, SGD's selected rate grows with d_k", rates=linear_sgd)
    comparisons = _comparisons(adam, sgd)
    all_seeds = sign_test(np.ones(len(adam.eval_seeds)))
    require(all_seeds * len(comparisons) < _RANK_LEVEL, where,
            "every seed on one side is enough to rank a comparison", p=all_seeds, comparisons=len(comparisons))
    verdicts = [verdict for *_, verdict in comparisons]
    return TunedNumbers(
        folding_gap=folding_gap, steps=adam.steps, batch=adam.batch, window=adam.window,
        n_tuning_seeds=len(adam.tuning_seeds), n_eval_seeds=len(adam.eval_seeds), shared_lr=_SHARED_LR,
        adam=by_optimiser["adam"], sgd=by_optimiser["sgd"], t5_vs_sqrt=t5_vs_sqrt,
        n_comparisons=len(comparisons), rank_level=_RANK_LEVEL,
        all_seeds_p=all_seeds, family_p=all_seeds * len(comparisons),
        eval_first=min(adam.eval_seeds), eval_last=max(adam.eval_seeds),
        ranked_higher=verdicts.count("higher"), ranked_lower=verdicts.count("lower"), unranked=verdicts.count(None),
    )


# A comparison of two tuned variants is ranked when its sign test's p-value, times the number of
# comparisons on the page (Bonferroni), is below this: the chance that any ranking on the page is
# a coin toss's is then at most this.
_RANK_LEVEL = 0.05


def _comparisons(adam: LearningRateTuning, sgd: LearningRateTuning) -> list[tuple]:
    """(optimiser, d_k, variant, seeds where no scaling ends higher, seeds, p, verdict) for every other variant."""
    others = [variant for variant in adam.variants if variant != "none"]
    n_comparisons = 2 * len(adam.d_values) * len(others)
    rows = []
    for tuning in (adam, sgd):
        for d_k in tuning.d_values:
            for variant in others:
                difference = np.asarray(tuning.eval_loss["none", d_k]) - np.asarray(tuning.eval_loss[variant, d_k])
                if not np.all(np.isfinite(difference)):
                    raise ValueError(f"every evaluation run must end with a finite loss; {tuning.optimizer}, "
                                     f"d_k = {d_k}: none {tuning.eval_loss['none', d_k]}, {variant} "
                                     f"{tuning.eval_loss[variant, d_k]}")
                p = sign_test(difference)
                higher, lower = int(np.count_nonzero(difference > 0)), int(np.count_nonzero(difference < 0))
                verdict = None
                if p * n_comparisons < _RANK_LEVEL:
                    verdict = "higher" if higher > lower else "lower"   # ties carry no sign (sign_test drops them)
                rows.append((tuning.optimizer, d_k, variant, higher, int(difference.size), p, verdict))
    return rows


def ranking_table(adam: LearningRateTuning, sgd: LearningRateTuning) -> str:
    """A Markdown table: on how many seeds the head without scaling ends higher than each other variant, and the ranking.

    Parameters
    ----------
    adam, sgd : attention_scaling.tuning.LearningRateTuning
        As for :func:`tuned_numbers`.

    Returns
    -------
    str
        One row per (:math:`d_k`, variant), one column per optimiser: the
        seeds on which no scaling ends with the higher final loss, the
        sign test's p-value (:func:`~attention_scaling.tuning.sign_test`),
        and the verdict: "higher" or "lower" where the p-value times the
        number of comparisons is below 0.05, "not ranked" elsewhere.

    Raises
    ------
    TypeError, ValueError
        As for :func:`tuned_numbers`; also ``ValueError`` for an evaluation
        run without a finite final loss.

    Examples
    --------
    >>> from attention_scaling.tuning import tune_learning_rates
    >>> from attention_scaling.site.training import ranking_table
    >>> small = dict(d_values=(4,), lrs=(1e-2, 1e-1), steps=4, batch=4, window=2, eval_seeds=(2, 3))
    >>> table = ranking_table(tune_learning_rates(**small), tune_learning_rates(optimizer="sgd", **small))
    >>> print(table.splitlines()[0])
    | $d_k$ | no scaling against | Adam: seeds higher | Adam: p | Adam | SGD: seeds higher | SGD: p | SGD |
    >>> "not ranked" in table                         # two seeds rank nothing
    True
    """
    adam, sgd = _tuned_check(adam, "adam"), _tuned_check(sgd, "sgd")
    if adam.d_values != sgd.d_values or adam.eval_seeds != sgd.eval_seeds:
        raise ValueError("the tunings must share d_values and eval_seeds")
    cells = {(opt, d_k, variant): [f"{higher} of {n}", f"{p:.2g}", verdict or "not ranked"]
             for opt, d_k, variant, higher, n, p, verdict in _comparisons(adam, sgd)}
    rows = [[d_k, _VARIANT_NAMES[variant], *cells["adam", d_k, variant], *cells["sgd", d_k, variant]]
            for d_k in adam.d_values for variant in adam.variants if variant != "none"]
    return markdown_table(
        ["$d_k$", "no scaling against", "Adam: seeds higher", "Adam: p", "Adam", "SGD: seeds higher", "SGD: p", "SGD"],
        rows, align=["right", "left", "right", "right", "left", "right", "right", "left"],
    )


def tuning_table(adam: LearningRateTuning, sgd: LearningRateTuning) -> str:
    """A Markdown table: for each :math:`d_k` and variant, the selected rates and the evaluation losses.

    Parameters
    ----------
    adam, sgd : attention_scaling.tuning.LearningRateTuning
        As for :func:`tuned_numbers`.

    Returns
    -------
    str
        One row per (:math:`d_k`, variant): for each optimiser the selected
        learning rate and the final loss on the evaluation seeds, as mean
        and [min, max].

    Raises
    ------
    TypeError, ValueError
        As for :func:`tuned_numbers`.

    Examples
    --------
    >>> from attention_scaling.tuning import tune_learning_rates
    >>> from attention_scaling.site.training import tuning_table
    >>> small = dict(d_values=(4,), lrs=(1e-2, 1e-1), steps=4, batch=4, window=2, eval_seeds=(2,))
    >>> table = tuning_table(tune_learning_rates(**small), tune_learning_rates(optimizer="sgd", **small))
    >>> print(table.splitlines()[0])
    | $d_k$ | scaling | Adam: rate | Adam: final loss [min, max] | SGD: rate | SGD: final loss [min, max] |
    """
    adam, sgd = _tuned_check(adam, "adam"), _tuned_check(sgd, "sgd")
    if adam.d_values != sgd.d_values:
        raise ValueError(f"the tunings must share d_values; got {adam.d_values} and {sgd.d_values}")
    rows = []
    for d_k in adam.d_values:
        for variant in adam.variants:
            row = [d_k, _VARIANT_NAMES[variant]]
            for tuning in (adam, sgd):
                losses = np.asarray(tuning.eval_loss[variant, d_k], dtype=float)
                row += [f"{tuning.best_lr(variant, d_k):.3g}",
                        f"{np.mean(losses):.3f} [{np.min(losses):.3f}, {np.max(losses):.3f}]"]
            rows.append(row)
    return markdown_table(
        ["$d_k$", "scaling", "Adam: rate", "Adam: final loss [min, max]", "SGD: rate", "SGD: final loss [min, max]"],
        rows,
        align=["right", "left", "right", "right", "right", "right"],
    )
