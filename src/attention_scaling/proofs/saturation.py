r"""Theorems of the section "Saturated rows: the gap between the top two scores" (``docs/saturation.md``).

Two results. :func:`saturated_jacobian` bounds the Frobenius norm of the
softmax Jacobian by the gap :math:`\Delta` between the two largest scores:
:math:`\lVert J \rVert_F \le 4(n - 1)e^{-\Delta}`, so a row passes a
gradient of size :math:`t` only if :math:`\Delta \le \ln(4(n - 1)/t)`.
:func:`gap_probability` turns this into a probability for :math:`n`
independent :math:`\mathcal{N}(0, \sigma^2)` logits: the distribution of
the gap :math:`G` of :math:`n` standard normals, its density at 0, and the
:math:`1/\sigma` decay of the fraction of rows that still pass a gradient.

Four small SymPy classes keep the steps in the page's notation:
:math:`\varphi` and :math:`\Phi` (the standard normal density and
distribution function; ``doit`` writes them out), and :math:`\ln`.
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
)
from attention_scaling.proofs.softmax import ForIndices, SoftmaxWeight

__all__ = ["gap_probability", "mean_jacobian_limit", "saturated_jacobian"]

_n = sp.Symbol("n", integer=True, positive=True)
# n - 1 >= 1, the number of scores besides the largest, as one positive quantity in parentheses.
_others = sp.Symbol(r"{\left(n - 1\right)}", integer=True, positive=True)
_x = sp.IndexedBase("x", real=True)
_i, _j, _k = sp.symbols("i j k", integer=True, positive=True)
_gap = sp.Symbol(r"\Delta", nonnegative=True)
_norm = sp.Symbol(r"{\lVert J \rVert_{F}}", nonnegative=True)
_t = sp.Symbol("t", positive=True)


class _Ln(sp.log):
    r"""SymPy's natural logarithm, printed :math:`\ln` as on the pages."""

    def _latex(self, printer, exp=None):
        (argument,) = self.args
        body = printer._print(argument)
        tex = rf"\ln {body}" if argument.is_Symbol else rf"\ln\left({body}\right)"
        return tex if exp is None else rf"\left({tex}\right)^{{{exp}}}"


class _StandardDensity(sp.Function):
    r""":math:`\varphi(x)`, the density of :math:`\mathcal{N}(0, 1)`; ``doit`` writes it out."""

    nargs = 1

    def doit(self, deep=True, **hints):
        (point,) = self.args
        point = point.doit(deep=deep, **hints) if deep else point
        return sp.exp(-(point**2) / 2) / sp.sqrt(2 * sp.pi)

    def _latex(self, printer, exp=None):
        tex = r"\varphi\left(%s\right)" % printer._print(self.args[0])
        return tex if exp is None else r"%s^{%s}" % (tex, exp)


class _StandardDistribution(sp.Function):
    r""":math:`\Phi(x)`, the distribution function of :math:`\mathcal{N}(0, 1)`; its derivative is :math:`\varphi`."""

    nargs = 1

    def fdiff(self, argindex=1):
        return _StandardDensity(self.args[0])

    def doit(self, deep=True, **hints):
        (point,) = self.args
        point = point.doit(deep=deep, **hints) if deep else point
        return (1 + sp.erf(point / sp.sqrt(2))) / 2

    def _latex(self, printer, exp=None):
        tex = r"\Phi\left(%s\right)" % printer._print(self.args[0])
        return tex if exp is None else r"%s^{%s}" % (tex, exp)


#: The constant of the bound ||J||_F <= C (n - 1) e^{-Delta}; tests plant a smaller one and see the proof fail.
_CONSTANT = 4


def _two_score_gap_distribution(g):
    """P(G <= g) for n = 2 standard normals: G = |X_1 - X_2| ~ |N(0, 2)|, so erf(g/2)."""
    return sp.erf(g / 2)


def _p(index):
    return SoftmaxWeight(_x, index, _n, name="p")


def _threshold(n=_others + 1, t=_t):
    r"""The gap :math:`\ln(C(n - 1)/t)` past which :math:`\lVert J \rVert_F < t` (symbolic by default)."""
    return _Ln(_CONSTANT * (sp.sympify(n) - 1) / t)


@theorem(
    "thm-saturated-jacobian",
    "The Jacobian of a saturated row",
    uses=("thm-softmax-shift-invariance", "thm-softmax-jacobian"),
)
def saturated_jacobian() -> Proof:
    r"""The softmax Jacobian is at most :math:`4(n - 1)e^{-\Delta}` in Frobenius norm, :math:`\Delta` the top-two gap.

    With :math:`p = \operatorname{softmax}(x)`, the largest score numbered
    first and :math:`\Delta = x_1 - \max_{j \ne 1} x_j \ge 0`:
    :math:`\lVert J \rVert_F \le \sum_{i,k} |J_{ik}| = 2(1 - \sum_i p_i^2)
    \le 2(1 - p_1^2) \le 4(1 - p_1) \le 4S \le 4(n - 1)e^{-\Delta}` with
    :math:`S = \sum_{j \ne 1} e^{x_j - x_1}`. SymPy checks the row sums
    (with the Kronecker delta, for a symbolic :math:`n`), the sum to one, the
    inequalities in :math:`S` and in the :math:`b_j \ge 0`, and that the
    bound equals :math:`t` at :math:`\Delta = \ln(4(n - 1)/t)` and decreases.
    Argued in words: the Frobenius norm is at most the sum of absolute
    entries, the signs of the entries, dropping the other squares, the
    form :math:`p_1 = 1/(1 + S)` with each other term :math:`e^{-\Delta}/(1 +
    b_j)`, and the two chained conclusions. The cross-check is the case
    :math:`n = 2`, where :math:`\sum|J_{ik}| = 4p_1(1 - p_1)`.

    Examples
    --------
    >>> from attention_scaling.proofs import saturated_jacobian
    >>> proof = saturated_jacobian()
    >>> proof.steps[13].latex()
    '{\\lVert J \\rVert_{F}} \\le 4 {\\left(n - 1\\right)} e^{- \\Delta}'
    >>> proof.counts()
    {'checked': 10, 'cited': 0, 'argued': 7, 'measured': 0}
    """
    label = "thm-saturated-jacobian"
    i, j, k = _i, _j, _k
    n, m, gap = _n, _others, _gap
    J = sp.IndexedBase("J")
    plain = sp.IndexedBase("p", positive=True)  # the weights, as numbers: only their sum is used
    top = sp.Symbol("p_1", positive=True)
    total = sp.Symbol("S", nonnegative=True)  # sum over j != 1 of e^{x_j - x_1}
    b = sp.IndexedBase("b", nonnegative=True)  # e^{x_j - x_1} = e^{-Delta} / (1 + b_j)
    delta = sp.KroneckerDelta(i, k)
    absolute = sp.Sum(sp.Abs(J[i, k]), (k, 1, n), (i, 1, n))
    squares = sp.Sum(plain[i] ** 2, (i, 1, n))
    signed_row = sp.Sum((2 * delta - 1) * _p(i) * (delta - _p(k)), (k, 1, n))
    doubled = sp.Sum(2 * plain[i] * (1 - plain[i]), (i, 1, n))

    def at_top(expr):
        return sp.Subs(expr, top, 1 / (1 + total))

    others = sp.Sum(sp.exp(-gap) / (1 + b[j]), (j, 1, m))
    rewritten = sp.exp(-gap) * (m - sp.Sum(b[j] / (1 + b[j]), (j, 1, m)))
    bound = _CONSTANT * m * sp.exp(-gap)
    steps = (
        argue(label, _norm, absolute, r"square the right side: its cross terms are $\ge 0$, so it is at least the "
              "sum of squares of the entries", relation=r"\le"),
        argue(label, sp.Sum(sp.Abs(J[i, k]), (k, 1, n)), signed_row,
              r"$J_{ik} = p_i (\delta_{ik} - p_k)$ (thm-softmax-jacobian): $\ge 0$ on the diagonal, $\le 0$ off it"),
        check(label, ForIndices(signed_row, (i,), n), ForIndices(2 * _p(i) * (1 - _p(i)), (i,), n),
              reason="sum over $k$; the weights sum to 1"),
        check(label, doubled, 2 * sp.Sum(plain[i], (i, 1, n)) - 2 * squares, reason="sum over $i$"),
        # The first sum is of the softmax weights (its definition is checked), the squares are common to both sides.
        check(label, ForIndices(2 * sp.Sum(_p(i), (i, 1, n)) - 2 * squares, (), n),
              ForIndices(2 * (1 - squares), (), n), reason="the weights sum to 1"),
        argue(label, 2 * (1 - squares), 2 * (1 - top**2), "drop the squares of the other weights", relation=r"\le"),
        argue(label, top, 1 / (1 + total), "shift by $-x_1$ (thm-softmax-shift-invariance); the $j = 1$ term is 1; "
              "$S$ is the sum of the others"),
        check_inequality(label, at_top(2 * (1 - top**2)), at_top(_CONSTANT * (1 - top)), r"\le",
                         reason="the gap is $2 S^2/(1 + S)^2$"),
        check(label, at_top(_CONSTANT * (1 - top)), 4 * total / (1 + total), reason="algebra"),
        check_inequality(label, 4 * total / (1 + total), 4 * total, r"\le", reason=r"$S \ge 0$"),
        argue(label, total, others, r"each other score is $x_1 - \Delta - a_j$ with $a_j \ge 0$; $b_j = e^{a_j} - 1 \ge 0$"),
        check(label, others, rewritten, reason="$1/(1 + b) = 1 - b/(1 + b)$"),
        check_inequality(label, rewritten, m * sp.exp(-gap), r"\le", reason=r"every $b/(1 + b) \ge 0$"),
        argue(label, _norm, bound, "lines 1 to 13 chained", relation=r"\le"),
        check(label, sp.Subs(bound, gap, _threshold()), _t, reason="the bound equals $t$ there"),
        check_inequality(label, sp.Derivative(bound, gap), 0, "<", reason=r"and decreases in $\Delta$"),
        argue(label, gap, _threshold(), r"if the norm is $\ge t$: lines 14 to 16", relation=r"\le"),
    )
    # n = 2, scores [Delta, 0]: the sum of absolute entries is 4 p_1 (1 - p_1), at most 4 e^{-Delta}.
    weight = SoftmaxWeight((gap, 0), 1, name="p")
    cross_checks = (
        check_inequality(label, 4 * weight * (1 - weight), _CONSTANT * sp.exp(-gap), r"\le", reason="$n = 2$"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        (
            "p = softmax(x) for real x of any length n >= 2, the largest score numbered first",
            "Delta = x_1 - max_{j != 1} x_j >= 0, the gap between the two largest scores",
            "t > 0",
        ),
        steps,
        cross_checks,
        results=(13, 16),
    )


@theorem("thm-gap-probability", "How often a row of Gaussian scores passes a gradient",
          uses=("thm-saturated-jacobian",))
def gap_probability() -> Proof:
    r"""The distribution of the top-two gap of :math:`n` Gaussian scores, and the :math:`1/\sigma` decay it gives.

    For :math:`X_1, \dots, X_n` independent :math:`\mathcal{N}(0, 1)` and
    :math:`G` the gap between the two largest, :math:`F_G(g) = P(G \le g) =
    n\int\varphi(x)[\Phi(x)^{n-1} - \Phi(x - g)^{n-1}]\,dx` (argued: which
    variable is largest, and where). SymPy checks the integrand at
    :math:`g = 0` and its derivative in :math:`g`, and for :math:`n = 2` that
    the density is that of :math:`\operatorname{erf}(g/2)` with
    :math:`f_G(0) = 1/\sqrt{\pi}`, and the limit
    :math:`\sigma\operatorname{erf}(\ell/(2\sigma)) \to \ell/\sqrt{\pi}`. For
    scores :math:`\mathcal{N}(0, \sigma^2)` the gap is :math:`\sigma G`, so by
    :func:`saturated_jacobian` a row with :math:`\lVert J \rVert_F \ge t` has
    :math:`G \le \ell/\sigma`, :math:`\ell = \ln(4(n - 1)/t)` (argued), and
    :math:`\sigma F_G(\ell/\sigma) \to \ell f_G(0)` (argued from
    :math:`F_G(0) = 0` and the density at 0).

    Examples
    --------
    >>> from attention_scaling.proofs import gap_probability
    >>> proof = gap_probability()
    >>> proof.counts()
    {'checked': 6, 'cited': 0, 'argued': 5, 'measured': 0}
    >>> proof.steps[-1].kind, proof.steps[-1].reason
    ('checked', '$n = 2$: $F_G(g) = \\operatorname{erf}(g/2)$, $f_G(0) = 1/\\sqrt{\\pi}$')
    """
    label = "thm-gap-probability"
    n = _n
    phi, Phi = _StandardDensity, _StandardDistribution
    x = sp.Symbol("x", real=True)
    g = sp.Symbol("g", nonnegative=True)
    sigma = sp.Symbol(r"\sigma", positive=True)
    ell = sp.Symbol(r"\ell", positive=True)  # ln(4(n - 1)/t) > 0, i.e. t < 4(n - 1)
    F, f = sp.Function("F_G"), sp.Function("f_G")
    everywhere = (x, -sp.oo, sp.oo)
    bracket = Phi(x) ** (n - 1) - Phi(x - g) ** (n - 1)
    slope = (n - 1) * phi(x - g) * Phi(x - g) ** (n - 2)
    passing = sp.Symbol(r"{P\left(\lVert J \rVert_{F} \ge t\right)}", nonnegative=True)
    steps = (
        argue(label, F(g), n * sp.Integral(phi(x) * bracket, everywhere),
              r"$X_i$ is the largest for one $i$ ($n$ equally likely cases); given it is $x$, $G \le g$ unless all "
              r"$n - 1$ others lie below $x - g$"),
        check(label, sp.Subs(bracket, g, 0), 0, reason="so $F_G(0) = 0$"),
        check(label, sp.Derivative(bracket, g), slope, reason=r"$\Phi' = \varphi$"),
        argue(label, f(g), n * sp.Integral(phi(x) * slope, everywhere), "differentiate line 1 under the integral"),
        argue(label, f(0), n * (n - 1) * sp.Integral(phi(x) ** 2 * Phi(x) ** (n - 2), everywhere), "$g = 0$ in line 4"),
        check(label, 2 * sp.Integral(phi(x) * phi(x - g), everywhere), sp.Derivative(_two_score_gap_distribution(g), g),
              reason=r"$n = 2$: the density of $\operatorname{erf}(g/2)$"),
        check(label, sp.Subs(_two_score_gap_distribution(g), g, 0), 0, reason="which is 0 at $g = 0$, as $F_G$"),
        check(label, 2 * sp.Integral(phi(x) ** 2, everywhere), 1 / sp.sqrt(sp.pi), reason="$n = 2$: $f_G(0)$"),
        argue(label, passing, F(ell / sigma), r"the gap of $\mathcal{N}(0, \sigma^2)$ scores is $\sigma G$; a row with norm $\ge t$ "
              r"has gap $\le \ell$ (thm-saturated-jacobian)", relation=r"\le"),
        argue(label, sp.Limit(sigma * F(ell / sigma), sigma, sp.oo), ell * f(0),
              "$F_G(0) = 0$ (line 2) and $F_G'(0) = f_G(0)$ (line 5)"),
        check(label, sp.Limit(sigma * _two_score_gap_distribution(ell / sigma), sigma, sp.oo),
              ell / sp.sqrt(sp.pi), reason=r"$n = 2$: $F_G(g) = \operatorname{erf}(g/2)$, $f_G(0) = 1/\sqrt{\pi}$"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        (
            "X_1, ..., X_n independent N(0, 1), n >= 2; G the gap between the two largest",
            "a row of n independent N(0, sigma^2) scores, sigma > 0",
            "ell = ln(4(n - 1)/t) > 0, i.e. 0 < t < 4(n - 1)",
        ),
        steps,
        results=(8,),
    )


# The constant C of the argued step |‖J(x)‖_F - 2p(1 - p)| <= C (n - 2) e^{-Delta_3}; tests measure rows against it.
_THIRD_CONSTANT = 6


@theorem("thm-mean-jacobian-limit", "The mean Jacobian of unscaled rows",
         uses=("thm-softmax-jacobian", "thm-gap-probability"))
def mean_jacobian_limit() -> Proof:
    r"""The exact rate of the mean Jacobian of unscaled rows: :math:`\sqrt{d_k}\,\operatorname{E}\lVert J(s) \rVert_F \to f_G(0)`.

    For :math:`n \ge 2` keys and unscaled scores :math:`s_j = q \cdot k_j`
    of independent standard normal :math:`q, k_j \in \mathbb{R}^{d_k}`,
    :math:`\sqrt{d_k}\,\operatorname{E}\lVert J(s) \rVert_F \to
    f_G(0)\int_0^\infty 2\tilde p(1 - \tilde p)\,d\Delta = f_G(0)`, with
    :math:`\tilde p = e^\Delta/(e^\Delta + 1)`, the weight of the larger of
    two scores :math:`\Delta` apart, and :math:`f_G(0)` the density at 0 of
    the top-two gap of :math:`n` standard normals (:func:`gap_probability`).
    The ratio of the mean gains at the raw score, unscaled over
    :math:`1/\sqrt{d_k}` (the chain rule's factor :math:`c` included), tends
    to :math:`f_G(0)/\operatorname{E}\lVert J(Z) \rVert_F`.

    SymPy checks the two-score Jacobian's norm, the integral, and the
    ratio's algebra. Argued in words: the law of the scores given
    :math:`q`, the distance to the two-score Jacobian when the third score
    lies :math:`\Delta_3` below the largest, the two limits (uniform
    integrability), that rows with a near-tie of three scores do not count,
    and the limit of the scaled gain.

    Examples
    --------
    >>> from attention_scaling.proofs import mean_jacobian_limit
    >>> proof = mean_jacobian_limit()
    >>> proof.counts()
    {'checked': 4, 'cited': 0, 'argued': 7, 'measured': 0}
    >>> proof.steps[7].rhs
    f_G(0)
    """
    label = "thm-mean-jacobian-limit"
    d = sp.Symbol("d_k", positive=True)
    gap = _gap
    third = sp.Symbol(r"\Delta_3", nonnegative=True)  # the largest score minus the third largest
    mean = sp.Symbol(r"{\operatorname{E}\lVert J(s) \rVert_{F}}", nonnegative=True)
    given = sp.Symbol(r"{\operatorname{E}\lVert J(\lVert q \rVert Z) \rVert_{F}}", nonnegative=True)
    scaled = sp.Symbol(r"{\operatorname{E}\lVert J(s/\sqrt{d_k}) \rVert_{F}}", positive=True)
    standard = sp.Symbol(r"{\operatorname{E}\lVert J(Z) \rVert_{F}}", positive=True)
    near_tie = sp.Symbol(r"{\operatorname{E}\, h(\lVert q \rVert G)}", nonnegative=True)  # h(Delta) = 2p(1 - p)
    third_term = sp.Symbol(r"{\operatorname{E}\, e^{-\lVert q \rVert G_3}}", nonnegative=True)
    difference = sp.Symbol(r"{\bigl|\lVert J(x) \rVert_{F} - h(\Delta)\bigr|}", nonnegative=True)
    beyond = sp.Symbol(r"{\left(n - 2\right)}", nonnegative=True)  # the scores below the second
    f = sp.Function("f_G")
    top, second = (SoftmaxWeight((gap, 0), index, name=r"\tilde{p}") for index in (1, 2))
    two_score = 2 * top * (1 - top)
    entries = (top * (1 - top), -top * second, -second * top, second * (1 - second))
    # The mean gains at the raw score, c E||J(c s)||_F at c = 1 over c = 1/sqrt(d_k), as written (unevaluated).
    scale = sp.Pow(sp.sqrt(d), -1, evaluate=False)
    ratio_of_gains = sp.Mul(mean, sp.Pow(sp.Mul(scale, scaled, evaluate=False), -1, evaluate=False), evaluate=False)
    infinity = (d, sp.oo)
    steps = (
        argue(label, mean, given, r"given $q$ the scores are independent $\mathcal{N}(0, \lVert q \rVert^2)$: "
              r"$\lVert q \rVert$ times $n$ standard normals $Z$, independent of $\lVert q \rVert$"),
        check(label, sp.sqrt(sum(entry**2 for entry in entries)), two_score,
              reason=r"two scores $[\Delta, 0]$: the entries of $J$ (thm-softmax-jacobian)"),
        argue(label, difference, _THIRD_CONSTANT * beyond * sp.exp(-third),
              r"$n$ scores, top-two gap $\Delta$: each weight below the second is at most $e^{-\Delta_3}$, and the "
              r"entries of $J$ in their rows and columns, and the change they make to the top two, are at most a few "
              r"times their sum", relation=r"\le"),
        check(label, sp.Integral(two_score, (gap, 0, sp.oo)), 1, reason=r"$2\tilde p(1 - \tilde p)$ is the "
              r"derivative of $2\tilde p$, which rises from 1 to 2"),
        argue(label, sp.Limit(sp.sqrt(d) * near_tie, *infinity), f(0) * sp.Integral(two_score, (gap, 0, sp.oo)),
              r"with $\Delta = \lVert q \rVert g$ it is $\operatorname{E}\int_0^\infty 2\tilde p(1 - \tilde p)\, "
              r"f_G(\Delta/\lVert q \rVert)\,d\Delta\,/\lVert q \rVert$; $f_G$ is bounded and continuous, "
              r"$\sqrt{d_k}/\lVert q \rVert \to 1$, and $\operatorname{E}[d_k/\lVert q \rVert^2] = d_k/(d_k - 2)$ "
              r"stays bounded ($d_k \ge 3$): uniform integrability lets the limit pass inside"),
        argue(label, sp.Limit(sp.sqrt(d) * third_term, *infinity), 0,
              r"the third score is within $g$ of the largest only if two others are: "
              r"$P(G_3 \le g) = O(g^2)$, so $\operatorname{E}\,e^{-r G_3} = O(r^{-2})$"),
        argue(label, sp.Limit(sp.sqrt(d) * mean, *infinity), f(0) * sp.Integral(two_score, (gap, 0, sp.oo)),
              "lines 1, 3, 5 and 6"),
        check(label, f(0) * sp.Integral(two_score, (gap, 0, sp.oo)), f(0), reason="line 4"),
        argue(label, sp.Limit(scaled, *infinity), standard, r"$s/\sqrt{d_k} = (\lVert q \rVert/\sqrt{d_k}) Z$ with "
              r"$\lVert q \rVert/\sqrt{d_k} \to 1$; $\lVert J \rVert_F$ is bounded and continuous"),
        check(label, ratio_of_gains, sp.sqrt(d) * mean / scaled,
              reason=r"the mean gains at the raw score: $c = 1$ against $c = 1/\sqrt{d_k}$"),
        argue(label, sp.Limit(sp.sqrt(d) * mean / scaled, *infinity), f(0) / standard, "lines 7 to 10"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        (
            "s_j = q . k_j, j = 1..n, n >= 2, for independent q, k_j with N(0, 1) components in dimension d_k",
            "G the top-two gap of n independent N(0, 1), f_G its density (thm-gap-probability); "
            "G_3 the largest minus the third largest (G_3 = infinity for n = 2)",
            "Z: n independent N(0, 1)",
        ),
        steps,
        results=(6, 7, 10),
    )
