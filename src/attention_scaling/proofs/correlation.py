r"""Theorems of the chapter "Correlated queries and keys, and μP" (``docs/correlation.md``).

Under the correlated model of
:func:`~attention_scaling.proofs.correlated_dot_product` (zero means, unit
variances, correlation :math:`\rho` within each coordinate pair): what
dividing by :math:`\sqrt{d_k}` or by :math:`d_k` does to the logits, and how
the logits grow with the square of a gain on queries and keys.
"""

from __future__ import annotations

import sympy as sp

from attention_scaling.proofs.engine import (
    THEOREM_NAMES,
    E,
    Proof,
    ProofError,
    Var,
    theorem,
    check,
    cite,
)
from attention_scaling.proofs.variance import _correlated_dot_product, d_k, rho

__all__ = ["CHEBYSHEV", "correlated_scaling_limits", "logit_norm_growth"]

#: Where Chebyshev's inequality, Pr(|X - E X| >= t) <= Var X / t^2, is stated and proved: L. Wasserman,
#: All of Statistics, Springer (2004), Theorem 4.2. Short, as the page's marker shows it.
CHEBYSHEV = ("Wasserman (2004)", "Thm 4.2")


class _Probability(sp.Function):
    r""":math:`\Pr(\cdot)` of an event, for display only: a step that holds it is cited, never checked."""

    nargs = 1

    def _latex(self, printer, exp=None):
        tex = r"\Pr\left(%s\right)" % printer._print(self.args[0])
        return tex if exp is None else r"%s^{%s}" % (tex, exp)


class _Gain(sp.Function):
    r""":math:`g_\sigma(c)`: the gain :math:`g > 0` at which the logit :math:`c\,(gq) \cdot (gk)` has standard deviation :math:`\sigma`.

    ``doit`` solves :math:`\sqrt{\operatorname{Var}[g^2 c\, q \cdot k]} = \sigma`
    for :math:`g` on :math:`(0, \infty)` under the correlated model, and
    raises :class:`ProofError` unless there is exactly one root.
    """

    nargs = 1

    def doit(self, deep=True, **hints):
        (scale,) = self.args
        gain, level = sp.Symbol("g", positive=True), sp.Symbol(r"\sigma", positive=True)
        rv, *_, dot = _correlated_dot_product()
        spread = sp.sqrt(rv.evaluate(Var(gain**2 * scale * dot)))
        roots = sp.solveset(sp.Eq(spread, level), gain, sp.Interval.open(0, sp.oo))
        if not isinstance(roots, sp.FiniteSet) or len(roots) != 1:
            raise ProofError(f"thm-logit-norm-growth: the gain that brings the logit at scale {scale} "
                             f"to level sigma is {roots}, not one value")
        (root,) = roots
        return root

    def _latex(self, printer, exp=None):
        tex = r"g_{\sigma}\left(%s\right)" % printer._print(self.args[0])
        return tex if exp is None else r"%s^{%s}" % (tex, exp)


class _Parenthesised(sp.UnevaluatedExpr):
    """A product kept as written and printed in parentheses, such as :math:`(g q_i)`; ``doit`` multiplies it out."""

    def _latex(self, printer, exp=None):
        tex = r"\left(%s\right)" % printer._print(self.args[0])
        return tex if exp is None else r"%s^{%s}" % (tex, exp)


@theorem("thm-correlated-scaling-limits", "Scaled logits of correlated queries and keys",
          uses=("thm-correlated-dot-product",))
def correlated_scaling_limits() -> Proof:
    r"""What :math:`1/\sqrt{d_k}` and :math:`1/d_k` do to the logits of correlated queries and keys.

    Under the assumptions of :func:`correlated_dot_product` (each pair
    :math:`(q_i, k_i)` with mean 0, unit variances and correlation
    :math:`\rho`), dividing by :math:`\sqrt{d_k}` leaves the logit a mean
    :math:`\rho\sqrt{d_k}`, which grows without bound for :math:`\rho > 0`,
    and a variance :math:`1 + \rho^2` that does not depend on :math:`d_k`.
    Dividing by :math:`d_k` gives mean :math:`\rho` and variance
    :math:`(1 + \rho^2)/d_k \to 0`, and Chebyshev's inequality turns the
    vanishing variance into concentration (a weak law of large numbers):

    .. math::

       \Pr\left(\left|\frac{q \cdot k}{d_k} - \rho\right| \ge \varepsilon\right)
       \le \frac{1 + \rho^2}{d_k\,\varepsilon^2} \to 0 .

    Chebyshev's inequality itself is cited (``CHEBYSHEV``), not
    re-derived; SymPy checks the moments, the bound's right-hand side and
    every limit. The unbounded mean is checked as the limit of its reciprocal,
    :math:`1/(\rho\sqrt{d_k}) \to 0` for :math:`\rho > 0`.

    The theorem states steps 0 and 2 (divided by :math:`\sqrt{d_k}`); the
    page shows steps 3 and 4 (divided by :math:`d_k`) and 6 to 8 (the
    concentration) as its other two equations.

    Examples
    --------
    >>> from attention_scaling.proofs import correlated_scaling_limits
    >>> proof = correlated_scaling_limits()
    >>> proof.statement
    '\\mathbb{E}\\left[\\frac{q \\cdot k}{\\sqrt{d_{k}}}\\right] = \\sqrt{d_{k}} \\rho, \\qquad \\operatorname{Var}\\left[\\frac{q \\cdot k}{\\sqrt{d_{k}}}\\right] = \\rho^{2} + 1'
    >>> proof.counts()
    {'checked': 8, 'cited': 1, 'argued': 0, 'measured': 0}
    """
    label = "thm-correlated-scaling-limits"
    rv, *_, dot = _correlated_dot_product()
    epsilon = sp.Symbol(r"\varepsilon", positive=True)
    positive = sp.Symbol("rho", positive=True)  # the unbounded mean needs rho > 0
    bound = (1 + rho**2) / (d_k * epsilon**2)
    steps = (
        check(label, E(dot / sp.sqrt(d_k)), rho * sp.sqrt(d_k), rv, "linearity"),
        check(label, sp.Limit(1 / (positive * sp.sqrt(d_k)), d_k, sp.oo), 0, reason=r"so the mean $\to \infty$"),
        check(label, Var(dot / sp.sqrt(d_k)), 1 + rho**2, rv, "scaling"),
        check(label, E(dot / d_k), rho, rv, "linearity"),
        check(label, Var(dot / d_k), (1 + rho**2) / d_k, rv, "scaling"),
        check(label, sp.Limit((1 + rho**2) / d_k, d_k, sp.oo), 0, reason="spread vanishes"),
        cite(label, _Probability(sp.Ge(sp.Abs(dot / d_k - rho), epsilon)), Var(dot / d_k) / epsilon**2, *CHEBYSHEV,
             relation=r"\le"),
        check(label, Var(dot / d_k) / epsilon**2, bound, rv, "line 5"),
        check(label, sp.Limit(bound, d_k, sp.oo), 0, reason=r"any $\varepsilon > 0$"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        (
            "each (q_i, k_i) jointly Gaussian with mean 0, unit variances and correlation rho",
            "pairs independent across coordinates",
            "rho > 0 for the unbounded mean",
        ),
        steps,
        results=(0, 2),
    )


@theorem("thm-logit-norm-growth", "Logits grow with the square of the norms", uses=("thm-correlated-dot-product",))
def logit_norm_growth() -> Proof:
    r"""Multiplying queries and keys by a gain :math:`g` multiplies every logit by :math:`g^2`, whatever the scale.

    For any constant scale :math:`c` and any vectors,
    :math:`c\,(g q) \cdot (g k) = g^2\, c\, q \cdot k`: an identity, sample by
    sample, with no distribution assumed. Under the correlated model of
    :func:`correlated_dot_product`, the standard deviation of the logit is
    :math:`g^2\sqrt{1 + \rho^2}` with :math:`c = 1/\sqrt{d_k}` and
    :math:`g^2\sqrt{(1 + \rho^2)/d_k}` with :math:`c = 1/d_k`; the gain
    :math:`g_\sigma(c)` that brings it to a level :math:`\sigma` is
    :math:`(\sigma^2/(1+\rho^2))^{1/4}` in the first case and :math:`d_k^{1/4}`
    times that in the second (SymPy's ``solveset`` finds each, when the
    steps are checked). The division by :math:`d_k` postpones the growth by
    a constant factor in the gain; it does not remove it.

    The theorem states step 0, the identity; the page shows step 6, the
    ratio of the gains, as its second equation.

    Examples
    --------
    >>> from attention_scaling.proofs import logit_norm_growth
    >>> print(logit_norm_growth().steps[-1].rhs)
    d_k**(1/4)
    """
    label = "thm-logit-norm-growth"
    i = sp.Symbol("i", integer=True, positive=True)
    q, k = sp.IndexedBase("q", real=True), sp.IndexedBase("k", real=True)
    gain, scale = sp.symbols("g c", positive=True)
    level = sp.Symbol(r"\sigma", positive=True)
    rv, *_, dot = _correlated_dot_product()
    gained = [_Parenthesised(gain * q[i]), _Parenthesised(gain * k[i])]
    steps = (
        check(
            label,
            sp.Sum(scale * gained[0] * gained[1], (i, 1, d_k)),
            gain**2 * scale * sp.Sum(q[i] * k[i], (i, 1, d_k)),
            reason="any $c$, $q$, $k$",
        ),
        check(label, E(gain**2 * dot / sp.sqrt(d_k)), gain**2 * rho * sp.sqrt(d_k), rv, r"$1/\sqrt{d_k}$ scale"),
        check(label, sp.sqrt(Var(gain**2 * dot / sp.sqrt(d_k))), gain**2 * sp.sqrt(1 + rho**2), rv, r"s.d., $1/\sqrt{d_k}$ scale"),
        check(label, E(gain**2 * dot / d_k), gain**2 * rho, rv, "$1/d_k$ scale"),
        check(label, sp.sqrt(Var(gain**2 * dot / d_k)), gain**2 * sp.sqrt((1 + rho**2) / d_k), rv, "s.d., $1/d_k$ scale"),
        check(label, _Gain(1 / sp.sqrt(d_k)), sp.sqrt(level) / (1 + rho**2) ** sp.Rational(1, 4), reason=r"the gain at which the s.d. is $\sigma$"),
        check(label, _Gain(1 / d_k) / _Gain(1 / sp.sqrt(d_k)), d_k ** sp.Rational(1, 4), reason="the same, $1/d_k$ scale"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        (
            "q and k multiplied by the same gain g > 0, scale c a positive constant",
            "for the moments: each (q_i, k_i) jointly Gaussian with mean 0, unit variances and correlation rho,"
            " as in the correlated model",
        ),
        steps,
        results=(0,),
    )
