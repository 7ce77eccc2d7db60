r"""Softmax taken apart: every intermediate quantity of a worked example.

The Worked examples page redoes each numeric example of the reviewed
articles with :func:`softmax_steps`, so every number it shows is computed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_scaling._checks import as_float_array, positive_finite_scalar, require_finite
from attention_scaling._softmax import softmax, softmax_jacobian

__all__ = ["SoftmaxSteps", "softmax_steps", "steps_table"]


@dataclass(frozen=True)
class SoftmaxSteps:
    """The stages of a softmax of scaled scores.

    Attributes
    ----------
    scores : numpy.ndarray
        The scores as given.
    scale : float
        The factor they are multiplied by.
    scaled : numpy.ndarray
        ``scale * scores``.
    shifted : numpy.ndarray
        ``scaled - max(scaled)``: the exponents actually used.
    exponentials : numpy.ndarray
        ``exp(shifted)``; the largest is exactly 1.
    total : float
        Sum of the exponentials.
    weights : numpy.ndarray
        ``exponentials / total``.
    jacobian : numpy.ndarray
        The softmax Jacobian at ``weights``, with respect to the scaled scores.
    """

    scores: np.ndarray
    scale: float
    scaled: np.ndarray
    shifted: np.ndarray
    exponentials: np.ndarray
    total: float
    weights: np.ndarray
    jacobian: np.ndarray


def softmax_steps(scores, scale: float = 1.0) -> SoftmaxSteps:
    """Compute softmax of ``scale * scores`` one stage at a time.

    Parameters
    ----------
    scores : array_like, shape (n,)
        Finite scores, at least one.
    scale : float, default 1.0
        Finite and > 0, e.g. ``1 / sqrt(d_k)``.

    Returns
    -------
    SoftmaxSteps

    Raises
    ------
    TypeError, ValueError
        For scores that are not a finite 1-D numeric array, or a bad scale.

    Examples
    --------
    >>> from attention_scaling.site.worked import softmax_steps
    >>> steps = softmax_steps([14.0, 10.0, 12.0], scale=1 / 8)
    >>> steps.scaled
    array([1.75, 1.25, 1.5 ])
    >>> steps.weights.round(3)
    array([0.419, 0.254, 0.326])
    """
    scores = as_float_array(scores, "scores")
    if scores.ndim != 1 or scores.size == 0:
        raise ValueError(f"scores must be a 1-D array with at least one entry; got shape {scores.shape}")
    require_finite(scores, "scores")
    scale = positive_finite_scalar(scale, "scale")
    scaled = scores * scale
    shifted = scaled - scaled.max()
    exponentials = np.exp(shifted)
    weights = softmax(scaled)
    return SoftmaxSteps(
        scores=scores,
        scale=scale,
        scaled=scaled,
        shifted=shifted,
        exponentials=exponentials,
        total=float(exponentials.sum()),
        weights=weights,
        jacobian=softmax_jacobian(weights),
    )


def _row(values, digits: int) -> str:
    return " | ".join(f"{value:.{digits}f}" if abs(value) >= 10 ** -digits or value == 0 else f"{value:.1e}" for value in values)


def steps_table(steps: SoftmaxSteps, digits: int = 4) -> str:
    """The stages as a Markdown table, one column per score.

    Examples
    --------
    >>> from attention_scaling.site.worked import softmax_steps, steps_table
    >>> print(steps_table(softmax_steps([0.0, 0.0]), digits=2))
    | stage | 1 | 2 |
    | --- | --- | --- |
    | score $x_i$ | 0.00 | 0.00 |
    | scaled $s x_i$ (s = 1) | 0.00 | 0.00 |
    | exponent $s x_i - \\max_j s x_j$ | 0.00 | 0.00 |
    | $e^{\\text{exponent}}$ (sum 2.00) | 1.00 | 1.00 |
    | weight $p_i$ | 0.50 | 0.50 |
    | slope $\\partial p_i / \\partial (s x_i)$ | 0.25 | 0.25 |
    """
    n = steps.scores.size
    rows = [
        ("score $x_i$", steps.scores),
        (f"scaled $s x_i$ (s = {steps.scale:.6g})", steps.scaled),
        ("exponent $s x_i - \\max_j s x_j$", steps.shifted),
        (f"$e^{{\\text{{exponent}}}}$ (sum {steps.total:.{digits}f})", steps.exponentials),
        ("weight $p_i$", steps.weights),
        ("slope $\\partial p_i / \\partial (s x_i)$", np.diag(steps.jacobian)),
    ]
    lines = ["| stage | " + " | ".join(str(i + 1) for i in range(n)) + " |", "| --- |" + " --- |" * n]
    lines += [f"| {name} | {_row(values, digits)} |" for name, values in rows]
    return "\n".join(lines)
