r"""Page support for "Why √dₖ, and why not dₖ" (``docs/scaling.md``).

The page's proofs are checked by :mod:`attention_scaling.proofs` in visible
cells, and its numeric check is computed in a visible cell; :func:`numeric_check`
takes that cell's results, checks what the prose says of them, and returns a
record whose fields are the numbers the prose quotes (glued by
:func:`attention_scaling.site.glue_fields`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy as sp

from attention_scaling.simulate import Estimate, mean_estimate
from attention_scaling.site.checks import require

__all__ = ["NumericCheck", "PowerAnswer", "numeric_check", "power_answer"]

_PAGE = "scaling.md"


def _where(section: str) -> str:
    return f"{_PAGE}, section {section}"


# "Barely above the uniform": the mean largest weight under 1/d_k may exceed
# 1/n by at most this factor; at d_k = 256 with 8 keys it is about 1.09.
_BARELY_ABOVE = 1.2


@dataclass(frozen=True)
class NumericCheck:
    r"""Scores divided by :math:`\sqrt{d_k}` and by :math:`d_k`: their variances and how flat attention gets.

    Attributes
    ----------
    d_k, n_samples : int
        The head dimension and the number of scores drawn.
    by_sqrt, by_d_k : attention_scaling.simulate.Estimate
        The sample variance of the scores divided by :math:`\sqrt{d_k}` and by :math:`d_k`.
    by_d_k_proved : float
        The proved variance of the scores divided by :math:`d_k`, :math:`1/d_k`.
    n_keys : int
        Keys per query in the attention check.
    flat_max : attention_scaling.simulate.Estimate
        The mean largest weight with the division by :math:`d_k`.
    uniform_weight : float
        The weight of every key when attention is uniform, :math:`1/n`.
    """

    d_k: int
    n_samples: int
    by_sqrt: Estimate
    by_d_k: Estimate
    by_d_k_proved: float
    n_keys: int
    flat_max: Estimate
    uniform_weight: float


def numeric_check(by_sqrt: Estimate, by_d_k: Estimate, largest, *, d_k: int, n_samples: int,
                  n_keys: int) -> NumericCheck:
    r"""The section "A numeric sanity check": both proved variances hold, and :math:`1/d_k` flattens attention.

    Parameters
    ----------
    by_sqrt, by_d_k : attention_scaling.simulate.Estimate
        Sample variances of the scores divided by :math:`\sqrt{d_k}` and by :math:`d_k`.
    largest : array_like
        The largest attention weight of each query, with the scores divided by :math:`d_k`.
    d_k, n_samples, n_keys : int
        The head dimension, the number of scores behind the variances, and the keys per query.

    Returns
    -------
    NumericCheck

    Raises
    ------
    PageCheckError
        If 1 is not within three standard errors of ``by_sqrt``, or :math:`1/d_k`
        not within three of ``by_d_k``; or if the mean largest weight is not
        "barely above the uniform" :math:`1/n` (above it, by less than a factor 1.2).

    Examples
    --------
    >>> from attention_scaling.simulate import Estimate
    >>> from attention_scaling.site.scaling import numeric_check
    >>> check = numeric_check(Estimate(1.001, 0.004), Estimate(0.0039, 2e-5), [0.13, 0.14],
    ...                       d_k=256, n_samples=100_000, n_keys=8)
    >>> check.uniform_weight
    0.125
    """
    flat_max = mean_estimate(largest)
    require(by_sqrt.contains(1.0), _where("scaling-numeric"),
            "divided by sqrt(d_k), the scores' variance is 1 within 3 standard errors",
            estimate=by_sqrt)
    require(by_d_k.contains(1 / d_k), _where("scaling-numeric"),
            "divided by d_k, the scores' variance is 1/d_k within 3 standard errors",
            estimate=by_d_k, target=1 / d_k)
    require(1 / n_keys < flat_max.value < _BARELY_ABOVE / n_keys, _where("scaling-numeric"),
            "divided by d_k, the largest weight is barely above uniform", largest=flat_max.value,
            uniform=1 / n_keys)
    return NumericCheck(d_k=int(d_k), n_samples=int(n_samples), by_sqrt=by_sqrt, by_d_k=by_d_k,
                        by_d_k_proved=1 / int(d_k), n_keys=int(n_keys), flat_max=flat_max,
                        uniform_weight=1 / int(n_keys))


@dataclass(frozen=True)
class PowerAnswer:
    r"""Exercise ``ex-scaling-power``: the one power :math:`\alpha` that keeps :math:`\operatorname{Var}[q \cdot k/d_k^\alpha]` fixed.

    Attributes
    ----------
    alpha : float
        The power, :math:`\tfrac12`.
    d_k : int
        The width at which the scores divided by :math:`d_k` are measured.
    linear_std : float
        Their standard deviation there, :math:`1/\sqrt{d_k}`.
    """

    alpha: float
    d_k: int
    linear_std: float


def power_answer(powers, d_k: int, linear_std: float) -> PowerAnswer:
    r"""Check that :math:`\alpha = \tfrac12` is the only power found, and the spread under :math:`1/d_k`.

    Parameters
    ----------
    powers : list of sympy.Expr
        What ``sympy.solve`` returned for :math:`\alpha` in
        :math:`\partial \operatorname{Var}[q \cdot k/d_k^\alpha] / \partial d_k = 0`.
    d_k : int
        The width at which ``linear_std`` was evaluated.
    linear_std : float
        The standard deviation of :math:`q \cdot k / d_k` there.

    Returns
    -------
    PowerAnswer

    Raises
    ------
    PageCheckError
        If ``powers`` is not :math:`[\tfrac12]`, or ``linear_std`` is not
        :math:`1/\sqrt{d_k}`.

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.site import glue_fields
    >>> from attention_scaling.site.scaling import power_answer
    >>> glue_fields(power_answer([sp.Rational(1, 2)], 256, 0.0625), "ex_power")
    {'ex_power_alpha': 0.5, 'ex_power_d_k': 256, 'ex_power_linear_std': 0.0625}
    """
    where = "scaling.md, exercise ex-scaling-power"
    require(list(powers) == [sp.Rational(1, 2)], where, "the only power is alpha = 1/2", powers=powers)
    require(math.isclose(linear_std, 1 / math.sqrt(d_k), rel_tol=1e-12), where,
            "divided by d_k, the scores' standard deviation is 1/sqrt(d_k)", linear_std=linear_std, d_k=d_k)
    return PowerAnswer(0.5, int(d_k), float(linear_std))
