r"""Attention scores and softmax in low-precision floating point.

Half precision (IEEE float16) keeps 11 significant bits but overflows above
65504; bfloat16 keeps the exponent range of float32 but only 8 significant
bits. numpy has float16 and float32 but no bfloat16, so :func:`to_bfloat16`
emulates it by rounding float32 values. The other functions compute the
facts the Low precision page states about these formats, round attention
scores to a format, and tabulate what max-subtraction and the
:math:`1/\sqrt{d_k}` scale each do to a float16 softmax.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attention_scaling._checks import as_float_array, require_ndim
from attention_scaling.simulate import Estimate, mean_estimate
from attention_scaling._softmax import attention_entropy, naive_softmax, softmax

__all__ = [
    "FORMATS",
    "FloatFormat",
    "GridCell",
    "float_format",
    "format_softmax",
    "precision_grid",
    "representable_neighbours",
    "round_to_format",
    "rounded_scores",
    "to_bfloat16",
    "uniform_deviation_errors",
]

#: The formats this module knows, by name.
FORMATS = ("float32", "float16", "bfloat16")

# A float32 keeps 24 significant bits in 32; bfloat16 keeps the top 16 bits
# (sign, 8 exponent bits, 7 stored fraction bits), so 16 low bits are dropped.
_DROPPED_BITS = 16
_LOW_MASK = np.uint64((1 << _DROPPED_BITS) - 1)


def to_bfloat16(x) -> np.ndarray:
    r"""Round to the nearest bfloat16 value, ties to even; return it as float32.

    Parameters
    ----------
    x : array_like
        Real numbers. They are first converted to float32 (so a float64 input
        is rounded twice: to float32, then to bfloat16).

    Returns
    -------
    numpy.ndarray
        float32 array of the same shape whose every value is a bfloat16 value:
        only the top 8 significant bits can be non-zero. Values beyond the
        bfloat16 range become ``±inf``; NaN stays NaN.

    Raises
    ------
    TypeError
        If ``x`` is not real and numeric.

    Notes
    -----
    bfloat16 is the top half of a float32. Rounding to nearest, ties to even,
    adds :math:`2^{15} - 1` plus the lowest kept bit to the 32-bit pattern and
    then clears the 16 low bits: a carry out of the low half happens exactly
    when the dropped part exceeds half a unit in the last place, or equals it
    and the kept part is odd. A carry out of the largest finite value turns
    the exponent field to all ones, which is infinity, as rounding requires.

    Examples
    --------
    >>> from attention_scaling.low_precision import to_bfloat16
    >>> to_bfloat16([1.0, 256.0 + 1.0, 256.0 + 3.0, 3.14159265])
    array([  1.      , 256.      , 260.      ,   3.140625], dtype=float32)
    """
    values = as_float_array(x, "x")
    with np.errstate(over="ignore"):  # beyond float32's range is inf, as it should be
        values = values.astype(np.float32)
    bits = values.view(np.uint32).astype(np.uint64)
    kept_lowest_bit = (bits >> np.uint64(_DROPPED_BITS)) & np.uint64(1)
    rounded = (bits + (_LOW_MASK >> np.uint64(1)) + kept_lowest_bit) & ~_LOW_MASK
    result = rounded.astype(np.uint32).view(np.float32)
    # Rounding a NaN's payload could carry it into an infinity; keep it NaN.
    return np.where(np.isnan(values), np.float32(np.nan), result).astype(np.float32)


def round_to_format(x, name: str) -> np.ndarray:
    """Round ``x`` to the format ``name``: one of ``"float32"``, ``"float16"``, ``"bfloat16"``.

    Parameters
    ----------
    x : array_like
        Real numbers.
    name : str
        The format.

    Returns
    -------
    numpy.ndarray
        float32 or float16 arrays for those formats; bfloat16 values are held
        in float32 (see :func:`to_bfloat16`). Out-of-range values become inf.

    Raises
    ------
    TypeError
        If ``x`` is not real and numeric.
    ValueError
        If ``name`` is not a known format.

    Examples
    --------
    >>> from attention_scaling.low_precision import round_to_format
    >>> round_to_format([70000.0, 1.0 / 3.0], "float16")
    array([  inf, 0.3333], dtype=float16)
    """
    values = as_float_array(x, "x")
    _require_format(name)
    if name == "bfloat16":
        return to_bfloat16(values)
    with np.errstate(over="ignore"):  # overflow to inf is the point of the exercise
        return values.astype(np.dtype(name))


def _require_format(name) -> None:
    if name not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}; got {name!r}")


@dataclass(frozen=True)
class FloatFormat:
    r"""The numbers that matter for softmax in one floating-point format.

    Attributes
    ----------
    name : str
        ``"float32"``, ``"float16"`` or ``"bfloat16"``.
    significant_bits : int
        Precision :math:`p`, counting the implicit leading bit.
    largest : float
        Largest finite value.
    smallest_normal : float
        Smallest positive normal value.
    smallest_subnormal : float
        Smallest positive value.

    Examples
    --------
    >>> from attention_scaling.low_precision import float_format
    >>> half = float_format("float16")
    >>> round(half.exp_underflow, 3), half.relative_precision == 2.0**-11
    (-17.329, True)
    """

    name: str
    significant_bits: int
    largest: float
    smallest_normal: float
    smallest_subnormal: float

    @property
    def exp_overflow(self) -> float:
        r""":math:`\ln(\text{largest})`: above it, :math:`e^x` is not finite in this format."""
        return math.log(self.largest)

    @property
    def exp_underflow(self) -> float:
        r""":math:`\ln(\text{smallest subnormal}/2)`: below it, :math:`e^x` rounds to exactly 0."""
        return math.log(self.smallest_subnormal / 2)

    @property
    def relative_precision(self) -> float:
        r""":math:`2^{-p}`: the largest relative rounding error of a normal value."""
        return 2.0 ** -self.significant_bits


def float_format(name: str) -> FloatFormat:
    r"""The :class:`FloatFormat` of ``"float32"``, ``"float16"`` or ``"bfloat16"``.

    float32 and float16 come from ``numpy.finfo``; bfloat16, which numpy
    lacks, from its bit patterns: the largest finite value is ``0x7F7F``, the
    smallest normal ``0x0080`` and the smallest subnormal ``0x0001``.

    Parameters
    ----------
    name : str
        The format.

    Returns
    -------
    FloatFormat

    Raises
    ------
    ValueError
        If ``name`` is not a known format.

    Examples
    --------
    >>> from attention_scaling.low_precision import float_format
    >>> half = float_format("float16")
    >>> half.largest, round(half.exp_overflow, 4)
    (65504.0, 11.0899)
    >>> float_format("bfloat16").significant_bits
    8
    """
    _require_format(name)
    if name == "bfloat16":
        patterns = np.array([0x7F7F, 0x0080, 0x0001], dtype=np.uint32) << np.uint32(_DROPPED_BITS)
        largest, normal, subnormal = (float(v) for v in patterns.view(np.float32))
        return FloatFormat(name, 8, largest, normal, subnormal)
    info = np.finfo(np.dtype(name))
    return FloatFormat(
        name,
        int(info.nmant) + 1,
        float(info.max),
        float(info.smallest_normal),
        float(info.smallest_subnormal),
    )


def representable_neighbours(value: float, dtype=np.float16) -> tuple[np.floating, np.floating]:
    """The largest value of ``dtype`` below ``value`` and the smallest above it.

    Parameters
    ----------
    value : float
        A finite real number.
    dtype : numpy floating dtype, default float16

    Returns
    -------
    (below, above) : tuple of numpy scalars of ``dtype``
        ``below < value < above``, with no value of ``dtype`` strictly between
        them other than ``value`` itself when it is representable.

    Raises
    ------
    TypeError
        If ``value`` is not a real number or ``dtype`` not a floating dtype.
    ValueError
        If ``value`` is not finite or lies outside the range of ``dtype``.

    Examples
    --------
    >>> from attention_scaling.low_precision import representable_neighbours
    >>> representable_neighbours(11.0898664884610)
    (np.float16(11.086), np.float16(11.09))
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"value must be a real number; got {type(value).__name__}")
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"dtype must be a floating dtype; got {dtype}")
    value = float(value)
    if not math.isfinite(value) or abs(value) >= float(np.finfo(dtype).max):
        raise ValueError(f"value must be finite and inside the range of {dtype}; got {value!r}")
    nearest = dtype.type(value)
    down, up = dtype.type(-np.inf), dtype.type(np.inf)
    below = nearest if float(nearest) < value else np.nextafter(nearest, down)
    above = nearest if float(nearest) > value else np.nextafter(nearest, up)
    return below, above


def rounded_scores(q, k, name: str = "float16") -> np.ndarray:
    r"""Scores :math:`q \cdot k_j` of queries and keys held in a low-precision format.

    The components of ``q`` and ``k`` are first rounded to the format; their
    products are then summed in float64 and the sum rounded to the format
    once, as a matrix unit that accumulates in higher precision would do.
    A score beyond the format's range becomes ``inf``.

    Parameters
    ----------
    q : array_like, shape (..., d_k)
        Queries.
    k : array_like, shape (..., n, d_k)
        Keys; leading axes broadcast against those of ``q``.
    name : str, default "float16"
        The format: one of ``FORMATS``.

    Returns
    -------
    numpy.ndarray, shape (..., n)
        The scores, in the format (bfloat16 held in float32).

    Raises
    ------
    TypeError
        If ``q`` or ``k`` is not real and numeric.
    ValueError
        If the shapes do not fit, the inputs are not finite, or ``name`` is not
        a known format.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.low_precision import rounded_scores
    >>> q = np.full(128, 25.0)
    >>> rounded_scores(q, q[None, :])                    # 128 * 25**2 = 80000 > 65504
    array([inf], dtype=float16)
    >>> rounded_scores(q / np.sqrt(128), q[None, :])    # the same, divided first
    array([7.068e+03], dtype=float16)
    """
    q, k = as_float_array(q, "q"), as_float_array(k, "k")
    require_ndim(q, "q", 1, "(..., d_k)")
    require_ndim(k, "k", 2, "(..., n, d_k)")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share d_k (last axis); got {q.shape} and {k.shape}")
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(k))):
        raise ValueError("q and k must be finite")
    _require_format(name)
    q_low = round_to_format(q, name).astype(np.float64)
    k_low = round_to_format(k, name).astype(np.float64)
    return round_to_format(np.einsum("...d,...nd->...n", q_low, k_low), name)


@dataclass(frozen=True)
class GridCell:
    """One cell of :func:`precision_grid`: a softmax variant and what it returned.

    Attributes
    ----------
    subtract_max : bool
        Whether the softmax subtracted the row maximum first.
    scaled : bool
        Whether the scores were divided by :math:`\\sqrt{d_k}` first.
    valid_fraction : float
        Fraction of rows whose weights are all finite and sum to 1.
    largest_weight : Estimate or None
        Mean over the valid rows of the largest weight, ± standard error;
        None if fewer than two rows are valid.
    entropy : Estimate or None
        Mean entropy (nats) of the valid rows, ± standard error; None likewise.
    largest_logit : float
        The largest logit fed to softmax (after the scaling, if any).
    """

    subtract_max: bool
    scaled: bool
    valid_fraction: float
    largest_weight: Estimate | None
    entropy: Estimate | None
    largest_logit: float


def _valid_rows(weights: np.ndarray) -> np.ndarray:
    """Rows that are probability vectors, to the format's own rounding tolerance."""
    tolerance = math.sqrt(float(np.finfo(weights.dtype).eps))
    with np.errstate(invalid="ignore"):
        finite = np.all(np.isfinite(weights), axis=-1)
        sums = np.sum(weights.astype(np.float64), axis=-1)
        return finite & np.all(weights >= 0, axis=-1) & (np.abs(sums - 1) <= tolerance)


def precision_grid(scores, d_k: int) -> tuple[GridCell, ...]:
    r"""Softmax with and without max-subtraction, with and without :math:`1/\sqrt{d_k}`.

    All arithmetic stays in the dtype of ``scores``: the division by
    :math:`\sqrt{d_k}`, the subtraction and the exponentials.

    Parameters
    ----------
    scores : array_like, shape (rows, n)
        Finite attention scores in a floating dtype (float16 for the page).
    d_k : int
        Key dimension; the scaled variant divides by :math:`\sqrt{d_k}`.

    Returns
    -------
    tuple of GridCell
        Four cells, in the order (no subtraction, unscaled), (no subtraction,
        scaled), (subtraction, unscaled), (subtraction, scaled).

    Raises
    ------
    TypeError
        If ``scores`` is not real and numeric.
    ValueError
        If ``scores`` is not a finite 2-d array with at least 2 rows and 1
        column, or ``d_k`` is not a positive integer.

    Notes
    -----
    A row is valid when its weights are finite and sum to 1 within the square
    root of the dtype's machine epsilon. The entropy of a valid row is taken
    in float64 after renormalising it, since float16 rounding leaves sums off
    by up to about :math:`10^{-3}`.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.low_precision import precision_grid
    >>> scores = np.array([[12.0, 11.0, 3.0], [2.0, 1.0, 0.0]], dtype=np.float16)
    >>> [cell.valid_fraction for cell in precision_grid(scores, d_k=4)]
    [0.5, 1.0, 1.0, 1.0]
    """
    scores = as_float_array(scores, "scores")
    if scores.ndim != 2 or scores.shape[0] < 2 or scores.shape[1] < 1:
        raise ValueError(f"scores must have shape (rows >= 2, n >= 1); got {scores.shape}")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores must be finite (an inf score means the product already overflowed)")
    if isinstance(d_k, bool) or not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k must be a positive integer; got {d_k!r}")
    root = scores.dtype.type(math.sqrt(d_k))
    cells = []
    for subtract_max in (False, True):
        for scaled in (False, True):
            logits = scores / root if scaled else scores
            weights = softmax(logits) if subtract_max else naive_softmax(logits)
            valid = _valid_rows(weights)
            good = weights[valid].astype(np.float64)
            largest = entropy = None
            if good.shape[0] >= 2:
                good = good / good.sum(axis=-1, keepdims=True)
                largest = mean_estimate(good.max(axis=-1))
                entropy = mean_estimate(attention_entropy(good))
            cells.append(
                GridCell(subtract_max, scaled, float(valid.mean()), largest, entropy, float(logits.max()))
            )
    return tuple(cells)


def format_softmax(scores, name: str) -> np.ndarray:
    r"""Softmax over the last axis with every elementwise result rounded to a format.

    The scores are rounded to the format; the maximum is subtracted, the
    exponentials taken and the quotients formed in float64, each result
    rounded to the format; the denominator is accumulated in float32, as
    attention kernels accumulate it.

    Parameters
    ----------
    scores : array_like, shape (..., n)
        Finite scores.
    name : str
        The format: one of ``FORMATS``.

    Returns
    -------
    numpy.ndarray, shape (..., n)
        The weights, float64 holding values of the format.

    Raises
    ------
    TypeError
        If ``scores`` is not real and numeric.
    ValueError
        If ``scores`` has no axis or a non-finite value, or ``name`` is not a
        known format.

    Examples
    --------
    Weights of 1/3 in bfloat16, which keeps 8 significant bits:

    >>> from attention_scaling.low_precision import format_softmax
    >>> format_softmax([0.0, 0.0, 0.0], "bfloat16").tolist()
    [0.333984375, 0.333984375, 0.333984375]
    """
    scores = as_float_array(scores, "scores")
    require_ndim(scores, "scores", 1, "(..., n)")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores must be finite")
    _require_format(name)

    def rounded(values: np.ndarray) -> np.ndarray:
        return round_to_format(values, name).astype(np.float64)

    held = rounded(scores)
    shifted = rounded(held - held.max(axis=-1, keepdims=True))
    exponentials = rounded(np.exp(shifted))
    denominator = np.sum(exponentials.astype(np.float32), axis=-1, keepdims=True, dtype=np.float32)
    return rounded(exponentials / denominator.astype(np.float64))


def uniform_deviation_errors(weights, exact) -> np.ndarray:
    r"""Relative error of each weight's deviation from uniform, :math:`p_j - 1/n`.

    Weights close to uniform carry their information in how far each lies
    from :math:`1/n`; this is the error of that deviation, relative to the
    exact one: :math:`|(w_j - 1/n) - (p_j - 1/n)| / |p_j - 1/n|`.

    Parameters
    ----------
    weights : array_like, shape (..., n)
        Weights computed in some format.
    exact : array_like, shape (..., n)
        The same weights computed in float64; no entry exactly :math:`1/n`.

    Returns
    -------
    numpy.ndarray, shape (..., n)

    Raises
    ------
    TypeError
        If an input is not real and numeric.
    ValueError
        If the shapes differ or an exact weight equals :math:`1/n`.

    Examples
    --------
    >>> from attention_scaling.low_precision import uniform_deviation_errors
    >>> uniform_deviation_errors([0.28, 0.72], [0.3, 0.7]).round(6).tolist()   # deviations -0.2, 0.2 off by 0.02
    [0.1, 0.1]
    """
    weights = as_float_array(weights, "weights").astype(np.float64)
    exact = as_float_array(exact, "exact").astype(np.float64)
    require_ndim(exact, "exact", 1, "(..., n)")
    if weights.shape != exact.shape:
        raise ValueError(f"weights and exact must have the same shape; got {weights.shape} and {exact.shape}")
    uniform = 1.0 / exact.shape[-1]
    deviation = exact - uniform
    if np.any(deviation == 0):
        raise ValueError("exact must have no weight equal to 1/n: its deviation from uniform would be 0")
    return np.abs((weights - uniform) - deviation) / np.abs(deviation)
