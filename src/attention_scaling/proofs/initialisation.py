r"""Theorem of the chapter "Initialisation decides the constant" (``docs/initialisation.md``).

The variance of the scaled scores when queries and keys are projections
:math:`q = x W_Q`, :math:`k = x' W_K` of normalised tokens, from the variances
of the weight entries. The symbols ``d_model``, ``sigma_Q`` and ``sigma_K``
are defined here.
"""

from __future__ import annotations

import sympy as sp
from sympy.printing.precedence import PRECEDENCE

from attention_scaling.proofs.engine import (
    THEOREM_NAMES,
    E,
    Proof,
    RandomVariables,
    Step,
    Var,
    theorem,
    argue,
    check,
    check_solutions,
)
from attention_scaling.proofs.variance import (
    _dot_product,
    d_k,
    dot_product_general_moments,
    mu_k,
    mu_q,
    sigma_k,
    sigma_q,
)

__all__ = ["d_model", "projected_dot_product", "sigma_K", "sigma_Q"]

d_model = sp.Symbol("d_model", integer=True, positive=True)
sigma_Q, sigma_K = sp.symbols("sigma_Q sigma_K", positive=True)

# -- Vector notation for checked steps ----------------------------------------------------
# A squared norm and a dot product print as the pages write them, and ``doit`` turns
# them into the sums SymPy checks; ``_Where`` substitutes before it evaluates, so that
# a step can say "where ||q||^2 = d_k". Used by this chapter and by ``logit_growth``.

#: The coordinate index of every sum these objects expand into (one symbol, so that
#: sums from different objects, and the proofs' own sums over ``i``, compare equal).
_coordinate = sp.Symbol("i", integer=True, positive=True)


def _factors(vectors) -> tuple:
    """The IndexedBase factors of an elementwise product: a tuple of them, or one."""
    return tuple(vectors) if isinstance(vectors, (tuple, list, sp.Tuple)) else (vectors,)


def _product_latex(printer, vectors) -> str:
    """``a``, or ``a \\odot b`` in parentheses for an elementwise product."""
    names = [printer._print(vector) for vector in vectors]
    return names[0] if len(names) == 1 else r"\left(%s\right)" % r" \odot ".join(names)


class _SquaredNorm(sp.Function):
    r"""``_SquaredNorm(n, a, b, ...)``: :math:`\lVert a \odot b \odot \cdots\rVert^2 = \sum_{i=1}^{n} (a_i b_i \cdots)^2`.

    Unevaluated it prints as the squared norm; ``doit`` gives the sum. The
    vectors are real ``IndexedBase`` objects, so the norm is not negative.

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs.initialisation import _SquaredNorm
    >>> q, n = sp.IndexedBase("q", real=True), sp.Symbol("n", integer=True, positive=True)
    >>> sp.latex(_SquaredNorm(n, q)), _SquaredNorm(n, q).doit()
    ('\\lVert q \\rVert^{2}', Sum(q[i]**2, (i, 1, n)))
    """

    precedence = PRECEDENCE["Mul"]

    def doit(self, **hints):
        length, *vectors = self.args
        return sp.Sum(sp.Mul(*(vector[_coordinate] for vector in vectors)) ** 2, (_coordinate, 1, length))

    def _eval_is_real(self):
        return True

    def _eval_is_nonnegative(self):
        return all(vector.is_real for vector in self.args[1:]) or None

    def _latex(self, printer, exp=None):
        names = [printer._print(vector) for vector in self.args[1:]]
        latex = r"\lVert %s \rVert^{2}" % r" \odot ".join(names)
        return latex if exp is None else r"\left(%s\right)^{%s}" % (latex, exp)


class _Dot(sp.Function):
    r"""``_Dot(n, (a, ...), (b, ...))``: :math:`(a \odot \cdots) \cdot (b \odot \cdots) = \sum_{i=1}^{n} a_i \cdots b_i \cdots`.

    Unevaluated it prints as a dot product (in parentheses inside a product
    or a power); ``doit`` gives the sum. A vector dotted with itself is its
    squared norm.

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs.initialisation import _Dot, _SquaredNorm
    >>> q, k = sp.IndexedBase("q", real=True), sp.IndexedBase("k", real=True)
    >>> n = sp.Symbol("n", integer=True, positive=True)
    >>> sp.latex(2 * _Dot(n, q, k)), _Dot(n, q, q) == _SquaredNorm(n, q)
    ('2 \\left(q \\cdot k\\right)', True)
    """

    precedence = PRECEDENCE["Add"]

    @classmethod
    def eval(cls, length, left, right):
        if not isinstance(left, sp.Tuple) or not isinstance(right, sp.Tuple):
            return cls(length, sp.Tuple(*_factors(left)), sp.Tuple(*_factors(right)))
        if left == right:
            return _SquaredNorm(length, *left)
        return None

    def doit(self, **hints):
        length, left, right = self.args
        return sp.Sum(sp.Mul(*(vector[_coordinate] for vector in (*left, *right))), (_coordinate, 1, length))

    def _eval_is_real(self):
        return True

    def _latex(self, printer, exp=None):
        latex = r"%s \cdot %s" % (_product_latex(printer, self.args[1]), _product_latex(printer, self.args[2]))
        # The printer passes a power of a function as ``exp``; the dot product takes parentheses then.
        return latex if exp is None else r"\left(%s\right)^{%s}" % (latex, exp)


class _Where(sp.Subs):
    r"""A substitution shown as :math:`\left.\cdots\right|_{x = a}` that substitutes before it evaluates.

    SymPy's ``Subs`` evaluates its expression first, which would turn a
    :class:`_SquaredNorm` into a sum before the substitution could find it.

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs.initialisation import _SquaredNorm, _Where
    >>> q, n = sp.IndexedBase("q", real=True), sp.Symbol("n", integer=True, positive=True)
    >>> _Where(3 * _SquaredNorm(n, q), _SquaredNorm(n, q), n).doit()
    3*n
    """

    def doit(self, **hints):
        return self.expr.subs(list(zip(self.variables, self.point))).doit(**hints)


def _projection_cross_checks(label: str) -> tuple[Step, ...]:
    r"""Var(q.k) from every weight entry, at small fixed sizes, with x' distinct from x and x' = x.

    Nothing here assumes that the coordinates of q are independent: each
    :math:`q_i = \sum_a x_a Q_{ai}` is a name for its expression in the
    entries of :math:`W_Q` (likewise :math:`k_i` in those of :math:`W_K`),
    and the expectation expands the dot product down to these entries,
    which are the only variables declared.
    """
    steps = []
    for size, width in ((2, 1), (2, 2), (3, 2)):
        for self_attention in (False, True):
            rv = RandomVariables()
            w_q = [[rv.add(f"Q_{{{a + 1}{i + 1}}}", 0, sigma_Q**2) for i in range(width)] for a in range(size)]
            w_k = [[rv.add(f"K_{{{a + 1}{i + 1}}}", 0, sigma_K**2) for i in range(width)] for a in range(size)]
            x = sp.symbols(f"x_1:{size + 1}", real=True)
            y = x if self_attention else tuple(sp.Symbol(f"{{x'_{a + 1}}}", real=True) for a in range(size))
            q = [rv.define(f"q_{i + 1}", sum(x[a] * w_q[a][i] for a in range(size))) for i in range(width)]
            k = [rv.define(f"k_{i + 1}", sum(y[a] * w_k[a][i] for a in range(size))) for i in range(width)]
            norms = sum(v**2 for v in x) * sum(v**2 for v in y)
            tokens = "$x' = x$" if self_attention else "two tokens"
            steps.append(check(label, Var(sum(q_i * k_i for q_i, k_i in zip(q, k))),
                               width * sigma_Q**2 * sigma_K**2 * norms, rv,
                               rf"$W$: ${size} \times {width}$, {tokens}"))
    return tuple(steps)


@theorem(
    "thm-projected-dot-product",
    "Scores of projected tokens",
    uses=("thm-dot-product-general-moments", "thm-scaled-variance"),
)
def projected_dot_product(cross_check: bool = True) -> Proof:
    r"""Variance of the scaled scores when queries and keys are projections of normalised tokens.

    Let :math:`x, x' \in \mathbb{R}^{d_{model}}` be fixed with
    :math:`\lVert x\rVert^2 = \lVert x'\rVert^2 = d_{model}`, and
    :math:`q = x W_Q`, :math:`k = x' W_K` with independent weight entries of
    mean 0 and variances :math:`\sigma_Q^2` and :math:`\sigma_K^2`. Then each
    :math:`q_i` has mean 0 and variance :math:`d_{model}\sigma_Q^2`, different
    coordinates are uncorrelated (checked) and independent (argued: they are
    functions of disjoint columns), and
    :math:`\operatorname{Var}[q \cdot k / \sqrt{d_k}] = (d_{model}\sigma_Q\sigma_K)^2`,
    which is 1 for :math:`\sigma_Q = \sigma_K = \sigma_W` only at
    :math:`\sigma_W = 1/\sqrt{d_{model}}`. The sums over the
    :math:`d_{model}` entries of a column are symbolic; the terms with
    :math:`b = a` are split off the sum over :math:`b` by its limits,
    :math:`b < a` and :math:`b > a`.

    Parameters
    ----------
    cross_check : bool, default True
        Also expand :math:`\operatorname{Var}[q \cdot k]` entry by entry for
        :math:`(d_{model}, d_k) \in \{(2, 1), (2, 2), (3, 2)\}`, for
        :math:`x' \ne x` and for :math:`x' = x`.

    Returns
    -------
    Proof
        Twelve checked steps and two argued ones (the independence that
        :func:`~attention_scaling.proofs.dot_product_general_moments`
        assumes); the statement is :math:`\operatorname{Var}[q \cdot k/\sqrt{d_k}]`,
        :math:`d_k` times smaller than :math:`\operatorname{Var}[q \cdot k]`
        (step 11).

    Examples
    --------
    >>> from attention_scaling.proofs import projected_dot_product
    >>> proof = projected_dot_product(cross_check=False)
    >>> print(proof.result.rhs)
    (d_model*sigma_K*sigma_Q)**2
    >>> proof.counts()
    {'checked': 12, 'cited': 0, 'argued': 2, 'measured': 0}
    """
    label = "thm-projected-dot-product"
    a, b = sp.symbols("a b", integer=True, positive=True)
    x = sp.IndexedBase("x", real=True)
    squared_norm = sp.Sum(x[a] ** 2, (a, 1, d_model))
    entries = RandomVariables()
    # Distinct entries of W_Q stand for any pairs (a, i) != (b, i) and (a, i), (b, j) with i != j.
    W_ai, W_bi, W_bj = (entries.add(name, 0, sigma_Q**2) for name in ("W_{ai}", "W_{bi}", "W_{bj}"))

    # E[q_i^2] = sum_a sum_b x_a x_b E[W_ai W_bi], split by the limits of the sum over b into
    # b = a, b < a and b > a: W_ai and W_bi are one entry only when b = a.
    diagonal = sp.Sum(x[a] ** 2 * E(W_ai**2), (a, 1, d_model))
    below, above = (sp.Sum(sp.Sum(x[a] * x[b] * E(W_ai * W_bi), (b, *limits)), (a, 1, d_model))
                    for limits in ((1, a - 1), (a + 1, d_model)))
    # E[q_i q_j], i != j: W_ai and W_bj lie in different columns, never one entry.
    cross_moment = sp.Sum(sp.Sum(x[a] * x[b] * E(W_ai * W_bj), (b, 1, d_model)), (a, 1, d_model))
    general = dot_product_general_moments().result.rhs
    component_moments = (0, 0, sp.sqrt(d_model) * sigma_Q, sp.sqrt(d_model) * sigma_K)
    scaled = RandomVariables()
    *_, dot = _dot_product(scaled, 0, d_model * sigma_Q**2, 0, d_model * sigma_K**2)
    # (d_model sigma_Q sigma_K)^2, kept as the square the page writes (SymPy would expand it).
    score_variance = sp.Pow(d_model * sigma_Q * sigma_K, 2, evaluate=False)
    sigma_W = sp.Symbol("sigma_W", positive=True)
    q_i, q_j, q, k = sp.symbols("q_i q_j q k", real=True)
    f, g = sp.Function("f"), sp.Function("g")
    steps = (
        check(label, E(W_ai * W_bj), 0, entries, r"$(a, i) \ne (b, j)$"),
        check(label, E(W_ai**2), sigma_Q**2, entries, "variance"),
        check(label, sp.Sum(x[a] * E(W_ai), (a, 1, d_model)), 0, entries, "mean of a coordinate"),
        check(label, diagonal, sigma_Q**2 * squared_norm, entries, "$b = a$"),
        check(label, below, 0, entries, "$b < a$"),
        check(label, above, 0, entries, "$b > a$"),
        check(label, sp.Subs(sigma_Q**2 * squared_norm, squared_norm, d_model), d_model * sigma_Q**2,
              reason="LayerNorm"),
        check(label, cross_moment, 0, entries, r"$i \ne j$"),
        argue(label, E(f(q_i) * g(q_j)), E(f(q_i)) * E(g(q_j)), "independent columns"),
        argue(label, E(f(q) * g(k)), E(f(q)) * E(g(k)), "independent weights"),
        check(label, sp.Subs(general, (mu_q, mu_k, sigma_q, sigma_k), component_moments),
              sp.Mul(d_k, score_variance, evaluate=False), reason="general moments"),
        check(label, Var(dot), sp.Mul(d_k, score_variance, evaluate=False), scaled, "so"),
        check(label, Var(dot / sp.sqrt(d_k)), score_variance, scaled, "scaling"),
        check_solutions(label, sigma_W, sp.Eq((d_model * sigma_W**2) ** 2, 1), sp.Interval.open(0, sp.oo),
                        sp.FiniteSet(1 / sp.sqrt(d_model)), reason=r"one $\sigma$ for both"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        (
            "x and x' fixed (or random and independent of the weights), each with squared norm d_model; x' = x allowed",
            "entries of W_Q (d_model x d_k) independent, mean 0, variance sigma_Q^2; of W_K likewise with sigma_K^2",
            "W_Q and W_K independent of each other",
        ),
        steps,
        _projection_cross_checks(label) if cross_check else (),
        results=(12,),
    )
