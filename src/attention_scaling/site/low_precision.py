r"""Page support for "Low precision" (``docs/low-precision.md``).

One function per section recomputes what the section's visible cells show,
checks what its prose states about the results (raising
:class:`~attention_scaling.site.checks.PageCheckError` if a statement fails)
and returns a frozen record whose fields the page glues
(:func:`~attention_scaling.site.glue_fields`), each with the type the page
has always glued. Also here: the page's two tables, :func:`formats_table`
and :func:`grid_table`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy

from attention_scaling._softmax import naive_softmax, softmax
from attention_scaling.low_precision import (
    FORMATS,
    FloatFormat,
    GridCell,
    float_format,
    precision_grid,
    representable_neighbours,
    rounded_scores,
    to_bfloat16,
)
from attention_scaling.simulate import Estimate
from attention_scaling.site.checks import require
from attention_scaling.site.tables import markdown_table

__all__ = [
    "Bfloat16Answer",
    "FormatsSection",
    "OverflowSection",
    "TwoJobsSection",
    "UnderflowSection",
    "bfloat16_answer",
    "formats_section",
    "formats_table",
    "grid_table",
    "overflow_section",
    "two_jobs_section",
    "underflow_section",
]


def formats_table(names=FORMATS) -> str:
    r"""A Markdown table of the formats' precision, range and :math:`e^x` thresholds.

    Parameters
    ----------
    names : sequence of str, default all of ``FORMATS``
        The formats, one row each.

    Returns
    -------
    str
        Significant bits, largest finite and smallest positive (subnormal)
        value; the two logarithms are where :math:`e^x` overflows (above the
        first) and rounds to 0 (below the second).

    Raises
    ------
    ValueError
        If a name is not a known format.

    Examples
    --------
    >>> from attention_scaling.site.low_precision import formats_table
    >>> print(formats_table(["float16"]).splitlines()[-1])
    | float16 | 11 | 65504 | 11.09 | 5.960e-08 | -17.33 |
    """
    rows = []
    for name in names:
        f = float_format(name)
        rows.append([f.name, f.significant_bits, f"{f.largest:.5g}", f"{f.exp_overflow:.2f}",
                     f"{f.smallest_subnormal:.3e}", f"{f.exp_underflow:.2f}"])
    header = ["format", "bits", "largest", r"$\ln$ largest", "smallest", r"$\ln$(smallest/2)"]
    return markdown_table(header, rows, align=["left"] + ["right"] * 5)


def grid_table(cells) -> str:
    r"""A Markdown table of the cells of :func:`~attention_scaling.low_precision.precision_grid`.

    Parameters
    ----------
    cells : sequence of GridCell

    Returns
    -------
    str
        One row per cell; "—" where fewer than two rows were valid.

    Raises
    ------
    TypeError
        If a cell is not a :class:`~attention_scaling.low_precision.GridCell`.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.low_precision import precision_grid
    >>> from attention_scaling.site.low_precision import grid_table
    >>> scores = np.array([[12.0, 11.0, 3.0], [12.0, 10.0, 3.0]], dtype=np.float16)
    >>> grid_table(precision_grid(scores, d_k=4)).splitlines()[2]      # \xa0: a no-break space
    '| no | no | 12.0 | 0\xa0% | — | — |'
    """
    cells = tuple(cells)
    if not all(isinstance(cell, GridCell) for cell in cells):
        raise TypeError("cells must be GridCell objects, as returned by precision_grid")

    # No-break spaces keep "0.957 ± 0.002" and "100 %" on one line in a narrow column.
    def shown(estimate: Estimate | None) -> str:
        return "—" if estimate is None else f"{estimate.value:.3f}\u00a0±\u00a0{estimate.standard_error:.3f}"

    rows = [
        [
            "yes" if cell.subtract_max else "no",
            "yes" if cell.scaled else "no",
            f"{cell.largest_logit:.1f}",
            f"{100 * cell.valid_fraction:.3g}\u00a0%",
            shown(cell.largest_weight),
            shown(cell.entropy),
        ]
        for cell in cells
    ]
    header = ["subtract max", r"divide by $\sqrt{d_k}$", "largest logit", "valid rows", "largest weight",
              "entropy (nats)"]
    return markdown_table(header, rows, align=["left", "left"] + ["right"] * 4)


# -- Three formats ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FormatsSection:
    r"""What section ``low-precision-formats`` states about float16 and bfloat16.

    Attributes
    ----------
    half, brain, single : FloatFormat
        float16, bfloat16 and float32.
    ln_largest : float
        :math:`\ln 65504`, evaluated by SymPy.
    below, above : float
        The float16 values that bracket ``ln_largest``.
    bracket_step : float
        ``above - below``, the distance between float16 values there.
    exp_below : float
        :math:`e^x` at ``below``, in float16 (``exp_above`` is ``inf``).
    brain_ln_largest, single_ln_largest : float
        Where :math:`e^x` overflows in bfloat16 and in float32.
    rounded_257 : float
        257 rounded to bfloat16.
    spacing : float
        The distance between neighbouring bfloat16 values in [128, 256).
    exact_low, exact_high : float
        Softmax of the scores 200 and 200.5, in float64: the weight of each.
    """

    half: FloatFormat
    brain: FloatFormat
    single: FloatFormat
    ln_largest: float
    below: float
    above: float
    bracket_step: float
    exp_below: float
    brain_ln_largest: float
    single_ln_largest: float
    rounded_257: float
    spacing: float
    exact_low: float
    exact_high: float


def formats_section() -> FormatsSection:
    r"""Where float16's :math:`e^x` overflows, and what bfloat16's 8 bits cost, checked.

    The checks: the largest float16 is 65504 (by :func:`~attention_scaling.low_precision.float_format`
    and by ``numpy.finfo``) and SymPy's :math:`\ln 65504` is the format's
    overflow threshold to 15 digits; float16 :math:`e^x` is finite at the
    float16 value just below it and ``inf`` just above, the two being
    :math:`2^{-7}` apart; bfloat16 overflows within 0.01 of float32; 257
    rounds to 256; the scores 200 and 200.5 become equal in bfloat16 and
    softmax splits the weight evenly; and bfloat16 values in [128, 256) are
    :math:`2^{7 - 7} = 1` apart.

    Returns
    -------
    FormatsSection

    Raises
    ------
    PageCheckError
        If one of these statements fails.

    Examples
    --------
    >>> from attention_scaling.site.low_precision import formats_section
    >>> section = formats_section()
    >>> section.bracket_step == 2.0**-7, section.rounded_257
    (True, 256.0)
    """
    where = "low-precision-formats"
    half = float_format("float16")
    require(half.largest == float(np.finfo(np.float16).max) == 65504, where, "the largest float16 is 65504",
            float_format=half.largest, finfo=float(np.finfo(np.float16).max))
    ln_largest = float(sympy.log(sympy.Integer(65504)).evalf(30))
    require(math.isclose(ln_largest, half.exp_overflow, rel_tol=1e-15), where,
            "SymPy's ln 65504 is float16's overflow threshold", sympy=ln_largest, exp_overflow=half.exp_overflow)
    below, above = representable_neighbours(ln_largest, np.float16)
    with np.errstate(over="ignore"):
        exp_below, exp_above = np.exp(below), np.exp(above)
    require(np.isfinite(exp_below) and np.isinf(exp_above), where,
            "float16 exp is finite just below ln 65504 and inf just above",
            below=below, above=above, exp_below=exp_below, exp_above=exp_above)
    require(float(above) - float(below) == 2.0**-7, where, "the float16 values near 11 are 2**-7 apart",
            below=below, above=above)

    brain, single = float_format("bfloat16"), float_format("float32")
    require(abs(brain.exp_overflow - single.exp_overflow) < 0.01, where,
            "bfloat16 overflows within 0.01 of float32", bfloat16=brain.exp_overflow, float32=single.exp_overflow)
    rounded_257 = float(to_bfloat16(257.0)[()])
    require(rounded_257 == 256.0, where, "257 rounds to 256 in bfloat16", rounded=rounded_257)
    close = np.array([200.0, 200.5])
    exact_weights = softmax(close)
    bf16_scores = to_bfloat16(close)
    bf16_weights = softmax(bf16_scores)
    require(bf16_scores[0] == bf16_scores[1] and np.all(bf16_weights == 0.5), where,
            "200 and 200.5 become equal in bfloat16, and softmax splits the weight evenly",
            scores=bf16_scores, weights=bf16_weights)
    # Values in [128, 256) are 2^7 times 1.xxxxxxx: steps of 2^(7 - 7).
    spacing = float(to_bfloat16(129.0)[()] - to_bfloat16(128.0)[()])
    require(spacing == 2.0 ** (7 - (brain.significant_bits - 1)), where,
            "bfloat16 values in [128, 256) are 2**(7 - 7) apart", spacing=spacing)
    return FormatsSection(
        half=half, brain=brain, single=single, ln_largest=ln_largest, below=float(below), above=float(above),
        bracket_step=float(above) - float(below), exp_below=float(exp_below),
        brain_ln_largest=brain.exp_overflow, single_ln_largest=single.exp_overflow,
        rounded_257=rounded_257, spacing=spacing,
        exact_low=float(exact_weights[0]), exact_high=float(exact_weights[1]),
    )


# -- Softmax without the subtraction ---------------------------------------------------------------


@dataclass(frozen=True)
class OverflowSection:
    r"""What section ``low-precision-overflow`` states about the float16 scores [12, 11, 3].

    Attributes
    ----------
    naive, stable : numpy.ndarray
        The float16 weights of ``naive_softmax`` and ``softmax``.
    naive_printed, stable_printed : str
        The same as NumPy prints them (``stable`` to 3 digits).
    stable_error : float
        Largest distance of ``stable`` from the same softmax in float64.
    exp_12 : float
        :math:`e^{12}`, the term that overflows.
    example_d_k : int
        The head dimension of the closing example.
    example_std : float
        :math:`\sqrt{d_k}` there, the standard deviation of its unscaled scores.
    """

    naive: np.ndarray
    stable: np.ndarray
    naive_printed: str
    stable_printed: str
    stable_error: float
    exp_12: float
    example_d_k: int
    example_std: float


def overflow_section() -> OverflowSection:
    r"""Softmax of the float16 scores [12, 11, 3] with and without the subtraction, checked.

    The checks: both versions return float16; the naive one returns NaN for
    the first weight, the one that subtracts the maximum only finite weights,
    within float16's relative precision :math:`2^{-11}` of float64.

    Returns
    -------
    OverflowSection

    Raises
    ------
    PageCheckError
        If one of these statements fails.

    Examples
    --------
    >>> from attention_scaling.site.low_precision import overflow_section
    >>> overflow_section().naive_printed
    '[nan  0.  0.]'
    """
    where = "low-precision-overflow"
    half = float_format("float16")
    scores = np.array([12.0, 11.0, 3.0], dtype=np.float16)
    naive, stable = naive_softmax(scores), softmax(scores)
    require(naive.dtype == stable.dtype == np.float16, where, "both softmaxes keep float16",
            naive=naive.dtype, stable=stable.dtype)
    require(np.isnan(naive[0]) and np.all(np.isfinite(stable)), where,
            "the naive softmax returns NaN, the stable one finite weights", naive=naive, stable=stable)
    reference = softmax(scores.astype(np.float64))
    stable_error = float(np.max(np.abs(stable - reference)))
    require(stable_error < half.relative_precision, where, "the stable weights are within 2**-11 of float64",
            stable_error=stable_error, relative_precision=half.relative_precision)
    example_d_k = 64
    return OverflowSection(naive, stable, naive_printed=np.array2string(naive),
                           stable_printed=np.array2string(stable, precision=3), stable_error=stable_error,
                           exp_12=float(math.exp(12)), example_d_k=example_d_k, example_std=math.sqrt(example_d_k))


# -- The two do different jobs ---------------------------------------------------------------------


@dataclass(frozen=True)
class TwoJobsSection:
    r"""What section ``low-precision-two-jobs`` states: the grid of four softmaxes, and the product.

    Attributes
    ----------
    d_k, n_keys, n_queries : int
        Sizes of the grid's experiment.
    cells : tuple of GridCell
        :func:`~attention_scaling.low_precision.precision_grid` of its float16 scores.
    mean_score, scaled_mean : float
        Mean score, before and after the division by :math:`\sqrt{d_k}`.
    smallest_row_max : float
        Smallest row maximum of the scaled scores.
    raw_weight, raw_weight_se, raw_entropy, raw_entropy_se : float
        The mean largest weight and entropy of the max-subtracted softmax of
        the unscaled scores, each with its standard error.
    scaled_weight, scaled_weight_se, scaled_entropy, scaled_entropy_se : float
        The same for the scaled scores.
    uniform_entropy : float
        :math:`\ln n`, the entropy of uniform weights over the ``n_keys`` keys.
    subtraction_error : float
        Largest distance of the float16 max-subtracted weights from float64.
    product_d_k : int
        Head dimension of the product example.
    component : float
        Every component of its query and key.
    exact_product : float
        The exact score :math:`d_k \cdot \text{component}^2`.
    largest_safe_component : float
        :math:`\sqrt{65504 / d_k}`.
    divided_first : float
        The float16 score when the query is divided by :math:`\sqrt{d_k}` first.
    divided_exact : float
        The exact value of that score, ``exact_product`` divided by :math:`\sqrt{d_k}`.
    """

    d_k: int
    n_keys: int
    n_queries: int
    cells: tuple[GridCell, ...]
    mean_score: float
    scaled_mean: float
    smallest_row_max: float
    raw_weight: float
    raw_weight_se: float
    raw_entropy: float
    raw_entropy_se: float
    scaled_weight: float
    scaled_weight_se: float
    scaled_entropy: float
    scaled_entropy_se: float
    uniform_entropy: float
    subtraction_error: float
    product_d_k: int
    component: float
    exact_product: float
    largest_safe_component: float
    divided_first: float
    divided_exact: float


def two_jobs_section(*, seed: int = 16, d_k: int = 256, n_keys: int = 8, n_queries: int = 2000) -> TwoJobsSection:
    r"""Max-subtraction and scaling on seeded float16 scores, and the product that overflows first, checked.

    Queries and keys have components of mean 1 and variance 1, as in the
    page's visible cell. The checks: even divided by :math:`\sqrt{d_k}`, every
    row's largest score is above float16's overflow threshold; the naive
    softmax fails on every row, scaled or not, and the max-subtracted one on
    none; unscaled, the largest weight is above 0.9, scaled below 0.5, and
    the scaled entropy more than ten times the unscaled one (each three
    standard errors away); the float16 max-subtracted weights are within
    :math:`10 \cdot 2^{-11}` of float64; every term lies in [0, 1], the top
    one being exactly 1, and every denominator in [1, n]
    (the theorem ``thm-stable-softmax-bounds``, in float16). For the product of a
    query and a key of equal components 25 at :math:`d_k = 128`: the exact
    score exceeds 65504, so the float16 score is ``inf``, stays ``inf`` divided
    by :math:`\sqrt{d_k}` and becomes NaN less its own maximum; dividing the
    query first keeps it finite.

    Parameters
    ----------
    seed : int, default 16
        Seed for ``numpy.random.default_rng``.
    d_k, n_keys, n_queries : int
        Sizes of the grid's experiment.

    Returns
    -------
    TwoJobsSection

    Raises
    ------
    PageCheckError
        If one of these statements fails.

    Examples
    --------
    >>> from attention_scaling.site.low_precision import two_jobs_section
    >>> section = two_jobs_section()
    >>> [cell.valid_fraction for cell in section.cells], section.exact_product
    ([0.0, 0.0, 1.0, 1.0], 80000.0)
    """
    where = "low-precision-two-jobs"
    half = float_format("float16")
    rng = np.random.default_rng(seed=seed)
    q = rng.normal(1.0, 1.0, (n_queries, d_k))
    k = rng.normal(1.0, 1.0, (n_queries, n_keys, d_k))
    scores = rounded_scores(q, k, "float16")  # (n_queries, n_keys)
    cells = precision_grid(scores, d_k)
    naive_raw, naive_scaled, stable_raw, stable_scaled = cells

    scaled_logits = scores / np.float16(math.sqrt(d_k))
    smallest_row_max = float(scaled_logits.max(axis=-1).min())
    require(smallest_row_max > half.exp_overflow, where, "every scaled row's largest score overflows float16 exp",
            smallest_row_max=smallest_row_max, exp_overflow=half.exp_overflow)
    valid = [cell.valid_fraction for cell in cells]
    require(valid == [0, 0, 1, 1], where, "the naive softmax fails on every row, the stable one on none",
            valid_fractions=valid)
    raw_weight, scaled_weight = stable_raw.largest_weight.interval(), stable_scaled.largest_weight.interval()
    require(raw_weight[0] > 0.9 and scaled_weight[1] < 0.5, where,
            "the largest weight is above 0.9 unscaled and below 0.5 scaled (3 s.e.)",
            unscaled=raw_weight, scaled=scaled_weight)
    raw_entropy, scaled_entropy = stable_raw.entropy.interval(), stable_scaled.entropy.interval()
    require(scaled_entropy[0] > 10 * raw_entropy[1], where,
            "the scaled entropy is more than ten times the unscaled one (3 s.e.)",
            unscaled=raw_entropy, scaled=scaled_entropy)

    # The subtraction computes the saturated weights faithfully: compare float64.
    subtraction_error = float(np.max(np.abs(softmax(scores) - softmax(scores.astype(np.float64)))))
    require(subtraction_error < 10 * half.relative_precision, where,
            "the float16 max-subtracted weights are within 10 * 2**-11 of float64", subtraction_error=subtraction_error)
    # The theorem, in float16: terms in [0, 1], denominators in [1, n].
    terms = np.exp(scores - scores.max(axis=-1, keepdims=True))
    denominators = terms.sum(axis=-1)
    require(terms.dtype == np.float16 and terms.max() == 1 and terms.min() >= 0, where,
            "in float16 every term lies in [0, 1] and the top one is 1",
            dtype=terms.dtype, largest=terms.max(), smallest=terms.min())
    require(np.all((denominators >= 1) & (denominators <= n_keys)), where,
            "in float16 every denominator lies in [1, n]", smallest=denominators.min(), largest=denominators.max())

    product_d_k, component = 128, 25.0
    q_large = np.full(product_d_k, component)
    k_large = q_large[None, :]  # one key, equal to the query
    exact_product = product_d_k * component**2
    product = rounded_scores(q_large, k_large, "float16")[0]
    with np.errstate(invalid="ignore"):
        shifted = product - product  # inf minus its own maximum
    require(exact_product > half.largest and np.isinf(product), where,
            "the exact product exceeds 65504 and the float16 one is inf", exact=exact_product, float16=product)
    require(np.isinf(product / np.float16(math.sqrt(product_d_k))) and np.isnan(shifted), where,
            "inf stays inf divided by sqrt(d_k) and becomes NaN less its maximum", product=product)
    largest_safe_component = math.sqrt(half.largest / product_d_k)
    divided_first = float(rounded_scores(q_large / math.sqrt(product_d_k), k_large, "float16")[0])
    require(math.isfinite(divided_first), where, "dividing the query first keeps the float16 score finite",
            divided_first=divided_first)
    return TwoJobsSection(
        d_k=d_k, n_keys=n_keys, n_queries=n_queries, cells=cells,
        mean_score=float(scores.astype(np.float64).mean()),
        scaled_mean=float(scaled_logits.astype(np.float64).mean()),
        smallest_row_max=smallest_row_max,
        raw_weight=stable_raw.largest_weight.value, raw_weight_se=stable_raw.largest_weight.standard_error,
        raw_entropy=stable_raw.entropy.value, raw_entropy_se=stable_raw.entropy.standard_error,
        scaled_weight=stable_scaled.largest_weight.value, scaled_weight_se=stable_scaled.largest_weight.standard_error,
        scaled_entropy=stable_scaled.entropy.value, scaled_entropy_se=stable_scaled.entropy.standard_error,
        uniform_entropy=math.log(n_keys), subtraction_error=subtraction_error,
        product_d_k=product_d_k, component=component, exact_product=exact_product,
        largest_safe_component=largest_safe_component, divided_first=divided_first,
        divided_exact=exact_product / math.sqrt(product_d_k),
    )


# -- Underflow -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UnderflowSection:
    r"""What section ``low-precision-underflow`` states about float16 underflow.

    Attributes
    ----------
    half : FloatFormat
        float16.
    ln_smallest_subnormal, ln_smallest_normal : float
        :math:`\ln` of its smallest subnormal and smallest normal number.
    zero_below : float
        Below this :math:`e^x` rounds to 0 in float16.
    far_weights : numpy.ndarray
        The float16 weights of the scores [0, -10, -17, -18].
    far_weights_printed : str
        The same as NumPy prints them, to 2 digits.
    far_exact : numpy.ndarray
        The same in float64.
    far_exact_2, far_exact_3 : float
        Its last two weights.
    lost_per_key : float
        Largest true weight of a key whose term rounds to 0: half the smallest
        subnormal (the denominator is at least 1).
    many_keys : int
        The number of keys of the closing bound.
    many_keys_lost : float
        The largest total weight so many keys can lose, ``many_keys * lost_per_key``.
    """

    half: FloatFormat
    ln_smallest_subnormal: float
    ln_smallest_normal: float
    zero_below: float
    far_weights: np.ndarray
    far_weights_printed: str
    far_exact: np.ndarray
    far_exact_2: float
    far_exact_3: float
    lost_per_key: float
    many_keys: int
    many_keys_lost: float


def underflow_section() -> UnderflowSection:
    r"""Where float16's :math:`e^x` rounds to 0, and what that does to softmax, checked.

    The checks: the smallest float16 is :math:`2^{-24}`; :math:`e^x` rounds to
    0 below :math:`\ln 2^{-25}`, exactly so at the float16 values either
    side of it; and of the float16 weights of [0, -10, -17, -18], the last is
    0 (positive in float64) and the third the smallest subnormal.

    Returns
    -------
    UnderflowSection

    Raises
    ------
    PageCheckError
        If one of these statements fails.

    Examples
    --------
    >>> from attention_scaling.site.low_precision import underflow_section
    >>> underflow_section().far_weights_printed
    '[1.00e+00 4.54e-05 5.96e-08 0.00e+00]'
    """
    where = "low-precision-underflow"
    half = float_format("float16")
    require(half.smallest_subnormal == 2.0**-24, where, "the smallest float16 is 2**-24",
            smallest_subnormal=half.smallest_subnormal)
    zero_below = half.exp_underflow
    require(zero_below == math.log(2.0**-25), where, "exp rounds to 0 below ln 2**-25", exp_underflow=zero_below)
    below, above = representable_neighbours(zero_below, np.float16)
    require(np.exp(below) == 0 and np.exp(above) > 0, where,
            "float16 exp is 0 just below ln 2**-25 and positive just above", below=below, above=above)
    far = np.array([0.0, -10.0, -17.0, -18.0], dtype=np.float16)
    far_weights = softmax(far)
    far_exact = softmax(far.astype(np.float64))
    require(far_weights[3] == 0 and far_exact[3] > 0, where, "the weight of -18 is 0 in float16, not in float64",
            float16=far_weights[3], float64=far_exact[3])
    require(far_weights[2] == half.smallest_subnormal, where, "the weight of -17 rounds to the smallest subnormal",
            weight=far_weights[2])
    lost_per_key, many_keys = half.smallest_subnormal / 2, 4096
    return UnderflowSection(
        half=half,
        ln_smallest_subnormal=math.log(half.smallest_subnormal),
        ln_smallest_normal=math.log(half.smallest_normal),
        zero_below=zero_below,
        far_weights=far_weights,
        far_weights_printed=np.array2string(far_weights, precision=2),
        far_exact=far_exact,
        far_exact_2=float(far_exact[2]),
        far_exact_3=float(far_exact[3]),
        lost_per_key=lost_per_key,
        many_keys=many_keys,
        many_keys_lost=many_keys * lost_per_key,
    )


@dataclass(frozen=True)
class Bfloat16Answer:
    r"""Exercise ``ex-bf16-range``: bfloat16's extreme numbers from its bits, and its two :math:`e^x` thresholds.

    Attributes
    ----------
    largest, smallest_subnormal : float
        The largest finite and the smallest positive bfloat16 numbers.
    overflow : float
        :math:`\ln` of the largest: above it :math:`e^x` overflows.
    zero_below : float
        :math:`\ln` of half the smallest: below it :math:`e^x` rounds to 0.
    """

    largest: float
    smallest_subnormal: float
    overflow: float
    zero_below: float


def bfloat16_answer(largest: float, smallest_subnormal: float, overflow: float, zero_below: float) -> Bfloat16Answer:
    r"""Check the solution's bfloat16 numbers against the format's bit patterns, and its range against float16's.

    Parameters
    ----------
    largest, smallest_subnormal : float
        The solution's largest finite and smallest positive bfloat16 numbers.
    overflow, zero_below : float
        Its thresholds, :math:`\ln` of ``largest`` and of half ``smallest_subnormal``.

    Returns
    -------
    Bfloat16Answer

    Raises
    ------
    PageCheckError
        If a number differs from :func:`~attention_scaling.low_precision.float_format`'s
        (read from the bit patterns ``0x7F7F`` and ``0x0001``), or a threshold
        does not reach beyond float16's.

    Examples
    --------
    >>> import math
    >>> from attention_scaling.site.low_precision import bfloat16_answer
    >>> largest, smallest = (2 - 2**-7) * 2.0**127, 2.0**-133
    >>> round(bfloat16_answer(largest, smallest, math.log(largest), math.log(smallest / 2)).overflow, 2)
    88.72
    """
    where = "low-precision.md, exercise ex-bf16-range"
    brain, half = float_format("bfloat16"), float_format("float16")
    require(largest == brain.largest and smallest_subnormal == brain.smallest_subnormal, where,
            "the extreme numbers are bfloat16's", largest=largest, smallest_subnormal=smallest_subnormal)
    require(math.isclose(overflow, brain.exp_overflow, rel_tol=1e-12)
            and math.isclose(zero_below, brain.exp_underflow, rel_tol=1e-12), where,
            "the thresholds are ln(largest) and ln(smallest / 2)", overflow=overflow, zero_below=zero_below)
    require(overflow > half.exp_overflow and zero_below < half.exp_underflow, where,
            "bfloat16 reaches beyond float16 at both ends", overflow=overflow, zero_below=zero_below)
    return Bfloat16Answer(float(largest), float(smallest_subnormal), float(overflow), float(zero_below))
