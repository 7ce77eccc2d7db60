r"""Theorems of the page "Bounded logits" (``docs/bounded-logits.md``).

:func:`soft_cap_bound`: Gemma 2's cap :math:`C \tanh(z/C)` has derivative
:math:`1 - \tanh^2(z/C) \in (0, 1]` and stays inside :math:`(-C, C)`, and
logits in :math:`[-b, b]` give every one of :math:`n` weights a value in
:math:`[1/(1 + (n-1)e^{2b}),\ 1/(1 + (n-1)e^{-2b})]`.
:func:`qknorm_scale`: with unit queries and keys the logit
:math:`g\, \hat q \cdot \hat k` lies in :math:`[-g, g]`, and for independent
uniform directions in :math:`d` dimensions its variance is :math:`g^2/d`.
:func:`dispersion`: logits in :math:`[m, M]` at temperature :math:`\theta`
put every weight in :math:`[e^{-\delta/\theta}/n,\ e^{\delta/\theta}/n]`,
:math:`\delta = M - m`, so the largest weight tends to 0 as :math:`n` grows;
the needle of :func:`needle_limit` with a fixed :math:`\beta` is a case.
"""

from __future__ import annotations

import sympy as sp

from attention_scaling.proofs.engine import (
    THEOREM_NAMES,
    Proof,
    theorem,
    argue,
    check,
    check_inequality,
    check_nonnegative,
    check_solutions,
)

__all__ = ["dispersion", "qknorm_scale", "soft_cap_bound"]

_z = sp.Symbol("z", real=True)
_cap = sp.Symbol("C", positive=True)
_b = sp.Symbol("b", positive=True)
_n = sp.Symbol("n", integer=True, positive=True)
_p = sp.Symbol("p_i", positive=True)
_g = sp.Symbol("g", positive=True)
_d = sp.Symbol("d", integer=True, positive=True)
_theta = sp.Symbol(r"\theta", positive=True)
_m = sp.Symbol("m", real=True)
_delta = sp.Symbol(r"\delta", nonnegative=True)
_y = sp.Symbol("y", nonnegative=True)


def _weight_extremes(label: str, bound) -> tuple:
    """Steps: the extreme weights of n logits in [-bound, bound], argued, and their closed forms, checked."""
    top = sp.exp(bound) / (sp.exp(bound) + (_n - 1) * sp.exp(-bound))
    bottom = sp.exp(-bound) / (sp.exp(-bound) + (_n - 1) * sp.exp(bound))
    return (
        check(label, top, 1 / (1 + (_n - 1) * sp.exp(-2 * bound)), reason="divide by the numerator"),
        argue(label, _p, 1 / (1 + (_n - 1) * sp.exp(-2 * bound)), "the weight is largest when its logit is at the "
              "top of the range and the other $n - 1$ at the bottom (the line above)", relation=r"\le"),
        check(label, bottom, 1 / (1 + (_n - 1) * sp.exp(2 * bound)), reason="divide by the numerator"),
        argue(label, _p, 1 / (1 + (_n - 1) * sp.exp(2 * bound)), "and smallest in the opposite case (the line "
              "above)", relation=r"\ge"),
    )


@theorem("thm-soft-cap-bound", "Soft-capping bounds the logits and the weights",
          uses=("thm-softmax-shift-invariance",))
def soft_cap_bound() -> Proof:
    r"""The cap :math:`C\tanh(z/C)`: its derivative, its range, and the weights it allows.

    Checked: the derivative :math:`1 - \tanh^2(z/C)`, which equals
    :math:`1/\cosh^2(z/C)`, so it is positive and at most 1; the limits
    :math:`\pm C` at :math:`z \to \pm\infty`; and the closed forms of the
    extreme weights of :math:`n` logits in :math:`[-b, b]`. Argued: that an
    increasing function with those limits stays strictly between them, and
    which arrangement of the logits makes a weight extreme.

    Examples
    --------
    >>> from attention_scaling.proofs import soft_cap_bound
    >>> proof = soft_cap_bound()
    >>> proof.counts()
    {'checked': 8, 'cited': 0, 'argued': 3, 'measured': 0}
    >>> print(proof.steps[0].rhs)
    1 - tanh(z/C)**2
    """
    label = "thm-soft-cap-bound"
    capped = _cap * sp.tanh(_z / _cap)
    slope = 1 - sp.tanh(_z / _cap) ** 2
    steps = (
        check(label, sp.Derivative(capped, _z), slope, reason="the chain rule's factor through the cap"),
        check(label, slope, 1 / sp.cosh(_z / _cap) ** 2, reason=r"$1 - \tanh^2 = \operatorname{sech}^2$"),
        check_inequality(label, 1 / sp.cosh(_z / _cap) ** 2, 0, ">", reason="the cap is increasing"),
        check_nonnegative(label, 1 - slope, reason=r"the slope is at most 1: $\tanh^2 \ge 0$"),
        check(label, sp.Limit(capped, _z, sp.oo), _cap, reason=r"$z \to +\infty$"),
        check(label, sp.Limit(capped, _z, -sp.oo), -_cap, reason=r"$z \to -\infty$"),
        argue(label, sp.Abs(capped), _cap, "lines 3, 5 and 6: an increasing function stays strictly between its "
              "limits", relation="<"),
        *_weight_extremes(label, _b),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("z is real and C > 0", "the n logits of a row lie in [-b, b]; after the cap, b = C will do"),
        steps,
        results=(0, 6, 8, 10),
    )


@theorem("thm-qknorm-scale", "A learned scale bounds QK-normalised logits", uses=("thm-qk-norm-bound",))
def qknorm_scale() -> Proof:
    r"""With unit :math:`\hat q, \hat k` the logit :math:`g\,\hat q\cdot\hat k` lies in :math:`[-g, g]`; for random directions its variance is :math:`g^2/d`.

    Argued: Cauchy–Schwarz for unit vectors (as in :func:`qk_norm_bound_theorem`),
    that by symmetry the :math:`d` coordinates of a uniform unit vector have
    equal second moments, and that :math:`\hat q\cdot\hat k` given :math:`\hat k`
    is one coordinate of :math:`\hat q`. Checked: the extreme weights at
    :math:`b = g`, the equation :math:`d\,\mathbb{E}[\hat q_1^2] = 1`, and the
    cases :math:`d = 2` (an integral over the circle) and :math:`d = 3` (over
    a coordinate uniform on :math:`[-1, 1]`, Archimedes' theorem, argued).

    Examples
    --------
    >>> from attention_scaling.proofs import qknorm_scale
    >>> proof = qknorm_scale()
    >>> proof.counts()
    {'checked': 6, 'cited': 0, 'argued': 6, 'measured': 0}
    >>> print(proof.steps[-1].rhs)
    g**2/d
    """
    label = "thm-qknorm-scale"
    logit = sp.Symbol(r"g \hat{q} \cdot \hat{k}", real=True)
    second = sp.Symbol(r"\mathbb{E}[\hat{q}_1^2]", positive=True)
    variance = sp.Symbol(r"\operatorname{Var}(g \hat{q} \cdot \hat{k})", positive=True)
    angle, u = sp.Symbol(r"\phi", real=True), sp.Symbol("u", real=True)
    steps = (
        argue(label, sp.Abs(logit), _g, r"Cauchy–Schwarz: $\lvert q \cdot k\rvert \le \lVert q\rVert\, \lVert k\rVert = 1$ for unit vectors "
              "(thm-qk-norm-bound)", relation=r"\le"),
        *_weight_extremes(label, _g),
        argue(label, second, 1 / _d * sp.Symbol(r"\sum_i \mathbb{E}[\hat{q}_i^2]", positive=True),
              "the $d$ coordinates of a uniform unit vector have the same law (symmetry)"),
        check_solutions(label, second, sp.Eq(_d * second, 1), sp.S.Reals, sp.FiniteSet(1 / _d),
                        reason="the squares of the coordinates sum to 1"),
        check(label, sp.Integral(sp.cos(angle) ** 2, (angle, 0, 2 * sp.pi)) / (2 * sp.pi), sp.Rational(1, 2),
              reason="$d = 2$: a uniform angle"),
        check(label, sp.Integral(u**2, (u, -1, 1)) / 2, sp.Rational(1, 3),
              reason="$d = 3$: one coordinate is uniform on $[-1, 1]$ (Archimedes)"),
        argue(label, variance, _g**2 * second, r"given $k$, $q \cdot k$ is one coordinate of $q$ in a basis whose first "
              "vector is $k$; its mean is 0 by symmetry"),
        check(label, sp.Subs(_g**2 * second, second, 1 / _d), _g**2 / _d, reason="line 7"),
        argue(label, variance, _g**2 / _d, "lines 10 and 11"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("q-hat and k-hat are unit vectors in d dimensions; g > 0", "for the variance: they are independent and "
         "uniformly distributed on the sphere (random directions at initialisation)"),
        steps,
        results=(0, 2, 4, 11),
    )


@theorem("thm-dispersion", "Bounded logits disperse as the sequence grows", uses=("thm-needle-limit",))
def dispersion() -> Proof:
    r"""Logits in :math:`[m, m + \delta]` at temperature :math:`\theta` give weights in :math:`[e^{-\delta/\theta}/n,\ e^{\delta/\theta}/n]`.

    Argued: the numerator of a weight is at most :math:`e^{(m+\delta)/\theta}`
    and each of the :math:`n` terms of the denominator at least
    :math:`e^{m/\theta}` (and the reverse for the lower bound). Checked: both
    quotients, the limit 0 of the upper bound, and that the needle weight of
    :func:`needle_limit` (one logit :math:`\delta` above :math:`n - 1` equal
    ones, :math:`\theta = 1`) lies below :math:`e^{\delta}/n`, with
    :math:`e^{\delta} = 1 + y`, :math:`y \ge 0`.

    Examples
    --------
    >>> from attention_scaling.proofs import dispersion
    >>> proof = dispersion()
    >>> proof.counts()
    {'checked': 5, 'cited': 0, 'argued': 2, 'measured': 0}
    >>> print(proof.steps[4].rhs)
    0
    """
    label = "thm-dispersion"
    top, bottom = sp.exp((_m + _delta) / _theta), sp.exp(_m / _theta)
    upper, lower = sp.exp(_delta / _theta) / _n, sp.exp(-_delta / _theta) / _n
    needle = (1 + _y) / (1 + _y + _n - 1)  # e^delta / (e^delta + n - 1), with e^delta = 1 + y
    steps = (
        check(label, top / (_n * bottom), upper, reason=r"the common factor $e^{m/\theta}$ cancels"),
        argue(label, _p, upper, r"the numerator $e^{z_i/\theta}$ is at most $e^{(m + \delta)/\theta}$, each of the $n$ terms "
              r"of the denominator at least $e^{m/\theta}$; line 1", relation=r"\le"),
        check(label, bottom / (_n * top), lower, reason="the common factor cancels"),
        argue(label, _p, lower, r"the reverse: the numerator at least $e^{m/\theta}$, each term at most "
              r"$e^{(m + \delta)/\theta}$; line 3", relation=r"\ge"),
        check(label, sp.Limit(upper, _n, sp.oo), 0, reason="every weight tends to 0: dispersion"),
        check_inequality(label, (1 + _y) / _n, needle, r"\ge",
                         reason=r"the needle of thm-needle-limit at fixed $\beta$: $e^{\delta}/n$ bounds its weight"),
        check(label, (1 + _y) / _n - needle, _y * (1 + _y) / (_n * (_n + _y)), reason=r"the gap, $\ge 0$"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("the n logits z_i of a row lie in [m, m + delta], delta >= 0; temperature theta > 0",
         "p_i = e^(z_i/theta) / sum_j e^(z_j/theta)"),
        steps,
        results=(1, 3, 4),
    )
