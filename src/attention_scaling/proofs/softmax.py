r"""Theorems about softmax itself, for a symbolic length :math:`n`.

Shift invariance (chapter "Subtracting the maximum, dividing by √d_k",
``docs/subtraction-vs-division.md``), the Jacobian and its saturation
(chapter "Saturation and vanishing gradients", ``docs/saturation.md``), and
the range of the max-subtracted softmax (chapter "Low precision",
``docs/low-precision.md``). The three share one symbolic softmax.
"""

from __future__ import annotations

import sympy as sp

from attention_scaling.proofs.engine import (
    THEOREM_NAMES,
    Proof,
    ProofError,
    Step,
    _check_empty,
    _check_inequality,
    _check_nonzero,
    _theorem,
    check,
)

__all__ = ["softmax_jacobian_theorem", "softmax_shift_invariance", "stable_softmax_bounds"]

_n = sp.Symbol("n", integer=True, positive=True)
_x = sp.IndexedBase("x", real=True)
_shift = sp.Symbol("c", real=True)


def _softmax_component(i, n, logits=_x):
    """p_i = exp(x_i) / sum_j exp(x_j) for a symbolic length n."""
    j = sp.Symbol("j", integer=True, positive=True)
    return sp.exp(logits[i]) / sp.Sum(sp.exp(logits[j]), (j, 1, n))


@_theorem("thm-softmax-shift-invariance", "Softmax ignores shifts")
def softmax_shift_invariance() -> Proof:
    r"""Softmax ignores a common shift of its inputs, and depends on differences, not ratios.

    :math:`\operatorname{softmax}(x + c\mathbf{1}) = \operatorname{softmax}(x)`
    for every real :math:`c` and a symbolic length :math:`n`, via
    :math:`\operatorname{softmax}_i(x) = 1 / \sum_j e^{x_j - x_i}`; checked
    again component by component for :math:`n = 2, \dots, 6`. A shift changes
    every ratio :math:`x_1 / x_2` and leaves the output alone; a temperature
    changes the output.

    Examples
    --------
    >>> from attention_scaling.proofs import softmax_shift_invariance
    >>> len(softmax_shift_invariance().cross_checks)
    5
    """
    label = "thm-softmax-shift-invariance"
    i, j = sp.symbols("i j", integer=True, positive=True)
    softmax_i = _softmax_component(i, _n)
    shifted = sp.exp(_x[i] + _shift) / sp.Sum(sp.exp(_x[j] + _shift), (j, 1, _n))
    differences = 1 / sp.Sum(sp.exp(_x[j] - _x[i]), (j, 1, _n))
    x1, x2 = sp.symbols("x_1 x_2", real=True)
    half = sp.Rational(1, 2)
    steps = (
        check(label, softmax_i, differences, reason="divide through by exp(x_i)"),
        check(label, shifted, differences, reason="(x_j + c) - (x_i + c) = x_j - x_i"),
        check(
            label,
            shifted,
            softmax_i,
            reason="the shift cancels",
            shown=r"\operatorname{softmax}_i(x + c\mathbf{1}) = \operatorname{softmax}_i(x)",
        ),
        check(
            label,
            (x1 + _shift) / (x2 + _shift) - x1 / x2,
            _shift * (x2 - x1) / (x2 * (x2 + _shift)),
            reason="yet every ratio moves unless c = 0 or x_1 = x_2",
        ),
        _check_nonzero(
            label,
            sp.exp(half) / (sp.exp(half) + 1),
            sp.E / (sp.E + 1),
            reason="a temperature changes the output",
            shown=r"\operatorname{softmax}_1\!\left(\tfrac{[1,\,0]}{2}\right) = \frac{e^{1/2}}{e^{1/2} + 1}"
            r" \neq \frac{e}{e + 1} = \operatorname{softmax}_1([1,\,0])",
        ),
    )
    cross_checks = []
    for size in range(2, 7):
        logits = sp.symbols(f"x_1:{size + 1}", real=True)
        original = [sp.exp(x) / sum(sp.exp(y) for y in logits) for x in logits]
        moved = [sp.exp(x + _shift) / sum(sp.exp(y + _shift) for y in logits) for x in logits]
        for a, b in zip(moved, original):
            check(label, a, b)
        cross_checks.append(Step(sp.Symbol(rf"\operatorname{{softmax}}(x + c\mathbf{{1}})_{{n={size}}}"),
                                 sp.Symbol(r"\operatorname{softmax}(x)"), "every component"))
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("x real, of any length n", "c a real constant"),
        steps,
        tuple(cross_checks),
        result_index=2,
    )


@_theorem("thm-softmax-jacobian", "The softmax Jacobian")
def softmax_jacobian_theorem() -> Proof:
    r"""The Jacobian of softmax and how it vanishes as softmax saturates.

    :math:`\partial p_i / \partial x_k = p_i(\delta_{ik} - p_k)` for a symbolic
    length :math:`n`; each row sums to 0; a diagonal entry
    :math:`p_i(1 - p_i) = \tfrac14 - (p_i - \tfrac12)^2` is at most
    :math:`\tfrac14`, attained only at :math:`p_i = \tfrac12`; and for two
    logits with gap :math:`t`, every entry tends to 0 as :math:`t \to \infty`.

    Examples
    --------
    >>> from attention_scaling.proofs import softmax_jacobian_theorem
    >>> softmax_jacobian_theorem().statement
    '\\frac{\\partial p_i}{\\partial x_k} = p_i\\,(\\delta_{ik} - p_k)'
    """
    label = "thm-softmax-jacobian"
    i, k = sp.symbols("i k", integer=True, positive=True)
    inside = sp.Q.le(i, _n) & sp.Q.le(k, _n)
    p = lambda index: _softmax_component(index, _n)  # noqa: E731 - a one-line formula
    derivative = sp.refine(sp.diff(p(i), _x[k]).doit(), inside)
    row_sum = sp.refine(sp.Sum(p(i) * (sp.KroneckerDelta(i, k) - p(k)), (k, 1, _n)).doit(), inside)
    # Summing over k leaves sum_k e^{x_k}: the normaliser again, under another
    # name for its bound index. Renaming the index lets SymPy cancel it.
    j = sp.Symbol("j", integer=True, positive=True)
    row_sum = sp.simplify(row_sum).replace(
        lambda e: isinstance(e, sp.Sum) and tuple(e.variables) == (k,),
        lambda e: sp.Sum(e.function.subs(k, j), (j, *e.limits[0][1:])),
    )
    prob = sp.Symbol("p", real=True)
    peak = sp.solveset(sp.Eq(prob * (1 - prob), sp.Rational(1, 4)), prob, sp.Interval(0, 1))
    if peak != sp.FiniteSet(sp.Rational(1, 2)):
        raise ProofError(f"{label}: p(1 - p) = 1/4 on [0, 1] has solutions {peak}, not {{1/2}}")
    t = sp.Symbol("t", real=True)
    p1, p2 = 1 / (1 + sp.exp(-t)), 1 / (1 + sp.exp(t))
    entries = [p1 * (1 - p1), -p1 * p2, -p2 * p1, p2 * (1 - p2)]
    limits = [sp.limit(entry, t, sp.oo) for entry in entries]
    if any(limit != 0 for limit in limits):
        raise ProofError(f"{label}: the Jacobian entries tend to {limits} as t grows, not to 0")
    steps = (
        check(
            label,
            derivative,
            p(i) * (sp.KroneckerDelta(i, k) - p(k)),
            reason="quotient rule, for k in 1..n",
            shown=r"\frac{\partial p_i}{\partial x_k} = p_i\,(\delta_{ik} - p_k)",
        ),
        check(
            label,
            row_sum,
            0,
            reason="the p_k sum to 1",
            shown=r"\sum_{k=1}^{n} \frac{\partial p_i}{\partial x_k} = p_i - p_i \sum_{k=1}^{n} p_k = 0",
        ),
        check(label, prob * (1 - prob), sp.Rational(1, 4) - (prob - sp.Rational(1, 2)) ** 2, reason="so at most 1/4"),
        Step(prob, sp.Rational(1, 2), "the only maximiser in [0, 1]"),
        check(
            label,
            sp.Limit(entries[0], t, sp.oo),
            0,
            reason="scores [t, 0]; all entries alike",
            shown=r"\lim_{t \to \infty} p_1 (1 - p_1) = 0",
        ),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("p = softmax(x) for real x of any length n",),
        steps,
        result_index=0,
    )


@_theorem("thm-stable-softmax-bounds", "Max-subtracted softmax stays in range")
def stable_softmax_bounds() -> Proof:
    r"""After subtracting the maximum, every term of softmax lies in (0, 1] and the sum in [1, n].

    With :math:`m = \max_j x_j`, :math:`\operatorname{softmax}_i(x) =
    e^{x_i - m} / D` with :math:`D = \sum_{j=1}^n e^{x_j - m}` (for a symbolic
    length :math:`n`). Every exponent is :math:`\le 0`, so every term lies in
    :math:`(0, 1]`; the term of the maximum is :math:`e^0 = 1`, so
    :math:`1 \le D \le n`; and every weight lies in :math:`(0, 1]`. The
    recorded result is the first, shifted form; the bounds are the later
    steps. The sums are over the :math:`r = n - 1 \ge 1` other terms (for
    :math:`n = 1`, :math:`D = 1`). Each term bound is decided by ``solveset``,
    the sum and weight bounds by SymPy's sign assumptions: the terms enter
    the sums as :math:`u_j > 0` and :math:`1 - u_j \ge 0`, which the term
    bounds justify. The cross-checks redo the bounds for :math:`n = 2, \dots,
    6` with every exponent written as :math:`-\ln(1 + a_j)`, :math:`a_j \ge
    0`, which covers every non-positive exponent.

    Examples
    --------
    >>> from attention_scaling.proofs import stable_softmax_bounds
    >>> proof = stable_softmax_bounds()
    >>> [step.relation for step in proof.steps]
    ['=', '\\le', '>', '=', '\\ge', '=', '\\le', '\\le', '>']
    >>> len(proof.cross_checks)
    5
    """
    label = "thm-stable-softmax-bounds"
    i, j = sp.symbols("i j", integer=True, positive=True)
    top = sp.Symbol("m", real=True)
    t = sp.Symbol("t", real=True)
    others = sp.Symbol("r", integer=True, positive=True)  # n - 1 terms besides the maximum
    u = sp.IndexedBase("u", positive=True)  # u_j = e^{x_j - m}, in (0, 1]
    gap = sp.IndexedBase("g", nonnegative=True)  # g_j = 1 - u_j >= 0
    shifted = sp.exp(_x[i] - top) / sp.Sum(sp.exp(_x[j] - top), (j, 1, _n))
    denominator = 1 + sp.Sum(u[j], (j, 1, others))
    a, b = sp.symbols("a b", nonnegative=True)
    weight = (1 / (1 + a)) / (1 + b)  # a term in (0, 1] over a denominator >= 1
    steps = (
        check(
            label,
            _softmax_component(i, _n),
            shifted,
            reason="shift invariance",
            shown=r"\operatorname{softmax}_i(x) = \frac{e^{x_i - m}}{\sum_{j=1}^{n} e^{x_j - m}}",
        ),
        _check_empty(
            label,
            sp.exp(t) > 1,
            t,
            sp.Interval(-sp.oo, 0),
            "solveset",
            r"e^{x_j - m} \le 1",
            r"\le",
        ),
        _check_empty(
            label,
            sp.exp(t) <= 0,
            t,
            sp.S.Reals,
            "solveset",
            r"e^{x_j - m} > 0",
            ">",
        ),
        check(label, sp.exp(top - top), 1, reason="the maximum's own term", shown=r"e^{m - m} = 1"),
        _check_inequality(
            label,
            denominator,
            1,
            r"\ge",
            reason="other terms positive",
            shown=r"D = 1 + \sum_{j=1}^{n-1} u_j \ge 1",
        ),
        check(
            label,
            1 + sp.Sum(1 - gap[j], (j, 1, others)),
            (others + 1) - sp.Sum(gap[j], (j, 1, others)),
            reason="rearranged",
            shown=r"D = n - \sum_{j=1}^{n-1} (1 - u_j)",
        ),
        _check_inequality(
            label,
            (others + 1) - sp.Sum(gap[j], (j, 1, others)),
            others + 1,
            r"\le",
            reason="terms at most 1",
            shown=r"D \le n",
        ),
        _check_inequality(
            label,
            weight,
            1,
            r"\le",
            reason="D at least 1",
            shown=r"\operatorname{softmax}_i(x) = \frac{u_i}{D} \le 1",
        ),
        _check_inequality(
            label,
            weight,
            0,
            ">",
            reason="no 0/0",
            shown=r"\operatorname{softmax}_i(x) = \frac{u_i}{D} > 0",
        ),
    )
    cross_checks = []
    for size in range(2, 7):
        spares = sp.symbols(f"a_1:{size}", nonnegative=True)
        # exp(-ln(1 + a)) = 1/(1 + a): every term in (0, 1], the maximum's exactly 1.
        terms = [sp.Integer(1)] + [sp.exp(-sp.log(1 + spare)) for spare in spares]
        total = sum(terms)
        _check_inequality(label, total, 1, r"\ge")
        _check_inequality(label, total, size, r"\le")
        for term in terms:
            _check_inequality(label, term / total, 1, r"\le")
            _check_inequality(label, term / total, 0, ">")
        cross_checks.append(
            Step(sp.Symbol(rf"1 \le D_{{n={size}}}"), sp.Integer(size), "and every weight in (0, 1]", relation=r"\le")
        )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("x real, of any length n", "m = max_j x_j"),
        steps,
        tuple(cross_checks),
        result_index=0,
    )
