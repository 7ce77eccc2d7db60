r"""Theorems of the page "Depth: rank collapse and the Lipschitz constant" (``docs/depth.md``).

Two results. :func:`attention_contraction`: a row-stochastic matrix whose
entries are all at least :math:`\varepsilon` shrinks the spread
:math:`\max_i x_i - \min_i x_i` of every vector by the factor
:math:`1 - n\varepsilon`, and a softmax row of logits of spread
:math:`\delta` has :math:`\varepsilon \ge e^{-\delta}/n`, so one layer of
pure attention shrinks the spread of every column of the values by at least
the factor :math:`1 - e^{-\delta}`, which is smaller the smaller the scale of
the logits. :func:`dot_product_not_lipschitz`: for dot-product
self-attention with identity weights, :math:`n = 2` tokens of width
:math:`d = 1`, :math:`x_1 = 0` and :math:`x_2 = t`, the partial derivative
:math:`\partial f_1/\partial x_1` equals :math:`1/2 + t^2/4`, unbounded, so no
Lipschitz constant exists; the same derivative of L2 self-attention tends to 1.
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

__all__ = ["attention_contraction", "dot_product_not_lipschitz"]

_n = sp.Symbol("n", integer=True, positive=True)
_j = sp.Symbol("j", integer=True, positive=True)
_eps = sp.Symbol(r"\varepsilon", nonnegative=True)
_x = sp.IndexedBase("x", real=True)
_q = sp.IndexedBase("q", nonnegative=True)  # P_ij - epsilon >= 0, for one row i
_a = sp.IndexedBase("a", nonnegative=True)  # M - x_j >= 0
_b = sp.IndexedBase("b", nonnegative=True)  # x_j - m >= 0
_big = sp.Symbol("M", real=True)  # max_j x_j
_small = sp.Symbol("m", real=True)  # min_j x_j
_total = sp.Symbol("S", real=True)  # sum_j x_j
_mass = sp.Symbol(r"{\left(1 - n \varepsilon\right)}", nonnegative=True)  # the sum of the q_j of a row
_spread_x = sp.Symbol(r"{\operatorname{spread}(x)}", nonnegative=True)
_spread_px = sp.Symbol(r"{\operatorname{spread}(Px)}", nonnegative=True)
_delta = sp.Symbol(r"\delta", nonnegative=True)
_delta0 = sp.Symbol(r"\delta_0", positive=True)
_c = sp.Symbol("c", positive=True)
_t = sp.Symbol("t", positive=True)
_K = sp.Symbol("K", positive=True)
_x1, _x2 = sp.symbols("x_1 x_2", real=True)


class _Row(sp.Function):
    r""":math:`f_1(x_1, x_2)`, the first output row of a two-token self-attention of width 1; ``doit`` writes it out.

    ``kind`` 0 is dot-product attention, logits :math:`x_1 x_j`; kind 1 is L2
    attention, logits :math:`-(x_1 - x_j)^2` (with :math:`d = 1`,
    :math:`\sqrt{d} = 1`).
    """

    nargs = 3

    def doit(self, deep=True, **hints):
        first, second, kind = (arg.doit(deep=deep, **hints) if deep else arg for arg in self.args)
        if kind == 0:
            logits = (first * first, first * second)
        else:
            logits = (sp.Integer(0), -((first - second) ** 2))
        weights = [sp.exp(logit) for logit in logits]
        return (weights[0] * first + weights[1] * second) / (weights[0] + weights[1])

    def _latex(self, printer, exp=None):
        first, second, kind = self.args
        name = "f_{1}" if kind == 0 else r"f^{\mathrm{L2}}_{1}"
        tex = rf"{name}\left({printer._print(first)}, {printer._print(second)}\right)"
        return tex if exp is None else rf"{tex}^{{{exp}}}"


class _AtPoint(sp.Expr):
    r"""A derivative evaluated at :math:`(x_1, x_2) = (0, a)`, unevaluated; ``doit`` differentiates, then substitutes.

    SymPy's ``Subs`` substitutes :math:`x_2` before it differentiates, and so
    never writes out the function; this differentiates first.
    """

    def doit(self, deep=True, **hints):
        derivative, point = self.args
        return derivative.doit(deep=deep, **hints).subs({_x1: 0, _x2: point.doit(deep=deep, **hints)})

    def _latex(self, printer, exp=None):
        derivative, point = self.args
        # \rvert, not |: the statement also appears in Markdown tables, where a bare | ends the cell.
        tex = rf"\left. {printer._print(derivative)} \right\rvert_{{x = \left(0, {printer._print(point)}\right)}}"
        return tex if exp is None else rf"\left({tex}\right)^{{{exp}}}"


def _partial(kind: int, at=_t):
    r""":math:`\partial f_1/\partial x_1` at :math:`(x_1, x_2) = (0, t)`, unevaluated."""
    return _AtPoint(sp.Derivative(_Row(_x1, _x2, kind), _x1), sp.sympify(at))


@theorem("thm-attention-contraction", "Pure attention contracts the spread of every column",
          uses=("thm-softmax-shift-invariance",))
def attention_contraction() -> Proof:
    r"""A row-stochastic :math:`P` with entries :math:`\ge \varepsilon` shrinks every spread by :math:`1 - n\varepsilon`.

    For one row :math:`i`, write :math:`P_{ij} = \varepsilon + q_j` with
    :math:`q_j \ge 0` and :math:`\sum_j q_j = 1 - n\varepsilon`; with
    :math:`M, m, S` the largest entry, the smallest and the sum of :math:`x`,
    :math:`(Px)_i = \varepsilon S + \sum_j q_j x_j` lies between
    :math:`\varepsilon S + (1 - n\varepsilon)m` and
    :math:`\varepsilon S + (1 - n\varepsilon)M`, so two entries of :math:`Px`
    differ by at most :math:`(1 - n\varepsilon)(M - m)`. SymPy checks the
    split of the row, its mass, both bounds (for a symbolic :math:`n`) and
    their difference; that :math:`\varepsilon = e^{-\delta}/n` gives the
    factor :math:`1 - e^{-\delta}`; and that this factor grows with the
    scale :math:`c` of logits of spread :math:`\delta = c\,\delta_0`. Argued:
    that every softmax weight is at least :math:`e^{-\delta}/n`, the row sum
    1, and the chaining. The cross-checks are the case :math:`n = 2`.

    Examples
    --------
    >>> from attention_scaling.proofs import attention_contraction
    >>> proof = attention_contraction()
    >>> proof.steps[8].latex()
    '{\\operatorname{spread}(Px)} \\le {\\left(1 - n \\varepsilon\\right)} {\\operatorname{spread}(x)}'
    >>> proof.counts()
    {'checked': 10, 'cited': 0, 'argued': 4, 'measured': 0}
    """
    label = "thm-attention-contraction"
    n, j, eps, q = _n, _j, _eps, _q
    row = sp.Sum((eps + q[j]) * _x[j], (j, 1, n))
    rest = sp.Sum(q[j] * _x[j], (j, 1, n))
    upper = sp.Sum(q[j] * (_big - _a[j]), (j, 1, n))
    lower = sp.Sum(q[j] * (_small + _b[j]), (j, 1, n))
    mass = sp.Sum(q[j], (j, 1, n))
    factor = sp.Subs(1 - n * eps, eps, sp.exp(-_delta) / n)
    steps = (
        check(label, row, eps * sp.Sum(_x[j], (j, 1, n)) + rest,
              reason=r"$P_{ij} = \varepsilon + q_j$: the row splits into a uniform part and a rest"),
        check(label, sp.Sum(eps + q[j], (j, 1, n)) - n * eps, mass, reason="the rest's mass"),
        argue(label, mass, 1 - n * eps, "the row of $P$ sums to 1 (line 2)"),
        check(label, upper, _big * mass - sp.Sum(q[j] * _a[j], (j, 1, n)), reason=r"$x_j = M - a_j$ with $a_j \ge 0$"),
        check_inequality(label, _big * mass - sp.Sum(q[j] * _a[j], (j, 1, n)), _big * mass, r"\le",
                         reason=r"every $q_j a_j \ge 0$"),
        check(label, lower, _small * mass + sp.Sum(q[j] * _b[j], (j, 1, n)), reason=r"$x_j = m + b_j$ with $b_j \ge 0$"),
        check_inequality(label, _small * mass + sp.Sum(q[j] * _b[j], (j, 1, n)), _small * mass, r"\ge",
                         reason=r"every $q_j b_j \ge 0$"),
        check(label, (eps * _total + _mass * _big) - (eps * _total + _mass * _small), _mass * (_big - _small),
              reason="the largest entry of $Px$ minus the smallest, at most (lines 3 to 7)"),
        argue(label, _spread_px, _mass * _spread_x, "lines 1 to 8, for any two rows of $P$: every column of $PX$ "
              r"shrinks its spread by $1 - n\varepsilon$", relation=r"\le"),
        argue(label, eps, sp.exp(-_delta) / n, "a softmax weight is $e^{z_j}$ over the sum of $n$ terms: the numerator "
              r"is at least $e^{\min z}$, each term at most $e^{\max z}$ (thm-softmax-shift-invariance: shift by $-\min z$)",
              relation=r"\ge"),
        check(label, factor, 1 - sp.exp(-_delta), reason=r"the factor at $\varepsilon = e^{-\delta}/n$"),
        check_inequality(label, sp.Derivative(1 - sp.exp(-_c * _delta0), _c), 0, ">",
                         reason=r"logits of spread $\delta = c\, \delta_0$: a smaller scale $c$ gives a smaller factor"),
        check_inequality(label, 1 - sp.exp(-_delta), 1, "<", reason="every layer contracts: the factor is below 1"),
        argue(label, _spread_px, (1 - sp.exp(-_delta)) * _spread_x, r"lines 9 to 11: $P = \operatorname{softmax}$ rows of logits of "
              r"spread at most $\delta$", relation=r"\le"),
    )
    # n = 2: P = [[p, 1 - p], [r, 1 - r]] with every entry >= epsilon; (Px)_1 - (Px)_2 = (p - r)(x_1 - x_2).
    p, r = sp.symbols("p r", real=True)
    alpha, beta = sp.symbols(r"\alpha \beta", nonnegative=True)
    cross_checks = (
        check(label, (p * _x[1] + (1 - p) * _x[2]) - (r * _x[1] + (1 - r) * _x[2]), (p - r) * (_x[1] - _x[2]),
              reason="$n = 2$"),
        check_inequality(label, (1 - eps - alpha) - (eps + beta), 1 - 2 * eps, r"\le",
                         reason=r"$n = 2$: $p = 1 - \varepsilon - \alpha \le 1 - \varepsilon$, $r = \varepsilon + \beta \ge \varepsilon$"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        (
            "P is an n x n row-stochastic matrix (rows of non-negative entries summing to 1), every entry >= epsilon",
            "x is a real vector of length n; spread(x) = max_j x_j - min_j x_j",
            "for softmax rows: the logits of each row have spread (max - min) at most delta",
        ),
        steps,
        cross_checks,
        results=(8, 13),
    )


@theorem("thm-dot-product-not-lipschitz", "Dot-product self-attention is not Lipschitz")
def dot_product_not_lipschitz() -> Proof:
    r"""With :math:`n = 2`, :math:`d = 1`, :math:`x = (0, t)`: :math:`\partial f_1/\partial x_1 = 1/2 + t^2/4`, unbounded.

    :math:`f(X) = \operatorname{softmax}(X X^\top/\sqrt{d})\,X` with
    :math:`W_Q = W_K = W_V = I` (the counterexample's setting). At
    :math:`x_1 = 0` the first row's logits :math:`x_1 x_j` are all 0, its
    weights uniform, and SymPy differentiates :math:`f_1` exactly: the
    derivative is :math:`1/2` (the weight of :math:`x_1`) plus
    :math:`t^2/4`, the variance of the inputs :math:`\{0, t\}` under the
    weights. At :math:`t = 2\sqrt{K}` it exceeds any proposed Lipschitz
    constant :math:`K`. For L2 attention (logits
    :math:`-(x_1 - x_j)^2/\sqrt{d}`) the same derivative tends to 1.
    Argued: a Lipschitz constant bounds every partial derivative.

    Examples
    --------
    >>> from attention_scaling.proofs import dot_product_not_lipschitz
    >>> proof = dot_product_not_lipschitz()
    >>> proof.steps[0].rhs
    t**2/4 + 1/2
    >>> proof.counts()
    {'checked': 5, 'cited': 0, 'argued': 1, 'measured': 0}
    """
    label = "thm-dot-product-not-lipschitz"
    t, K = _t, _K
    half = sp.Rational(1, 2)
    derivative = half + t**2 / 4
    w, first = sp.Symbol("w", positive=True), sp.Symbol("x_1", real=True)
    variance = sp.Subs(w * first**2 + w * t**2 - (w * first + w * t) ** 2, (w, first), (half, 0))
    steps = (
        check(label, _partial(0), derivative, reason="SymPy differentiates $f_1$ and sets $x = (0, t)$"),
        check(label, derivative, half + variance, reason=r"$1/2$ plus the variance of $\{0, t\}$ under the uniform weights"),
        check(label, sp.Subs(derivative, t, 2 * sp.sqrt(K)), K + half, reason=r"at $t = 2\sqrt{K}$"),
        check_inequality(label, K + half, K, ">", reason="so the derivative exceeds any $K$"),
        argue(label, _partial(0, 2 * sp.sqrt(K)), K, "lines 1, 3 and 4; a function with Lipschitz constant $K$ has "
              "every partial derivative at most $K$ in absolute value, so no $K$ is one", relation=">"),
        check(label, sp.Limit(_partial(1), t, sp.oo), 1,
              reason="L2 attention, logits $-(x_1 - x_j)^2$: the same derivative tends to 1"),
    )
    cross_checks = (
        check(label, _partial(0, 0), half, reason="$t = 0$: both tokens equal, the derivative is the weight $1/2$"),
        check(label, _partial(1, 0), half, reason="L2 attention agrees at $t = 0$"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        (
            "f(X) = softmax(X X^T / sqrt(d)) X, row-wise softmax, W_Q = W_K = W_V = I",
            "n = 2 tokens of width d = 1; x_1 = 0, x_2 = t > 0; K > 0 any proposed Lipschitz constant",
        ),
        steps,
        cross_checks,
        results=(0, 4),
    )
