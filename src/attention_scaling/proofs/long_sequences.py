r"""Theorems of the chapter "Long sequences" (``docs/long-sequences.md``).

Exponential moments of a Gaussian logit (and the plug-in entropy and
collision number they give), the bound on the largest of :math:`n` Gaussian
logits, and the weight of a needle as the sequence grows.
"""

from __future__ import annotations

import sympy as sp
import sympy.stats

from attention_scaling.proofs.engine import THEOREM_NAMES, Proof, ProofError, Step, _theorem, check

__all__ = ["gaussian_logit_moments", "gaussian_max_bound", "length", "needle_limit", "spread"]

spread = sp.Symbol("s", positive=True)
length = sp.Symbol("n", positive=True)
_tilt = sp.Symbol("t", real=True)
_logit = sp.Symbol("x", real=True)


def _normal_density(x, mean=0):
    """The density of N(mean, s^2) at x."""
    return sp.exp(-((x - mean) ** 2) / (2 * spread**2)) / (spread * sp.sqrt(2 * sp.pi))


@_theorem("thm-gaussian-logit-moments", "Exponential moments of a Gaussian logit")
def gaussian_logit_moments() -> Proof:
    r"""Exponential moments of :math:`X \sim \mathcal{N}(0, s^2)`, and the plug-in entropy and collision number.

    Completing the square gives :math:`\mathbb{E}[e^{tX}] = e^{t^2 s^2/2}`, so
    :math:`\mathbb{E}[e^X] = e^{s^2/2}`, :math:`\mathbb{E}[e^{2X}] = e^{2s^2}`
    and :math:`\mathbb{E}[X e^X] = s^2 e^{s^2/2}`. Putting :math:`n` times
    these expectations in place of the sums over :math:`n` logits gives the
    plug-in entropy :math:`\ln n - s^2/2` and collision number
    :math:`n e^{-s^2}`; both identities are exact statements about the
    plug-in values, not about the random sums. ``sympy.stats`` supplies the
    moment generating function of the normal law as a second route.

    Examples
    --------
    >>> from attention_scaling.proofs import gaussian_logit_moments
    >>> gaussian_logit_moments().statement
    '\\mathbb{E}[X e^{X}] = s^2 e^{s^2/2}'
    """
    label = "thm-gaussian-logit-moments"
    s, t, x, n = spread, _tilt, _logit, length
    shift = sp.exp(t**2 * s**2 / 2)
    mass = sp.integrate(_normal_density(x, t * s**2), (x, -sp.oo, sp.oo))
    tilted_mean = sp.integrate(x * _normal_density(x, s**2), (x, -sp.oo, sp.oo))
    moment_generating = shift * mass
    exp_mean = moment_generating.subs(t, 1)
    exp_twice_mean = moment_generating.subs(t, 2)
    weighted_mean = sp.exp(s**2 / 2) * tilted_mean
    steps = (
        check(
            label,
            sp.exp(t * x) * _normal_density(x),
            shift * _normal_density(x, t * s**2),
            reason="complete the square",
            shown=r"e^{tx}\,\varphi_s(x) = e^{t^2 s^2/2}\,\varphi_s(x - t s^2)",
        ),
        check(
            label,
            mass,
            1,
            reason="a density",
            shown=r"\int \varphi_s(x - t s^2)\,dx = 1",
        ),
        check(label, moment_generating, shift, reason="integrate line 1",
              shown=r"\mathbb{E}[e^{tX}] = e^{t^2 s^2/2}"),
        check(label, exp_mean, sp.exp(s**2 / 2), reason="t = 1", shown=r"\mathbb{E}[e^{X}] = e^{s^2/2}"),
        check(label, exp_twice_mean, sp.exp(2 * s**2), reason="t = 2", shown=r"\mathbb{E}[e^{2X}] = e^{2 s^2}"),
        check(
            label,
            tilted_mean,
            s**2,
            reason="mean of N(s², s²)",
            shown=r"\int x\,\varphi_s(x - s^2)\,dx = s^2",
        ),
        check(
            label,
            weighted_mean,
            s**2 * sp.exp(s**2 / 2),
            reason="x times line 1 at t = 1",
            shown=r"\mathbb{E}[X e^{X}] = s^2 e^{s^2/2}",
        ),
        check(
            label,
            sp.log(n * exp_mean) - (n * weighted_mean) / (n * exp_mean),
            sp.log(n) - s**2 / 2,
            reason="plug-in entropy",
            shown=r"\ln\!\big(n\,\mathbb{E}[e^{X}]\big) - \mathbb{E}[X e^{X}] / \mathbb{E}[e^{X}] = \ln n - s^2/2",
        ),
        check(
            label,
            (n * exp_mean) ** 2 / (n * exp_twice_mean),
            n * sp.exp(-(s**2)),
            reason="plug-in 1/Σp²",
            shown=r"\big(n\,\mathbb{E}[e^{X}]\big)^2 / \big(n\,\mathbb{E}[e^{2X}]\big) = n e^{-s^2}",
        ),
    )
    reference = sympy.stats.moment_generating_function(sympy.stats.Normal("X", 0, s))(t)
    cross_checks = (
        check(label, reference, shift, reason="sympy.stats",
              shown=r"M_X(t) = e^{t^2 s^2/2}"),
        check(label, sp.diff(reference, t).subs(t, 1), s**2 * sp.exp(s**2 / 2), reason="sympy.stats",
              shown=r"M_X'(1) = \mathbb{E}[X e^{X}] = s^2 e^{s^2/2}"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("X normal with mean 0 and standard deviation s > 0", "n > 0 in the plug-in values"),
        steps,
        cross_checks,
        result_index=6,
    )


@_theorem("thm-gaussian-max-bound", "The largest of n Gaussian logits")
def gaussian_max_bound() -> Proof:
    r"""The bound :math:`\mathbb{E}\max_i X_i \le s\sqrt{2\ln n}` for :math:`X_i \sim \mathcal{N}(0, s^2)`.

    For every :math:`t > 0`, Jensen's inequality and
    :math:`e^{t\max_i X_i} \le \sum_i e^{t X_i}` give
    :math:`\mathbb{E}\max_i X_i \le \ln(n e^{t^2 s^2/2})/t`; SymPy checks the
    algebra, finds the only minimiser :math:`t^\ast = \sqrt{2 \ln n}/s` and
    the minimum :math:`s\sqrt{2\ln n}`. The logits need not be independent.

    Examples
    --------
    >>> from attention_scaling.proofs import gaussian_max_bound
    >>> gaussian_max_bound().statement
    '\\mathbb{E}\\max_i X_i \\le s\\sqrt{2 \\ln n}'
    """
    label = "thm-gaussian-max-bound"
    s = spread
    log_n = sp.Symbol("L", positive=True)  # ln n, positive for n >= 2
    t = sp.Symbol("t", positive=True)
    bound = log_n / t + t * s**2 / 2
    slope = sp.diff(bound, t)
    roots = sp.solveset(sp.Eq(slope, 0), t, sp.Interval.open(0, sp.oo))
    best = sp.sqrt(2 * log_n) / s
    if roots != sp.FiniteSet(best):
        raise ProofError(f"{label}: the positive roots of the slope are {roots}, not {{{best}}}")
    curvature = sp.diff(bound, t, 2)
    if not curvature.is_positive:
        raise ProofError(f"{label}: SymPy cannot show that the second derivative {curvature} is positive")
    steps = (
        check(
            label,
            sp.expand_log(sp.log(sp.exp(log_n) * sp.exp(t**2 * s**2 / 2)), force=True) / t,
            bound,
            reason="moments theorem",
            shown=r"\frac{1}{t}\ln\!\big(n\,e^{t^2 s^2/2}\big) = \frac{\ln n}{t} + \frac{t s^2}{2}",
        ),
        check(label, slope.subs(t, best), 0, reason="critical point",
              shown=r"\frac{d}{dt}\Big(\frac{\ln n}{t} + \frac{t s^2}{2}\Big)\Big|_{t=\sqrt{2\ln n}/s} = 0"),
        check(label, curvature, 2 * log_n / t**3, reason="> 0: a minimum",
              shown=r"\frac{d^2}{dt^2}\Big(\frac{\ln n}{t} + \frac{t s^2}{2}\Big) = \frac{2 \ln n}{t^3}"),
        check(label, bound.subs(t, best), s * sp.sqrt(2 * log_n), reason="the minimum",
              shown=r"\frac{\ln n}{t^\ast} + \frac{t^\ast s^2}{2} = s\sqrt{2 \ln n}"),
        Step(sp.Symbol(r"\mathbb{E}\max_i X_i"), s * sp.sqrt(2 * log_n), "Jensen",
             relation=r"\le", shown=r"\mathbb{E}\max_i X_i \le s\sqrt{2 \ln n}"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("each X_i normal with mean 0 and standard deviation s > 0", "n >= 2"),
        steps,
    )


@_theorem("thm-needle-limit", "The needle weight as the sequence grows")
def needle_limit() -> Proof:
    r"""The weight of a key with margin :math:`\Delta` over :math:`n - 1` equal keys, as :math:`n \to \infty`.

    At scale :math:`\beta` the weight is :math:`p = 1/(1 + (n-1)e^{-\beta\Delta})`.
    For a fixed :math:`\beta`, :math:`p \to 0`. With the length-aware scale
    :math:`\beta = s\ln n` of Scalable-Softmax,
    :math:`p = 1/(1 + (n-1)n^{-s\Delta})`, which tends to 1 if
    :math:`s\Delta > 1`, to 0 if :math:`s\Delta < 1`, and to :math:`\tfrac12`
    if :math:`s\Delta = 1`.

    Examples
    --------
    >>> from attention_scaling.proofs import needle_limit
    >>> [step.rhs for step in needle_limit().steps[-3:]]
    [1, 0, 1/2]
    """
    label = "thm-needle-limit"
    n = length
    beta = sp.Symbol(r"\beta", positive=True)
    margin = sp.Symbol(r"\Delta", positive=True)
    s, z = spread, sp.Symbol("z", real=True)
    excess = sp.Symbol(r"\epsilon", positive=True)
    weight = 1 / (1 + (n - 1) * sp.exp(-beta * margin))
    length_aware = weight.subs(beta, s * sp.log(n))

    def in_terms_of_product(a):
        return 1 / (1 + (n - 1) * n ** (-a))

    def limit(expr):
        return sp.limit(expr, n, sp.oo)

    steps = (
        check(
            label,
            sp.exp(beta * margin) / (sp.exp(beta * margin) + (n - 1)),
            weight,
            reason="divide by exp(βΔ)",
            shown=r"\frac{e^{\beta\Delta}}{e^{\beta\Delta} + (n-1)\,e^{0}} = \frac{1}{1 + (n-1)e^{-\beta\Delta}}",
        ),
        check(label, limit(weight), 0, reason="β fixed",
              shown=r"\lim_{n\to\infty} \frac{1}{1 + (n-1)e^{-\beta\Delta}} = 0"),
        check(label, n ** (s * z), sp.exp(s * sp.log(n) * z), reason="SSMax scale",
              shown=r"n^{s z} = e^{(s \ln n)\, z}"),
        check(label, length_aware, in_terms_of_product(s * margin), reason="β = s ln n",
              shown=r"p\big|_{\beta=s\ln n} = \frac{1}{1 + (n-1)\,n^{-s\Delta}}"),
        check(label, limit(in_terms_of_product(1 + excess)), 1, reason="sΔ > 1",
              shown=r"\lim_{n\to\infty} \frac{1}{1 + (n-1)\,n^{-(1+\epsilon)}} = 1"),
        check(label, limit(in_terms_of_product(1 - excess)), 0, reason="sΔ < 1",
              shown=r"\lim_{n\to\infty} \frac{1}{1 + (n-1)\,n^{-(1-\epsilon)}} = 0"),
        check(label, limit(in_terms_of_product(1)), sp.Rational(1, 2), reason="sΔ = 1",
              shown=r"\lim_{n\to\infty} \frac{1}{1 + (n-1)\,n^{-1}} = \frac{1}{2}"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("one score exceeds each of the other n - 1 by Delta > 0", "beta > 0 fixed, or beta = s ln n with s > 0"),
        steps,
        result_index=4,
    )
