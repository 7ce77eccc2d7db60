r"""Page support for "Bounded logits" (``docs/bounded-logits.md``).

:func:`cap_section`, :func:`qknorm_section` and :func:`dispersion_section`
take the seeded measurements of :mod:`attention_scaling.bounded_logits`,
check what the prose says of them, and return a :class:`BoundedNumbers`
whose :meth:`~BoundedNumbers.glue_values` are the numbers the prose quotes.
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
    "BoundedNumbers",
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


@dataclass(frozen=True)
class BoundedNumbers:
    """Glue keys and values of one section (or exercise) of the bounded-logits page."""

    values: dict

    def glue_values(self) -> dict[str, object]:
        """The page's glue keys and their values, as Python numbers."""
        return {key: value.item() if isinstance(value, np.generic) else value for key, value in self.values.items()}


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


def cap_section(gradients: CappedGradients, keys: int = 8192) -> BoundedNumbers:
    r"""The soft-capping section: Gemma 2's query scale, what a cap of 50 allows, and the measured gradients.

    Checks that capping never lowers the median gradient of the widest head,
    that the cap of 50 leaves more rows starved than the cap of 10, and that
    the cap of 10 does no worse than the standard scale by the median yet leaves rows starved.

    Examples
    --------
    >>> import math
    >>> from attention_scaling.bounded_logits import capped_gradients
    >>> from attention_scaling.site.bounded_logits import cap_section
    >>> values = cap_section(capped_gradients((1024,), (math.inf, 50.0, 10.0), n_rows=200)).glue_values()
    >>> values["cap_27b_scalar"], round(values["cap_27b_variance_ratio"], 3)
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
    values = {
        "cap_small_scalar": GEMMA2["9B"][3],
        "cap_27b_scalar": scalar, "cap_27b_width": width, "cap_27b_heads": heads, "cap_27b_head_dim": head_dim,
        "cap_27b_variance_ratio": head_dim / scalar, "cap_27b_std_ratio": math.sqrt(head_dim / scalar),
        "cap_keys": keys,
        # 1 - (largest weight allowed) at b = 50, to first order (n - 1) e^{-100}: far below float64's 1e-16.
        "cap_50_gap": (keys - 1) * math.exp(-100.0),
        # The cap at which the bound first keeps the largest weight at or below 1/2: (n - 1) e^{-2C} = 1.
        "cap_half": math.log(keys - 1) / 2,
        "cap_d": gradients.d_values[last], "cap_rows": gradients.n_rows, "cap_n_keys": gradients.n_keys,
        "cap_threshold": float(gradients.thresholds[last]), "cap_starved_ratio": STARVED_RATIO, "cap_reference": float(gradients.reference[last]),
    }
    for name, row in (("none", none), ("50", fifty), ("10", ten)):
        values |= {f"cap_{name}_median": medians[row, 0], f"cap_{name}_median_low": medians[row, 1],
                   f"cap_{name}_median_high": medians[row, 2], f"cap_{name}_starved": starved[row, 0],
                   f"cap_{name}_starved_low": starved[row, 1], f"cap_{name}_starved_high": starved[row, 2]}
    return BoundedNumbers(values)


def qknorm_section(logits: QKNormLogits, lengths=(72, 79)) -> BoundedNumbers:
    r"""The QK-norm section: :math:`g_0` at the given lengths, and the measured spread against :math:`g_0/\sqrt{d}`.

    Checks that every measured standard deviation is within 4 standard
    errors of :math:`g/\sqrt{d}` (the variance of thm-qknorm-scale).

    Examples
    --------
    >>> from attention_scaling.bounded_logits import qknorm_initial_logits
    >>> from attention_scaling.site.bounded_logits import qknorm_section
    >>> values = qknorm_section(qknorm_initial_logits(12.32, (64, 256), n_rows=200)).glue_values()
    >>> round(values["qk_g0_low"], 2), round(values["qk_std_64"], 1)
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
    values = {"qk_length_low": lengths[0], "qk_length_high": lengths[1], "qk_g0_low": low, "qk_g0_high": high,
              "qk_scale": logits.scale, "qk_keys": logits.n_keys, "qk_rows": logits.n_rows}
    for index, d in enumerate(logits.d_values):
        values |= {f"qk_std_{d}": logits.std[index, 0], f"qk_std_{d}_se": logits.std[index, 1],
                   f"qk_predicted_{d}": float(predicted[index]), f"qk_bound_{d}": math.sqrt(d),
                   f"qk_entropy_{d}": logits.entropy[index, 0], f"qk_entropy_{d}_se": logits.entropy[index, 1],
                   f"qk_largest_{d}": logits.largest[index, 0], f"qk_largest_{d}_se": logits.largest[index, 1]}
    return BoundedNumbers(values)


def dispersion_section(weights: LargestWeights) -> BoundedNumbers:
    r"""The dispersion section: the measured largest weight against :math:`[e^{-\delta}/n, e^{\delta}/n]`.

    Checks that every median lies inside the bounds and falls as :math:`n` grows.

    Examples
    --------
    >>> from attention_scaling.bounded_logits import largest_weights
    >>> from attention_scaling.site.bounded_logits import dispersion_section
    >>> values = dispersion_section(largest_weights((16, 4096), 2.0, n_rows=20)).glue_values()
    >>> values["dispersion_n_last"]
    4096
    """
    where = "bounded-logits.md, bounded-dispersion"
    medians = weights.largest[:, 0]
    require(np.all((weights.bounds[:, 0] <= medians) & (medians <= weights.bounds[:, 1])), where,
            "every median largest weight lies within the dispersion bounds", medians=medians)
    require(np.all(np.diff(medians) < 0), where, "the largest weight falls as n grows", medians=medians)
    return BoundedNumbers({
        "dispersion_spread": weights.spread, "dispersion_rows": weights.n_rows,
        "dispersion_n_first": weights.lengths[0], "dispersion_n_last": weights.lengths[-1],
        "dispersion_first": medians[0], "dispersion_last": medians[-1],
        "dispersion_last_low": weights.largest[-1, 1], "dispersion_last_high": weights.largest[-1, 2],
        "dispersion_bound_last": weights.bounds[-1, 1], "dispersion_n_times_last": medians[-1] * weights.lengths[-1],
    })


def cap_answer(cap: float, keys: int) -> BoundedNumbers:
    r"""Check the exercise ``ex-cap-half``: the largest cap at which no weight of ``keys`` capped logits exceeds 1/2.

    Examples
    --------
    >>> import math
    >>> from attention_scaling.site.bounded_logits import cap_answer
    >>> round(cap_answer(math.log(4095) / 2, 4096).glue_values()["ex_cap_half"], 3)
    4.159
    """
    where = "bounded-logits.md, exercise ex-cap-half"
    upper = 1 / (1 + (keys - 1) * math.exp(-2 * cap))
    require(abs(upper - 0.5) <= 1e-12, where, "at the answer the bound on the largest weight is exactly 1/2",
            bound=upper)
    require(10 * cap < 50, where, "the answer is more than ten times below Gemma 2's cap of 50", cap=cap)
    return BoundedNumbers({"ex_cap_keys": keys, "ex_cap_half": cap})


def qknorm_answer(scale: float, std: float, length: int, d: int) -> BoundedNumbers:
    r"""Check the exercise ``ex-qknorm-init``: :math:`g_0` at a training length and the spread :math:`g_0/\sqrt{d}`.

    Examples
    --------
    >>> from attention_scaling.site.bounded_logits import qknorm_answer
    >>> round(qknorm_answer(17.9972, 17.9972 / 128**0.5, 512, 128).glue_values()["ex_qk_std"], 2)
    1.59
    """
    where = "bounded-logits.md, exercise ex-qknorm-init"
    exact = float(qknorm_initial_scale(length))
    require(abs(scale - exact) <= 1e-3, where, "g0 = log2(L^2 - L)", scale=scale, exact=exact)
    require(abs(std - exact / math.sqrt(d)) <= 1e-3, where, "the spread is g0 / sqrt(d)", std=std)
    return BoundedNumbers({"ex_qk_length": length, "ex_qk_d": d, "ex_qk_g0": scale, "ex_qk_std": std})


def dispersion_answer(bound: float, largest: float, keys: int, spread: float) -> BoundedNumbers:
    r"""Check the exercise ``ex-dispersion-bound``: :math:`e^{\delta}/n`, and a measured largest weight under it.

    Examples
    --------
    >>> import math
    >>> from attention_scaling.site.bounded_logits import dispersion_answer
    >>> values = dispersion_answer(math.exp(3) / 10**6, 1e-5, 10**6, 3.0).glue_values()
    >>> f"{values['ex_dispersion_bound']:.2e}"
    '2.01e-05'
    """
    where = "bounded-logits.md, exercise ex-dispersion-bound"
    exact = weight_bounds(keys, spread)[1]
    require(abs(bound - exact) <= 1e-12 * exact, where, "the bound is e^delta / n", bound=bound, exact=exact)
    require(largest <= bound, where, "the measured largest weight lies under the bound", largest=largest)
    return BoundedNumbers({"ex_dispersion_keys": keys, "ex_dispersion_spread": spread,
                           "ex_dispersion_bound": bound, "ex_dispersion_largest": largest})

