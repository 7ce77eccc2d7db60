r"""Page support for "Training with each scale" (``docs/training.md``).

One function per section: the gradient check, the learning curves (the
figure's data is computed and drawn on the page), and the table of where
training ends. Each checks what the prose says and returns a record whose
``glue_values`` are the numbers the prose quotes, or a Markdown table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from attention_scaling._checks import integer_at_least
from attention_scaling.site.checks import require
from attention_scaling.site.tables import markdown_table
from attention_scaling.training import TrainingCurves, TrainingRecord

__all__ = ["CurveNumbers", "GradientCheck", "ablation_table", "curve_numbers", "gradient_numbers"]

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

    def glue_values(self) -> dict[str, object]:
        """The page's glue keys and their values."""
        return {"training_gradient_error": self.error}


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
    >>> from attention_scaling.site.training import gradient_numbers
    >>> gradient_numbers(1e-9).glue_values()
    {'training_gradient_error': 1e-09}
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
        ``{(d_k, policy): loss of the initial weights}``.
    uniform_loss : float
        :math:`\ln n`, the loss of uniform attention over :math:`n` keys.
    steps : int
        Training steps of every run.
    lr : float
        The shared learning rate.
    """

    start_loss: dict[tuple[int, str], float]
    uniform_loss: float
    steps: int
    lr: float

    def glue_values(self) -> dict[str, object]:
        """The page's glue keys (``training_<policy>_<d_k>_start`` and three more) and their values."""
        values: dict[str, object] = {f"training_{policy}_{d_k}_start": loss
                                     for (d_k, policy), loss in self.start_loss.items()}
        values |= {"training_uniform_loss": self.uniform_loss, "training_steps": self.steps,
                   "training_lr": self.lr}
        return values


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
    >>> from attention_scaling.training import TrainingCurves, ablation
    >>> from attention_scaling.site.training import curve_numbers
    >>> runs = ablation((16, 256), ("none", "sqrt"), steps=2)
    >>> numbers = curve_numbers(TrainingCurves(runs, (16, 256), ("none", "sqrt")))
    >>> sorted(numbers.glue_values())[:2]
    ['training_lr', 'training_none_16_start']
    """
    n_keys = integer_at_least(n_keys, "n_keys", 2)
    start = {key: float(record.loss[0]) for key, record in training.runs.items()}
    uniform = float(math.log(n_keys))
    unscaled = [start[d_k, "none"] for d_k in training.d_values]
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
    | d_k | policy | scale | loss | accuracy | entropy | diverged |
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
        ["d_k", "policy", "scale", "loss", "accuracy", "entropy", "diverged"],
        rows,
        align=["right", "left", "right", "right", "right", "right", "left"],
    )
