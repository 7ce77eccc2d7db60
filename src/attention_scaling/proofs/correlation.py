r"""Theorems of the chapter "Correlated queries and keys, and μP" (``docs/correlation.md``).

Under the correlated model of
:func:`~attention_scaling.proofs.correlated_dot_product`: what dividing by
:math:`\sqrt{d_k}` or by :math:`d_k` does to the logits, and how the logits
grow with the square of a gain on queries and keys.
"""

from __future__ import annotations

import sympy as sp

from attention_scaling.proofs.engine import THEOREM_NAMES, E, Proof, ProofError, Step, Var, _theorem, check
from attention_scaling.proofs.variance import _correlated_dot_product, d_k, rho

__all__ = ["correlated_scaling_limits", "logit_norm_growth"]


@_theorem("thm-correlated-scaling-limits", "Scaled logits of correlated queries and keys")
def correlated_scaling_limits() -> Proof:
    r"""What :math:`1/\sqrt{d_k}` and :math:`1/d_k` do to the logits of correlated queries and keys.

    Under the assumptions of :func:`correlated_dot_product`, dividing by
    :math:`\sqrt{d_k}` leaves the logit a mean :math:`\rho\sqrt{d_k}`, which
    grows without bound for :math:`\rho > 0`, and a variance
    :math:`1 + \rho^2` that does not depend on :math:`d_k`. Dividing by
    :math:`d_k` gives mean :math:`\rho` and variance
    :math:`(1 + \rho^2)/d_k \to 0`, and Chebyshev's inequality turns the
    vanishing variance into concentration (a weak law of large numbers):

    .. math::

       \Pr\left(\left|\frac{q \cdot k}{d_k} - \rho\right| \ge \varepsilon\right)
       \le \frac{1 + \rho^2}{d_k\,\varepsilon^2} \to 0 .

    Chebyshev's inequality itself is quoted, not re-derived; SymPy checks
    the moments, the bound's right-hand side and every limit.

    Examples
    --------
    >>> from attention_scaling.proofs import correlated_scaling_limits
    >>> correlated_scaling_limits().statement
    '\\operatorname{Var}\\left[\\frac{q \\cdot k}{d_{k}}\\right] = \\frac{\\rho^{2} + 1}{d_{k}}'
    """
    label = "thm-correlated-scaling-limits"
    rv, *_, dot = _correlated_dot_product()
    epsilon = sp.Symbol("epsilon", positive=True)
    positive = sp.Symbol("rho", positive=True)  # the limit to infinity needs rho > 0
    root_mean = (rho * sp.sqrt(d_k)).subs(rho, positive)
    growth = sp.limit(root_mean, d_k, sp.oo)
    if growth != sp.oo:
        raise ProofError(f"{label}: rho*sqrt(d_k) tends to {growth} for rho > 0, not to infinity")
    bound = (1 + rho**2) / (d_k * epsilon**2)
    chebyshev = check(label, Var(dot / d_k) / epsilon**2, bound, rv)
    steps = (
        check(label, E(dot / sp.sqrt(d_k)), rho * sp.sqrt(d_k), rv, "linearity"),
        Step(sp.Limit(root_mean, d_k, sp.oo), sp.oo, "rho > 0",
             shown=r"\lim_{d_k \to \infty} \rho \sqrt{d_k} = \infty"),
        check(label, Var(dot / sp.sqrt(d_k)), 1 + rho**2, rv, "scaling"),
        check(label, E(dot / d_k), rho, rv, "linearity"),
        check(label, Var(dot / d_k), (1 + rho**2) / d_k, rv, "scaling"),
        check(label, sp.Limit((1 + rho**2) / d_k, d_k, sp.oo), 0, reason="spread vanishes"),
        Step(
            chebyshev.lhs,
            chebyshev.rhs,
            reason="Chebyshev",
            relation=r"\le",
            shown=r"\Pr\left(\left|\frac{q \cdot k}{d_k} - \rho\right| \ge \epsilon\right) \le "
            r"\frac{\operatorname{Var}[q \cdot k / d_k]}{\epsilon^2} = \frac{\rho^{2} + 1}{d_{k}\,\epsilon^{2}}",
        ),
        check(label, sp.Limit(bound, d_k, sp.oo), 0, reason="any epsilon > 0"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        (
            "each (q_i, k_i) jointly Gaussian, unit variances, correlation rho",
            "pairs independent across coordinates",
            "rho > 0 for the unbounded mean",
        ),
        steps,
        result_index=4,
    )


@_theorem("thm-logit-norm-growth", "Logits grow with the square of the norms")
def logit_norm_growth() -> Proof:
    r"""Multiplying queries and keys by a gain :math:`g` multiplies every logit by :math:`g^2`, whatever the scale.

    For any constant scale :math:`c` and any vectors,
    :math:`c\,(g q) \cdot (g k) = g^2\, c\, q \cdot k`: an identity, sample by
    sample, with no distribution assumed. Under the correlated model of
    :func:`correlated_dot_product`, the standard deviation of the logit is
    :math:`g^2\sqrt{1 + \rho^2}` with :math:`c = 1/\sqrt{d_k}` and
    :math:`g^2\sqrt{(1 + \rho^2)/d_k}` with :math:`c = 1/d_k`; to bring it to
    a level :math:`s`, the gain must reach :math:`(s^2/(1+\rho^2))^{1/4}` in
    the first case and :math:`d_k^{1/4}` times that in the second. The
    division by :math:`d_k` postpones the growth by a constant factor in the
    gain; it does not remove it.

    Examples
    --------
    >>> from attention_scaling.proofs import logit_norm_growth
    >>> print(logit_norm_growth().result.rhs)
    d_k**(1/4)
    """
    label = "thm-logit-norm-growth"
    i = sp.Symbol("i", integer=True, positive=True)
    q, k = sp.IndexedBase("q", real=True), sp.IndexedBase("k", real=True)
    gain, scale, level = sp.symbols("g c s", positive=True)
    rv, *_, dot = _correlated_dot_product()
    spread = {
        "sqrt": sp.sqrt(rv.evaluate(Var(gain**2 * dot / sp.sqrt(d_k)))),
        "linear": sp.sqrt(rv.evaluate(Var(gain**2 * dot / d_k))),
    }
    needed = {}
    for policy, std in spread.items():
        roots = sp.solveset(sp.Eq(std, level), gain, sp.Interval.open(0, sp.oo))
        if not isinstance(roots, sp.FiniteSet) or len(roots) != 1:
            raise ProofError(f"{label}: the gain that brings the {policy} logit to level s is {roots}, not one value")
        (needed[policy],) = roots
    steps = (
        check(
            label,
            sp.Sum(scale * (gain * q[i]) * (gain * k[i]), (i, 1, d_k)),
            gain**2 * scale * sp.Sum(q[i] * k[i], (i, 1, d_k)),
            reason="any c, q, k",
            shown=r"c \sum_{i=1}^{d_k} (g q_i)(g k_i) = g^{2} c \sum_{i=1}^{d_k} q_i k_i",
        ),
        check(label, E(gain**2 * dot / sp.sqrt(d_k)), gain**2 * rho * sp.sqrt(d_k), rv, "sqrt scale"),
        check(label, spread["sqrt"], gain**2 * sp.sqrt(1 + rho**2), reason="s.d., sqrt scale",
              shown=r"\sqrt{\operatorname{Var}\left[g^{2} \frac{q \cdot k}{\sqrt{d_k}}\right]}"
              r" = g^{2} \sqrt{\rho^{2} + 1}"),
        check(label, E(gain**2 * dot / d_k), gain**2 * rho, rv, "linear scale"),
        check(label, spread["linear"], gain**2 * sp.sqrt((1 + rho**2) / d_k), reason="s.d., linear scale",
              shown=r"\sqrt{\operatorname{Var}\left[g^{2} \frac{q \cdot k}{d_k}\right]}"
              r" = g^{2} \sqrt{\frac{\rho^{2} + 1}{d_k}}"),
        check(label, needed["sqrt"], sp.sqrt(level) / (1 + rho**2) ** sp.Rational(1, 4),
              reason="solve s.d. = s",
              shown=r"g_s(1/\sqrt{d_k}) = \frac{\sqrt{s}}{\sqrt[4]{\rho^{2} + 1}}"),
        check(label, needed["linear"] / needed["sqrt"], d_k ** sp.Rational(1, 4),
              reason="same, linear scale",
              shown=r"\frac{g_s(1/d_k)}{g_s(1/\sqrt{d_k})} = d_k^{1/4}"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        (
            "q and k multiplied by the same gain g > 0, scale c a positive constant",
            "for the moments: each (q_i, k_i) jointly Gaussian with correlation rho, as in the correlated model",
        ),
        steps,
    )
