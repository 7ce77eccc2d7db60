r"""Page support for the exercises of the first chapters: each solution's numbers, checked.

These exercises were first gathered on the Exercises page; each now ends the
chapter it practises, and the later chapters' own modules hold theirs. A
solution on the page is visible teaching code: it computes the answer. The
function here for that exercise receives what the solution computed, checks
what the solution's prose says of it, and returns a record whose fields
are the numbers the prose shows (glued with
:func:`~attention_scaling.site.glue_fields`). A failed check raises
:class:`~attention_scaling.site.checks.PageCheckError` naming the exercise's
label, so the build stops at that solution.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from attention_scaling._softmax import softmax
from attention_scaling.proofs import d_k
from attention_scaling.simulate import Estimate
from attention_scaling.regimes import RegimeCurves
from attention_scaling.site.checks import require

__all__ = [
    "AblationAnswer",
    "CorrelatedAnswer",
    "Fp16Answer",
    "JacobianAnswer",
    "SaturationAnswer",
    "ShiftAnswer",
    "Std512Answer",
    "TemperatureAnswer",
    "ablation_answer",
    "correlated_answer",
    "fp16_answer",
    "jacobian_answer",
    "projection_scale_answer",
    "saturation_answer",
    "shift_answer",
    "std_512_answer",
    "temperature_answer",
]


@dataclass(frozen=True)
class Std512Answer:
    """Exercise ``ex-std-512``: the standard deviation at :math:`d_k = 512`, exact and simulated."""

    std: float
    n_draws: int
    simulated_std: float


def std_512_answer(std, n_draws: int, estimate: Estimate) -> Std512Answer:
    r"""Check the answer :math:`\sqrt{512}` against the simulated variance of :math:`q \cdot k`.

    Parameters
    ----------
    std : float
        The answer, :math:`\sqrt{d_k}`.
    n_draws : int
        Draws in the simulation.
    estimate : Estimate
        The sample variance of the draws.

    Returns
    -------
    Std512Answer

    Raises
    ------
    RuntimeError
        A ``PageCheckError`` if ``std`` squared is not 512 or 512 lies more
        than three standard errors from the simulated variance.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.simulate import dot_product_samples, variance_estimate
    >>> from attention_scaling.site.exercises import std_512_answer
    >>> estimate = variance_estimate(dot_product_samples(512, 2_000, seed=512))
    >>> std_512_answer(np.sqrt(512), 2_000, estimate).std
    22.627416997969522
    """
    require(math.isclose(float(std) ** 2, 512, rel_tol=1e-12), "ex-std-512", "the answer is sqrt(d_k)", std=std)
    require(estimate.contains(512), "ex-std-512", "the simulated variance agrees with d_k = 512 within 3 s.e.",
            estimate=estimate)
    return Std512Answer(float(std), int(n_draws), float(np.sqrt(estimate.value)))


@dataclass(frozen=True)
class SaturationAnswer:
    """Exercise ``ex-saturation-point``: where the slope of the top weight falls to a tenth of its peak."""

    margin: float
    weight: float


def saturation_answer(margin: float, weight, fraction: float = 0.1) -> SaturationAnswer:
    r"""Check that the slope :math:`p_1(1 - p_1)` at ``margin`` is ``fraction`` of its peak :math:`\tfrac14`.

    Parameters
    ----------
    margin : float
        The score :math:`x` of the solution.
    weight : float
        :math:`p_1 = \operatorname{softmax}([x, 0, 0, 0])_1` there.
    fraction : float, default 0.1
        The solution's definition of saturated.

    Returns
    -------
    SaturationAnswer

    Raises
    ------
    RuntimeError
        A ``PageCheckError`` if the slope there is not ``fraction / 4`` or the
        weight is not past one half.

    Examples
    --------
    >>> from attention_scaling import saturation_margin, softmax
    >>> from attention_scaling.site.exercises import saturation_answer
    >>> margin = saturation_margin(4, fraction=0.1)
    >>> round(saturation_answer(margin, softmax([margin, 0.0, 0.0, 0.0])[0]).weight, 3)
    0.974
    """
    weight = float(weight)
    require(weight > 0.5 and math.isclose(weight * (1 - weight), fraction / 4, rel_tol=1e-9), "ex-saturation-point",
            "the slope p1 (1 - p1) is a tenth of its peak 1/4, with p1 past 1/2", weight=weight)
    return SaturationAnswer(float(margin), weight)


@dataclass(frozen=True)
class AblationAnswer:
    """Exercise ``ex-scaling-ablation``: at the largest :math:`d_k`, the mean largest weight and Jacobian norm per policy."""

    none_max: float
    sqrt_max: float
    linear_max: float
    none_grad: float
    sqrt_grad: float
    linear_grad: float


def ablation_answer(ablation: dict[str, RegimeCurves]) -> AblationAnswer:
    r"""Read the solution's curves at their largest :math:`d_k` and check that scaling flattens attention.

    Parameters
    ----------
    ablation : dict of str to RegimeCurves
        The curves under the policies ``"none"``, ``"sqrt"`` and ``"linear"``.

    Returns
    -------
    AblationAnswer

    Raises
    ------
    RuntimeError
        A ``PageCheckError`` if a policy is missing, or the largest weight
        does not fall from no scaling to :math:`1/\sqrt{d_k}` to :math:`1/d_k`.

    Examples
    --------
    >>> from attention_scaling.regimes import attention_regimes
    >>> from attention_scaling.site.exercises import ablation_answer
    >>> curves = {p: attention_regimes([256], p, n_keys=8, n_queries=50, seed=0) for p in ("none", "sqrt", "linear")}
    >>> answer = ablation_answer(curves)
    >>> answer.none_max > answer.sqrt_max > answer.linear_max
    True
    """
    missing = sorted({"none", "sqrt", "linear"} - set(ablation))
    require(not missing, "ex-scaling-ablation", "every policy was simulated", missing=missing)
    top = {policy: float(curves.max_weight[-1]) for policy, curves in ablation.items()}
    grad = {policy: float(curves.jacobian_norm[-1]) for policy, curves in ablation.items()}
    require(top["none"] > top["sqrt"] > top["linear"], "ex-scaling-ablation",
            "the largest weight falls from no scaling to 1/sqrt(d_k) to 1/d_k", largest_weight=top)
    return AblationAnswer(top["none"], top["sqrt"], top["linear"], grad["none"], grad["sqrt"], grad["linear"])


@dataclass(frozen=True)
class TemperatureAnswer:
    r"""Exercise ``ex-temperature-sweep``: the mean largest weight and entropy fraction at :math:`\tau = \tfrac12, 1, 2 \times \sqrt{d_k}`."""

    half_max: float
    one_max: float
    two_max: float
    half_entropy: float
    one_entropy: float
    two_entropy: float


def temperature_answer(sweep: dict[float, RegimeCurves]) -> TemperatureAnswer:
    r"""Read the sweep over temperatures and check that a lower temperature sharpens attention.

    Parameters
    ----------
    sweep : dict of float to RegimeCurves
        The curves at :math:`\tau = f\sqrt{d_k}`, keyed by ``f`` in 0.5, 1.0, 2.0.

    Returns
    -------
    TemperatureAnswer

    Raises
    ------
    RuntimeError
        A ``PageCheckError`` if a factor is missing, or the largest weight
        does not fall (and the entropy rise) as the temperature grows.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.regimes import attention_regimes
    >>> from attention_scaling.site.exercises import temperature_answer
    >>> sweep = {f: attention_regimes([64], lambda d, f=f: 1 / (f * np.sqrt(d)), n_keys=8, n_queries=50, seed=0)
    ...          for f in (0.5, 1.0, 2.0)}
    >>> answer = temperature_answer(sweep)
    >>> answer.half_entropy < answer.one_entropy < answer.two_entropy
    True
    """
    missing = sorted({0.5, 1.0, 2.0} - set(sweep))
    require(not missing, "ex-temperature-sweep", "every temperature was simulated", missing=missing)
    top = [float(sweep[factor].max_weight[0]) for factor in (0.5, 1.0, 2.0)]
    entropy = [float(sweep[factor].entropy_fraction[0]) for factor in (0.5, 1.0, 2.0)]
    require(top[0] > top[1] > top[2] and entropy[0] < entropy[1] < entropy[2], "ex-temperature-sweep",
            "a higher temperature lowers the largest weight and raises the entropy", largest_weight=top,
            entropy_fraction=entropy)
    return TemperatureAnswer(*top, *entropy)


@dataclass(frozen=True)
class JacobianAnswer:
    """Exercise ``ex-jacobian-peaked-uniform``: Frobenius norms of two softmax Jacobians."""

    peaked: float
    uniform: float
    peaked_diagonal: float


def jacobian_answer(peaked, uniform) -> JacobianAnswer:
    """Check that the uniform weights pass on more gradient than the peaked ones.

    Parameters
    ----------
    peaked, uniform : numpy.ndarray, shape (n, n)
        The softmax Jacobians of the two weight vectors.

    Returns
    -------
    JacobianAnswer

    Raises
    ------
    RuntimeError
        A ``PageCheckError`` if the uniform Jacobian's norm is not the larger.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling import softmax_jacobian
    >>> from attention_scaling.site.exercises import jacobian_answer
    >>> answer = jacobian_answer(softmax_jacobian(np.array([0.97, 0.01, 0.01, 0.01])), softmax_jacobian(np.full(4, 0.25)))
    >>> round(answer.uniform, 4)
    0.433
    """
    answer = JacobianAnswer(float(np.linalg.norm(peaked)), float(np.linalg.norm(uniform)), float(peaked[0, 0]))
    require(answer.uniform > answer.peaked, "ex-jacobian-peaked-uniform", "the uniform weights pass on more gradient",
            peaked=answer.peaked, uniform=answer.uniform)
    return answer


def projection_scale_answer(solution) -> sp.Expr:
    r"""Check that the solution found one positive constant, :math:`c = \sigma^2\sqrt{d_k}`.

    Parameters
    ----------
    solution : list of sympy.Expr
        What ``sympy.solve`` returned for :math:`c`.

    Returns
    -------
    sympy.Expr
        The constant.

    Raises
    ------
    RuntimeError
        A ``PageCheckError`` if the solution is anything else.

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs import d_k
    >>> from attention_scaling.site.exercises import projection_scale_answer
    >>> sigma = sp.Symbol("sigma", positive=True)
    >>> projection_scale_answer([sigma**2 * sp.sqrt(d_k)])
    sqrt(d_k)*sigma**2
    """
    sigma = sp.Symbol("sigma", positive=True)
    expected = [sigma**2 * sp.sqrt(d_k)]
    require(list(solution) == expected, "ex-projection-scale", "the only positive solution is c = sigma^2 sqrt(d_k)",
            solution=solution)
    return expected[0]


@dataclass(frozen=True)
class ShiftAnswer:
    """Exercise ``ex-shift-invariance``: softmax of two score vectors with the same ratios, as printed."""

    weights: str
    scaled_weights: str


def shift_answer(x, same_ratios) -> ShiftAnswer:
    """Check that a shift of ``x`` changes no weight while scores with its ratios change them.

    Parameters
    ----------
    x : numpy.ndarray
        The scores.
    same_ratios : tuple of numpy.ndarray
        Softmax of ``x`` and of a multiple of ``x``.

    Returns
    -------
    ShiftAnswer

    Raises
    ------
    RuntimeError
        A ``PageCheckError`` if a shift by 1000 changes the weights, or the
        two vectors with equal ratios get the same weights.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling import softmax
    >>> from attention_scaling.site.exercises import shift_answer
    >>> x = np.array([1.0, 2.0, 3.0])
    >>> shift_answer(x, (softmax(x), softmax(10 * x))).weights
    '[0.09  0.245 0.665]'
    """
    shifted = softmax(np.asarray(x) + 1000.0)
    require(np.allclose(shifted, softmax(x)), "ex-shift-invariance", "softmax(x + 1000) = softmax(x)",
            shifted=shifted, weights=softmax(x))
    first, second = same_ratios
    require(not np.allclose(first, second), "ex-shift-invariance", "equal ratios, different weights",
            first=first, second=second)
    return ShiftAnswer(np.array2string(first, precision=3), np.array2string(second, precision=3))


@dataclass(frozen=True)
class Fp16Answer:
    """Exercise ``ex-fp16-overflow``: the overflow threshold of float16, and softmax computed both ways."""

    largest: float
    threshold: float
    naive: str
    stable: str


def fp16_answer(largest: float, threshold: float, naive, stable) -> Fp16Answer:
    r"""Check that the unshifted float16 softmax overflowed and the shifted one did not.

    Parameters
    ----------
    largest : float
        The largest finite float16, 65504.
    threshold : float
        :math:`\ln 65504`, above which :math:`e^x` overflows.
    naive, stable : numpy.ndarray
        Softmax of the same float16 scores without and with the maximum subtracted.

    Returns
    -------
    Fp16Answer

    Raises
    ------
    RuntimeError
        A ``PageCheckError`` if ``largest`` is not 65504, ``threshold`` not
        its logarithm, the unshifted softmax is finite or the shifted one is not.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling import naive_softmax, softmax
    >>> from attention_scaling.site.exercises import fp16_answer
    >>> scores = np.array([12.0, 11.0, 0.0], dtype=np.float16)
    >>> fp16_answer(65504.0, float(np.log(65504.0)), naive_softmax(scores), softmax(scores)).naive
    '[nan  0.  0.]'
    """
    require(largest == 65504.0 and math.isclose(threshold, math.log(largest), rel_tol=1e-12), "ex-fp16-overflow",
            "e^x overflows float16 above ln 65504", largest=largest, threshold=threshold)
    require(not np.all(np.isfinite(naive)) and np.all(np.isfinite(stable)), "ex-fp16-overflow",
            "the unshifted softmax overflows and the shifted one does not", naive=naive, stable=stable)
    return Fp16Answer(float(largest), float(threshold), np.array2string(naive), np.array2string(stable, precision=3))


@dataclass(frozen=True)
class CorrelatedAnswer:
    r"""Exercise ``ex-correlated-scale``: the mean scaled score :math:`\rho d_k \cdot c` under each scale."""

    sqrt_mean: float
    linear_mean: float


def correlated_answer(sqrt_mean, linear_mean) -> CorrelatedAnswer:
    r"""Record the two means of the solution; the one under :math:`1/\sqrt{d_k}` must be the larger.

    Parameters
    ----------
    sqrt_mean, linear_mean : float
        :math:`\rho\sqrt{d_k}` and :math:`\rho`.

    Returns
    -------
    CorrelatedAnswer

    Raises
    ------
    RuntimeError
        A ``PageCheckError`` if the mean under :math:`1/\sqrt{d_k}` is not
        above the one under :math:`1/d_k`.

    Examples
    --------
    >>> from attention_scaling.site.exercises import correlated_answer
    >>> answer = correlated_answer(16.0, 0.5)
    >>> answer.sqrt_mean, answer.linear_mean
    (16.0, 0.5)
    """
    answer = CorrelatedAnswer(float(sqrt_mean), float(linear_mean))
    require(answer.sqrt_mean > answer.linear_mean, "ex-correlated-scale",
            "the mean grows under 1/sqrt(d_k) and stays at rho under 1/d_k", sqrt_mean=answer.sqrt_mean,
            linear_mean=answer.linear_mean)
    return answer
