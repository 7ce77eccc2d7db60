r"""Theorems of the section "Temperatures for longer contexts" (``docs/long-sequences.md``).

Length multipliers of the logits: Su's :math:`\log_{512} n`, YaRN's square
:math:`(0.1 \ln s + 1)^2` from scaling both q and k, and what each kind of
growth does to a needle with a fixed margin (:func:`length_temperatures`);
and the scale that keeps the plug-in entropy of Gaussian logits a fixed
fraction of :math:`\ln n` (:func:`entropy_temperature`).

Limits in :math:`n` are taken in :math:`u = \ln n`, so that every multiplier
is a polynomial or a root of :math:`u` and SymPy's limits stay fast and exact.
"""

from __future__ import annotations

import sympy as sp

from attention_scaling.proofs.engine import THEOREM_NAMES, Proof, theorem, check, check_inequality, check_solutions
from attention_scaling.proofs.long_sequences import _Ln, length, spread

__all__ = ["entropy_temperature", "length_temperatures"]

_u = sp.Symbol("u", positive=True)  # u = ln n
# ln n > 0 for n >= 2; the braces sort it after the other symbols, so SymPy prints c^2 sigma^2 ln n.
_log_n = sp.Symbol(r"{\ln n}", positive=True)


class _Log(_Ln):
    r"""The page's :math:`\ln`, printed without parentheses around a number too (:math:`\ln 512`)."""

    def _latex(self, printer, exp=None):
        (argument,) = self.args
        if not argument.is_Integer:
            return super()._latex(printer, exp)
        tex = rf"\ln {printer._print(argument)}"
        return tex if exp is None else rf"\left({tex}\right)^{{{exp}}}"


class _LogBase(sp.Function):
    r""":math:`\log_b x`, printed with its base as Su writes it; ``doit`` gives :math:`\ln x / \ln b`."""

    nargs = 2

    def doit(self, deep=True, **hints):
        x, base = self.args
        return _Log(x) / _Log(base)

    def _latex(self, printer, exp=None):
        x, base = self.args
        tex = r"\log_{%s} %s" % (printer._print(base), printer._print(x))
        return tex if exp is None else r"\left(%s\right)^{%s}" % (tex, exp)


def _needle(multiplier):
    r"""The needle weight :math:`1/(1 + (e^u - 1)e^{-a\,m(u)})` at :math:`n = e^u`, with :math:`a = \beta_0 \Delta`."""
    a = sp.Symbol("a", positive=True)
    return 1 / (1 + (sp.exp(_u) - 1) * sp.exp(-a * multiplier))


@theorem("thm-length-temperatures", "Length multipliers and the needle", uses=("thm-needle-limit",))
def length_temperatures() -> Proof:
    r"""Su's and YaRN's multipliers, and the needle's limit under each kind of growth in :math:`n`.

    Su's scale is :math:`\log_{512} n = \ln n / \ln 512`, which is 1 at
    :math:`n = 512`. Scaling both q and k by :math:`c` multiplies every logit
    :math:`\sum_i q_i k_i` by :math:`c^2`, so YaRN's :math:`c = \sqrt{1/t} = 0.1 \ln s + 1`
    multiplies the logits by :math:`(0.1\ln s + 1)^2`, 1 at :math:`s = 1`.
    With the logits multiplied by :math:`m(n)` (base scale :math:`\beta_0`,
    margin :math:`\Delta`, :math:`a = \beta_0\Delta > 0`), the needle weight of
    :prf:ref:`thm-needle-limit` at :math:`n = e^u` is
    :math:`1/(1 + (e^u - 1) e^{-a\,m})`. It tends to 1 for
    :math:`m = (\ln n)^2` and for YaRN's dynamic :math:`m = (0.1\ln(n/L) + 1)^2`,
    whatever :math:`a > 0`; to 0 for :math:`m = \sqrt{\ln n}` and for a constant
    :math:`m`. Su's :math:`m = \ln n / \ln 512` is Scalable-Softmax's
    :math:`s \ln n` with :math:`s = \beta_0 / \ln 512`, so by
    :prf:ref:`thm-needle-limit` the needle keeps its weight exactly when
    :math:`\Delta > \ln 512 / \beta_0`.

    Examples
    --------
    >>> from attention_scaling.proofs import length_temperatures
    >>> proof = length_temperatures()
    >>> proof.counts()
    {'checked': 10, 'cited': 0, 'argued': 0, 'measured': 0}
    >>> proof.steps[0].latex()
    '\\log_{512} n = \\frac{\\ln n}{\\ln 512}'
    """
    label = "thm-length-temperatures"
    n = length
    i = sp.Symbol("i", integer=True, positive=True)
    d = sp.Symbol("d", integer=True, positive=True)
    c = sp.Symbol("c", positive=True)
    q, k = sp.IndexedBase("q"), sp.IndexedBase("k")
    # YaRN's paper writes s for this ratio; the site keeps s for the raw score q . k (Notation page).
    extension = sp.Symbol(r"{\left(n/L\right)}", positive=True)
    yarn = _Ln(extension) / 10 + 1
    trained = sp.Symbol(r"\ln L", positive=True)
    beta0 = sp.Symbol(r"\beta_0", positive=True)
    margin = sp.Symbol(r"\Delta", positive=True)
    a = sp.Symbol("a", positive=True)
    # ln 512 > 0 as a positive symbol, so that solveset can compare the threshold with 0.
    ln_512 = sp.Symbol(r"\ln 512", positive=True)

    def limit(expr):
        return sp.Limit(expr, _u, sp.oo)

    steps = (
        check(label, _LogBase(n, 512), _Log(n) / _Log(512), reason="change of base"),
        check(label, _LogBase(512, 512), 1, reason=r"Su's scale is $1/\sqrt{d}$ at $n = 512$"),
        check(label, sp.Sum(sp.UnevaluatedExpr(c * q[i]) * sp.UnevaluatedExpr(c * k[i]), (i, 1, d)), c**2 * sp.Sum(q[i] * k[i], (i, 1, d)),
              reason="$q$ and $k$ both scaled: bilinear"),
        check(label, sp.Subs(c**2, c, yarn), yarn**2, reason=r"YaRN: $c = \sqrt{1/t} = 0.1 \ln(n/L) + 1$"),
        check(label, sp.Subs(yarn**2, extension, 1), 1, reason="no extension, no change"),
        check(label, sp.Subs(1 / (1 + (n - 1) * sp.exp(-a * sp.Function("m")(n))), n, sp.exp(_u)),
              _needle(sp.Function("m")(sp.exp(_u))), reason=r"$n = e^u$, $a = \beta_0 \Delta$"),
        check(label, limit(_needle(_u**2)), 1, reason=r"$m = (\ln n)^2$, every $a > 0$"),
        check(label, limit(_needle(((_u - trained) / 10 + 1) ** 2)), 1, reason=r"YaRN, $\ln(n/L) = u - \ln L$, every $a > 0$"),
        check(label, limit(_needle(sp.sqrt(_u))), 0, reason=r"$m = \sqrt{\ln n}$, every $a > 0$"),
        check_solutions(label, margin, beta0 * margin / ln_512 > 1, sp.S.Reals,
                        sp.Interval.open(ln_512 / beta0, sp.oo), reason=r"Su is SSMax with $s = \beta_0/\ln 512$: $s\Delta > 1$"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        (
            "the logits of a row of n keys are multiplied by m(n) > 0 on top of a base scale beta_0 > 0",
            "the needle exceeds each of the n - 1 other keys, which tie, by Delta > 0",
        ),
        steps,
        results=(0, 2, 6, 7, 8, 9),
    )


@theorem("thm-entropy-temperature", "The scale that holds the plug-in entropy fraction",
          uses=("thm-gaussian-logit-moments",))
def entropy_temperature() -> Proof:
    r"""For Gaussian logits, the multiplier that keeps :math:`H/\ln n` fixed grows like :math:`\sqrt{\ln n}`.

    By :prf:ref:`thm-gaussian-logit-moments` the plug-in entropy of
    :math:`n` logits of spread :math:`\lambda \sigma` is
    :math:`\ln n - \lambda^2 \sigma^2/2`. Holding it at a fraction
    :math:`1 - \kappa` of :math:`\ln n` (:math:`\kappa > 0`) has the one solution
    :math:`\lambda = \sqrt{2\kappa\ln n}/\sigma`; holding :math:`H - \ln n` at
    :math:`-g` has the constant solution :math:`\lambda = \sqrt{2g}/\sigma`. Under a
    multiplier :math:`\lambda = c \ln n` the ratio
    :math:`\kappa = \lambda^2 \sigma^2 / (2 \ln n) = c^2 \sigma^2 \ln n / 2` grows without
    bound, and it reaches the freezing threshold :math:`\kappa = 1` at
    :math:`\ln n = 2/(c \sigma)^2`.

    Examples
    --------
    >>> from attention_scaling.proofs import entropy_temperature
    >>> proof = entropy_temperature()
    >>> proof.counts()
    {'checked': 7, 'cited': 0, 'argued': 0, 'measured': 0}
    """
    label = "thm-entropy-temperature"
    s = spread
    lam = sp.Symbol(r"\lambda", positive=True)
    kappa = sp.Symbol(r"\kappa", positive=True)  # the freezing ratio, as the Long sequences page writes it
    gap = sp.Symbol("g", positive=True)
    c = sp.Symbol("c", positive=True)
    plug_in = _log_n - lam**2 * s**2 / 2
    ratio = lam**2 * s**2 / (2 * _log_n)
    fraction = sp.sqrt(2 * kappa * _log_n) / s
    steps = (
        check(label, sp.Subs(_log_n - s**2 / 2, s, lam * s), plug_in, reason=r"plug-in entropy at spread $\lambda \sigma$"),
        check(label, sp.Subs(plug_in / _log_n, lam, fraction), 1 - kappa, reason=r"$H / \ln n = 1 - \kappa$ at this $\lambda$"),
        check_inequality(label, sp.Derivative(plug_in / _log_n, lam), 0, "<", reason=r"decreasing: the only $\lambda > 0$"),
        check(label, sp.Subs(plug_in, lam, sp.sqrt(2 * gap) / s), _log_n - gap, reason=r"$H - \ln n = -g$: $\lambda$ constant"),
        check(label, sp.Subs(ratio, lam, c * _log_n), c**2 * s**2 * _log_n / 2, reason=r"$\lambda = c \ln n$"),
        check(label, sp.Limit(2 / (c**2 * s**2 * _log_n), _log_n, sp.oo), 0, reason=r"$1/\kappa \to 0$: $\kappa$ grows without bound"),
        check_solutions(label, _log_n, sp.Eq(c**2 * s**2 * _log_n / 2, 1), sp.S.Reals,
                        sp.FiniteSet(2 / (c**2 * s**2)), reason=r"freezing at $\kappa = 1$"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("n logits independent N(0, (lambda sigma)^2), lambda > 0, sigma > 0", "the plug-in entropy ln n - lambda^2 sigma^2 / 2"),
        steps,
        results=(1, 3, 6),
    )
