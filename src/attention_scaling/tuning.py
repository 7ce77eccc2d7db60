r"""A learning rate for each scaling: tuning on a small grid, then fresh seeds.

:func:`~attention_scaling.training.ablation` trains every scaling with one
shared learning rate, which mixes the effect of the constant :math:`c` with
that of the step size. :func:`tune_learning_rates` gives each variant its own:
it picks the best rate of a small grid on tuning seeds (:func:`select_learning_rate`)
and re-runs it on fresh seeds. Its variants (``VARIANTS``) add T5's way of
scaling, :math:`c = 1` with the factor :math:`1/\sqrt{d_k}` folded into the
initialisation of :math:`W_Q` (``train(..., fold=True)``).

Randomness comes only from ``numpy.random.default_rng``; the same seed gives
identical arrays.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attention_scaling._checks import integer_at_least, positive_finite_scalar
from attention_scaling.retrieval import _forward, init_params, retrieval_batch
from attention_scaling.simulate import scale_for
from attention_scaling import training
from attention_scaling.training import OPTIMIZERS, TrainingRecord, _policy, _run_many, _training_setup

__all__ = [
    "ADAM_LEARNING_RATES",
    "SGD_LEARNING_RATES",
    "VARIANTS",
    "folding_gap",
    "LearningRateTuning",
    "select_learning_rate",
    "sign_test",
    "tune_learning_rates",
    "tuned_learning_rates_data",
]


# -- Tuning the learning rate of each variant ----------------------------------------------

#: The variants of :func:`tune_learning_rates`: ``{name: (scaling policy, fold)}``.
#: ``"t5"`` is T5's folding, :math:`c = 1` with the initial ``W_Q`` multiplied
#: by :math:`1/\sqrt{d_k}` (``train(d_k, "sqrt", fold=True)``).
VARIANTS = {"none": ("none", False), "sqrt": ("sqrt", False), "linear": ("linear", False), "t5": ("sqrt", True)}

#: The learning-rate grid of the site's Adam tuning: :math:`10^{-3.5}` to
#: :math:`10^{-1}` in steps of a factor :math:`\sqrt{10}`.
ADAM_LEARNING_RATES = tuple(float(10.0 ** (k / 2)) for k in range(-7, -1))

#: The grid of the SGD tuning: :math:`10^{-3}` to :math:`10^{3}` in steps of a
#: factor 10. It is wider than Adam's because an SGD step scales with the
#: gradient, and so with :math:`c^2` (see :func:`~attention_scaling.retrieval.backward`).
SGD_LEARNING_RATES = tuple(float(10.0**k) for k in range(-3, 4))


def select_learning_rate(scores) -> int:
    r"""The index of the best learning rate: the lowest score, diverged runs last.

    Parameters
    ----------
    scores : array_like, shape (grid,)
        The selection score of each learning rate, lower is better, ``inf``
        (or NaN) for a learning rate at which a tuning run diverged.

    Returns
    -------
    int
        The index of the lowest finite score; of equal scores, the first
        (the smallest rate, if the grid is increasing).

    Raises
    ------
    ValueError
        If ``scores`` is not a non-empty 1-D array, or no score is finite
        (every learning rate diverged).

    Examples
    --------
    >>> from attention_scaling.tuning import select_learning_rate
    >>> select_learning_rate([0.9, 0.2, 0.5, float("inf")])
    1
    """
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 1 or scores.size == 0:
        raise ValueError(f"scores must be a non-empty 1-D array; got shape {scores.shape}")
    finite = np.isfinite(scores)
    if not finite.any():
        raise ValueError("scores: every learning rate diverged; widen the grid towards smaller rates")
    return int(np.argmin(np.where(finite, scores, np.inf)))


@dataclass(frozen=True)
class LearningRateTuning:
    r"""A learning rate tuned for each (variant, :math:`d_k`), and its runs on fresh seeds.

    Attributes
    ----------
    d_values : tuple of int
        Head dimensions.
    variants : tuple of str
        Names from ``VARIANTS``.
    lrs : tuple of float
        The learning-rate grid, increasing.
    optimizer : str
        ``"adam"`` or ``"sgd"``.
    steps, batch, window : int
        Steps of every run, examples per step, and how many final steps a
        run's final loss averages.
    tuning_seeds, eval_seeds : tuple of int
        Seeds of the tuning runs and of the evaluation runs (disjoint).
    scores : dict
        ``{(variant, d_k): array over lrs}``: the selection score, the final
        loss averaged over the tuning seeds; ``inf`` where a tuning run
        diverged.
    best : dict
        ``{(variant, d_k): index into lrs}``, by :func:`select_learning_rate`.
    eval_loss, eval_accuracy : dict
        ``{(variant, d_k): array over eval_seeds}``: final loss and accuracy
        (means over the last ``window`` steps) of the selected learning rate
        on each evaluation seed; NaN for a run that diverged.
    """

    d_values: tuple[int, ...]
    variants: tuple[str, ...]
    lrs: tuple[float, ...]
    optimizer: str
    steps: int
    batch: int
    window: int
    tuning_seeds: tuple[int, ...]
    eval_seeds: tuple[int, ...]
    scores: dict[tuple[str, int], np.ndarray]
    best: dict[tuple[str, int], int]
    eval_loss: dict[tuple[str, int], np.ndarray]
    eval_accuracy: dict[tuple[str, int], np.ndarray]

    def best_lr(self, variant: str, d_k: int) -> float:
        """The selected learning rate of one variant at one :math:`d_k`."""
        return self.lrs[self.best[variant, d_k]]

    def on_edge(self) -> list[tuple[str, int]]:
        """The (variant, :math:`d_k`) whose selected rate is the smallest or largest of the grid."""
        return [key for key, index in self.best.items() if index in (0, len(self.lrs) - 1)]


def sign_test(differences) -> float:
    r"""Two-sided exact sign test: how likely a split of signs at least this uneven is, were each sign a coin toss.

    For paired runs (two variants on the same seeds, which share their data
    and initial weights), the differences of their final losses. If the
    variant made no difference, each nonzero difference would be positive
    or negative with probability 1/2, independently across seeds; with
    :math:`k` of :math:`n` positive, the p-value is
    :math:`\min\bigl(1,\ 2 \sum_{j \ge \max(k, n - k)} \binom{n}{j} 2^{-n}\bigr)`.
    Zero differences carry no sign and are dropped.

    Parameters
    ----------
    differences : array_like, shape (n,)
        Finite paired differences, at least one of them nonzero.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        For differences that are not a non-empty 1-D finite array, or all zero.

    Examples
    --------
    >>> from attention_scaling.tuning import sign_test
    >>> sign_test([0.3, 0.1, 0.2])              # three of three: 2 / 2**3
    0.25
    >>> sign_test([0.1] * 10)                    # ten of ten: 2 / 2**10
    0.001953125
    >>> sign_test([0.1, -0.1, 0.2, -0.2])
    1.0
    """
    values = np.asarray(differences, dtype=float)
    if values.ndim != 1 or values.size == 0 or not np.all(np.isfinite(values)):
        raise ValueError(f"differences must be a non-empty 1-D array of finite numbers; got {differences!r}")
    signs = values[values != 0]
    if signs.size == 0:
        raise ValueError("differences must not all be zero: they carry no sign")
    n, positive = int(signs.size), int(np.count_nonzero(signs > 0))
    tail = sum(math.comb(n, j) for j in range(max(positive, n - positive), n + 1))
    return min(1.0, 2 * tail / 2**n)


def _seeds(values, name: str) -> tuple[int, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TypeError(f"{name} must be a sequence of integers; got {type(values).__name__}")
    seeds = tuple(integer_at_least(seed, f"{name} entry", 0) for seed in values)
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"{name} must be non-empty without repeats; got {list(values)!r}")
    return seeds


def tune_learning_rates(
    d_values: Sequence[int] = (16, 64, 256),
    variants: Sequence[str] = tuple(VARIANTS),
    lrs: Sequence[float] | None = None,
    *,
    tuning_seeds: Sequence[int] = (0, 1),
    eval_seeds: Sequence[int] = tuple(range(2, 12)),
    window: int = 20,
    steps: int = 80,
    batch: int = 16,
    n: int = 16,
    d_model: int = 32,
    noise: float = 0.5,
    optimizer: str = "adam",
) -> LearningRateTuning:
    r"""Tune the learning rate of each variant and :math:`d_k` on a grid, then re-run the best on fresh seeds.

    The rule: for each (variant, :math:`d_k`) and each learning rate of the
    grid, train once per tuning seed; score the rate by the final loss (the
    mean training loss over the last ``window`` steps) averaged over the
    tuning seeds, a rate at which any tuning run diverged scoring ``inf``;
    select the lowest score (:func:`select_learning_rate`). Then train the
    selected rate once per evaluation seed, seeds that the tuning never saw,
    and record the final loss and accuracy of each run.

    Parameters
    ----------
    d_values : sequence of int, default (16, 64, 256)
        Head dimensions, each at least 1, without repeats.
    variants : sequence of str, default every key of ``VARIANTS``
        ``"none"``, ``"sqrt"``, ``"linear"`` (the scaling policies) and
        ``"t5"`` (``"sqrt"`` folded into ``W_Q``), without repeats.
    lrs : sequence of float, optional
        The grid: strictly increasing, finite and > 0. By default
        ``ADAM_LEARNING_RATES`` or ``SGD_LEARNING_RATES``, by ``optimizer``.
    tuning_seeds : sequence of int, default (0, 1)
        Seeds of the tuning runs.
    eval_seeds : sequence of int, default 2 to 11
        Seeds of the evaluation runs; none may be a tuning seed. Ten, so
        that a sign test over them can separate two variants
        (:func:`sign_test`).
    window : int, default 20
        Final steps averaged into a run's final loss; at most ``steps``.
    steps, batch, n, d_model, noise, optimizer
        As for :func:`~attention_scaling.training.train`, shared by every run (defaults: 80 steps of 16
        examples, which keep the whole tuning to a few seconds).

    Returns
    -------
    LearningRateTuning

    Raises
    ------
    TypeError, ValueError
        As for :func:`~attention_scaling.training.train`; also ``ValueError`` for an unknown variant,
        repeated entries, a grid that is not strictly increasing, an
        evaluation seed that is also a tuning seed, ``window > steps``, or a
        (variant, :math:`d_k`) at which every learning rate diverged.

    Notes
    -----
    Runs with one seed and one :math:`d_k` share their batches and their
    initial weights (:func:`~attention_scaling.training.train`), so at a tuning seed the learning rates
    and variants are compared on the same data from the same start.

    Examples
    --------
    >>> from attention_scaling.tuning import tune_learning_rates
    >>> tuned = tune_learning_rates((8,), ("sqrt", "t5"), (1e-3, 1e-2, 1e-1), steps=20, batch=8, window=5,
    ...                             eval_seeds=(2,))
    >>> tuned.best_lr("sqrt", 8), tuned.eval_loss["t5", 8].shape
    (0.01, (1,))
    """
    if isinstance(d_values, (str, bytes)) or not isinstance(d_values, Sequence):
        raise TypeError(f"d_values must be a sequence of integers; got {type(d_values).__name__}")
    d_list = tuple(integer_at_least(d, "d_values entry", 1) for d in d_values)
    if not d_list or len(set(d_list)) != len(d_list):
        raise ValueError(f"d_values must be non-empty without repeats; got {list(d_values)!r}")
    if isinstance(variants, (str, bytes)) or not isinstance(variants, Sequence):
        raise TypeError(f"variants must be a sequence of names; got {type(variants).__name__}")
    names = tuple(variants)
    if not names or len(set(names)) != len(names) or any(name not in VARIANTS for name in names):
        raise ValueError(f"variants must be distinct names from {tuple(VARIANTS)}; got {list(variants)!r}")
    if lrs is None and optimizer in OPTIMIZERS:
        lrs = SGD_LEARNING_RATES if optimizer == "sgd" else ADAM_LEARNING_RATES
    if isinstance(lrs, (str, bytes)) or not isinstance(lrs, Sequence) or not lrs:
        raise TypeError(f"lrs must be a non-empty sequence of numbers; got {lrs!r}")
    grid = tuple(positive_finite_scalar(lr, "lrs entry") for lr in lrs)
    if any(a >= b for a, b in zip(grid, grid[1:])):
        raise ValueError(f"lrs must be strictly increasing; got {list(grid)!r}")
    tuning = _seeds(tuning_seeds, "tuning_seeds")
    fresh = _seeds(eval_seeds, "eval_seeds")
    if set(tuning) & set(fresh):
        raise ValueError(f"eval_seeds must be fresh: they share {sorted(set(tuning) & set(fresh))} with tuning_seeds")
    setup = _training_setup(steps, grid[0], tuning[0], batch, n, d_model, noise, optimizer)
    window = integer_at_least(window, "window", 1)
    if window > setup["steps"]:
        raise ValueError(f"window must be at most steps = {setup['steps']}; got {window}")
    del setup["lr"], setup["seed"]

    def final(record: TrainingRecord) -> dict[str, float]:
        # A diverged run has no final loss; it scores inf, and NaN on evaluation.
        # So does a run whose losses are finite but too large to average
        # (SGD far above its stable rate reaches losses near 1e300).
        if record.diverged_at is None:
            with np.errstate(over="ignore"):
                values = record.final(window)
            if math.isfinite(values["loss"]):
                return values
        return {"loss": math.inf, "accuracy": math.nan}

    scores, best, eval_loss, eval_accuracy = {}, {}, {}, {}
    for d_k in d_list:
        factors = {name: (VARIANTS[name][0], scale_for(VARIANTS[name][0], d_k), VARIANTS[name][1]) for name in names}
        runs = [(*factors[name], lr) for name in names for lr in grid]
        losses = np.array([[final(record)["loss"] for record in _run_many(d_k, runs, seed=seed, **setup)]
                           for seed in tuning])                      # (seeds, variants * lrs)
        with np.errstate(over="ignore"):      # two losses near 1e300 sum to inf: a loss
            mean = losses.mean(axis=0).reshape(len(names), len(grid))
        for i, name in enumerate(names):
            scores[name, d_k] = mean[i]
            mean[i].setflags(write=False)
            best[name, d_k] = select_learning_rate(mean[i])
        chosen = [(*factors[name], grid[best[name, d_k]]) for name in names]
        results = np.array([[[final(record)[key] for key in ("loss", "accuracy")]
                             for record in _run_many(d_k, chosen, seed=seed, **setup)] for seed in fresh])
        for i, name in enumerate(names):
            eval_loss[name, d_k] = np.where(np.isinf(results[:, i, 0]), np.nan, results[:, i, 0])
            eval_accuracy[name, d_k] = results[:, i, 1].copy()
            for array in (eval_loss[name, d_k], eval_accuracy[name, d_k]):
                array.setflags(write=False)
    return LearningRateTuning(d_values=d_list, variants=names, lrs=grid, optimizer=setup["optimizer"],
                              steps=setup["steps"], batch=setup["batch"], window=window, tuning_seeds=tuning,
                              eval_seeds=fresh, scores=scores, best=best, eval_loss=eval_loss,
                              eval_accuracy=eval_accuracy)


def folding_gap(d_k: int, scale_policy="sqrt", *, seed: int = 0, batch: int = 64, n: int = 16,
                d_model: int = 32, noise: float = 0.5) -> float:
    r"""How far the folded head's initial scores are from the scaled head's, relative to their size.

    Parameters
    ----------
    d_k : int
        Head dimension.
    scale_policy : {"none", "sqrt", "linear"} or callable, default "sqrt"
        The factor :math:`c` that is folded.
    seed, batch, n, d_model, noise
        As for :func:`~attention_scaling.training.train`: the initial weights and the first batch of a
        run with this seed.

    Returns
    -------
    float
        :math:`\max |s^\text{fold} - s^\text{scaled}| / \max |s^\text{scaled}|`
        on the first batch, at the initial weights: rounding, about
        :math:`10^{-16}`, if the folding is right.

    Raises
    ------
    TypeError, ValueError
        As for :func:`~attention_scaling.training.train`.

    Examples
    --------
    >>> from attention_scaling.tuning import folding_gap
    >>> folding_gap(64) < 1e-14
    True
    """
    d_k = integer_at_least(d_k, "d_k", 1)
    setup = _training_setup(1, 1.0, seed, batch, n, d_model, noise, "adam")
    _, scale = _policy(scale_policy, d_k)
    data = retrieval_batch(np.random.default_rng([setup["seed"], 0]), setup["batch"], setup["n"],
                           setup["d_model"], setup["noise"])
    start = init_params(np.random.default_rng([setup["seed"], 1]), setup["d_model"], d_k)
    scaled = _forward(start["W_Q"], start["W_K"], data, scale)[1]["scores"]
    folded = _forward(training._fold(start["W_Q"], scale), start["W_K"], data, 1.0)[1]["scores"]
    return float(np.max(np.abs(folded - scaled)) / np.max(np.abs(scaled)))


def tuned_learning_rates_data(**settings) -> tuple[LearningRateTuning, LearningRateTuning]:
    """The site's two tunings, Adam's and SGD's, each with the same settings of :func:`tune_learning_rates`.

    Parameters
    ----------
    **settings
        Keyword arguments of :func:`tune_learning_rates` but ``optimizer``,
        given to both tunings. The site uses none: every default.

    Returns
    -------
    tuple of LearningRateTuning
        ``(adam, sgd)``.

    Raises
    ------
    TypeError
        If ``settings`` names ``optimizer``; otherwise as for :func:`tune_learning_rates`.

    Examples
    --------
    Short runs at one width, a few hundred times cheaper than the site's:

    >>> from attention_scaling.tuning import tuned_learning_rates_data
    >>> adam, sgd = tuned_learning_rates_data(d_values=(64,), steps=20, window=5, tuning_seeds=(0,), eval_seeds=(1,))
    >>> adam.optimizer, sgd.optimizer, len(sgd.lrs), adam.d_values
    ('adam', 'sgd', 7, (64,))
    """
    if "optimizer" in settings:
        raise TypeError("tuned_learning_rates_data tunes both optimisers: leave out optimizer")
    return tune_learning_rates(optimizer="adam", **settings), tune_learning_rates(optimizer="sgd", **settings)
