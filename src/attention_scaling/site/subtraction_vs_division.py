r"""Page support for "Subtracting the maximum, dividing by √dₖ" (``docs/subtraction-vs-division.md``).

The page computes its examples in visible cells; the functions here take
their results, check what the prose says of them, and return a record whose
``glue_values`` are the weights and numbers the prose quotes, as text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_scaling.site.checks import require

__all__ = ["DivisionExample", "StabilityExample", "division_example", "stability_example"]

_PAGE = "subtraction-vs-division.md"


def _where(section: str) -> str:
    return f"{_PAGE}, section {section}"


def _four_digits(weights) -> str:
    return np.array2string(np.asarray(weights), formatter={"float_kind": "{:.4f}".format})


@dataclass(frozen=True)
class StabilityExample:
    """Softmax of large scores, computed as written and with the maximum subtracted.

    Attributes
    ----------
    stable_weights : str
        The weights with the maximum subtracted, to four digits.
    naive_weights : str
        The weights computed as written.
    shifted_match : bool
        Whether softmax of the shifted scores equals softmax of the scores to within :math:`10^{-15}`.
    float64_max_log : float
        The largest exponent whose exponential float64 can hold.
    """

    stable_weights: str
    naive_weights: str
    shifted_match: bool
    float64_max_log: float

    def glue_values(self) -> dict[str, object]:
        """The page's glue keys and their values."""
        return {"stable_weights": self.stable_weights, "naive_weights": self.naive_weights,
                "shifted_match": self.shifted_match, "float64_max_log": self.float64_max_log}


def stability_example(stable, naive, same) -> StabilityExample:
    """The section "What the subtraction is for".

    Parameters
    ----------
    stable : array_like
        Softmax of the scores, with the maximum subtracted.
    naive : array_like
        The same, computed as written.
    same : bool
        Whether softmax of the explicitly shifted scores equals ``stable``.

    Returns
    -------
    StabilityExample

    Raises
    ------
    PageCheckError
        Unless, as the prose says, the stable weights are finite and sum to 1,
        the naive ones are not all finite (the exponentials overflowed), and
        shifting changed nothing.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling import naive_softmax, softmax
    >>> from attention_scaling.site.subtraction_vs_division import stability_example
    >>> scores = np.array([800.0, 801.0, 803.0])
    >>> stability_example(softmax(scores), naive_softmax(scores), True).stable_weights
    '[0.0420 0.1142 0.8438]'
    """
    stable, naive = np.asarray(stable, dtype=np.float64), np.asarray(naive, dtype=np.float64)
    require(np.all(np.isfinite(stable)) and abs(stable.sum() - 1) < 1e-12, _where("subtraction-stability"),
            "subtracting the maximum gives finite weights that sum to 1", stable=stable.tolist())
    with np.errstate(invalid="ignore"):
        overflowed = not np.all(np.isfinite(naive))
    require(overflowed, _where("subtraction-stability"),
            "computing softmax as written overflows for these scores",
            naive=naive.tolist())
    require(bool(same), _where("subtraction-stability"),
            "softmax of the shifted scores equals softmax of the scores",
            same=same)
    return StabilityExample(
        stable_weights=_four_digits(stable),
        naive_weights=np.array2string(naive),
        shifted_match=bool(same),
        float64_max_log=float(np.log(np.finfo(np.float64).max)),
    )


@dataclass(frozen=True)
class DivisionExample:
    r"""Softmax of the same scores, raw and divided by :math:`\sqrt{d_k}`.

    Attributes
    ----------
    d_k : int
        The head dimension.
    raw, scaled : str
        The two sets of weights, to four digits.
    """

    d_k: int
    raw: str
    scaled: str

    def glue_values(self) -> dict[str, object]:
        """The page's glue keys and their values."""
        return {"division_d_k": self.d_k, "division_raw": self.raw, "division_scaled": self.scaled}


def division_example(d_k: int, raw, scaled) -> DivisionExample:
    r"""The section "What the division is for".

    Parameters
    ----------
    d_k : int
        The head dimension.
    raw, scaled : array_like
        Softmax of the scores, and of the scores divided by :math:`\sqrt{d_k}`.

    Returns
    -------
    DivisionExample

    Raises
    ------
    PageCheckError
        Unless the division changes the weights and makes them less peaked
        (a lower largest weight): the prose says it sets how peaked they are.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling import softmax
    >>> from attention_scaling.site.subtraction_vs_division import division_example
    >>> scores = np.array([12.0, 4.0, 0.0, -4.0])
    >>> division_example(64, softmax(scores), softmax(scores / 8)).scaled
    '[0.5793 0.2131 0.1293 0.0784]'
    """
    raw, scaled = np.asarray(raw, dtype=np.float64), np.asarray(scaled, dtype=np.float64)
    require(raw.max() > scaled.max(), _where("subtraction-division"),
            "dividing by sqrt(d_k) makes the weights less peaked",
            raw=raw.tolist(), scaled=scaled.tolist())
    return DivisionExample(d_k=int(d_k), raw=_four_digits(raw), scaled=_four_digits(scaled))
