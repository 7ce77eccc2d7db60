r"""Random variables known only by their moments, and the expectations they allow.

:class:`RandomVariables` holds declared variables and families of
independent copies; :class:`E` and :class:`Var` are the unevaluated
expectation and variance that a step displays and that
:meth:`RandomVariables.evaluate` computes, by linearity (for finite sums
too), independence of distinct variables, and the declared moments. The
proof engine (:mod:`attention_scaling.proofs.engine`) re-exports them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import sympy as sp
from sympy.printing.precedence import PRECEDENCE

__all__ = ["E", "RandomVariables", "Var"]


class E(sp.Function):
    r"""Unevaluated expectation :math:`\mathbb{E}[X]`; :meth:`RandomVariables.evaluate` computes it."""

    nargs = 1

    def _latex(self, printer, exp=None):
        tex = r"\mathbb{E}\left[%s\right]" % printer._print(self.args[0])
        return tex if exp is None else r"%s^{%s}" % (tex, exp)


class Var(sp.Function):
    r"""Unevaluated variance :math:`\operatorname{Var}[X]`; :meth:`RandomVariables.evaluate` computes it."""

    nargs = 1

    def _latex(self, printer, exp=None):
        tex = r"\operatorname{Var}\left[%s\right]" % printer._print(self.args[0])
        return tex if exp is None else r"%s^{%s}" % (tex, exp)


class _Compound(sp.Symbol):
    """A symbol that stands for a sum, such as q.k: parenthesised when raised to a power."""

    precedence = PRECEDENCE["Add"]


class RandomVariables:
    r"""Independent random variables, each known only through its moments.

    Two kinds of variable can be declared: single variables (:meth:`add`)
    and families :math:`X_1, X_2, \dots` of independent copies
    (:meth:`add_family`), indexed by integer symbols, to be summed over a
    symbolic range with ``sympy.Sum``. :meth:`expectation` knows three rules:
    linearity (for finite sums too), :math:`\mathbb{E}[XY] =
    \mathbb{E}[X]\,\mathbb{E}[Y]` for distinct (hence independent) variables,
    and the declared moments. For a product of family members with two index
    symbols :math:`i, j` it takes both cases, :math:`i = j` (one variable)
    and :math:`i \neq j` (independent variables), and joins them with a
    Kronecker delta; SymPy then carries out the sums.

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs import E, Var, RandomVariables
    >>> rv = RandomVariables()
    >>> X = rv.add("X", mean=0, variance=1)
    >>> Y = rv.add("Y", mean=0, variance=1)
    >>> rv.evaluate(Var(X * Y))
    1
    >>> rv.evaluate(E(3 * X + 2))
    2
    """

    def __init__(self) -> None:
        self._raw_moments: dict[sp.Symbol, dict[int, sp.Expr]] = {}
        self._definitions: dict[sp.Symbol, sp.Expr] = {}
        self._families: dict[sp.IndexedBase, dict[int, sp.Expr]] = {}
        self._family_definitions: dict[sp.IndexedBase, Callable[[sp.Expr], sp.Expr]] = {}

    def _claim_name(self, name: str) -> None:
        taken = {str(symbol) for symbol in (*self._raw_moments, *self._definitions, *self._families, *self._family_definitions)}
        if name in taken:
            raise ValueError(f"a random variable named {name!r} is already declared")

    def define(self, name: str, expr) -> sp.Symbol:
        r"""Name a function of declared variables (not a new independent variable).

        The name is only for display: it is replaced by ``expr`` before any
        expectation is taken. A name for a sum prints in parentheses when
        raised to a power, as :math:`(q \cdot k)^2`.

        Examples
        --------
        >>> from attention_scaling.proofs import RandomVariables, Var
        >>> rv = RandomVariables()
        >>> Z, W = rv.add("Z", 0, 1), rv.add("W", 0, 1)
        >>> D = rv.define("D", Z - W)
        >>> rv.evaluate(Var(D))
        2
        """
        self._claim_name(name)
        expr = sp.sympify(expr)
        symbol = (_Compound if isinstance(expr, (sp.Add, sp.Sum)) else sp.Symbol)(name, real=True)
        self._definitions[symbol] = expr
        return symbol

    def add(self, name: str, mean=None, variance=None, higher: Mapping[int, sp.Expr] | None = None) -> sp.Symbol:
        """Declare a variable, independent of all others, and return its symbol.

        ``mean`` and ``variance`` default to the symbols ``mu_name`` and
        ``sigma_name**2``; ``higher`` maps a power ``k >= 3`` to
        :math:`\\mathbb{E}[X^k]`. A higher moment that is needed but not
        declared stays an unknown symbol, so a result that depends on it
        cannot simplify to a claim that ignores it.
        """
        self._claim_name(name)
        symbol = sp.Symbol(name, real=True)
        self._raw_moments[symbol] = _raw_moments(name, mean, variance, higher)
        return symbol

    def add_family(self, name: str, mean=None, variance=None, higher: Mapping[int, sp.Expr] | None = None) -> sp.IndexedBase:
        r"""Declare independent, identically distributed :math:`X_1, X_2, \dots`; return the ``IndexedBase``.

        The moments are given as for :meth:`add`. ``X[i]`` and ``X[j]`` are
        the same variable when the index symbols are equal and independent
        otherwise; members of different families are independent.

        Examples
        --------
        >>> import sympy as sp
        >>> from attention_scaling.proofs import RandomVariables, Var
        >>> rv = RandomVariables()
        >>> X = rv.add_family("X", 0, 1)
        >>> i = sp.Symbol("i", integer=True, positive=True)
        >>> n = sp.Symbol("n", integer=True, positive=True)
        >>> rv.evaluate(Var(sp.Sum(X[i], (i, 1, n))))
        n
        """
        self._claim_name(name)
        base = sp.IndexedBase(name, real=True)
        self._families[base] = _raw_moments(name, mean, variance, higher)
        return base

    def define_family(self, name: str, member: Callable[[sp.Expr], sp.Expr]) -> sp.IndexedBase:
        r"""Name a family whose member ``name[i]`` is ``member(i)``, a function of declared families.

        Examples
        --------
        >>> import sympy as sp
        >>> from attention_scaling.proofs import E, RandomVariables
        >>> rv = RandomVariables()
        >>> Z = rv.add_family("Z", 0, 1)
        >>> Y = rv.define_family("Y", lambda i: 2 * Z[i] + 1)
        >>> i = sp.Symbol("i", integer=True, positive=True)
        >>> rv.evaluate(E(Y[i] ** 2))
        5
        """
        self._claim_name(name)
        base = sp.IndexedBase(name, real=True)
        self._family_definitions[base] = member
        return base

    def _substitute(self, expr) -> sp.Expr:
        """``expr`` with every named function of the variables replaced by its definition."""
        expr = sp.sympify(expr).subs(self._definitions)
        for base, member in self._family_definitions.items():
            expr = expr.replace(
                lambda e, base=base: isinstance(e, sp.Indexed) and e.base == base,
                lambda e, member=member: member(*e.indices),
            )
        return expr

    def expectation(self, expr) -> sp.Expr:
        """:math:`\\mathbb{E}` of a polynomial in the declared variables, by linearity and independence."""
        total = sp.Integer(0)
        for term in sp.Add.make_args(_distribute(self._substitute(expr))):
            if isinstance(term, sp.Sum):
                total += _sum_out(self.expectation(term.function), term.limits)
            else:
                total += self._term_expectation(term)
        return sp.expand(total)

    def _term_expectation(self, term: sp.Expr) -> sp.Expr:
        """E of a product of variables: split on whether its (at most two) symbolic indices are equal."""
        indices = sorted(
            {index for member in term.atoms(sp.Indexed) for index in member.indices if not index.is_number}, key=str
        )
        if len(indices) > 2:
            raise NotImplementedError(f"E of a product with more than two summation indices: {term}")
        if len(indices) == 2:
            first, second = indices
            same = self._distinct_expectation(term.subs(second, first))
            distinct = self._distinct_expectation(term)
            return sp.KroneckerDelta(first, second) * same + (1 - sp.KroneckerDelta(first, second)) * distinct
        return self._distinct_expectation(term)

    def _distinct_expectation(self, term: sp.Expr) -> sp.Expr:
        """E of a polynomial in which family members with different indices are different variables."""
        moments = dict(self._raw_moments)
        members = {}
        for member in term.atoms(sp.Indexed):
            if member.base not in self._families:
                raise ValueError(f"{member.base} is not a declared family of random variables")
            stand_in = members.setdefault(member, sp.Dummy(str(member), real=True))
            moments[stand_in] = self._families[member.base]
        term = sp.expand(term.xreplace(members))
        variables = [symbol for symbol in moments if term.has(symbol)]
        if not variables:
            return term
        total = sp.Integer(0)
        for powers, coefficient in sp.Poly(term, *variables).terms():
            for symbol, power in zip(variables, powers):
                coefficient *= moments[symbol][power] if power in moments[symbol] else sp.Symbol(f"E[{symbol}^{power}]", real=True)
            total += coefficient
        return sp.expand(total)

    def variance(self, expr) -> sp.Expr:
        r""":math:`\operatorname{Var}[Y] = \mathbb{E}[Y^2] - \mathbb{E}[Y]^2`, the definition."""
        return sp.expand(self.expectation(sp.sympify(expr) ** 2) - self.expectation(expr) ** 2)

    def evaluate(self, expr) -> sp.Expr:
        """Replace every :class:`E` and :class:`Var` in ``expr`` by its value, and carry out the sums."""
        return sp.simplify(self._evaluate(expr))

    def _evaluate(self, expr) -> sp.Expr:
        """:meth:`evaluate` without the final ``simplify``, for a caller that reduces the result itself."""
        expr = sp.sympify(expr)
        expr = expr.replace(lambda e: isinstance(e, Var), lambda e: self.variance(e.args[0]))
        expr = expr.replace(lambda e: isinstance(e, E), lambda e: self.expectation(e.args[0]))
        return expr.replace(lambda e: isinstance(e, sp.Sum), lambda e: _sum_out(e.function, e.limits))


def _raw_moments(name: str, mean, variance, higher) -> dict[int, sp.Expr]:
    """The raw moments E[X^0], E[X^1], E[X^2] (and any higher ones given) of a declared variable."""
    mean = sp.Symbol(f"mu_{name}", real=True) if mean is None else sp.sympify(mean)
    variance = sp.Symbol(f"sigma_{name}", positive=True) ** 2 if variance is None else sp.sympify(variance)
    raw = {0: sp.Integer(1), 1: mean, 2: variance + mean**2}
    for power, value in (higher or {}).items():
        if power < 3:
            raise ValueError(f"higher must map powers >= 3 to moments; got power {power}")
        raw[power] = sp.sympify(value)
    return raw


def _distribute(expr) -> sp.Expr:
    r"""``expr`` expanded so that each product of finite sums is one nested sum.

    :math:`(\sum_i a_i)(\sum_j b_j) = \sum_i \sum_j a_i b_j`, with a fresh index
    for every factor, so a square of a sum becomes a double sum.
    """
    expr = sp.expand(expr)
    terms = []
    for term in sp.Add.make_args(expr):
        factors = []
        for factor in sp.Mul.make_args(term):
            base, power = factor.as_base_exp()
            if isinstance(base, sp.Sum) and power.is_Integer and power > 0:
                factors += [base] * int(power)
            else:
                factors.append(factor)
        sums = [factor for factor in factors if isinstance(factor, sp.Sum)]
        if not sums:
            terms.append(term)
            continue
        body = sp.Mul(*(factor for factor in factors if not isinstance(factor, sp.Sum)))
        limits = []
        for one_sum in sums:
            renamed = {}
            for index, low, high in one_sum.limits:
                renamed[index] = sp.Dummy(str(index), integer=True)
                limits.append((renamed[index], low, high))
            body *= one_sum.function.xreplace(renamed)
        terms.append(sp.Sum(sp.expand(body), *limits))
    return sp.Add(*terms)


def _sum_out(body, limits) -> sp.Expr:
    """Carry out a nested finite sum, innermost limit first.

    A sum of a Kronecker delta over one index leaves a condition on the other
    (``i <= n``); the other index runs over its own limits, which make the
    condition true, so each partial result is refined under those limits.
    """
    value = sp.expand(body)
    for position, (index, low, high) in enumerate(limits):
        by_terms = _sum_of_unknown_sequences(value, index, low, high)
        value = sp.Sum(value, (index, low, high)).doit() if by_terms is None else by_terms
        outer = limits[position + 1 :]
        if outer and value.has(sp.Piecewise):
            ranges = sp.And(*(sp.Q.ge(i, lo) & sp.Q.le(i, hi) for i, lo, hi in outer))
            value = sp.refine(value, ranges)
    # Not simplified here: the caller simplifies the whole expression once (evaluate), or reduces the difference (check).
    return value


# What Sum.doit carries out inside a sum's body before it sums (its deep doit).
_UNEVALUATED = (sp.Derivative, sp.Integral, sp.Limit, sp.Subs, sp.Sum, sp.Product)


def _sum_of_unknown_sequences(value, index, low, high) -> sp.Expr | None:
    r"""The sum of ``value`` over ``index`` from ``low`` to ``high`` term by term, or None to leave it to ``Sum.doit``.

    Only for a symbolic number of terms (:math:`d_k`, not 4), and only when
    every term of the expanded ``value`` is a coefficient free of the index
    times either 1 or a function of indexed symbols at the index itself
    (:math:`x_i^2`, :math:`u_i v_i`): an unknown sequence, which has no closed
    form. ``Sum.doit`` searches for one all the same (hypergeometric terms,
    telescoping) and, finding none, leaves the whole sum unevaluated; that
    search was about a quarter of ``prove``'s time (every proof in one
    process: about 20 s before, 13 s after, on two idle cores). Here each
    such term becomes its coefficient times :math:`\sum_i x_i^2`, and a
    constant term its value times the number of terms; a finite sum is the
    sum of its terms' sums. Anything else (a term in :math:`i` itself,
    :math:`x_{i+1}`, a Kronecker delta, an unevaluated derivative) returns
    None.

    Examples
    --------
    >>> import sympy as sp
    >>> i, n = sp.symbols("i n", integer=True, positive=True)
    >>> x, c = sp.IndexedBase("x"), sp.Symbol("c")
    >>> _sum_of_unknown_sequences(sp.expand((x[i] - c) ** 2), i, 1, n)
    c**2*n - 2*c*Sum(x[i], (i, 1, n)) + Sum(x[i]**2, (i, 1, n))
    >>> _sum_of_unknown_sequences(x[i] + i, i, 1, n) is None, _sum_of_unknown_sequences(x[i], i, 1, 4) is None
    (True, True)
    """
    count = sp.sympify(high - low + 1)
    if count.is_Integer or count.is_finite is not True or value.has(*_UNEVALUATED):
        return None
    total = sp.S.Zero
    for term in sp.Add.make_args(value):
        coefficient, sequence = term.as_independent(index, as_Add=False)
        if sequence == 1:
            total += coefficient * count
            continue
        at_index = {member: sp.Dummy() for member in sequence.atoms(sp.Indexed) if index in member.indices}
        if not at_index or index in sequence.xreplace(at_index).free_symbols:
            return None
        total += coefficient * sp.Sum(sequence, (index, low, high))
    return total
