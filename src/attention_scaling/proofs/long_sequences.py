r"""Theorems of the chapter "Long sequences" (``docs/long-sequences.md``).

Exponential moments of a Gaussian logit (and the plug-in entropy and
collision number they give), the bound on the largest of :math:`n` Gaussian
logits, and the weight of a needle as the sequence grows.

Every checked step is printed as SymPy holds it. Three small SymPy classes
keep it in the page's notation: :math:`\varphi_s` (the normal density),
:math:`\mathbb{E}` of a function of one Gaussian logit (the integral against
that density, carried out when the step is checked) and :math:`\ln` (SymPy's
natural logarithm, printed as the page writes it).
"""

from __future__ import annotations

import functools

import sympy as sp
import sympy.stats

from attention_scaling.proofs.engine import (
    THEOREM_NAMES,
    E,
    Proof,
    theorem,
    argue,
    check,
    check_inequality,
    cite,
)

__all__ = ["gaussian_logit_moments", "gaussian_max_bound", "length", "needle_limit", "spread"]

spread = sp.Symbol(r"\sigma", positive=True)
length = sp.Symbol("n", positive=True)
_tilt = sp.Symbol("t", real=True)
_logit = sp.Symbol("x", real=True)
# The random logit in the statements; an expectation of a function of it is an integral in _logit.
# A name in braces is printed as it stands, and sorts after t, so that SymPy prints e^{tX}, not e^{Xt}.
_X = sp.Symbol("{X}", real=True)

#: Where Jensen's inequality, E f(X) >= f(E X) for a convex f, is stated and proved: T. M. Cover and
#: J. A. Thomas, Elements of Information Theory, 2nd ed., Wiley (2006), Theorem 2.6.2. Short, as the page's
#: marker shows it.
JENSEN = ("Cover and Thomas (2006)", "Thm 2.6.2")


def _normal_density(x, mean=0):
    """The density of N(mean, sigma^2) at x."""
    return sp.exp(-((x - mean) ** 2) / (2 * spread**2)) / (spread * sp.sqrt(2 * sp.pi))


class _Density(sp.Function):
    r""":math:`\varphi_\sigma(x)`, the density of :math:`\mathcal{N}(0, \sigma^2)`; ``doit`` writes it out."""

    nargs = 1

    def doit(self, deep=True, **hints):
        (point,) = self.args
        return _normal_density(point.doit(deep=deep, **hints) if deep else point)

    def _latex(self, printer, exp=None):
        tex = r"\varphi_{\sigma}\left(%s\right)" % printer._print(self.args[0])
        return tex if exp is None else r"%s^{%s}" % (tex, exp)


class _GaussianMean(sp.Function):
    r""":math:`\mathbb{E}[f(X)]` for :math:`X \sim \mathcal{N}(0, \sigma^2)`; ``doit`` integrates against :math:`\varphi_\sigma`.

    The arguments are the expression :math:`f(X)` and the symbol that stands
    for the logit in it. The integral's error functions are rewritten so
    that ``erf + erfc`` cancels.
    """

    nargs = 2

    def doit(self, deep=True, **hints):
        expr, variable = self.args
        if deep:
            expr = expr.doit(deep=deep, **hints)
        # The density is part of the integrand, and so of the memo's key: a different density is integrated anew.
        return _integral_over_the_line(expr.subs(variable, _logit) * _normal_density(_logit))

    def _latex(self, printer, exp=None):
        tex = r"\mathbb{E}\left[%s\right]" % printer._print(self.args[0])
        return tex if exp is None else r"%s^{%s}" % (tex, exp)


@functools.lru_cache(maxsize=None)
def _integral_over_the_line(integrand: sp.Expr) -> sp.Expr:
    r"""The integral of ``integrand`` over all ``_logit``, erfc written as erf.

    A pure function of its (hashable) argument, so it is memoised: the same
    expectation, such as :math:`\mathbb{E}[e^X]`, recurs in several steps
    and theorems, and SymPy integrates it once.
    """
    return sp.integrate(integrand, (_logit, -sp.oo, sp.oo)).rewrite(sp.erf)


class _MomentGenerating(sp.Function):
    r""":math:`M_X(t)`, the moment generating function that ``sympy.stats`` gives for :math:`\mathcal{N}(0, \sigma^2)`."""

    nargs = 1

    def doit(self, deep=True, **hints):
        (point,) = self.args
        return sympy.stats.moment_generating_function(sympy.stats.Normal("X", 0, spread))(point)

    def _eval_derivative(self, variable):
        # Differentiating M_X (as Subs does for the derivative at a point) differentiates sympy.stats' function.
        return self.doit().diff(variable)

    def _latex(self, printer, exp=None):
        tex = r"M_X\left(%s\right)" % printer._print(self.args[0])
        return tex if exp is None else r"%s^{%s}" % (tex, exp)


class _Ln(sp.log):
    r"""SymPy's natural logarithm, printed :math:`\ln` as on the pages."""

    def _latex(self, printer, exp=None):
        (argument,) = self.args
        body = printer._print(argument)
        tex = rf"\ln {body}" if argument.is_Symbol else rf"\ln\left({body}\right)"
        return tex if exp is None else rf"\left({tex}\right)^{{{exp}}}"


def _mean(expr, variable=_X):
    return _GaussianMean(expr, variable)


@theorem("thm-gaussian-logit-moments", "Exponential moments of a Gaussian logit")
def gaussian_logit_moments() -> Proof:
    r"""Exponential moments of :math:`X \sim \mathcal{N}(0, \sigma^2)`, and the plug-in entropy and collision number.

    Completing the square gives :math:`\mathbb{E}[e^{tX}] = e^{t^2 \sigma^2/2}`, so
    :math:`\mathbb{E}[e^X] = e^{\sigma^2/2}`, :math:`\mathbb{E}[e^{2X}] = e^{2\sigma^2}`
    and :math:`\mathbb{E}[X e^X] = \sigma^2 e^{\sigma^2/2}`. Putting :math:`n` times
    these expectations in place of the sums over :math:`n` logits gives the
    plug-in entropy :math:`\ln n - \sigma^2/2` and collision number
    :math:`n e^{-\sigma^2}`; both identities are exact statements about the
    plug-in values, not about the random sums. Each expectation is checked by
    integrating against the normal density; ``sympy.stats`` supplies the
    moment generating function of the normal law as a second route.

    The theorem states steps 2 and 6 (every :math:`t`, and
    :math:`\mathbb{E}[X e^X]`); the page shows steps 3 and 4 (:math:`t = 1, 2`)
    and steps 7 and 8 (the plug-in values) after them.

    Examples
    --------
    >>> from attention_scaling.proofs import gaussian_logit_moments
    >>> proof = gaussian_logit_moments()
    >>> proof.counts()
    {'checked': 9, 'cited': 0, 'argued': 0, 'measured': 0}
    >>> proof.steps[6].latex()
    '\\mathbb{E}\\left[{X} e^{{X}}\\right] = \\sigma^{2} e^{\\frac{\\sigma^{2}}{2}}'
    """
    label = "thm-gaussian-logit-moments"
    s, t, x, n, X = spread, _tilt, _logit, length, _X
    shift = sp.exp(t**2 * s**2 / 2)
    steps = (
        check(label, sp.exp(t * x) * _Density(x), shift * _Density(x - t * s**2), reason="complete square"),
        check(label, sp.Integral(_Density(x - t * s**2), (x, -sp.oo, sp.oo)), 1, reason="a density"),
        check(label, _mean(sp.exp(t * X)), shift, reason="lines 1, 2"),
        check(label, _mean(sp.exp(X)), sp.exp(s**2 / 2), reason="$t = 1$"),
        check(label, _mean(sp.exp(2 * X)), sp.exp(2 * s**2), reason="$t = 2$"),
        check(label, sp.Integral(x * _Density(x - s**2), (x, -sp.oo, sp.oo)), s**2, reason=r"mean of $\mathcal{N}(\sigma^2, \sigma^2)$"),
        check(label, _mean(X * sp.exp(X)), s**2 * sp.exp(s**2 / 2), reason=r"$x \cdot$ line 1, $t = 1$"),
        check(
            label,
            _Ln(n * _mean(sp.exp(X))) - n * _mean(X * sp.exp(X)) / (n * _mean(sp.exp(X))),
            _Ln(n) - s**2 / 2,
            reason="plug-in entropy",
        ),
        check(label, (n * _mean(sp.exp(X))) ** 2 / (n * _mean(sp.exp(2 * X))), n * sp.exp(-(s**2)),
              reason=r"plug-in $1/\sum p^2$"),
    )
    cross_checks = (
        check(label, _MomentGenerating(t), shift, reason="sympy.stats"),
        check(label, sp.Subs(sp.Derivative(_MomentGenerating(t), t), t, 1), s**2 * sp.exp(s**2 / 2),
              reason="sympy.stats, $t = 1$"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("X normal with mean 0 and standard deviation sigma > 0", "n > 0 in the plug-in values"),
        steps,
        cross_checks,
        results=(2, 6),
    )


@theorem("thm-gaussian-max-bound", "The largest of n Gaussian logits", uses=("thm-gaussian-logit-moments",))
def gaussian_max_bound() -> Proof:
    r"""The bound :math:`\mathbb{E}\max_i X_i \le \sigma\sqrt{2\ln n}` for :math:`X_i \sim \mathcal{N}(0, \sigma^2)`.

    For every :math:`t > 0`, Jensen's inequality (cited: the exponential is
    convex) and :math:`e^{t\max_i X_i} \le \sum_i e^{t X_i}` (argued: the
    largest term of a sum of positive terms) give
    :math:`e^{t\,\mathbb{E}\max_i X_i} \le n e^{t^2 \sigma^2/2}`, the last
    expectation checked by integration. Taking logarithms (argued),
    :math:`\mathbb{E}\max_i X_i \le \ln n / t + t \sigma^2/2`; SymPy checks the
    algebra, that :math:`t^\ast = \sqrt{2 \ln n}/\sigma` is a stationary point of
    this bound, that the bound is convex on :math:`t > 0` (so
    :math:`t^\ast` is its minimiser there) and that the minimum is
    :math:`\sigma\sqrt{2\ln n}`. The last step, the bound at :math:`t^\ast`, is
    argued from these. The logits need not be independent. For
    :math:`n \ge 2`, :math:`\ln n > 0`: the minimisation uses a positive
    symbol printed :math:`\ln n`.

    Examples
    --------
    >>> from attention_scaling.proofs import gaussian_max_bound
    >>> proof = gaussian_max_bound()
    >>> proof.statement
    '\\mathbb{E}\\left[{\\max_{i} X_{i}}\\right] \\le \\sigma \\sqrt{2 \\ln n}'
    >>> proof.counts()
    {'checked': 5, 'cited': 1, 'argued': 3, 'measured': 0}
    """
    label = "thm-gaussian-max-bound"
    s, n = spread, length
    t = sp.Symbol("t", positive=True)
    log_n = sp.Symbol(r"\ln n", positive=True)  # ln n > 0 for n >= 2
    i = sp.Symbol("i", integer=True, positive=True)
    largest = sp.Symbol(r"{\max_{i} X_{i}}", real=True)
    term = sp.Symbol("{X_{i}}", real=True)
    sum_of_means = sp.Sum(_mean(sp.exp(t * term), term), (i, 1, n))
    bound = log_n / t + t * s**2 / 2
    best = sp.sqrt(2 * log_n) / s
    minimum = s * sp.sqrt(sp.UnevaluatedExpr(2 * log_n))
    steps = (
        cite(label, sp.exp(t * E(largest)), E(sp.exp(t * largest)), *JENSEN, relation=r"\le"),
        argue(label, E(sp.exp(t * largest)), sum_of_means, r"max $\le$ sum", relation=r"\le"),
        check(label, sum_of_means, n * sp.exp(t**2 * s**2 / 2), reason="moments"),
        argue(label, E(largest), _Ln(n * sp.exp(t**2 * s**2 / 2)) / t, r"$\ln$, $\div t$", relation=r"\le"),
        check(label, _Ln(n * sp.exp(t**2 * s**2 / 2)) / t, _Ln(n) / t + t * s**2 / 2, reason="algebra"),
        check(label, sp.Subs(sp.Derivative(bound, t), t, best), 0, reason="stationary"),
        check_inequality(label, sp.Derivative(bound, (t, 2)), 0, ">", reason="convex"),
        check(label, sp.Subs(bound, t, best), minimum, reason="minimum"),
        argue(label, E(largest), minimum, "line 4 at that $t$", relation=r"\le"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("each X_i normal with mean 0 and standard deviation sigma > 0, independent or not", "n >= 2, so ln n > 0"),
        steps,
    )


@theorem("thm-needle-limit", "The needle weight as the sequence grows")
def needle_limit() -> Proof:
    r"""The weight of a key with margin :math:`\Delta` over :math:`n - 1` equal keys, as :math:`n \to \infty`.

    At scale :math:`\beta` the weight is :math:`p = 1/(1 + (n-1)e^{-\beta\Delta})`,
    whatever the common score :math:`a` of the other keys. For a fixed
    :math:`\beta`, :math:`p \to 0`. With the length-aware scale
    :math:`\beta = s\ln n` of Scalable-Softmax,
    :math:`p = 1/(1 + (n-1)n^{-s\Delta})`, which tends to 1 if
    :math:`s\Delta > 1`, to 0 if :math:`s\Delta < 1`, and to :math:`\tfrac12`
    if :math:`s\Delta = 1`. Every limit is an unevaluated ``Limit`` that the
    check carries out.

    The theorem states step 0, the weight; the page shows the limits (steps
    1, 4, 5 and 6) beside it.

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
    others = sp.Symbol("a", real=True)
    # Scalable-Softmax's learned scalar, named s as in its paper (the Notation page lists it).
    s, z = sp.Symbol("s", positive=True), sp.Symbol("z", real=True)
    excess = sp.Symbol(r"\epsilon", positive=True)
    weight = 1 / (1 + (n - 1) * sp.exp(-beta * margin))
    needle = sp.exp(beta * (others + margin))

    def in_terms_of_product(a):
        return 1 / (1 + (n - 1) * n ** (-a))

    def limit(expr):
        return sp.Limit(expr, n, sp.oo)

    steps = (
        check(label, needle / (needle + (n - 1) * sp.exp(beta * others)), weight, reason="divide through"),
        check(label, limit(weight), 0, reason=r"$\beta$ fixed"),
        check(label, n ** (s * z), sp.exp(s * _Ln(n) * z), reason="SSMax scale"),
        check(label, sp.Subs(weight, beta, s * _Ln(n)), in_terms_of_product(s * margin), reason=r"$\beta = s \ln n$"),
        check(label, limit(in_terms_of_product(1 + excess)), 1, reason=r"$s\Delta > 1$"),
        check(label, limit(in_terms_of_product(1 - excess)), 0, reason=r"$s\Delta < 1$"),
        check(label, limit(in_terms_of_product(1)), sp.Rational(1, 2), reason=r"$s\Delta = 1$"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        (
            "one score exceeds each of the other n - 1, which tie, by Delta > 0",
            "beta > 0 fixed, or beta = s ln n with s > 0",
        ),
        steps,
        results=(0,),
    )
