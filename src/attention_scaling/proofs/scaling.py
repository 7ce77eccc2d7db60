r"""Theorem of the chapter "Why √d_k, and why not d_k" (``docs/scaling.md``).

Dividing a random variable by a constant divides its variance by the
square, and :math:`\sqrt{d_k}` is the only positive constant that gives the
dot product of the standard case unit variance.
"""

from __future__ import annotations

import sympy as sp

from attention_scaling.proofs.engine import (
    THEOREM_NAMES,
    E,
    Proof,
    RandomVariables,
    Var,
    theorem,
    check,
    check_solutions,
)
from attention_scaling.proofs.variance import _dot_product, d_k

__all__ = ["scaled_variance"]


@theorem("thm-scaled-variance", "Scaling a random variable", uses=("thm-dot-product-variance",))
def scaled_variance() -> Proof:
    r"""Dividing a random variable by a constant divides its variance by the square.

    :math:`\operatorname{Var}[X/c] = \operatorname{Var}[X]/c^2` for every
    constant :math:`c \neq 0` and every :math:`X` with finite variance. For the
    dot product of the standard case, :math:`c = \sqrt{d_k}` is the only
    positive :math:`c` with :math:`\operatorname{Var}[q \cdot k / c] = 1`, and
    dividing by :math:`d_k` leaves variance :math:`1/d_k`.

    Examples
    --------
    >>> from attention_scaling.proofs import scaled_variance
    >>> proof = scaled_variance()
    >>> proof.statement
    '\\operatorname{Var}\\left[\\frac{X}{c}\\right] = \\frac{\\operatorname{Var}\\left[X\\right]}{c^{2}}'
    >>> proof.steps[4].latex()
    '\\left\\{c\\; \\middle|\\; c \\in \\left(0, \\infty\\right) \\wedge \\frac{d_{k}}{c^{2}} = 1 \\right\\} = \\left\\{\\sqrt{d_{k}}\\right\\}'
    >>> proof.counts()
    {'checked': 7, 'cited': 0, 'argued': 0, 'measured': 0}
    """
    label = "thm-scaled-variance"
    c = sp.Symbol("c", real=True, nonzero=True)
    rv = RandomVariables()
    X = rv.add("X")
    *_, dot = _dot_product(rv, 0, 1, 0, 1)
    positive_c = sp.Symbol("c", positive=True)
    steps = (
        check(label, E(X / c), E(X) / c, rv, "linearity"),
        check(label, E((X / c) ** 2), E(X**2) / c**2, rv, "linearity"),
        check(label, Var(X / c), Var(X) / c**2, rv, "definition of variance"),
        check(label, Var(dot / positive_c), d_k / positive_c**2, rv, "Var[q.k] by the dot-product theorem"),
        check_solutions(
            label,
            positive_c,
            sp.Eq(d_k / positive_c**2, 1),
            sp.Interval.open(0, sp.oo),
            sp.FiniteSet(sp.sqrt(d_k)),
            reason="the only positive root",
        ),
        check(label, Var(dot / sp.sqrt(d_k)), 1, rv, "the scale that restores unit variance"),
        check(label, Var(dot / d_k), 1 / d_k, rv, "dividing by the dimension overshoots"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("X has finite variance", "c is a non-zero constant"),
        steps,
        results=(2,),
    )
