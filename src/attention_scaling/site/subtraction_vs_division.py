r"""Page support for "Subtracting the maximum, dividing by √dₖ" (``docs/subtraction-vs-division.md``).

The page computes its examples in visible cells; the functions here take
their results, check what the prose says of them, and return a record whose
fields are the weights and numbers the prose quotes (glued by
:func:`attention_scaling.site.glue_fields`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attention_scaling._softmax import softmax
from attention_scaling.low_precision import rounded_scores
from attention_scaling.site.checks import require

__all__ = [
    "DivisionExample",
    "HalvingAnswer",
    "ProductOverflow",
    "StabilityExample",
    "division_example",
    "halving_answer",
    "product_overflow",
    "stability_example",
]

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


@dataclass(frozen=True)
class ProductOverflow:
    r"""A float16 score :math:`q \cdot k` that overflows, with the scale applied after and before the product.

    Attributes
    ----------
    d_k : int
        The head dimension.
    component : float
        The value of every component of :math:`q` and :math:`k`.
    fp16_max : float
        The largest finite float16 value.
    exact : float
        The exact score, :math:`d_k \cdot \text{component}^2`.
    product : float
        The score in float16 (``inf``).
    scaled_after : float
        That float16 score divided by :math:`\sqrt{d_k}` (still ``inf``).
    divided_first : float
        The float16 score of :math:`q/\sqrt{d_k}` and :math:`k` (finite).
    """

    d_k: int
    component: float
    fp16_max: float
    exact: float
    product: float
    scaled_after: float
    divided_first: float


def product_overflow(d_k: int = 128, component: float = 25.0) -> ProductOverflow:
    r"""The section "What the division is for": where the scale is applied decides a float16 overflow.

    Parameters
    ----------
    d_k : int, default 128
        The head dimension.
    component : float, default 25.0
        Every component of the query and the key (one key, equal to the query).

    Returns
    -------
    ProductOverflow

    Raises
    ------
    PageCheckError
        Unless, as the prose says, the float16 score overflows, dividing it
        afterwards leaves it infinite, and dividing :math:`q` by
        :math:`\sqrt{d_k}` first keeps it finite.

    Examples
    --------
    >>> from attention_scaling.site.subtraction_vs_division import product_overflow
    >>> record = product_overflow()
    >>> record.product, record.scaled_after, record.divided_first
    (inf, inf, 7068.0)
    """
    where = _where("subtraction-division")
    q = np.full(d_k, float(component))
    keys = q[None, :]
    product = rounded_scores(q, keys, "float16")[0]
    scaled_after = product / np.float16(math.sqrt(d_k))
    divided_first = rounded_scores(q / math.sqrt(d_k), keys, "float16")[0]
    fp16_max = float(np.finfo(np.float16).max)
    exact = d_k * float(component) ** 2
    require(exact > fp16_max and np.isinf(product), where, "the float16 score q.k overflows",
            exact=exact, fp16_max=fp16_max, product=float(product))
    require(bool(np.isinf(scaled_after)), where, "dividing the overflowed score afterwards leaves it infinite",
            scaled_after=float(scaled_after))
    require(bool(np.isfinite(divided_first)), where, "dividing q by sqrt(d_k) before the product keeps the score finite",
            divided_first=float(divided_first))
    return ProductOverflow(
        d_k=int(d_k),
        component=float(component),
        fp16_max=fp16_max,
        exact=exact,
        product=float(product),
        scaled_after=float(scaled_after),
        divided_first=float(divided_first),
    )


@dataclass(frozen=True)
class HalvingAnswer:
    r"""Exercise ``ex-halving-divisor``: the divisor that leaves the top key exactly half of the weight.

    Attributes
    ----------
    divisor : float
        The divisor :math:`\tau` found.
    usual : float
        The divisor :math:`\sqrt{d_k}` the page uses.
    usual_weight : float
        The top key's weight with the usual divisor.
    """

    divisor: float
    usual: float
    usual_weight: float


def halving_answer(scores, divisor: float, usual: float, step: float = 0.01) -> HalvingAnswer:
    r"""Check that dividing ``scores`` by ``divisor`` gives the top key weight :math:`\tfrac12`, and the usual divisor more.

    Parameters
    ----------
    scores : array_like, shape (n,)
        The scores, their largest first.
    divisor : float
        The solution's :math:`\tau`.
    usual : float
        The usual divisor :math:`\sqrt{d_k}`.
    step : float, default 0.01
        The relative change of ``divisor`` on either side at which the
        weight must be above and below :math:`\tfrac12`: the root is the
        crossing, not a touch.

    Returns
    -------
    HalvingAnswer

    Raises
    ------
    PageCheckError
        If the top weight at ``divisor`` is not :math:`\tfrac12` to
        :math:`10^{-12}`, does not fall through it there, or is not above it
        at ``usual``, which must then be the smaller divisor.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.site.subtraction_vs_division import halving_answer
    >>> round(halving_answer(np.array([1.0, 0.0, 0.0]), np.log(2) ** -1, 0.5).divisor, 4)   # e^(1/t) = 2
    1.4427
    """
    where = "subtraction-vs-division.md, exercise ex-halving-divisor"
    scores = np.asarray(scores, dtype=float)

    def top(tau: float) -> float:
        return float(softmax(scores / tau)[0])

    require(abs(top(divisor) - 0.5) <= 1e-12, where, "the top weight is 1/2 at the divisor", weight=top(divisor))
    require(top(divisor * (1 - step)) > 0.5 > top(divisor * (1 + step)), where,
            "the top weight falls through 1/2 there", below=top(divisor * (1 - step)), above=top(divisor * (1 + step)))
    require(top(usual) > 0.5 and usual < divisor, where, "the usual divisor leaves the top key more than half",
            usual=usual, weight=top(usual))
    return HalvingAnswer(float(divisor), float(usual), top(usual))
