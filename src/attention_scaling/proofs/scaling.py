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
    ProofError,
    RandomVariables,
    Step,
    Var,
    _theorem,
    check,
)
from attention_scaling.proofs.variance import _dot_product, d_k

__all__ = ["scaled_variance"]


@_theorem("thm-scaled-variance", "Scaling a random variable")
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
    >>> scaled_variance().steps[2].latex()
    '\\operatorname{Var}\\left[\\frac{X}{c}\\right] = \\frac{\\operatorname{Var}\\left[X\\right]}{c^{2}}'
    """
    label = "thm-scaled-variance"
    c = sp.Symbol("c", real=True, nonzero=True)
    rv = RandomVariables()
    X = rv.add("X")
    *_, dot = _dot_product(rv, 0, 1, 0, 1)
    positive_c = sp.Symbol("c", positive=True)
    solutions = sp.solveset(sp.Eq(rv.evaluate(Var(dot / positive_c)), 1), positive_c, sp.Interval.open(0, sp.oo))
    if solutions != sp.FiniteSet(sp.sqrt(d_k)):
        raise ProofError(f"{label}: the positive solutions of Var[q.k/c] = 1 are {solutions}, not {{sqrt(d_k)}}")
    steps = (
        check(label, E(X / c), E(X) / c, rv, "linearity"),
        check(label, E((X / c) ** 2), E(X**2) / c**2, rv, "linearity"),
        check(label, Var(X / c), Var(X) / c**2, rv, "definition of variance"),
        check(label, Var(dot / positive_c), d_k / positive_c**2, rv, "with Var[q.k] = d_k"),
        Step(sp.Symbol("c"), sp.sqrt(d_k), "the only positive root of d_k / c² = 1"),
        check(label, Var(dot / sp.sqrt(d_k)), 1, rv),
        check(label, Var(dot / d_k), 1 / d_k, rv, "dividing by d_k overshoots"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("X has finite variance", "c is a non-zero constant"),
        steps,
        result_index=2,
    )
