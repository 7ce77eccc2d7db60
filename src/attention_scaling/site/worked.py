r"""Softmax taken apart: every intermediate quantity of a worked example.

The Worked examples page redoes each numeric example of the reviewed
articles with :func:`softmax_steps`, so every number it shows is computed;
:func:`worked_examples` makes all of its tables.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_scaling._checks import as_float_array, positive_finite_scalar, require_finite
from attention_scaling._softmax import softmax, softmax_jacobian
from attention_scaling.site.checks import require
from attention_scaling.site.tables import markdown_table

__all__ = ["SoftmaxSteps", "WorkedExamples", "softmax_steps", "steps_table", "worked_examples"]


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


def _cells(values, digits: int) -> list[str]:
    # Below one unit in the last digit, fixed point would print 0.0000; show the size instead.
    return [f"{value:.{digits}f}" if abs(value) >= 10 ** -digits or value == 0 else f"{value:.1e}" for value in values]


def steps_table(steps: SoftmaxSteps, digits: int = 4) -> str:
    """The stages as a Markdown table, one column per score.

    Examples
    --------
    >>> from attention_scaling.site.worked import softmax_steps, steps_table
    >>> print(steps_table(softmax_steps([0.0, 0.0]), digits=2))
    | stage | 1 | 2 |
    |---|---|---|
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
    header = ["stage", *(str(i + 1) for i in range(n))]
    return markdown_table(header, [[name, *_cells(values, digits)] for name, values in rows])


@dataclass(frozen=True)
class WorkedExamples:
    """The tables of the Worked examples page, one per example, as MyST Markdown (:func:`steps_table`).

    Attributes
    ----------
    division, division_scaled : str
        [100, 102, 103], as is and divided by 10.
    reddit, reddit_scaled : str
        [-20, 3, 25, -15], as is and divided by 8.
    book_five, book_five_scaled : str
        [9.2, -3.1, 8.8, -5.4, 1.2], as is and divided by 8.
    book_three : str
        [8.5, -2.1, 7.9].
    shekhar_large, shekhar_small : str
        [50, 10, 5] and [5, 1, 0.5].
    shekhar_three, shekhar_three_scaled : str
        [14, 10, 12], as is and divided by 8.
    """

    division: str
    division_scaled: str
    reddit: str
    reddit_scaled: str
    book_five: str
    book_five_scaled: str
    book_three: str
    shekhar_large: str
    shekhar_small: str
    shekhar_three: str
    shekhar_three_scaled: str


# The numeric examples of the reviewed articles: field, scores, scale.
_EXAMPLES = (
    ("division", (100.0, 102.0, 103.0), 1.0),
    ("division_scaled", (100.0, 102.0, 103.0), 1 / 10),
    ("reddit", (-20.0, 3.0, 25.0, -15.0), 1.0),
    ("reddit_scaled", (-20.0, 3.0, 25.0, -15.0), 1 / np.sqrt(64)),
    ("book_five", (9.2, -3.1, 8.8, -5.4, 1.2), 1.0),
    ("book_five_scaled", (9.2, -3.1, 8.8, -5.4, 1.2), 1 / 8),
    ("book_three", (8.5, -2.1, 7.9), 1.0),
    ("shekhar_large", (50.0, 10.0, 5.0), 1.0),
    ("shekhar_small", (5.0, 1.0, 0.5), 1.0),
    ("shekhar_three", (14.0, 10.0, 12.0), 1.0),
    ("shekhar_three_scaled", (14.0, 10.0, 12.0), 1 / 8),
)


def worked_examples() -> WorkedExamples:
    """Take apart the softmax of every numeric example of the reviewed articles.

    Returns
    -------
    WorkedExamples

    Raises
    ------
    RuntimeError
        A ``PageCheckError`` if a table contradicts what the page says of
        the stages: the largest exponential is exactly 1 (the maximum was
        subtracted), the weights sum to 1, and dividing [100, 102, 103] by 10
        changes the weights while subtracting the maximum does not.

    Examples
    --------
    >>> from attention_scaling.site.worked import worked_examples
    >>> print(worked_examples().shekhar_three_scaled.splitlines()[-2])
    | weight $p_i$ | 0.4192 | 0.2543 | 0.3265 |
    """
    tables = {}
    where = "worked-examples.md"
    for name, scores, scale in _EXAMPLES:
        steps = softmax_steps(list(scores), scale=scale)
        require(steps.exponentials.max() == 1.0, where, "the largest exponential is exactly e^0 = 1",
                example=name, exponentials=steps.exponentials.tolist())
        require(abs(steps.weights.sum() - 1.0) < 1e-12, where, "the weights sum to 1",
                example=name, total=float(steps.weights.sum()))
        tables[name] = steps_table(steps)
    division, divided = softmax_steps([100.0, 102.0, 103.0]), softmax_steps([100.0, 102.0, 103.0], scale=1 / 10)
    shifted = softmax_steps(division.shifted)
    require(np.allclose(shifted.weights, division.weights, rtol=0, atol=1e-15)
            and not np.allclose(divided.weights, division.weights, rtol=0, atol=1e-3),
            "worked-examples.md, worked-division", "subtracting the maximum leaves the weights, dividing changes them",
            weights=division.weights.tolist(), shifted=shifted.weights.tolist(), divided=divided.weights.tolist())
    return WorkedExamples(**tables)
