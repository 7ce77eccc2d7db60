r"""Page support for ``docs/long-sequences.md``: one function per section, each returning a record.

The page computes its sweep in the figure's cell and a few small examples
in visible cells; the functions here take those results (or recompute the
section's numbers), make the checks the page states (raising
:class:`~attention_scaling.site.checks.PageCheckError` naming the section
and the check) and return frozen records whose fields are the page's
numbers: the page glues them with :func:`~attention_scaling.site.glue_fields`,
so a glue key is a record's prefix and a field's name.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from attention_scaling._softmax import attention_entropy, softmax
from attention_scaling.long_sequences import (
    LengthSweep,
    freezing_ratio,
    max_logit_bound,
    needle_weight,
    plug_in_collision_count,
    plug_in_entropy,
    plug_in_log_partition,
    scalable_softmax,
)
from attention_scaling.proofs import Proof
from attention_scaling.proofs.engine import Math
from attention_scaling.simulate import Estimate
from attention_scaling.site.checks import require
from attention_scaling.site.statements import aligned_display, displays

__all__ = [
    "EntropyIdentity",
    "FadingWeight",
    "Freezing",
    "NeedleWeights",
    "PartitionBranches",
    "PlugInFraction",
    "PlugInMeasurements",
    "ShiftVersusScale",
    "entropy_identity",
    "fading_weight",
    "freezing",
    "measured_against_plug_in",
    "needle_weights",
    "partition_branches",
    "plug_in_fraction",
    "shift_versus_scale",
    "theorem_displays",
]

_PAGE = "long-sequences.md"


def _where(section: str) -> str:
    return f"{_PAGE}, section {section}"


def _grids(sweep: LengthSweep) -> tuple[np.ndarray, np.ndarray]:
    """The lengths and spreads of the sweep as grids of its arrays' shape (spread by length)."""
    return np.meshgrid(sweep.n, sweep.spreads)


# -- Theorem statements ------------------------------------------------------------------

# The page's displayed equations beyond each theorem's statement: glue key -> (theorem, steps shown).
# A key that is an equation label is pasted under that label.
_EXTRA_DISPLAYS = {
    "thm-gaussian-logit-moments": {"thm-gaussian-logit-moments-particular": (3, 4), "eq-plug-in-values": (7, 8)},
    "thm-needle-limit": {"thm-needle-limit-fixed": (1,), "thm-needle-limit-length-aware": (3,),
                         "thm-needle-limit-limits": (4, 5, 6)},
}


def theorem_displays(*proofs: Proof) -> dict[str, Math]:
    r"""The glue values of the displayed equations of this page's theorems (:func:`~attention_scaling.site.statements.displays`).

    Examples
    --------
    >>> from attention_scaling.proofs import gaussian_logit_moments
    >>> from attention_scaling.site.long_sequences import theorem_displays
    >>> sorted(theorem_displays(gaussian_logit_moments()))
    ['eq-plug-in-values', 'thm-gaussian-logit-moments', 'thm-gaussian-logit-moments-particular']
    """
    return displays(proofs, _EXTRA_DISPLAYS)


# -- Section long-setting ----------------------------------------------------------------


@dataclass(frozen=True)
class EntropyIdentity:
    r"""Both sides of :math:`H = \ln Z - \sum_i p_i x_i` for one row of logits.

    Attributes
    ----------
    entropy : float
        :math:`H` of the softmax weights.
    right_side : float
        :math:`\ln Z - \sum_i p_i x_i`.
    """

    entropy: float
    right_side: float


def entropy_identity(logits) -> EntropyIdentity:
    r"""Check :math:`H = \ln Z - \sum_i p_i x_i` on the page's row of logits.

    Parameters
    ----------
    logits : array_like, shape (n,)
        One row of scores; :math:`Z` is computed without a shift, as the
        page does, so the logits must be moderate.

    Returns
    -------
    EntropyIdentity

    Raises
    ------
    PageCheckError
        If the two sides differ by more than a relative :math:`10^{-12}`.

    Examples
    --------
    >>> from attention_scaling.site.long_sequences import entropy_identity
    >>> record = entropy_identity([0.0, 1.0, 2.0])
    >>> round(record.entropy, 12) == round(record.right_side, 12)
    True
    """
    logits = np.asarray(logits, dtype=np.float64)
    weights = softmax(logits)
    entropy = float(attention_entropy(weights))
    right_side = float(np.log(np.sum(np.exp(logits))) - weights @ logits)
    require(np.isclose(entropy, right_side, rtol=1e-12), _where("long-setting"),
            "the entropy equals ln Z minus the weighted mean logit", entropy=entropy, right_side=right_side)
    return EntropyIdentity(entropy, right_side)


# -- Section long-plug-in ----------------------------------------------------------------


@dataclass(frozen=True)
class PlugInFraction:
    r"""The fraction :math:`e^{-\sigma^2/2}` of the keys that the plug-in entropy corresponds to.

    Attributes
    ----------
    s : float
        The spread.
    fraction : float
        :math:`e^{-\sigma^2/2}`.
    """

    s: float
    fraction: float


def plug_in_fraction(s: float = 1.0) -> PlugInFraction:
    r"""Read :math:`H \approx \ln n - \sigma^2/2` as uniform weights on a fraction :math:`e^{-\sigma^2/2}` of the keys.

    Parameters
    ----------
    s : float, default 1.0
        The spread the page quotes.

    Returns
    -------
    PlugInFraction

    Examples
    --------
    >>> from attention_scaling.site.long_sequences import plug_in_fraction
    >>> round(plug_in_fraction().fraction, 3)
    0.607
    """
    return PlugInFraction(float(s), float(np.exp(-(s**2) / 2)))


# -- Section long-measured ---------------------------------------------------------------


@dataclass(frozen=True)
class PlugInMeasurements:
    r"""The sweep's entropies and collision numbers against their plug-in values.

    Attributes
    ----------
    sweep : LengthSweep
        As the figure's cell computed it.
    n_min, n_max : int
        The shortest and the longest length of the sweep.
    trials_at_n_min, trials_at_n_max : int
        The rows of logits drawn at each of them.
    worst_close : float
        The largest distance from :math:`\ln n - \sigma^2/2` where :math:`\sigma^2/(2\ln n) < 0.1`.
    least_far : float
        The smallest excess over :math:`\ln n - \sigma^2/2` where :math:`\sigma^2/(2\ln n) > 0.5`.
    far_threshold : float
        An error of the plug-in entropy, in nats, that the overview calls large.
    first_far_ratio, first_far_error : float
        The smallest freezing ratio :math:`\sigma^2/(2\ln n)` in the sweep at which
        the measured entropy exceeds :math:`\ln n - \sigma^2/2` by more than
        ``far_threshold``, and that excess.
    typical, typical_plug : Estimate, float
        The entropy at :math:`\sigma = 1`, :math:`n = 4096`, and its plug-in value.
    frozen, frozen_plug, frozen_ratio : Estimate, float, float
        The entropy at :math:`\sigma = 3`, :math:`n = 16`, its (negative) plug-in
        value, and the freezing ratio there.
    collision_05, collision_1, collision_2 : Estimate
        The measured collision number over its plug-in value at
        :math:`n = 65536`, for :math:`\sigma = 0.5, 1, 2`.
    s2_error, s2_se : float
        The entropy at :math:`\sigma = 2`, :math:`n = 65536` minus its plug-in
        value, and the standard error.
    double_s2_ratio : float
        The freezing ratio of the doubled scores, :math:`(2\sigma)^2/(2\ln n)`, there.
    """

    sweep: LengthSweep
    n_min: int
    n_max: int
    trials_at_n_min: int
    trials_at_n_max: int
    worst_close: float
    least_far: float
    far_threshold: float
    first_far_ratio: float
    first_far_error: float
    typical: Estimate
    typical_plug: float
    frozen: Estimate
    frozen_plug: float
    frozen_ratio: float
    collision_05: Estimate
    collision_1: Estimate
    collision_2: Estimate
    s2_error: float
    s2_se: float
    double_s2_ratio: float


# An error of the plug-in entropy that the overview calls large, in nats.
_FAR_THRESHOLD = 0.2


def _collision_ratio(sweep: LengthSweep, s: float, n: int) -> Estimate:
    """The measured collision number over its plug-in value, with the standard error scaled alike."""
    measured = sweep.estimate("collision_count", s, n)
    plug = float(plug_in_collision_count(n, s))
    return Estimate(measured.value / plug, measured.standard_error / plug)


def measured_against_plug_in(sweep: LengthSweep) -> PlugInMeasurements:
    r"""Check the plug-in entropy and collision number against the sweep, where the prose says they hold or fail.

    Parameters
    ----------
    sweep : LengthSweep
        The page's figure data: lengths 16 to 65536 (powers of 4) and
        spreads 0.5, 1, 2 and 3.

    Returns
    -------
    PlugInMeasurements

    Raises
    ------
    PageCheckError
        If, where the freezing ratio is below 0.1, the measured entropy is
        not within 0.05 nats of the plug-in value, or where it is above 0.5
        not more than 0.05 above it; if no point below the ratio 0.5 is off by
        more than 0.2 nats; if the entropy at :math:`\sigma = 1`,
        :math:`n = 4096` is not within 3 standard errors (plus 0.01) of the
        plug-in value; if at :math:`\sigma = 3`, :math:`n = 16` the plug-in value
        is not negative or the measured entropy not positive; if at
        :math:`n = 65536` the collision number is not within 3 standard
        errors (plus 1 %) of its plug-in value for :math:`\sigma \le 1`, or not
        more than 3 standard errors above it for :math:`\sigma = 2`; or if the
        entropy at :math:`\sigma = 2` is not within 3 standard errors (plus 0.05)
        of its plug-in value.

    Examples
    --------
    >>> from attention_scaling.long_sequences import gaussian_logit_sweep
    >>> from attention_scaling.site.long_sequences import measured_against_plug_in
    >>> sweep = gaussian_logit_sweep([4**k for k in range(2, 9)], [0.5, 1.0, 2.0, 3.0], seed=8, budget=2**17)
    >>> measured_against_plug_in(sweep).n_max
    65536
    """
    where = _where("long-measured")
    n_grid, s_grid = _grids(sweep)
    error = sweep.entropy - plug_in_entropy(n_grid, s_grid)
    ratio = freezing_ratio(n_grid, s_grid)
    worst_close = float(np.max(np.abs(error[ratio < 0.1])))
    least_far = float(np.min(error[ratio > 0.5]))
    require(worst_close < 0.05 < least_far, where,
            "small freezing ratio, small plug-in error (< 0.05); large ratio, large error (> 0.05)",
            worst_close=worst_close, least_far=least_far)
    # The overview says the plug-in value fails well before the threshold sigma^2 = 2 ln n (ratio 1).
    first_far = int(np.argmin(np.where(error > _FAR_THRESHOLD, ratio, np.inf)))
    first_far_ratio, first_far_error = float(ratio.flat[first_far]), float(error.flat[first_far])
    require(first_far_error > _FAR_THRESHOLD and first_far_ratio < 0.5, where, f"the plug-in entropy is off by more "
            f"than {_FAR_THRESHOLD} nats already below half the freezing ratio", first_far_ratio=first_far_ratio)

    typical, typical_plug = sweep.estimate("entropy", 1.0, 4096), float(plug_in_entropy(4096, 1.0))
    require(abs(typical.value - typical_plug) < 3 * typical.standard_error + 0.01, where,
            "at s = 1, n = 4096 the entropy is within 3 standard errors (+ 0.01) of the plug-in value",
            measured=typical, plug_in=typical_plug)

    frozen, frozen_plug = sweep.estimate("entropy", 3.0, 16), float(plug_in_entropy(16, 3.0))
    require(frozen_plug < 0 < frozen.value, where,
            "at s = 3, n = 16 the plug-in entropy is negative and the measured one positive",
            plug_in=frozen_plug, measured=frozen)

    collisions = {s: _collision_ratio(sweep, s, 65536) for s in (0.5, 1.0, 2.0)}
    for s in (0.5, 1.0):
        require(abs(collisions[s].value - 1) < 3 * collisions[s].standard_error + 0.01, where,
                "at n = 65536 and s <= 1 the collision number is its plug-in value, within 3 standard errors (+ 1 %)",
                s=s, ratio=collisions[s])
    require(collisions[2.0].value - 1 > 3 * collisions[2.0].standard_error, where,
            "at n = 65536 and s = 2 the collision number exceeds its plug-in value by more than 3 standard errors",
            ratio=collisions[2.0])

    h_s2 = sweep.estimate("entropy", 2.0, 65536)
    s2_error = float(h_s2.value - plug_in_entropy(65536, 2.0))
    require(abs(s2_error) < 3 * h_s2.standard_error + 0.05, where,
            "at n = 65536 and s = 2 the entropy is within 3 standard errors (+ 0.05) of its plug-in value",
            error=s2_error, standard_error=h_s2.standard_error)
    return PlugInMeasurements(
        sweep=sweep,
        n_min=int(sweep.n[0]),
        n_max=int(sweep.n[-1]),
        trials_at_n_min=int(sweep.trials[0]),
        trials_at_n_max=int(sweep.trials[-1]),
        worst_close=worst_close,
        least_far=least_far,
        far_threshold=_FAR_THRESHOLD,
        first_far_ratio=first_far_ratio,
        first_far_error=first_far_error,
        typical=typical,
        typical_plug=typical_plug,
        frozen=frozen,
        frozen_plug=frozen_plug,
        frozen_ratio=float(freezing_ratio(16, 3.0)),
        collision_05=collisions[0.5],
        collision_1=collisions[1.0],
        collision_2=collisions[2.0],
        s2_error=s2_error,
        s2_se=h_s2.standard_error,
        # The doubled scores 2x have spread 2s = 4.
        double_s2_ratio=float(freezing_ratio(65536, 4.0)),
    )


# -- Section long-freezing ---------------------------------------------------------------


@dataclass(frozen=True)
class PartitionBranches:
    r"""The two branches of the limit of :math:`\ln Z / \ln n` at :math:`\kappa = 1`, and the gap between them.

    Attributes
    ----------
    gap : sympy.Expr
        The plug-in branch minus the frozen branch, in :math:`\kappa`.
    square : sympy.Expr
        :math:`(\sqrt\kappa - 1)^2`, which the gap equals.
    curvature_bulk, curvature_top : float
        The second derivatives of the two branches at :math:`\kappa = 1`.
    """

    gap: sp.Expr
    square: sp.Expr
    curvature_bulk: float
    curvature_top: float


def partition_branches(bulk, top, kappa) -> PartitionBranches:
    r"""Check how the two branches of :math:`\ln Z / \ln n` join at :math:`\kappa = 1`: :math:`C^1`, not :math:`C^2`.

    The limit is the plug-in branch ``bulk`` below :math:`\kappa = 1` and the
    frozen branch ``top`` above: same value and slope at 1, different second
    derivatives, and a gap ``bulk - top`` that is a square, never negative.

    Parameters
    ----------
    bulk, top : sympy.Expr
        The page's two branches, in ``kappa``.
    kappa : sympy.Symbol
        The ratio :math:`\sigma^2/(2\ln n)`, positive.

    Returns
    -------
    PartitionBranches

    Raises
    ------
    PageCheckError
        If any of the three checks fails.

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.site.long_sequences import partition_branches
    >>> kappa = sp.Symbol("kappa", positive=True)
    >>> record = partition_branches(1 + kappa, 2 * sp.sqrt(kappa), kappa)
    >>> record.square, record.curvature_bulk, record.curvature_top
    ((sqrt(kappa) - 1)**2, 0.0, -0.5)
    """
    where = _where("long-freezing")
    gap = bulk - top
    at_one, slope_at_one = gap.subs(kappa, 1), sp.diff(gap, kappa).subs(kappa, 1)
    require(sp.simplify(at_one) == 0 and sp.simplify(slope_at_one) == 0, where,
            "the two branches meet at kappa = 1 with the same slope", gap_at_1=at_one, slope_at_1=slope_at_one)
    curvatures = [sp.diff(branch, kappa, 2).subs(kappa, 1) for branch in (bulk, top)]
    require(sp.simplify(curvatures[0] - curvatures[1]) != 0, where,
            "the second derivatives of the two branches differ at kappa = 1: C^1, not C^2", curvatures=curvatures)
    square = (sp.sqrt(kappa) - 1) ** 2
    difference = sp.simplify(gap - square)
    require(difference == 0, where, "the gap is a square, (sqrt(kappa) - 1)^2, so never negative",
            gap=gap, difference=difference)
    return PartitionBranches(gap, square, float(curvatures[0]), float(curvatures[1]))


@dataclass(frozen=True)
class Freezing:
    r"""The frozen point :math:`\sigma = 3`, :math:`n = 16` of the sweep, and the largest logit against its bound.

    Attributes
    ----------
    share : Estimate
        The largest weight there.
    log_partition : Estimate
        :math:`\ln Z` there.
    log_partition_plug : float
        Its plug-in value :math:`\ln n + \sigma^2/2`.
    max_ratio_first, max_ratio_last : float
        The mean largest logit over :math:`\sigma\sqrt{2\ln n}`, at the smallest
        positive spread, at the shortest and the longest length.
    """

    share: Estimate
    log_partition: Estimate
    log_partition_plug: float
    max_ratio_first: float
    max_ratio_last: float


def freezing(sweep: LengthSweep) -> Freezing:
    r"""Check the sweep against the bounds on :math:`\mathbb{E}\ln Z` and :math:`\mathbb{E}\max_i x_i`.

    Parameters
    ----------
    sweep : LengthSweep
        The page's figure data; it must hold :math:`\sigma = 3`, :math:`n = 16`
        and a positive spread.

    Returns
    -------
    Freezing

    Raises
    ------
    PageCheckError
        If at some point the mean of :math:`\ln Z` lies more than 3
        standard errors above :math:`\ln n + \sigma^2/2` (Jensen), or the mean
        largest logit lies above :math:`\sigma\sqrt{2\ln n}`.

    Examples
    --------
    >>> from attention_scaling.long_sequences import gaussian_logit_sweep
    >>> from attention_scaling.site.long_sequences import freezing
    >>> record = freezing(gaussian_logit_sweep([16, 256], [1.0, 3.0], seed=0, budget=2**12))
    >>> round(record.log_partition_plug, 3)
    7.273
    """
    where = _where("long-freezing")
    n_grid, s_grid = _grids(sweep)
    jensen = plug_in_log_partition(n_grid, s_grid)
    require(np.all(sweep.log_partition - 3 * sweep.log_partition_se <= jensen), where,
            "the mean of ln Z is below ln n + sigma^2/2 or within 3 standard errors of it, at every point",
            excess=(sweep.log_partition - jensen).tolist(), standard_error=sweep.log_partition_se.tolist())
    bound = max_logit_bound(n_grid, s_grid)
    require(np.all(sweep.max_logit <= bound), where, "the mean largest logit is below s sqrt(2 ln n), at every point",
            max_logit=sweep.max_logit.tolist(), bound=bound.tolist())
    positive = sweep.spreads > 0
    closeness = sweep.max_logit[positive] / bound[positive]
    return Freezing(
        share=sweep.estimate("max_weight", 3.0, 16),
        log_partition=sweep.estimate("log_partition", 3.0, 16),
        log_partition_plug=float(plug_in_log_partition(16, 3.0)),
        max_ratio_first=float(closeness[0, 0]),
        max_ratio_last=float(closeness[0, -1]),
    )


# -- Section long-largest-weight ---------------------------------------------------------


@dataclass(frozen=True)
class FadingWeight:
    r"""The mean largest weight at :math:`\sigma = 1` and :math:`\sigma = 3`, at the shortest and longest rows.

    Attributes
    ----------
    s1_short, s1_long, s3_short, s3_long : float
        At :math:`n = 16` and :math:`n = 65536`.
    """

    s1_short: float
    s1_long: float
    s3_short: float
    s3_long: float


def fading_weight(sweep: LengthSweep) -> FadingWeight:
    r"""Check that at every positive spread the mean largest weight falls as the rows get longer.

    Parameters
    ----------
    sweep : LengthSweep
        The page's figure data, with lengths 16 and 65536 and spreads 1 and 3.

    Returns
    -------
    FadingWeight

    Raises
    ------
    PageCheckError
        If, at some positive spread, the mean largest weight does not fall
        strictly from each length to the next.

    Examples
    --------
    >>> from attention_scaling.long_sequences import gaussian_logit_sweep
    >>> from attention_scaling.site.long_sequences import fading_weight
    >>> record = fading_weight(gaussian_logit_sweep([16, 65536], [1.0, 3.0], seed=0, budget=2**16))
    >>> record.s1_short > record.s1_long
    True
    """
    positive = sweep.spreads > 0
    require(np.all(np.diff(sweep.max_weight[positive], axis=1) < 0), _where("long-largest-weight"),
            "at every positive spread the mean largest weight falls as the row gets longer",
            spreads=sweep.spreads.tolist(), max_weight=sweep.max_weight.tolist())

    def largest(s: float, n: int) -> float:
        return sweep.estimate("max_weight", s, n).value

    return FadingWeight(largest(1.0, 16), largest(1.0, 65536), largest(3.0, 16), largest(3.0, 65536))


# -- Section long-scalings ---------------------------------------------------------------

# The page's table: Figure 1 of Nakanishi (2025), one score 3 and the others -2.
_NEEDLE_LENGTHS = np.array([16, 256, 4096, 65536, 2**20])
_NEEDLE_SCORE, _OTHER_SCORE = 3.0, -2.0


@dataclass(frozen=True)
class NeedleWeights:
    r"""The needle's weight at each length of the page's table, under plain softmax and three Scalable-Softmax scales.

    Attributes
    ----------
    lengths : numpy.ndarray
        16, 256, 4096, 65536 and :math:`2^{20}` keys.
    margin : float
        The needle's margin :math:`\Delta = 5`.
    plain, s043, s02, s01 : numpy.ndarray
        The weight at :math:`\beta = 1` and at :math:`\beta = \sigma\ln n` for
        :math:`\sigma = 0.43, 0.2, 0.1`, one per length.
    noise_length : float
        :math:`e^{2/\sigma^2}` at :math:`\sigma = 0.43`: where pure noise crosses the
        freezing threshold under Scalable-Softmax.
    needle : dict of str to dict of str to float
        The same weights as the page's table: ``needle[column][str(n)]``, with the
        columns ``softmax`` (:math:`\beta = 1`), ``s043``, ``s02`` and ``s01``.
    """

    lengths: np.ndarray
    margin: float
    plain: np.ndarray
    s043: np.ndarray
    s02: np.ndarray
    s01: np.ndarray
    noise_length: float
    needle: dict[str, dict[str, float]]


def needle_weights() -> NeedleWeights:
    r"""The needle's weight for the page's table, checked against Scalable-Softmax and the theorem's limits.

    Returns
    -------
    NeedleWeights

    Raises
    ------
    PageCheckError
        If the closed form disagrees with Scalable-Softmax of the explicit
        scores (relative :math:`10^{-12}`); if the weight does not fall with
        the length under plain softmax and at :math:`\sigma = 0.1`, or rise at
        :math:`\sigma = 0.43`; if it is not :math:`n/(2n - 1)` at :math:`\sigma = 0.2`;
        or if :math:`\sigma = 0.1` does not start below plain softmax and
        overtake it once, by the longest length.

    Examples
    --------
    >>> from attention_scaling.site.long_sequences import needle_weights
    >>> record = needle_weights()
    >>> round(record.needle["s02"]["16"], 4)
    0.5161
    """
    where = _where("long-scalings")
    lengths = _NEEDLE_LENGTHS
    margin = _NEEDLE_SCORE - _OTHER_SCORE
    log_lengths = np.log(lengths)
    columns = {"softmax": needle_weight(lengths, margin, 1.0),
               "s043": needle_weight(lengths, margin, 0.43 * log_lengths),
               "s02": needle_weight(lengths, margin, 0.2 * log_lengths),
               "s01": needle_weight(lengths, margin, 0.1 * log_lengths)}
    record = NeedleWeights(
        lengths=lengths,
        margin=margin,
        plain=columns["softmax"],
        s043=columns["s043"],
        s02=columns["s02"],
        s01=columns["s01"],
        noise_length=float(np.exp(2 / 0.43**2)),
        needle={name: {str(n): float(weight) for n, weight in zip(lengths, column)} for name, column in columns.items()},
    )
    for n, expected in zip(lengths, record.s043):
        scores = np.full(n, _OTHER_SCORE)
        scores[-1] = _NEEDLE_SCORE
        explicit = scalable_softmax(scores, 0.43)[-1]
        require(np.isclose(explicit, expected, rtol=1e-12), where,
                "the closed form equals Scalable-Softmax of the explicit scores", n=int(n),
                closed_form=float(expected), explicit=float(explicit))
    require(np.all(np.diff(record.plain) < 0), where, "under plain softmax the needle's weight falls with n",
            weights=record.plain.tolist())
    require(np.all(np.diff(record.s043) > 0), where, "at s = 0.43 (s Delta > 1) the needle's weight rises with n",
            weights=record.s043.tolist())
    require(np.all(np.diff(record.s01) < 0), where, "at s = 0.1 (s Delta < 1) the needle's weight falls with n",
            weights=record.s01.tolist())
    require(np.allclose(record.s02, lengths / (2 * lengths - 1)), where,
            "at s = 0.2 (s Delta = 1) the needle's weight is n / (2n - 1)", weights=record.s02.tolist())
    overtaken = record.s01 > record.plain
    require(not overtaken[0] and overtaken[-1] and np.all(np.diff(overtaken.astype(int)) >= 0), where,
            "s = 0.1 starts below plain softmax and overtakes it once, by the longest length",
            overtaken=overtaken.tolist())
    return record


# -- Section long-shift ------------------------------------------------------------------


@dataclass(frozen=True)
class ShiftVersusScale:
    r"""How much subtracting and multiplying by :math:`\sigma\ln n` change softmax.

    Attributes
    ----------
    shift_change, scale_change : float
        The largest change of a weight after the shift and after the scale.
    plain_max, scale_max : float
        The largest weight of plain softmax and of Scalable-Softmax.
    """

    shift_change: float
    scale_change: float
    plain_max: float
    scale_max: float


def shift_versus_scale(scores, s: float) -> ShiftVersusScale:
    r"""Compare softmax after subtracting :math:`\sigma\ln n` and after multiplying by it.

    Parameters
    ----------
    scores : array_like, shape (n,)
        One row of scores.
    s : float
        The Scalable-Softmax parameter.

    Returns
    -------
    ShiftVersusScale

    Raises
    ------
    PageCheckError
        Unless the shift changes no weight by :math:`10^{-12}` or more and
        the scale changes some weight by more than :math:`10^{-3}`.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.site.long_sequences import shift_versus_scale
    >>> record = shift_versus_scale(np.random.default_rng(0).normal(size=64), 0.43)
    >>> record.shift_change < 1e-12 < record.scale_change
    True
    """
    scores = np.asarray(scores, dtype=np.float64)
    plain = softmax(scores)
    shifted = softmax(scores - s * np.log(scores.size))
    scaled = scalable_softmax(scores, s)
    shift_change = float(np.max(np.abs(shifted - plain)))
    scale_change = float(np.max(np.abs(scaled - plain)))
    require(shift_change < 1e-12 < 1e-3 < scale_change, _where("long-shift"),
            "subtracting s ln n changes no weight beyond rounding, multiplying by it does",
            shift_change=shift_change, scale_change=scale_change)
    return ShiftVersusScale(shift_change, scale_change, float(plain.max()), float(scaled.max()))
