r"""Theorems about softmax itself, for a symbolic length :math:`n`.

Shift invariance (chapter "Subtracting the maximum, dividing by √d_k",
``docs/subtraction-vs-division.md``), the Jacobian and its saturation
(chapter "Saturation and vanishing gradients", ``docs/saturation.md``), and
the range of the max-subtracted softmax (chapter "Low precision",
``docs/low-precision.md``).

The three share one symbolic softmax, :class:`SoftmaxWeight`: an unevaluated
SymPy object that prints as the page writes it
(:math:`\operatorname{softmax}_i(x + c\mathbf{1})`, or :math:`p_i`) and whose
``doit`` is the definition :math:`e^{x_i + c} / \sum_{j=1}^{n} e^{x_j + c}`.
A checked step that shows it is checked against that definition, so what
the page prints is what SymPy verified.
"""

from __future__ import annotations

import sympy as sp
from sympy.core.symbol import Str
from sympy.printing.precedence import PRECEDENCE

from attention_scaling.proofs.engine import (
    THEOREM_NAMES,
    Proof,
    theorem,
    argue,
    check,
    check_inequality,
    check_nonzero,
    check_solutions,
)

__all__ = [
    "ForIndices",
    "SoftmaxWeight",
    "softmax_jacobian_theorem",
    "softmax_shift_invariance",
    "stable_softmax_bounds",
]

_n = sp.Symbol("n", integer=True, positive=True)
_x = sp.IndexedBase("x", real=True)
_shift = sp.Symbol("c", real=True)
_top = sp.Symbol("m", real=True)  # the largest score, max_j x_j
_i, _j, _k = sp.symbols("i j k", integer=True, positive=True)


class SoftmaxWeight(sp.Expr):
    r"""The weight :math:`\operatorname{softmax}_i(x + c\mathbf{1})`, unevaluated; ``doit`` gives its definition.

    Parameters
    ----------
    logits : sympy.IndexedBase or tuple
        The scores: an ``IndexedBase`` :math:`x` of symbolic length, or the
        entries of a score vector of fixed length.
    index : int or sympy.Expr
        Which weight, :math:`i \in \{1, \dots, n\}`.
    length : int or sympy.Expr, optional
        The length :math:`n` of an ``IndexedBase``; ignored for a tuple.
    shift : sympy.Expr, optional
        A constant :math:`c` added to every score (default 0).
    name : str, optional
        Print the weight as :math:`\mathrm{name}_i` (for instance ``"p"``)
        instead of the operator.

    Notes
    -----
    ``doit`` returns :math:`e^{x_i + c} / \sum_{j=1}^{n} e^{x_j + c}` (the sum
    carried out when :math:`n` is a number), so a :func:`check` that shows a
    weight checks the definition, not a name.

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs.softmax import SoftmaxWeight
    >>> x, n, c = sp.IndexedBase("x"), sp.Symbol("n"), sp.Symbol("c")
    >>> i = sp.Symbol("i")
    >>> sp.latex(SoftmaxWeight(x, i, n, shift=c))
    '\\operatorname{softmax}_{i}\\left(x + c \\mathbf{1}\\right)'
    >>> SoftmaxWeight(x, i, n, shift=c).doit()
    exp(c + x[i])/Sum(exp(c + x[j]), (j, 1, n))
    >>> sp.latex(SoftmaxWeight((sp.Rational(1, 2), 0), 1))
    '\\operatorname{softmax}_{1}\\left(\\left[\\frac{1}{2}, 0\\right]\\right)'
    >>> sp.latex(SoftmaxWeight(x, i, n, name="p"))
    'p_{i}'
    """

    is_commutative = True

    def __new__(cls, logits, index, length=None, shift=0, name: str = ""):
        if isinstance(logits, sp.IndexedBase):
            if length is None:
                raise ValueError("SoftmaxWeight of an IndexedBase needs its length n")
            length = sp.sympify(length)
        else:
            logits = sp.Tuple(*logits)
            length = sp.Integer(len(logits))
        name = name if isinstance(name, Str) else Str(name)
        return sp.Expr.__new__(cls, logits, sp.sympify(index), length, sp.sympify(shift), name)

    @property
    def free_symbols(self):
        # Those of the definition: the weight depends on every score, as its derivatives do.
        return self.doit(deep=False).free_symbols

    @property
    def logits(self):
        return self.args[0]

    @property
    def index(self):
        return self.args[1]

    @property
    def length(self):
        return self.args[2]

    @property
    def shift(self):
        return self.args[3]

    def doit(self, **hints):
        logits, index, length, shift, _ = self.args
        if hints.get("deep", True):
            index, shift = index.doit(**hints), shift.doit(**hints)
        if isinstance(logits, sp.Tuple):
            if not (index.is_integer and index.is_number and 1 <= index <= len(logits)):
                raise ValueError(f"index must be 1..{len(logits)} for a score vector of that length; got {index}")
            return sp.exp(logits[int(index) - 1] + shift) / sp.Add(*(sp.exp(entry + shift) for entry in logits))
        # The summation index must not be the weight's own index.
        j = _j if index != _j else sp.Symbol("l", integer=True, positive=True)
        weight = sp.exp(logits[index] + shift) / sp.Sum(sp.exp(logits[j] + shift), (j, 1, length))
        return weight.doit(**hints) if hints.get("deep", True) and length.is_number else weight

    def _latex(self, printer):
        logits, index, _, shift, name = self.args
        if name.name:
            return f"{name.name}_{{{printer._print(index)}}}"
        if isinstance(logits, sp.Tuple):
            argument = r"\left[%s\right]" % ", ".join(printer._print(entry) for entry in logits)
        else:
            argument = printer._print(logits.label)
        if shift != 0:
            sign, size = ("-", -shift) if shift.could_extract_minus_sign() else ("+", shift)
            argument += f" {sign} {printer.parenthesize(size, PRECEDENCE['Mul'])} \\mathbf{{1}}"
        return r"\operatorname{softmax}_{%s}\left(%s\right)" % (printer._print(index), argument)


class ForIndices(sp.Expr):
    r"""An expression about indexed scores, for integer indices in :math:`\{1, \dots, n\}`; prints as the expression.

    ``doit`` carries out the expression, then uses the range of each index
    (``sympy.refine`` with :math:`1 \le \text{index} \le n`; this removes the
    ``Piecewise`` that a sum of Kronecker deltas leaves for an index that
    might lie outside the sum) and renames every summation index canonically,
    so that :math:`\sum_k e^{x_k}` and :math:`\sum_j e^{x_j}` are the same sum.
    Both are facts about the symbols, stated in the step's reason.

    Parameters
    ----------
    expr : sympy.Expr
        What the page shows.
    indices : tuple of sympy.Symbol
        The free integer indices, each in :math:`1, \dots, n`.
    length : sympy.Expr
        :math:`n`.

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs.softmax import ForIndices
    >>> x = sp.IndexedBase("x")
    >>> n, j, k = sp.symbols("n j k", integer=True, positive=True)
    >>> total = sp.Sum(x[j] * sp.KroneckerDelta(j, k), (j, 1, n))
    >>> total.doit()
    Piecewise((x[k], k <= n), (0, True))
    >>> ForIndices(total, (k,), n).doit()
    x[k]
    >>> sp.latex(ForIndices(total, (k,), n)) == sp.latex(total)
    True
    """

    is_commutative = True

    def __new__(cls, expr, indices, length):
        return sp.Expr.__new__(cls, sp.sympify(expr), sp.Tuple(*indices), sp.sympify(length))

    def doit(self, **hints):
        expr, indices, length = self.args
        inside = sp.And(*(sp.Q.le(index, length) & sp.Q.ge(index, 1) for index in indices))
        return sp.refine(expr.doit(**hints).doit(**hints), inside).as_dummy()

    def _latex(self, printer):
        return printer._print(self.args[0])


def _exponent(name: str, **assumptions) -> sp.Symbol:
    r"""A real number written as an expression in the page's notation, such as :math:`(x_j - m)`.

    The name is LaTeX between braces, which SymPy prints as it stands; the
    parentheses keep it one quantity wherever it is printed.
    """
    return sp.Symbol("{\\left(%s\\right)}" % name, real=True, **assumptions)


@theorem("thm-softmax-shift-invariance", "Softmax ignores shifts")
def softmax_shift_invariance() -> Proof:
    r"""Softmax ignores a common shift of its inputs, and depends on differences, not ratios.

    :math:`\operatorname{softmax}(x + c\mathbf{1}) = \operatorname{softmax}(x)`
    for every real :math:`c` and a symbolic length :math:`n`, via
    :math:`\operatorname{softmax}_i(x) = 1 / \sum_j e^{x_j - x_i}`; checked
    again with the sum written out for :math:`n = 2, \dots, 6`. A shift
    changes every ratio :math:`x_1 / x_2` and leaves the output alone; a
    temperature changes the output. Every step is checked by SymPy.

    Examples
    --------
    >>> from attention_scaling.proofs import softmax_shift_invariance
    >>> proof = softmax_shift_invariance()
    >>> proof.statement
    '\\operatorname{softmax}_{i}\\left(x + c \\mathbf{1}\\right) = \\operatorname{softmax}_{i}\\left(x\\right)'
    >>> proof.counts(), len(proof.cross_checks)
    ({'checked': 5, 'cited': 0, 'argued': 0, 'measured': 0}, 5)
    """
    label = "thm-softmax-shift-invariance"
    i, j = _i, _j
    softmax_i = SoftmaxWeight(_x, i, _n)
    shifted = SoftmaxWeight(_x, i, _n, shift=_shift)
    differences = 1 / sp.Sum(sp.exp(_x[j] - _x[i]), (j, 1, _n))
    x1, x2 = sp.symbols("x_1 x_2", real=True)
    steps = (
        check(label, softmax_i, differences, reason="divide through by the numerator"),
        check(label, shifted, differences, reason="the shift cancels in every difference of scores"),
        check(label, shifted, softmax_i, reason="so the weights are equal"),
        check(
            label,
            (x1 + _shift) / (x2 + _shift) - x1 / x2,
            _shift * (x2 - x1) / (x2 * (x2 + _shift)),
            reason="yet a ratio of scores moves, unless $c = 0$ or the scores are equal",
        ),
        check_nonzero(
            label,
            SoftmaxWeight((sp.Rational(1, 2), 0), 1),
            SoftmaxWeight((1, 0), 1),
            reason="a temperature of 2 halves the scores: the weights change",
        ),
    )
    cross_checks = tuple(
        check(
            label,
            SoftmaxWeight(_x, i, size, shift=_shift),
            sp.exp(_x[i]) / sp.Add(*(sp.exp(_x[index]) for index in range(1, size + 1))),
            reason=f"$n = {size}$, the sum written out",
        )
        for size in range(2, 7)
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("x real, of any length n", "c a real constant"),
        steps,
        cross_checks,
        results=(2,),
    )


@theorem("thm-softmax-jacobian", "The softmax Jacobian")
def softmax_jacobian_theorem() -> Proof:
    r"""The Jacobian of softmax and how it vanishes as softmax saturates.

    With :math:`p = \operatorname{softmax}(x)` for a symbolic length
    :math:`n`: :math:`\partial p_i / \partial x_k = p_i(\delta_{ik} - p_k)`;
    each row sums to 0; a diagonal entry :math:`p_i(1 - p_i) = \tfrac14 -
    (p_i - \tfrac12)^2` is at most :math:`\tfrac14` (``solveset`` finds no
    real :math:`p_i` above it), attained only at :math:`p_i = \tfrac12`; and
    for two scores :math:`[t, 0]`, every entry tends to 0 as :math:`t \to
    \infty`. The statement is the Jacobian and its row sum. Every step is
    checked by SymPy.

    Examples
    --------
    >>> from attention_scaling.proofs import softmax_jacobian_theorem
    >>> proof = softmax_jacobian_theorem()
    >>> proof.statement
    '\\frac{\\partial}{\\partial {x}_{k}} p_{i} = \\left(\\delta_{i k} - p_{k}\\right) p_{i}, \\qquad \\sum_{k=1}^{n} \\frac{\\partial}{\\partial {x}_{k}} p_{i} = 0'
    >>> proof.counts()
    {'checked': 10, 'cited': 0, 'argued': 0, 'measured': 0}
    """
    label = "thm-softmax-jacobian"
    i, k = _i, _k

    def p(index):
        return SoftmaxWeight(_x, index, _n, name="p")

    def within(expr):
        return ForIndices(expr, (i, k), _n)

    entry = sp.Derivative(p(i), _x[k])
    row_sum = sp.Sum(entry, (k, 1, _n))
    total = sp.Sum(p(k), (k, 1, _n))
    prob = sp.Symbol("p_i", real=True)
    half, quarter = sp.Rational(1, 2), sp.Rational(1, 4)
    t = sp.Symbol("t", real=True)
    p1, p2 = (SoftmaxWeight((t, 0), index, name="p") for index in (1, 2))  # p = softmax([t, 0])
    steps = (
        check(label, within(entry), within(p(i) * (sp.KroneckerDelta(i, k) - p(k))), reason=r"quotient rule; $i, k \in \{1, \dots, n\}$"),
        check(label, within(row_sum), within(p(i) - p(i) * total), reason="sum over $k$"),
        check(label, within(total), 1, reason="the weights sum to 1"),
        check(label, within(row_sum), 0, reason="every row sums to 0"),
        check(label, prob * (1 - prob), quarter - (prob - half) ** 2, reason="a diagonal entry: complete the square"),
        check_solutions(label, prob, prob * (1 - prob) > quarter, sp.S.Reals, sp.S.EmptySet, reason=r"so it is at most $\tfrac{1}{4}$"),
        check_solutions(
            label, prob, sp.Eq(prob * (1 - prob), quarter), sp.Interval(0, 1), sp.FiniteSet(half), reason=r"equality only at $\tfrac{1}{2}$"
        ),
        check(label, sp.Limit(p1 * (1 - p1), t, sp.oo), 0, reason=r"$p = \operatorname{softmax}([t, 0])$; first diagonal entry"),
        check(label, sp.Limit(-p1 * p2, t, sp.oo), 0, reason="both off-diagonal entries"),
        check(label, sp.Limit(p2 * (1 - p2), t, sp.oo), 0, reason="second diagonal entry"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("p = softmax(x) for real x of any length n", "i, k in 1..n"),
        steps,
        results=(0, 3),
    )


@theorem("thm-stable-softmax-bounds", "Max-subtracted softmax stays in range", uses=("thm-softmax-shift-invariance",))
def stable_softmax_bounds() -> Proof:
    r"""After subtracting the maximum, every term of softmax lies in (0, 1], the sum in [1, n], every weight in (0, 1].

    With :math:`m = \max_j x_j`, :math:`\operatorname{softmax}_i(x) =
    e^{x_i - m} / D` with :math:`D = \sum_{j=1}^n e^{x_j - m}` (for a symbolic
    length :math:`n`): this is the statement. ``solveset`` decides that no
    exponent :math:`x_j - m \le 0` has :math:`e^{x_j - m} > 1` and that
    :math:`a_j = e^{m - x_j} - 1` is never negative; SymPy's sign rules, that
    every term is positive. One step is *argued*, not checked: numbering the
    maximum last and writing every other term as :math:`1 / (1 + a_j)` gives
    :math:`D = 1 + \sum_{j=1}^{n-1} 1/(1 + a_j)`. From that form, SymPy's sign
    rules decide :math:`1 \le D \le n` and :math:`0 < e^{x_i - m}/D \le 1` for
    :math:`n \ge 2` (for :math:`n = 1`, :math:`D = 1`). The cross-checks redo
    the bounds on :math:`D` for :math:`n = 2, \dots, 6` with every exponent
    other than the maximum's written as :math:`-\ln(1 + a_j)`, :math:`a_j \ge
    0`, which covers every negative exponent.

    Examples
    --------
    >>> from attention_scaling.proofs import stable_softmax_bounds
    >>> proof = stable_softmax_bounds()
    >>> [step.relation for step in proof.steps]
    ['=', '=', '>', '=', '=', '=', '\\ge', '=', '\\le', '\\le', '>']
    >>> proof.counts()
    {'checked': 10, 'cited': 0, 'argued': 1, 'measured': 0}
    >>> len(proof.cross_checks)
    10
    """
    label = "thm-stable-softmax-bounds"
    i, j = _i, _j
    exponent = _exponent("x_j - m")  # x_j - m, at most 0 since m is the maximum
    others = sp.Symbol("{n - 1}", integer=True, positive=True)  # the terms besides the maximum's, n >= 2
    a = sp.IndexedBase("a", nonnegative=True)  # a_j = e^{m - x_j} - 1 >= 0
    x_i = sp.Symbol("x_i", real=True)
    denominator = sp.Sum(sp.exp(_x[j] - _top), (j, 1, _n))
    others_form = 1 + sp.Sum(1 / (1 + a[j]), (j, 1, others))
    rearranged = others + 1 - sp.Sum(a[j] / (1 + a[j]), (j, 1, others))
    weight = (1 / (1 + a[i])) / others_form  # a term 1/(1 + a_i) over D; a_i = 0 for the maximum
    steps = (
        check(
            label,
            SoftmaxWeight(_x, i, _n),
            sp.exp(_x[i] - _top) / denominator,
            reason="shift invariance with $c = -m$",
        ),
        check_solutions(
            label, exponent, sp.exp(exponent) > 1, sp.Interval(-sp.oo, 0), sp.S.EmptySet, reason="no term exceeds 1"
        ),
        check_inequality(label, sp.exp(exponent), 0, ">", reason="no term is 0 or less"),
        check(label, sp.Subs(sp.exp(x_i - _top), x_i, _top), 1, reason="the maximum's own term"),
        check_solutions(
            label,
            exponent,
            sp.exp(-exponent) - 1 < 0,
            sp.Interval(-sp.oo, 0),
            sp.S.EmptySet,
            reason="so $a = e^{m - x} - 1$ is at least 0 for every score $x$",
        ),
        argue(
            label,
            denominator,
            others_form,
            "number the maximum last (its term is 1) and write each other term as $1/(1 + a)$",
        ),
        check_inequality(label, others_form, 1, r"\ge", reason="every term $1/(1 + a) > 0$"),
        check(label, others_form, rearranged, reason="$1/(1 + a) = 1 - a/(1 + a)$"),
        check_inequality(label, rearranged, others + 1, r"\le", reason=r"every $a/(1 + a) \ge 0$: $D$ is at most $n$"),
        check_inequality(label, weight, 1, r"\le", reason="a weight: a term $1/(1 + a)$ over $D$"),
        check_inequality(label, weight, 0, ">", reason="no $0/0$"),
    )
    cross_checks = []
    for size in range(2, 7):
        spares = sp.symbols(f"a_1:{size}", nonnegative=True)
        # exp(-ln(1 + a)) = 1/(1 + a): every term in (0, 1], the maximum's exactly 1.
        total = sp.Integer(1) + sp.Add(*(sp.exp(-sp.log(1 + spare)) for spare in spares))
        cross_checks.append(check_inequality(label, total, 1, r"\ge", reason=f"$n = {size}$"))
        cross_checks.append(check_inequality(label, total, size, r"\le", reason=f"$n = {size}$"))
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("x real, of any length n", "m = max_j x_j", "n - 1 >= 1 in the bounds on D (for n = 1, D = 1)"),
        steps,
        tuple(cross_checks),
        results=(0,),
    )
