r"""Page support for "Bounded logits" (``docs/bounded-logits.md``).

:func:`cap_section`, :func:`qknorm_section` and :func:`dispersion_section`
take the seeded measurements of :mod:`attention_scaling.bounded_logits`,
check what the prose says of them, and return a record whose fields are the
numbers the prose quotes (glued by :func:`attention_scaling.site.glue_fields`).
:func:`cap_answer`, :func:`qknorm_answer` and :func:`dispersion_answer`
check the exercises' solutions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attention_scaling.bounded_logits import (
    CappedGradients,
    LargestWeights,
    QKNormLogits,
    qknorm_initial_scale,
    weight_bounds,
)
from attention_scaling.gradients import STARVED_RATIO
from attention_scaling.proofs import Proof
from attention_scaling.site.checks import require

__all__ = [
    "GEMMA2",
    "CapAnswer",
    "CapSection",
    "CappedMeasurement",
    "DispersionAnswer",
    "DispersionSection",
    "QKNormAnswer",
    "QKNormSection",
    "cap_answer",
    "cap_section",
    "dispersion_answer",
    "dispersion_section",
    "qknorm_answer",
    "qknorm_section",
    "step_counts",
]

#: Gemma 2's attention shapes and scale (model width, heads, head dimension, query_pre_attn_scalar), per size.
GEMMA2 = {"2B": (2304, 8, 256, 256), "9B": (3584, 16, 256, 256), "27B": (4608, 32, 128, 144)}


def step_counts(*proofs: Proof) -> dict[str, int]:
    """The step counts the proofs' prose quotes: ``{"<label>_<kind>": count}``.

    Examples
    --------
    >>> from attention_scaling.proofs import dispersion
    >>> from attention_scaling.site.bounded_logits import step_counts
    >>> step_counts(dispersion())["thm-dispersion_checked"]
    5
    """
    return {f"{proof.label}_{kind}": count for proof in proofs for kind, count in proof.counts().items()}


@dataclass(frozen=True)
class CappedMeasurement:
    """The widest head's gradients at one cap: their median and the fraction of rows starved.

    Attributes
    ----------
    median, median_low, median_high : float
        The median over rows of the gradient norm, and its 95 % distribution-free interval.
    starved, starved_low, starved_high : float
        The fraction of rows starved, and its Wilson interval.
    """

    median: float
    median_low: float
    median_high: float
    starved: float
    starved_low: float
    starved_high: float


@dataclass(frozen=True)
class CapSection:
    r"""The soft-capping section's numbers: Gemma 2's query scale, what a cap of 50 allows, and the measured gradients.

    Attributes
    ----------
    small_scalar : int
        ``query_pre_attn_scalar`` of Gemma 2 2B and 9B, their head dimension.
    scalar_27b, width_27b, heads_27b, head_dim_27b : int
        Gemma 2 27B's ``query_pre_attn_scalar``, model width, heads and head dimension.
    variance_ratio_27b, std_ratio_27b : float
        The variance of the 27B scores at initialisation over the one
        :math:`1/\sqrt{d_k}` would give, and the ratio of standard deviations.
    keys : int
        The number of keys :math:`n` of the example of what a cap of 50 allows.
    gap_at_50 : float
        How close to 1 the largest weight may come with logits in
        :math:`[-50, 50]`: :math:`(n - 1)e^{-100}`, to first order.
    half : float
        The largest cap at which the bound keeps the largest weight at or
        below 1/2: :math:`\ln(n - 1)/2`.
    d, rows, n_keys : int
        The widest head measured, the rows measured per :math:`d_k` and the keys per row.
    threshold : float
        The gradient below which a row is starved, at that :math:`d_k`.
    starved_ratio : float
        That threshold over the standard scale's median.
    reference : float
        The median gradient under the standard scale, without a cap.
    measured : dict of str to CappedMeasurement
        At that :math:`d_k`, without a cap (``"none"``) and with caps of 50 and 10 (``"50"``, ``"10"``).
    """

    small_scalar: int
    scalar_27b: int
    width_27b: int
    heads_27b: int
    head_dim_27b: int
    variance_ratio_27b: float
    std_ratio_27b: float
    keys: int
    gap_at_50: float
    half: float
    d: int
    rows: int
    n_keys: int
    threshold: float
    starved_ratio: float
    reference: float
    measured: dict[str, CappedMeasurement]


def cap_section(gradients: CappedGradients, keys: int = 8192) -> CapSection:
    r"""The soft-capping section: Gemma 2's query scale, what a cap of 50 allows, and the measured gradients.

    Checks that capping never lowers the median gradient of the widest head,
    that the cap of 50 leaves more rows starved than the cap of 10, and that
    the cap of 10 does no worse than the standard scale by the median yet leaves rows starved.

    Examples
    --------
    >>> import math
    >>> from attention_scaling.bounded_logits import capped_gradients
    >>> from attention_scaling.site.bounded_logits import cap_section
    >>> section = cap_section(capped_gradients((1024,), (math.inf, 50.0, 10.0), n_rows=200))
    >>> section.scalar_27b, round(section.variance_ratio_27b, 3)
    (144, 0.889)
    """
    where = "bounded-logits.md, bounded-soft-capping"
    width, heads, head_dim, scalar = GEMMA2["27B"]
    # (head_dim, scalar) of the two smaller models: one pair, with equal entries.
    small = {GEMMA2[size][2:] for size in ("2B", "9B")}
    require(len(small) == 1 and len(set(*small)) == 1, where,
            "Gemma 2 2B and 9B share one head dimension, equal to their scalar", small=small)
    require(width // heads == scalar != head_dim, where, "Gemma 2 27B's scalar is d_model / heads, not head_dim")
    caps = list(gradients.caps)
    none, fifty, ten = (caps.index(cap) for cap in (math.inf, 50.0, 10.0))
    last = len(gradients.d_values) - 1
    medians, starved = gradients.medians[:, last], gradients.starved[:, last]
    require(medians[fifty, 0] >= medians[none, 0] and medians[ten, 0] >= medians[fifty, 0], where,
            "a smaller cap never lowers the median gradient of the widest head", medians=medians[:, 0])
    require(starved[fifty, 0] > starved[ten, 0], where, "the cap of 50 leaves more rows starved than the cap of 10")
    # What the page says of the cap of 10 against the standard scale: better by the median, yet leaving rows starved.
    require(medians[ten, 2] >= gradients.reference[last], where,
            "by the median gradient the cap of 10 does no worse than the standard scale (its interval reaches it)",
            cap_10=medians[ten], reference=gradients.reference[last])
    require(starved[ten, 1] > 0, where, "the cap of 10 still leaves a fraction of rows starved (its interval above 0)",
            starved=starved[ten])
    return CapSection(
        small_scalar=GEMMA2["9B"][3],
        scalar_27b=scalar, width_27b=width, heads_27b=heads, head_dim_27b=head_dim,
        variance_ratio_27b=head_dim / scalar, std_ratio_27b=math.sqrt(head_dim / scalar),
        keys=keys,
        # 1 - (largest weight allowed) at b = 50, to first order (n - 1) e^{-100}: far below float64's 1e-16.
        gap_at_50=(keys - 1) * math.exp(-100.0),
        # The cap at which the bound first keeps the largest weight at or below 1/2: (n - 1) e^{-2C} = 1.
        half=math.log(keys - 1) / 2,
        d=gradients.d_values[last], rows=gradients.n_rows, n_keys=gradients.n_keys,
        threshold=float(gradients.thresholds[last]), starved_ratio=STARVED_RATIO,
        reference=float(gradients.reference[last]),
        measured={name: CappedMeasurement(*(float(value) for value in (*medians[row], *starved[row])))
                  for name, row in (("none", none), ("50", fifty), ("10", ten))},
    )


@dataclass(frozen=True)
class QKNormSection:
    r"""The QK-norm section's numbers: :math:`g_0` at two lengths, and the measured logits of random directions.

    Attributes
    ----------
    length_low, length_high : int
        Two training lengths :math:`L`.
    g0_low, g0_high : float
        :math:`g_0 = \log_2(L^2 - L)` at each.
    scale : float
        The :math:`g_0` of the measurement.
    keys, rows : int
        Keys per row and rows per :math:`d`.
    std, std_se : dict of str to float
        Per :math:`d` (its digits): the standard deviation of the logits, and its standard error.
    predicted : dict of str to float
        Per :math:`d`: :math:`g_0/\sqrt{d}`.
    bound : dict of str to float
        Per :math:`d`: the bound :math:`\sqrt{d}` of QK-LayerNorm with :math:`1/\sqrt{d}`.
    entropy, entropy_se : dict of str to float
        Per :math:`d`: the mean of :math:`H/\ln n` over the rows, and its standard error.
    largest, largest_se : dict of str to float
        Per :math:`d`: the mean largest weight, and its standard error.
    """

    length_low: int
    length_high: int
    g0_low: float
    g0_high: float
    scale: float
    keys: int
    rows: int
    std: dict[str, float]
    std_se: dict[str, float]
    predicted: dict[str, float]
    bound: dict[str, float]
    entropy: dict[str, float]
    entropy_se: dict[str, float]
    largest: dict[str, float]
    largest_se: dict[str, float]


def qknorm_section(logits: QKNormLogits, lengths=(72, 79)) -> QKNormSection:
    r"""The QK-norm section: :math:`g_0` at the given lengths, and the measured spread against :math:`g_0/\sqrt{d}`.

    Checks that every measured standard deviation is within 4 standard
    errors of :math:`g/\sqrt{d}` (the variance of thm-qknorm-scale).

    Examples
    --------
    >>> from attention_scaling.bounded_logits import qknorm_initial_logits
    >>> from attention_scaling.site.bounded_logits import qknorm_section
    >>> section = qknorm_section(qknorm_initial_logits(12.32, (64, 256), n_rows=200))
    >>> round(section.g0_low, 2), round(section.std["64"], 1)
    (12.32, 1.5)
    """
    where = "bounded-logits.md, bounded-qknorm"
    predicted = logits.scale / np.sqrt(np.array(logits.d_values))
    require(np.all(np.abs(logits.std[:, 0] - predicted) <= 4 * logits.std[:, 1]), where,
            "the measured spread is g / sqrt(d)", measured=logits.std[:, 0], predicted=predicted)
    # The prose: wider than the standard scale's unit spread in the smallest head, narrower in the widest.
    require(logits.std[0, 0] > 1 > logits.std[-1, 0], where, "the spread crosses 1 between the smallest and widest head",
            spreads=logits.std[:, 0])
    low, high = (float(g) for g in qknorm_initial_scale(np.array(lengths)))
    d_values = [str(d) for d in logits.d_values]

    def per_d(column) -> dict[str, float]:
        return {d: float(value) for d, value in zip(d_values, column)}

    return QKNormSection(
        length_low=lengths[0], length_high=lengths[1], g0_low=low, g0_high=high,
        scale=logits.scale, keys=logits.n_keys, rows=logits.n_rows,
        std=per_d(logits.std[:, 0]), std_se=per_d(logits.std[:, 1]), predicted=per_d(predicted),
        bound=per_d(math.sqrt(d) for d in logits.d_values),
        entropy=per_d(logits.entropy[:, 0]), entropy_se=per_d(logits.entropy[:, 1]),
        largest=per_d(logits.largest[:, 0]), largest_se=per_d(logits.largest[:, 1]),
    )


@dataclass(frozen=True)
class DispersionSection:
    r"""The dispersion section's numbers: the measured largest weight against :math:`e^{\delta}/n`.

    Attributes
    ----------
    spread : float
        :math:`\delta`, the spread of every row's logits.
    rows : int
        Rows per length.
    n_first, n_last : int
        The shortest and the longest row measured.
    first, last : float
        The median largest weight at each.
    last_low, last_high : float
        The 95 % distribution-free interval of the median at ``n_last``.
    bound_last : float
        The upper bound :math:`e^{\delta}/n` at ``n_last``.
    n_times_last : float
        The median largest weight at ``n_last``, times ``n_last``.
    """

    spread: float
    rows: int
    n_first: int
    n_last: int
    first: float
    last: float
    last_low: float
    last_high: float
    bound_last: float
    n_times_last: float


def dispersion_section(weights: LargestWeights) -> DispersionSection:
    r"""The dispersion section: the measured largest weight against :math:`[e^{-\delta}/n, e^{\delta}/n]`.

    Checks that every median lies inside the bounds and falls as :math:`n` grows.

    Examples
    --------
    >>> from attention_scaling.bounded_logits import largest_weights
    >>> from attention_scaling.site.bounded_logits import dispersion_section
    >>> dispersion_section(largest_weights((16, 4096), 2.0, n_rows=20)).n_last
    4096
    """
    where = "bounded-logits.md, bounded-dispersion"
    medians = weights.largest[:, 0]
    require(np.all((weights.bounds[:, 0] <= medians) & (medians <= weights.bounds[:, 1])), where,
            "every median largest weight lies within the dispersion bounds", medians=medians)
    require(np.all(np.diff(medians) < 0), where, "the largest weight falls as n grows", medians=medians)
    return DispersionSection(
        spread=weights.spread, rows=weights.n_rows, n_first=weights.lengths[0], n_last=weights.lengths[-1],
        first=float(medians[0]), last=float(medians[-1]),
        last_low=float(weights.largest[-1, 1]), last_high=float(weights.largest[-1, 2]),
        bound_last=float(weights.bounds[-1, 1]), n_times_last=float(medians[-1] * weights.lengths[-1]),
    )


@dataclass(frozen=True)
class CapAnswer:
    r"""Exercise ``ex-cap-half``: the largest cap at which no weight of ``keys`` capped logits exceeds 1/2.

    Attributes
    ----------
    keys : int
        The number of keys.
    half : float
        The cap found, :math:`\ln(n - 1)/2`.
    """

    keys: int
    half: float


def cap_answer(cap: float, keys: int) -> CapAnswer:
    r"""Check the exercise ``ex-cap-half``: the largest cap at which no weight of ``keys`` capped logits exceeds 1/2.

    Examples
    --------
    >>> import math
    >>> from attention_scaling.site.bounded_logits import cap_answer
    >>> round(cap_answer(math.log(4095) / 2, 4096).half, 3)
    4.159
    """
    where = "bounded-logits.md, exercise ex-cap-half"
    upper = 1 / (1 + (keys - 1) * math.exp(-2 * cap))
    require(abs(upper - 0.5) <= 1e-12, where, "at the answer the bound on the largest weight is exactly 1/2",
            bound=upper)
    require(10 * cap < 50, where, "the answer is more than ten times below Gemma 2's cap of 50", cap=cap)
    return CapAnswer(keys=keys, half=cap)


@dataclass(frozen=True)
class QKNormAnswer:
    r"""Exercise ``ex-qknorm-init``: :math:`g_0` at a training length, and the spread it gives.

    Attributes
    ----------
    length, d : int
        The training length :math:`L` and the head dimension.
    g0 : float
        :math:`g_0 = \log_2(L^2 - L)`.
    std : float
        :math:`g_0/\sqrt{d}`.
    """

    length: int
    d: int
    g0: float
    std: float


def qknorm_answer(scale: float, std: float, length: int, d: int) -> QKNormAnswer:
    r"""Check the exercise ``ex-qknorm-init``: :math:`g_0` at a training length and the spread :math:`g_0/\sqrt{d}`.

    Examples
    --------
    >>> from attention_scaling.site.bounded_logits import qknorm_answer
    >>> round(qknorm_answer(17.9972, 17.9972 / 128**0.5, 512, 128).std, 2)
    1.59
    """
    where = "bounded-logits.md, exercise ex-qknorm-init"
    exact = float(qknorm_initial_scale(length))
    require(abs(scale - exact) <= 1e-3, where, "g0 = log2(L^2 - L)", scale=scale, exact=exact)
    require(abs(std - exact / math.sqrt(d)) <= 1e-3, where, "the spread is g0 / sqrt(d)", std=std)
    return QKNormAnswer(length=length, d=d, g0=scale, std=std)


@dataclass(frozen=True)
class DispersionAnswer:
    r"""Exercise ``ex-dispersion-bound``: the bound :math:`e^{\delta}/n` on the largest weight, and one measured row.

    Attributes
    ----------
    keys : int
        The number of keys :math:`n`.
    spread : float
        :math:`\delta`.
    bound : float
        :math:`e^{\delta}/n`.
    largest : float
        The largest weight of the measured row.
    """

    keys: int
    spread: float
    bound: float
    largest: float


def dispersion_answer(bound: float, largest: float, keys: int, spread: float) -> DispersionAnswer:
    r"""Check the exercise ``ex-dispersion-bound``: :math:`e^{\delta}/n`, and a measured largest weight under it.

    Examples
    --------
    >>> import math
    >>> from attention_scaling.site.bounded_logits import dispersion_answer
    >>> answer = dispersion_answer(math.exp(3) / 10**6, 1e-5, 10**6, 3.0)
    >>> f"{answer.bound:.2e}"
    '2.01e-05'
    """
    where = "bounded-logits.md, exercise ex-dispersion-bound"
    exact = weight_bounds(keys, spread)[1]
    require(abs(bound - exact) <= 1e-12 * exact, where, "the bound is e^delta / n", bound=bound, exact=exact)
    require(largest <= bound, where, "the measured largest weight lies under the bound", largest=largest)
    return DispersionAnswer(keys=keys, spread=spread, bound=bound, largest=float(largest))
