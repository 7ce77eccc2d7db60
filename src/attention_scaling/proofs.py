r"""Symbolic proofs, checked by SymPy, of every identity the site states.

Each theorem is a function that derives its result step by step, has SymPy
check every step, and returns a :class:`Proof`. A step that SymPy does not
reduce to an identity raises :class:`ProofError` naming the theorem, so a
false claim stops the build of any page that states it.

Expectations are distribution-free. A random variable is a SymPy symbol known
only through the moments declared for it in a :class:`RandomVariables`
collection, and :math:`\mathbb{E}` is evaluated with two rules: linearity, and
:math:`\mathbb{E}[XY] = \mathbb{E}[X]\,\mathbb{E}[Y]` for distinct (hence
independent) variables. Nothing else about a distribution is assumed unless a
theorem says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import sympy as sp
import sympy.stats
from sympy.printing.precedence import PRECEDENCE

__all__ = [
    "Derivation",
    "E",
    "Var",
    "Proof",
    "ProofError",
    "RandomVariables",
    "Step",
    "THEOREMS",
    "THEOREM_NAMES",
    "check",
    "correlated_dot_product",
    "correlated_scaling_limits",
    "d_k",
    "d_model",
    "mu_k",
    "mu_q",
    "rho",
    "sigma_k",
    "sigma_q",
    "dot_product_general_moments",
    "dot_product_variance",
    "logit_norm_growth",
    "gaussian_logit_moments",
    "gaussian_max_bound",
    "needle_limit",
    "product_variance",
    "projected_dot_product",
    "prove",
    "prove_all",
    "qk_norm_bound_theorem",
    "scaled_variance",
    "softmax_jacobian_theorem",
    "softmax_shift_invariance",
    "stable_softmax_bounds",
]


class ProofError(AssertionError):
    """A claimed identity that SymPy did not reduce to ``0 = 0``."""


class E(sp.Function):
    r"""Unevaluated expectation :math:`\mathbb{E}[X]`; :meth:`RandomVariables.evaluate` computes it."""

    nargs = 1

    def _latex(self, printer):
        return r"\mathbb{E}\left[%s\right]" % printer._print(self.args[0])


class Var(sp.Function):
    r"""Unevaluated variance :math:`\operatorname{Var}[X]`; :meth:`RandomVariables.evaluate` computes it."""

    nargs = 1

    def _latex(self, printer):
        return r"\operatorname{Var}\left[%s\right]" % printer._print(self.args[0])


class _Compound(sp.Symbol):
    """A symbol that stands for a sum, such as q.k: parenthesised when raised to a power."""

    precedence = PRECEDENCE["Add"]


class RandomVariables:
    r"""Independent random variables, each known only through its moments.

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

    def define(self, name: str, expr) -> sp.Symbol:
        """Name a function of declared variables (not a new independent variable).

        The name is only for display: it is replaced by ``expr`` before any
        expectation is taken.

        Examples
        --------
        >>> from attention_scaling.proofs import RandomVariables, Var
        >>> rv = RandomVariables()
        >>> Z, W = rv.add("Z", 0, 1), rv.add("W", 0, 1)
        >>> D = rv.define("D", Z - W)
        >>> rv.evaluate(Var(D))
        2
        """
        symbol = sp.Symbol(name, real=True)
        if symbol in self._raw_moments or symbol in self._definitions:
            raise ValueError(f"a random variable named {name!r} is already declared")
        self._definitions[symbol] = sp.sympify(expr)
        return symbol

    def add(self, name: str, mean=None, variance=None, higher: Mapping[int, sp.Expr] | None = None) -> sp.Symbol:
        """Declare a variable, independent of all others, and return its symbol.

        ``mean`` and ``variance`` default to the symbols ``mu_name`` and
        ``sigma_name**2``; ``higher`` maps a power ``k >= 3`` to
        :math:`\\mathbb{E}[X^k]`. A higher moment that is needed but not
        declared stays an unknown symbol, so a result that depends on it
        cannot simplify to a claim that ignores it.
        """
        symbol = sp.Symbol(name, real=True)
        if symbol in self._raw_moments or symbol in self._definitions:
            raise ValueError(f"a random variable named {name!r} is already declared")
        mean = sp.Symbol(f"mu_{name}", real=True) if mean is None else sp.sympify(mean)
        variance = sp.Symbol(f"sigma_{name}", positive=True) ** 2 if variance is None else sp.sympify(variance)
        raw = {0: sp.Integer(1), 1: mean, 2: variance + mean**2}
        for power, value in (higher or {}).items():
            if power < 3:
                raise ValueError(f"higher must map powers >= 3 to moments; got power {power}")
            raw[power] = sp.sympify(value)
        self._raw_moments[symbol] = raw
        return symbol

    def add_sum(self, name: str, term, copy, count) -> sp.Symbol:
        r"""Declare :math:`S = T_1 + \dots + T_{count}`, a sum of independent copies of ``term``.

        ``term`` and ``copy`` are two independent copies of one summand,
        written in declared variables that they do not share. The first two
        moments of :math:`S` are derived, for a symbolic ``count``, with
        SymPy's ``Sum``: :math:`\mathbb{E}[S] = \sum_i \mathbb{E}[T_i]`, and of
        the ``count**2`` pairs in :math:`\mathbb{E}[S^2] = \sum_{i,j}
        \mathbb{E}[T_i T_j]`, ``count`` are on the diagonal and the others
        factor as ``E[term * copy]``. Higher moments of :math:`S` stay unknown.
        ``S`` is only meant to be combined with constants, not with the
        variables it is made of.

        Examples
        --------
        >>> import sympy as sp
        >>> from attention_scaling.proofs import RandomVariables, Var
        >>> rv = RandomVariables()
        >>> X1, X2 = rv.add("X_1", 0, 1), rv.add("X_2", 0, 1)
        >>> n = sp.Symbol("n", integer=True, positive=True)
        >>> S = rv.add_sum("S", X1, X2, n)
        >>> rv.evaluate(Var(S))
        n
        """
        term, copy = sp.sympify(term).subs(self._definitions), sp.sympify(copy).subs(self._definitions)
        shared = term.free_symbols & copy.free_symbols & set(self._raw_moments)
        if shared:
            raise ValueError(f"term and copy must be independent; they share {sorted(map(str, shared))}")
        for power in (1, 2):
            if sp.simplify(self.expectation(term**power) - self.expectation(copy**power)) != 0:
                raise ValueError(f"copy must be distributed like term; their moments of order {power} differ")
        i, j = sp.symbols("i j", integer=True, positive=True)
        pairs = sp.Sum(sp.Sum(1, (j, 1, count)), (i, 1, count)).doit()
        diagonal = sp.Sum(1, (i, 1, count)).doit()
        mean = sp.Sum(self.expectation(term), (i, 1, count)).doit()
        second = diagonal * self.expectation(term**2) + (pairs - diagonal) * self.expectation(term * copy)
        symbol = _Compound(name, real=True)
        if symbol in self._raw_moments or symbol in self._definitions:
            raise ValueError(f"a random variable named {name!r} is already declared")
        self._raw_moments[symbol] = {0: sp.Integer(1), 1: sp.expand(mean), 2: sp.expand(second)}
        return symbol

    def _raw(self, symbol: sp.Symbol, power: int) -> sp.Expr:
        known = self._raw_moments[symbol]
        return known[power] if power in known else sp.Symbol(f"E[{symbol}^{power}]", real=True)

    def expectation(self, expr) -> sp.Expr:
        """:math:`\\mathbb{E}` of a polynomial in the declared variables, by linearity and independence."""
        expr = sp.expand(sp.sympify(expr).subs(self._definitions))
        variables = [s for s in self._raw_moments if expr.has(s)]
        if not variables:
            return expr
        polynomial = sp.Poly(expr, *variables)
        total = sp.Integer(0)
        for powers, coefficient in polynomial.terms():
            term = coefficient
            for symbol, power in zip(variables, powers):
                term *= self._raw(symbol, power)
            total += term
        return sp.expand(total)

    def variance(self, expr) -> sp.Expr:
        r""":math:`\operatorname{Var}[Y] = \mathbb{E}[Y^2] - \mathbb{E}[Y]^2`, the definition."""
        return sp.expand(self.expectation(sp.sympify(expr) ** 2) - self.expectation(expr) ** 2)

    def evaluate(self, expr) -> sp.Expr:
        """Replace every :class:`E` and :class:`Var` in ``expr`` by its value."""
        expr = sp.sympify(expr)
        expr = expr.replace(lambda e: isinstance(e, Var), lambda e: self.variance(e.args[0]))
        expr = expr.replace(lambda e: isinstance(e, E), lambda e: self.expectation(e.args[0]))
        return sp.simplify(expr)


@dataclass(frozen=True)
class Step:
    """One checked equation ``lhs = rhs`` of a derivation, with its reason.

    ``shown`` is the LaTeX a reader sees when the checked expressions are too
    raw to read (a derivative after the quotient rule, say); it states the
    same equation in the notation of the page.
    """

    lhs: sp.Expr
    rhs: sp.Expr
    reason: str = ""
    relation: str = "="
    shown: str | None = None

    def latex(self) -> str:
        """The equation in LaTeX: ``shown`` if given, else ``lhs = rhs`` as SymPy prints them."""
        if self.shown is not None:
            return self.shown
        return f"{sp.latex(self.lhs)} {self.relation} {sp.latex(self.rhs)}"

    def _repr_latex_(self) -> str:
        return f"$\\displaystyle {self.latex()}$"


def check(
    theorem: str,
    lhs,
    rhs,
    variables: RandomVariables | None = None,
    reason: str = "",
    shown: str | None = None,
) -> Step:
    r"""Check that SymPy reduces ``lhs - rhs`` to zero, or raise :class:`ProofError`.

    Parameters
    ----------
    theorem : str
        Label of the theorem the step belongs to; it names the failure.
    lhs, rhs : sympy.Expr or number
        The two sides. :class:`E` and :class:`Var` in them are evaluated with
        ``variables``.
    variables : RandomVariables, optional
        The random variables the sides refer to.
    reason : str, optional
        Why the step holds, shown beside it.
    shown : str, optional
        LaTeX to display instead of ``lhs = rhs``.

    Returns
    -------
    Step
        The checked equation, displayed as LaTeX in a notebook.

    Raises
    ------
    ProofError
        If the difference does not simplify to exactly 0, or the result still
        holds a ``Piecewise`` condition.

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs import RandomVariables, Var, check
    >>> rv = RandomVariables()
    >>> X = rv.add("X")
    >>> c = sp.Symbol("c", nonzero=True)
    >>> check("demo", Var(X / c), Var(X) / c**2, rv).latex()
    '\\operatorname{Var}\\left[\\frac{X}{c}\\right] = \\frac{\\operatorname{Var}\\left[X\\right]}{c^{2}}'
    >>> check("demo", Var(X / c), Var(X) / c, rv)
    Traceback (most recent call last):
    ...
    attention_scaling.proofs.ProofError: demo: SymPy does not reduce Var(X/c) = Var(X)/c to an identity; lhs - rhs simplifies to sigma_X**2*(1 - c)/c**2
    """
    lhs, rhs = sp.sympify(lhs), sp.sympify(rhs)
    difference = lhs - rhs
    difference = variables.evaluate(difference) if variables is not None else sp.simplify(difference)
    if difference.has(sp.Piecewise):
        raise ProofError(f"{theorem}: the check of {lhs} = {rhs} left a Piecewise condition: {difference}")
    if difference != 0:
        raise ProofError(
            f"{theorem}: SymPy does not reduce {lhs} = {rhs} to an identity; lhs - rhs simplifies to {difference}"
        )
    return Step(lhs, rhs, reason, shown=shown)


# The SymPy relation of each Step.relation that a theorem's result can have.
_RELATIONS = {"=": sp.Eq, r"\le": sp.Le, r"\ge": sp.Ge}


@dataclass(frozen=True)
class Proof:
    """The record of a proved theorem.

    Attributes
    ----------
    name : str
        Human-readable name.
    label : str
        Stable label, the same as on the page that states the theorem.
    statement : str
        The result in LaTeX, generated from ``result``.
    assumptions : tuple of str
        What the theorem assumes, in words.
    result : sympy.Eq or sympy.Le
        The proved identity (or the last of them, when there are several), or
        the proved inequality when the result step is one.
    steps : tuple of Step
        The checked equations of the derivation, in order.
    cross_checks : tuple of Step
        Special cases checked another way (fixed sizes, named distributions).
    result_index : int
        Which step is the theorem's result (default: the last).
    """

    name: str
    label: str
    assumptions: tuple[str, ...]
    steps: tuple[Step, ...]
    cross_checks: tuple[Step, ...] = ()
    result_index: int = -1
    result: sp.Rel = field(init=False)
    statement: str = field(init=False)

    def __post_init__(self):
        final = self.steps[self.result_index]
        relation = _RELATIONS.get(final.relation, sp.Eq)
        object.__setattr__(self, "result", relation(final.lhs, final.rhs, evaluate=False))
        object.__setattr__(self, "statement", final.latex())

    def _repr_latex_(self) -> str:
        return Derivation(self.steps)._repr_latex_()


@dataclass(frozen=True)
class Derivation:
    r"""Checked steps displayed as one aligned block, each reason on the right.

    Examples
    --------
    >>> from attention_scaling.proofs import Derivation, Step
    >>> Derivation((Step(1, 1, "trivially"),)).latex()
    '\\begin{aligned}1 &= 1 && \\text{(trivially)}\\end{aligned}'
    """

    steps: tuple[Step, ...]

    def latex(self) -> str:
        rows = []
        for step in self.steps:
            left, _, right = step.latex().partition(f" {step.relation} ")
            row = f"{left} &{step.relation} {right}"
            if step.reason:
                row += f" && \\text{{({step.reason})}}"
            rows.append(row)
        return "\\begin{aligned}" + r" \\ ".join(rows) + "\\end{aligned}"

    def _repr_latex_(self) -> str:
        return f"$${self.latex()}$$"


THEOREMS: dict[str, Callable[[], Proof]] = {}
#: The name of each theorem, by label: what the pages and citations call it.
THEOREM_NAMES: dict[str, str] = {}


def _theorem(label: str, name: str):
    def register(function: Callable[[], Proof]) -> Callable[[], Proof]:
        THEOREMS[label] = function
        THEOREM_NAMES[label] = name
        return function

    return register


def prove(label: str) -> Proof:
    """Run the proof of the theorem with this label.

    Examples
    --------
    >>> from attention_scaling.proofs import prove
    >>> prove("thm-scaled-variance").name
    'Scaling a random variable'
    """
    if label not in THEOREMS:
        raise KeyError(f"no theorem labelled {label!r}; known labels: {', '.join(THEOREMS)}")
    return THEOREMS[label]()


def prove_all() -> list[tuple[str, Proof | ProofError, float]]:
    """Run every proof; return ``(label, proof or error, seconds)`` for each."""
    outcomes = []
    for label, function in THEOREMS.items():
        start = time.perf_counter()
        try:
            outcome: Proof | ProofError = function()
        except ProofError as error:
            outcome = error
        outcomes.append((label, outcome, time.perf_counter() - start))
    return outcomes




def _check_nonzero(theorem: str, lhs, rhs, reason: str = "", shown: str | None = None) -> Step:
    """Check that SymPy decides ``lhs - rhs`` is not zero (the claim ``lhs != rhs``)."""
    lhs, rhs = sp.sympify(lhs), sp.sympify(rhs)
    if sp.simplify(lhs - rhs).is_zero is not False:
        raise ProofError(f"{theorem}: SymPy cannot show that {lhs} differs from {rhs}")
    return Step(lhs, rhs, reason, relation=r"\neq", shown=shown)


# -- Symbols shared by the theorems -------------------------------------------------

d_k = sp.Symbol("d_k", integer=True, positive=True)
mu_q, mu_k = sp.symbols("mu_q mu_k", real=True)
sigma_q, sigma_k = sp.symbols("sigma_q sigma_k", positive=True)
rho = sp.Symbol("rho", real=True)


def _dot_product(rv: RandomVariables, mean_q, var_q, mean_k, var_k) -> tuple[sp.Symbol, ...]:
    """Declare two coordinates (q_1, k_1), (q_2, k_2) and the dot product over d_k coordinates."""
    q1, k1 = rv.add("q_1", mean_q, var_q), rv.add("k_1", mean_k, var_k)
    q2, k2 = rv.add("q_2", mean_q, var_q), rv.add("k_2", mean_k, var_k)
    dot = rv.add_sum(r"q \cdot k", q1 * k1, q2 * k2, d_k)
    return q1, k1, q2, k2, dot


# -- Theorems -------------------------------------------------------------------------


@_theorem("lem-product-variance", "Variance of a product of independent variables")
def product_variance() -> Proof:
    r"""Variance of a product of independent random variables.

    For independent :math:`X, Y` with means :math:`\mu_X, \mu_Y` and variances
    :math:`\sigma_X^2, \sigma_Y^2`,
    :math:`\operatorname{Var}[XY] = \sigma_X^2\sigma_Y^2 + \mu_X^2\sigma_Y^2 + \mu_Y^2\sigma_X^2`;
    with zero means, :math:`\operatorname{Var}[XY] = \operatorname{Var}[X]\operatorname{Var}[Y]`.

    Examples
    --------
    >>> from attention_scaling.proofs import product_variance
    >>> print(product_variance().result.rhs)
    mu_X**2*sigma_Y**2 + mu_Y**2*sigma_X**2 + sigma_X**2*sigma_Y**2
    """
    label = "lem-product-variance"
    rv = RandomVariables()
    X, Y = rv.add("X"), rv.add("Y")
    mu_x, mu_y = sp.symbols("mu_X mu_Y", real=True)
    s_x, s_y = sp.symbols("sigma_X sigma_Y", positive=True)
    centred = RandomVariables()
    Xc, Yc = centred.add("X", mean=0), centred.add("Y", mean=0)
    steps = (
        check(label, E(X * Y), E(X) * E(Y), rv, "independence"),
        check(label, E(X**2 * Y**2), E(X**2) * E(Y**2), rv, "independence"),
        check(label, E(X**2), s_x**2 + mu_x**2, rv, "definition of variance"),
        check(label, Var(X * Y), s_x**2 * s_y**2 + mu_x**2 * s_y**2 + mu_y**2 * s_x**2, rv),
        check(label, Var(Xc * Yc), Var(Xc) * Var(Yc), centred, "zero means"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("X and Y independent", "finite means and variances"),
        steps,
        result_index=3,
    )


def _distribution_cross_checks(label: str) -> tuple[Step, ...]:
    """Var(q.k) = d_k with sympy.stats distributions, for d_k = 1..4."""
    distributions = {
        "Normal(0, 1)": lambda name: sympy.stats.Normal(name, 0, 1),
        "Rademacher": lambda name: sympy.stats.Rademacher(name),
        "Uniform(−√3, √3)": lambda name: sympy.stats.Uniform(name, -sp.sqrt(3), sp.sqrt(3)),
    }
    steps = []
    for title, make in distributions.items():
        for size in range(1, 5):
            dot = sum(make(f"q{i}") * make(f"k{i}") for i in range(size))
            variance = sp.simplify(sympy.stats.variance(dot))
            if variance != size:
                raise ProofError(f"{label}: sympy.stats gives Var[q.k] = {variance}, not {size}, for {title} at d_k = {size}")
            steps.append(Step(sp.Symbol(rf"\operatorname{{Var}}[q \cdot k]_{{d_k={size}}}"), variance, title))
    return tuple(steps)


@_theorem("thm-dot-product-variance", "Mean and variance of the dot product")
def dot_product_variance(cross_check: bool = True) -> Proof:
    r"""Mean and variance of :math:`q \cdot k` for standardised independent components.

    With independent components of mean 0 and variance 1 — and nothing else
    assumed about their distribution — :math:`\mathbb{E}[q \cdot k] = 0` and
    :math:`\operatorname{Var}[q \cdot k] = d_k`, for a symbolic :math:`d_k`.

    Parameters
    ----------
    cross_check : bool, default True
        Also compute the variance with ``sympy.stats`` for Normal, Rademacher
        and Uniform(−√3, √3) components at :math:`d_k = 1, \dots, 4`.

    Examples
    --------
    >>> from attention_scaling.proofs import dot_product_variance
    >>> dot_product_variance(cross_check=False).statement
    '\\operatorname{Var}\\left[q \\cdot k\\right] = d_{k}'
    """
    label = "thm-dot-product-variance"
    rv = RandomVariables()
    q1, k1, q2, k2, dot = _dot_product(rv, 0, 1, 0, 1)
    steps = (
        check(label, E(q1 * k1), E(q1) * E(k1), rv, "independence"),
        check(label, E(q1 * k1), 0, rv, "zero means"),
        check(label, E(q1**2 * k1**2), E(q1**2) * E(k1**2), rv, "independence"),
        check(label, E(q1**2 * k1**2), 1, rv, "unit variances"),
        check(label, E(dot), 0, rv, "linearity"),
        check(label, E(dot**2), d_k * 1 + d_k * (d_k - 1) * 0, rv, "only the diagonal pairs remain"),
        check(label, Var(dot), d_k, rv, "definition of variance"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("components of q and k independent", "each component has mean 0 and variance 1"),
        steps,
        _distribution_cross_checks(label) if cross_check else (),
    )


@_theorem("thm-dot-product-general-moments", "Dot-product variance for general means and variances")
def dot_product_general_moments() -> Proof:
    r"""Variance of :math:`q \cdot k` when the components have any means and variances.

    :math:`\operatorname{Var}[q \cdot k] = d_k(\sigma_q^2\sigma_k^2 + \mu_q^2\sigma_k^2 + \mu_k^2\sigma_q^2)`:
    the constant :math:`\sqrt{d_k}` normalises the scores only when
    :math:`\mu_q = \mu_k = 0` and :math:`\sigma_q\sigma_k = 1`.

    Examples
    --------
    >>> from attention_scaling.proofs import dot_product_general_moments
    >>> proof = dot_product_general_moments()
    >>> print(proof.result.rhs)
    d_k*(mu_k**2*sigma_q**2 + mu_q**2*sigma_k**2 + sigma_k**2*sigma_q**2)
    """
    label = "thm-dot-product-general-moments"
    rv = RandomVariables()
    q1, k1, q2, k2, dot = _dot_product(rv, mu_q, sigma_q**2, mu_k, sigma_k**2)
    term_variance = sigma_q**2 * sigma_k**2 + mu_q**2 * sigma_k**2 + mu_k**2 * sigma_q**2
    steps = (
        check(label, E(dot), d_k * mu_q * mu_k, rv, "linearity, independence"),
        check(label, Var(q1 * k1), term_variance, rv, "lemma on products"),
        check(label, Var(dot), d_k * Var(q1 * k1), rv, "independent coordinates"),
        check(label, Var(dot), sp.factor(term_variance) * d_k, rv),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        (
            "components of q and k independent",
            "q-components share mean mu_q and variance sigma_q^2; k-components mu_k and sigma_k^2",
        ),
        steps,
    )


def _correlated_dot_product() -> tuple[RandomVariables, sp.Symbol, sp.Symbol, sp.Symbol, sp.Symbol]:
    """Pairs q_i = Z_i, k_i = rho Z_i + sqrt(1 - rho^2) W_i from standard normals; their dot product over d_k."""
    standard_normal = sympy.stats.Normal("N", 0, 1)
    gaussian = {power: sympy.stats.moment(standard_normal, power) for power in (3, 4)}
    rv = RandomVariables()
    Z1, W1, Z2, W2 = (rv.add(name, 0, 1, gaussian) for name in ("Z_1", "W_1", "Z_2", "W_2"))
    root = sp.sqrt(1 - rho**2)
    q1, k1 = rv.define("q_1", Z1), rv.define("k_1", rho * Z1 + root * W1)
    q2, k2 = rv.define("q_2", Z2), rv.define("k_2", rho * Z2 + root * W2)
    dot = rv.add_sum(r"q \cdot k", q1 * k1, q2 * k2, d_k)
    return rv, Z1, q1, k1, dot


@_theorem("thm-correlated-dot-product", "Dot product of correlated queries and keys")
def correlated_dot_product() -> Proof:
    r"""Mean and variance of :math:`q \cdot k` when each pair :math:`(q_i, k_i)` is correlated.

    Each pair is jointly Gaussian with unit variances and correlation
    :math:`\rho`, built as :math:`q_i = Z_i`, :math:`k_i = \rho Z_i +
    \sqrt{1-\rho^2}\,W_i` from independent standard normals (whose moments
    come from ``sympy.stats``); pairs are independent across :math:`i`. Then
    :math:`\mathbb{E}[q \cdot k] = \rho d_k` and
    :math:`\operatorname{Var}[q \cdot k] = d_k(1 + \rho^2)`.

    Examples
    --------
    >>> from attention_scaling.proofs import correlated_dot_product
    >>> [step.latex() for step in correlated_dot_product().steps[-2:]]
    ['\\mathbb{E}\\left[q \\cdot k\\right] = d_{k} \\rho', '\\operatorname{Var}\\left[q \\cdot k\\right] = d_{k} \\left(\\rho^{2} + 1\\right)']
    """
    label = "thm-correlated-dot-product"
    rv, Z1, q1, k1, dot = _correlated_dot_product()
    steps = (
        check(label, Var(k1), 1, rv, "unit variance"),
        check(label, E(q1 * k1), rho, rv, "correlation rho"),
        check(label, E(Z1**4), 3, rv, "fourth moment of N(0, 1)"),
        check(label, E(q1**2 * k1**2), 1 + 2 * rho**2, rv, "Isserlis"),
        check(label, E(dot), rho * d_k, rv, "linearity"),
        check(label, Var(dot), d_k * (1 + rho**2), rv, "independent pairs"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        (
            "each (q_i, k_i) jointly Gaussian, unit variances, correlation rho",
            "pairs independent across coordinates",
        ),
        steps,
    )


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


# -- Projections at initialisation ------------------------------------------------------

d_model = sp.Symbol("d_model", integer=True, positive=True)
sigma_Q, sigma_K = sp.symbols("sigma_Q sigma_K", positive=True)


def _projection_cross_checks(label: str) -> tuple[Step, ...]:
    r"""Var(q.k) from every weight entry, at small fixed sizes, with x' distinct from x and x' = x.

    Nothing here assumes that the coordinates of q are independent: the
    expectation expands the dot product down to the individual entries of
    W_Q and W_K, which are the only variables declared.
    """
    steps = []
    for size, width in ((2, 1), (2, 2), (3, 2)):
        for self_attention in (False, True):
            rv = RandomVariables()
            w_q = [[rv.add(f"Q_{a}_{i}", 0, sigma_Q**2) for i in range(width)] for a in range(size)]
            w_k = [[rv.add(f"K_{a}_{i}", 0, sigma_K**2) for i in range(width)] for a in range(size)]
            x = sp.symbols(f"x_1:{size + 1}", real=True)
            y = x if self_attention else sp.symbols(f"y_1:{size + 1}", real=True)
            q = [sum(x[a] * w_q[a][i] for a in range(size)) for i in range(width)]
            k = [sum(y[a] * w_k[a][i] for a in range(size)) for i in range(width)]
            dot = sum(q_i * k_i for q_i, k_i in zip(q, k))
            norms = sum(v**2 for v in x) * sum(v**2 for v in y)
            check(label, Var(dot), width * sigma_Q**2 * sigma_K**2 * norms, rv)
            tokens = "x' = x" if self_attention else "two tokens"
            steps.append(
                Step(
                    sp.Symbol(f"Var[q.k]_{size}_{width}"),
                    width * sigma_Q**2 * sigma_K**2 * norms,
                    f"W: {size} × {width}, {tokens}",
                    shown=r"\operatorname{Var}[q \cdot k] = d_k\, \sigma_Q^2 \sigma_K^2"
                    + (r" \lVert x \rVert^4" if self_attention else r" \lVert x \rVert^2 \lVert x' \rVert^2"),
                )
            )
    return tuple(steps)


@_theorem("thm-projected-dot-product", "Scores of projected tokens")
def projected_dot_product(cross_check: bool = True) -> Proof:
    r"""Variance of the scaled scores when queries and keys are projections of normalised tokens.

    Let :math:`x, x' \in \mathbb{R}^{d_{model}}` be fixed with
    :math:`\lVert x\rVert^2 = \lVert x'\rVert^2 = d_{model}`, and
    :math:`q = x W_Q`, :math:`k = x' W_K` with independent weight entries of
    mean 0 and variances :math:`\sigma_Q^2` and :math:`\sigma_K^2`. Then each
    :math:`q_i` has mean 0 and variance :math:`d_{model}\sigma_Q^2`, different
    coordinates are uncorrelated, and
    :math:`\operatorname{Var}[q \cdot k / \sqrt{d_k}] = (d_{model}\sigma_Q\sigma_K)^2`,
    which is 1 for :math:`\sigma_Q = \sigma_K = \sigma_W` only at
    :math:`\sigma_W = 1/\sqrt{d_{model}}`. The sums over the
    :math:`d_{model}` entries of a column are symbolic.

    Parameters
    ----------
    cross_check : bool, default True
        Also expand :math:`\operatorname{Var}[q \cdot k]` entry by entry for
        :math:`(d_{model}, d_k) \in \{(2, 1), (2, 2), (3, 2)\}`, for
        :math:`x' \ne x` and for :math:`x' = x`.

    Examples
    --------
    >>> from attention_scaling.proofs import projected_dot_product
    >>> print(projected_dot_product(cross_check=False).result.rhs)
    d_model**2*sigma_K**2*sigma_Q**2
    """
    label = "thm-projected-dot-product"
    a, b = sp.symbols("a b", integer=True, positive=True)
    x = sp.IndexedBase("x", real=True)
    squared_norm = sp.Sum(x[a] ** 2, (a, 1, d_model))
    entries = RandomVariables()
    # Two distinct entries of W_Q stand for any pair (a, i) != (b, j).
    W1, W2 = entries.add("W_1", 0, sigma_Q**2), entries.add("W_2", 0, sigma_Q**2)
    same_entry, other_entries = entries.expectation(W1**2), entries.expectation(W1 * W2)

    def over_a_column(moment):
        """sum_a sum_b x_a x_b moment(a, b), for a symbolic d_model."""
        inner = sp.refine(sp.Sum(x[a] * x[b] * moment, (b, 1, d_model)).doit(), sp.Q.le(a, d_model))
        return sp.Sum(inner, (a, 1, d_model)).doit()

    same = sp.KroneckerDelta(a, b)
    # E[q_i q_i]: W_ai and W_bi are one entry exactly when a = b.
    second_moment = over_a_column(same * same_entry + (1 - same) * other_entries)
    # E[q_i q_j], i != j: W_ai and W_bj lie in different columns, never one entry.
    cross_moment = over_a_column(other_entries)
    general = dot_product_general_moments().result.rhs
    component_moments = {mu_q: 0, mu_k: 0, sigma_q: sp.sqrt(d_model) * sigma_Q, sigma_k: sp.sqrt(d_model) * sigma_K}
    scaled = RandomVariables()
    *_, dot = _dot_product(scaled, 0, d_model * sigma_Q**2, 0, d_model * sigma_K**2)
    sigma_W = sp.Symbol("sigma_W", positive=True)
    unit = sp.solveset(sp.Eq((d_model * sigma_W**2) ** 2, 1), sigma_W, sp.Interval.open(0, sp.oo))
    if unit != sp.FiniteSet(1 / sp.sqrt(d_model)):
        raise ProofError(f"{label}: (d_model sigma_W^2)^2 = 1 has the positive solutions {unit}, not 1/sqrt(d_model)")
    steps = (
        check(label, E(W1 * W2), 0, entries, "(a, i) ≠ (b, j)", shown=r"\mathbb{E}[W_{ai} W_{bj}] = 0"),
        check(label, E(W1**2), sigma_Q**2, entries, "entry variance", shown=r"\mathbb{E}[W_{ai}^2] = \sigma_Q^2"),
        check(label, sp.Sum(x[a] * entries.expectation(W1), (a, 1, d_model)).doit(), 0, reason="linearity",
              shown=r"\mathbb{E}[q_i] = \sum_{a=1}^{d_{model}} x_a\, \mathbb{E}[W_{ai}] = 0"),
        check(label, second_moment, sigma_Q**2 * squared_norm, reason="a = b only",
              shown=r"\mathbb{E}[q_i^2] = \sum_{a,b=1}^{d_{model}} x_a x_b\, \mathbb{E}[W_{ai} W_{bi}]"
              r" = \sigma_Q^2 \sum_{a=1}^{d_{model}} x_a^2"),
        check(label, (sigma_Q**2 * squared_norm).subs(squared_norm, d_model), d_model * sigma_Q**2,
              reason="LayerNorm",
              shown=r"\operatorname{Var}[q_i] = \sigma_Q^2 \lVert x \rVert^2 = d_{model}\, \sigma_Q^2"),
        check(label, cross_moment, 0, reason="disjoint columns",
              shown=r"\mathbb{E}[q_i q_j] = \sum_{a,b=1}^{d_{model}} x_a x_b\, \mathbb{E}[W_{ai} W_{bj}] = 0"
              r" \quad (i \neq j)"),
        check(label, general.subs(component_moments), d_k * d_model**2 * sigma_Q**2 * sigma_K**2,
              reason="general moments",
              shown=r"\operatorname{Var}[q \cdot k] = d_k\, (d_{model} \sigma_Q^2)(d_{model} \sigma_K^2)"),
        check(label, Var(dot / sp.sqrt(d_k)), d_model**2 * sigma_Q**2 * sigma_K**2, scaled, "scaling"),
        Step(sigma_W, 1 / sp.sqrt(d_model), "σ_Q = σ_K = σ_W"),
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
        result_index=7,
    )


# -- Softmax ---------------------------------------------------------------------------

_n = sp.Symbol("n", integer=True, positive=True)
_x = sp.IndexedBase("x", real=True)
_shift = sp.Symbol("c", real=True)


def _softmax_component(i, n, logits=_x):
    """p_i = exp(x_i) / sum_j exp(x_j) for a symbolic length n."""
    j = sp.Symbol("j", integer=True, positive=True)
    return sp.exp(logits[i]) / sp.Sum(sp.exp(logits[j]), (j, 1, n))


@_theorem("thm-softmax-shift-invariance", "Softmax ignores shifts")
def softmax_shift_invariance() -> Proof:
    r"""Softmax ignores a common shift of its inputs, and depends on differences, not ratios.

    :math:`\operatorname{softmax}(x + c\mathbf{1}) = \operatorname{softmax}(x)`
    for every real :math:`c` and a symbolic length :math:`n`, via
    :math:`\operatorname{softmax}_i(x) = 1 / \sum_j e^{x_j - x_i}`; checked
    again component by component for :math:`n = 2, \dots, 6`. A shift changes
    every ratio :math:`x_1 / x_2` and leaves the output alone; a temperature
    changes the output.

    Examples
    --------
    >>> from attention_scaling.proofs import softmax_shift_invariance
    >>> len(softmax_shift_invariance().cross_checks)
    5
    """
    label = "thm-softmax-shift-invariance"
    i, j = sp.symbols("i j", integer=True, positive=True)
    softmax_i = _softmax_component(i, _n)
    shifted = sp.exp(_x[i] + _shift) / sp.Sum(sp.exp(_x[j] + _shift), (j, 1, _n))
    differences = 1 / sp.Sum(sp.exp(_x[j] - _x[i]), (j, 1, _n))
    x1, x2 = sp.symbols("x_1 x_2", real=True)
    half = sp.Rational(1, 2)
    steps = (
        check(label, softmax_i, differences, reason="divide through by exp(x_i)"),
        check(label, shifted, differences, reason="(x_j + c) - (x_i + c) = x_j - x_i"),
        check(
            label,
            shifted,
            softmax_i,
            reason="the shift cancels",
            shown=r"\operatorname{softmax}_i(x + c\mathbf{1}) = \operatorname{softmax}_i(x)",
        ),
        check(
            label,
            (x1 + _shift) / (x2 + _shift) - x1 / x2,
            _shift * (x2 - x1) / (x2 * (x2 + _shift)),
            reason="yet every ratio moves unless c = 0 or x_1 = x_2",
        ),
        _check_nonzero(
            label,
            sp.exp(half) / (sp.exp(half) + 1),
            sp.E / (sp.E + 1),
            reason="a temperature changes the output",
            shown=r"\operatorname{softmax}_1\!\left(\tfrac{[1,\,0]}{2}\right) = \frac{e^{1/2}}{e^{1/2} + 1}"
            r" \neq \frac{e}{e + 1} = \operatorname{softmax}_1([1,\,0])",
        ),
    )
    cross_checks = []
    for size in range(2, 7):
        logits = sp.symbols(f"x_1:{size + 1}", real=True)
        original = [sp.exp(x) / sum(sp.exp(y) for y in logits) for x in logits]
        moved = [sp.exp(x + _shift) / sum(sp.exp(y + _shift) for y in logits) for x in logits]
        for a, b in zip(moved, original):
            check(label, a, b)
        cross_checks.append(Step(sp.Symbol(rf"\operatorname{{softmax}}(x + c\mathbf{{1}})_{{n={size}}}"),
                                 sp.Symbol(r"\operatorname{softmax}(x)"), "every component"))
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("x real, of any length n", "c a real constant"),
        steps,
        tuple(cross_checks),
        result_index=2,
    )


@_theorem("thm-softmax-jacobian", "The softmax Jacobian")
def softmax_jacobian_theorem() -> Proof:
    r"""The Jacobian of softmax and how it vanishes as softmax saturates.

    :math:`\partial p_i / \partial x_k = p_i(\delta_{ik} - p_k)` for a symbolic
    length :math:`n`; each row sums to 0; a diagonal entry
    :math:`p_i(1 - p_i) = \tfrac14 - (p_i - \tfrac12)^2` is at most
    :math:`\tfrac14`, attained only at :math:`p_i = \tfrac12`; and for two
    logits with gap :math:`t`, every entry tends to 0 as :math:`t \to \infty`.

    Examples
    --------
    >>> from attention_scaling.proofs import softmax_jacobian_theorem
    >>> softmax_jacobian_theorem().statement
    '\\frac{\\partial p_i}{\\partial x_k} = p_i\\,(\\delta_{ik} - p_k)'
    """
    label = "thm-softmax-jacobian"
    i, k = sp.symbols("i k", integer=True, positive=True)
    inside = sp.Q.le(i, _n) & sp.Q.le(k, _n)
    p = lambda index: _softmax_component(index, _n)  # noqa: E731 - a one-line formula
    derivative = sp.refine(sp.diff(p(i), _x[k]).doit(), inside)
    row_sum = sp.refine(sp.Sum(p(i) * (sp.KroneckerDelta(i, k) - p(k)), (k, 1, _n)).doit(), inside)
    # Summing over k leaves sum_k e^{x_k}: the normaliser again, under another
    # name for its bound index. Renaming the index lets SymPy cancel it.
    j = sp.Symbol("j", integer=True, positive=True)
    row_sum = sp.simplify(row_sum).replace(
        lambda e: isinstance(e, sp.Sum) and tuple(e.variables) == (k,),
        lambda e: sp.Sum(e.function.subs(k, j), (j, *e.limits[0][1:])),
    )
    prob = sp.Symbol("p", real=True)
    peak = sp.solveset(sp.Eq(prob * (1 - prob), sp.Rational(1, 4)), prob, sp.Interval(0, 1))
    if peak != sp.FiniteSet(sp.Rational(1, 2)):
        raise ProofError(f"{label}: p(1 - p) = 1/4 on [0, 1] has solutions {peak}, not {{1/2}}")
    t = sp.Symbol("t", real=True)
    p1, p2 = 1 / (1 + sp.exp(-t)), 1 / (1 + sp.exp(t))
    entries = [p1 * (1 - p1), -p1 * p2, -p2 * p1, p2 * (1 - p2)]
    limits = [sp.limit(entry, t, sp.oo) for entry in entries]
    if any(limit != 0 for limit in limits):
        raise ProofError(f"{label}: the Jacobian entries tend to {limits} as t grows, not to 0")
    steps = (
        check(
            label,
            derivative,
            p(i) * (sp.KroneckerDelta(i, k) - p(k)),
            reason="quotient rule, for k in 1..n",
            shown=r"\frac{\partial p_i}{\partial x_k} = p_i\,(\delta_{ik} - p_k)",
        ),
        check(
            label,
            row_sum,
            0,
            reason="the p_k sum to 1",
            shown=r"\sum_{k=1}^{n} \frac{\partial p_i}{\partial x_k} = p_i - p_i \sum_{k=1}^{n} p_k = 0",
        ),
        check(label, prob * (1 - prob), sp.Rational(1, 4) - (prob - sp.Rational(1, 2)) ** 2, reason="so at most 1/4"),
        Step(prob, sp.Rational(1, 2), "the only maximiser in [0, 1]"),
        check(
            label,
            sp.Limit(entries[0], t, sp.oo),
            0,
            reason="scores [t, 0]; all entries alike",
            shown=r"\lim_{t \to \infty} p_1 (1 - p_1) = 0",
        ),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("p = softmax(x) for real x of any length n",),
        steps,
        result_index=0,
    )


# -- Inequalities ----------------------------------------------------------------------

# For each relation lhs R rhs: the difference that must have a sign, and the sign.
_SIGNS = {
    r"\le": (lambda lhs, rhs: rhs - lhs, "nonnegative"),
    "<": (lambda lhs, rhs: rhs - lhs, "positive"),
    r"\ge": (lambda lhs, rhs: lhs - rhs, "nonnegative"),
    ">": (lambda lhs, rhs: lhs - rhs, "positive"),
}


def _check_inequality(theorem: str, lhs, rhs, relation: str, reason: str = "", shown: str | None = None) -> Step:
    r"""Check that SymPy's assumptions decide ``lhs relation rhs``, with ``relation`` one of ≤, <, ≥, >.

    If the assumptions cannot read the sign of the difference as it stands,
    it is cancelled into one quotient of expanded polynomials, so that sums of
    non-negative terms show their sign; if SymPy still cannot decide the
    sign, the claim is not proved.
    """
    if relation not in _SIGNS:
        raise ValueError(f"relation must be one of {list(_SIGNS)}; got {relation!r}")
    lhs, rhs = sp.sympify(lhs), sp.sympify(rhs)
    difference, sign = _SIGNS[relation]
    gap = difference(lhs, rhs)
    if getattr(gap, f"is_{sign}") is not True:
        # Each rewrite costs more than the last; try them only while the sign is hidden.
        for rewrite in (sp.together, sp.cancel):
            gap = rewrite(gap)
            if getattr(gap, f"is_{sign}") is True:
                break
        else:
            raise ProofError(f"{theorem}: SymPy cannot show that {lhs} {relation} {rhs}; the gap {gap} is not {sign}")
    return Step(lhs, rhs, reason, relation=relation, shown=shown)


def _check_empty(theorem: str, condition, variable, domain, reason: str, shown: str, relation: str = "=") -> Step:
    """Check that no point of ``domain`` satisfies ``condition``: SymPy's solveset returns the empty set.

    ``shown`` states the consequence on the page; ``relation`` is its main
    relation, where the displayed derivation aligns it.
    """
    solutions = sp.solveset(condition, variable, domain)
    if solutions != sp.S.EmptySet:
        raise ProofError(f"{theorem}: {condition} holds on {solutions} within {domain}, not nowhere")
    return Step(sp.Symbol("S"), sp.S.EmptySet, reason, relation=relation, shown=shown)


@_theorem("thm-stable-softmax-bounds", "Max-subtracted softmax stays in range")
def stable_softmax_bounds() -> Proof:
    r"""After subtracting the maximum, every term of softmax lies in (0, 1] and the sum in [1, n].

    With :math:`m = \max_j x_j`, :math:`\operatorname{softmax}_i(x) =
    e^{x_i - m} / D` with :math:`D = \sum_{j=1}^n e^{x_j - m}` (for a symbolic
    length :math:`n`). Every exponent is :math:`\le 0`, so every term lies in
    :math:`(0, 1]`; the term of the maximum is :math:`e^0 = 1`, so
    :math:`1 \le D \le n`; and every weight lies in :math:`(0, 1]`. The
    recorded result is the first, shifted form; the bounds are the later
    steps. The sums are over the :math:`r = n - 1 \ge 1` other terms (for
    :math:`n = 1`, :math:`D = 1`). Each term bound is decided by ``solveset``,
    the sum and weight bounds by SymPy's sign assumptions: the terms enter
    the sums as :math:`u_j > 0` and :math:`1 - u_j \ge 0`, which the term
    bounds justify. The cross-checks redo the bounds for :math:`n = 2, \dots,
    6` with every exponent written as :math:`-\ln(1 + a_j)`, :math:`a_j \ge
    0`, which covers every non-positive exponent.

    Examples
    --------
    >>> from attention_scaling.proofs import stable_softmax_bounds
    >>> proof = stable_softmax_bounds()
    >>> [step.relation for step in proof.steps]
    ['=', '\\le', '>', '=', '\\ge', '=', '\\le', '\\le', '>']
    >>> len(proof.cross_checks)
    5
    """
    label = "thm-stable-softmax-bounds"
    i, j = sp.symbols("i j", integer=True, positive=True)
    top = sp.Symbol("m", real=True)
    t = sp.Symbol("t", real=True)
    others = sp.Symbol("r", integer=True, positive=True)  # n - 1 terms besides the maximum
    u = sp.IndexedBase("u", positive=True)  # u_j = e^{x_j - m}, in (0, 1]
    gap = sp.IndexedBase("g", nonnegative=True)  # g_j = 1 - u_j >= 0
    shifted = sp.exp(_x[i] - top) / sp.Sum(sp.exp(_x[j] - top), (j, 1, _n))
    denominator = 1 + sp.Sum(u[j], (j, 1, others))
    a, b = sp.symbols("a b", nonnegative=True)
    weight = (1 / (1 + a)) / (1 + b)  # a term in (0, 1] over a denominator >= 1
    steps = (
        check(
            label,
            _softmax_component(i, _n),
            shifted,
            reason="shift invariance",
            shown=r"\operatorname{softmax}_i(x) = \frac{e^{x_i - m}}{\sum_{j=1}^{n} e^{x_j - m}}",
        ),
        _check_empty(
            label,
            sp.exp(t) > 1,
            t,
            sp.Interval(-sp.oo, 0),
            "solveset",
            r"e^{x_j - m} \le 1",
            r"\le",
        ),
        _check_empty(
            label,
            sp.exp(t) <= 0,
            t,
            sp.S.Reals,
            "solveset",
            r"e^{x_j - m} > 0",
            ">",
        ),
        check(label, sp.exp(top - top), 1, reason="the maximum's own term", shown=r"e^{m - m} = 1"),
        _check_inequality(
            label,
            denominator,
            1,
            r"\ge",
            reason="other terms positive",
            shown=r"D = 1 + \sum_{j=1}^{n-1} u_j \ge 1",
        ),
        check(
            label,
            1 + sp.Sum(1 - gap[j], (j, 1, others)),
            (others + 1) - sp.Sum(gap[j], (j, 1, others)),
            reason="rearranged",
            shown=r"D = n - \sum_{j=1}^{n-1} (1 - u_j)",
        ),
        _check_inequality(
            label,
            (others + 1) - sp.Sum(gap[j], (j, 1, others)),
            others + 1,
            r"\le",
            reason="terms at most 1",
            shown=r"D \le n",
        ),
        _check_inequality(
            label,
            weight,
            1,
            r"\le",
            reason="D at least 1",
            shown=r"\operatorname{softmax}_i(x) = \frac{u_i}{D} \le 1",
        ),
        _check_inequality(
            label,
            weight,
            0,
            ">",
            reason="no 0/0",
            shown=r"\operatorname{softmax}_i(x) = \frac{u_i}{D} > 0",
        ),
    )
    cross_checks = []
    for size in range(2, 7):
        spares = sp.symbols(f"a_1:{size}", nonnegative=True)
        # exp(-ln(1 + a)) = 1/(1 + a): every term in (0, 1], the maximum's exactly 1.
        terms = [sp.Integer(1)] + [sp.exp(-sp.log(1 + spare)) for spare in spares]
        total = sum(terms)
        _check_inequality(label, total, 1, r"\ge")
        _check_inequality(label, total, size, r"\le")
        for term in terms:
            _check_inequality(label, term / total, 1, r"\le")
            _check_inequality(label, term / total, 0, ">")
        cross_checks.append(
            Step(sp.Symbol(rf"1 \le D_{{n={size}}}"), sp.Integer(size), "and every weight in (0, 1]", relation=r"\le")
        )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("x real, of any length n", "m = max_j x_j"),
        steps,
        tuple(cross_checks),
        result_index=0,
    )


# -- Long sequences ----------------------------------------------------------------------

_spread = sp.Symbol("s", positive=True)
_length = sp.Symbol("n", positive=True)
_tilt = sp.Symbol("t", real=True)
_logit = sp.Symbol("x", real=True)


def _normal_density(x, mean=0):
    """The density of N(mean, s^2) at x."""
    return sp.exp(-((x - mean) ** 2) / (2 * _spread**2)) / (_spread * sp.sqrt(2 * sp.pi))


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
    s, t, x, n = _spread, _tilt, _logit, _length
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
    s = _spread
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
    n = _length
    beta = sp.Symbol(r"\beta", positive=True)
    margin = sp.Symbol(r"\Delta", positive=True)
    s, z = _spread, sp.Symbol("z", real=True)
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


# -- QK-norm ----------------------------------------------------------------------------


def _check_nonnegative(theorem: str, expr, reason: str = "", shown: str | None = None) -> Step:
    """Check that SymPy's assumptions decide ``expr >= 0`` (a square, a sum of squares)."""
    expr = sp.sympify(expr)
    if expr.is_nonnegative is not True:
        raise ProofError(f"{theorem}: SymPy cannot show that {expr} >= 0")
    return Step(expr, sp.Integer(0), reason, relation=r"\ge", shown=shown)


def _population_variance(sum_of_squares, size):
    """LayerNorm's variance: the mean square of the centred entries (no Bessel correction)."""
    return sum_of_squares / size


def _qk_norm_cross_checks(label: str, sizes=range(2, 7)) -> tuple[Step, ...]:
    """For each size d: ||LN(x)||² = d for symbolic x, Lagrange's identity, and its value at q = k."""
    steps = []
    for size in sizes:
        x = sp.symbols(f"x_1:{size + 1}", real=True)
        centred = [entry - sum(x) / size for entry in x]
        spread = sp.sqrt(_population_variance(sum(entry**2 for entry in centred), size))
        # Over a common denominator the claim is a polynomial identity: numerator = d * denominator.
        numerator, denominator = sp.fraction(sp.together(sum((entry / spread) ** 2 for entry in centred)))
        if sp.expand(numerator - size * denominator) != 0:
            raise ProofError(f"{label}: ||LN(x)||^2 is not {size} for symbolic x of length {size}")
        q, k = sp.symbols(f"q_1:{size + 1}", real=True), sp.symbols(f"k_1:{size + 1}", real=True)
        pairs = [(a, b) for a in range(size) for b in range(a + 1, size)]
        lagrange = sum((q[a] * k[b] - q[b] * k[a]) ** 2 for a, b in pairs)
        gap = sum(v**2 for v in q) * sum(v**2 for v in k) - sum(u * v for u, v in zip(q, k)) ** 2
        if sp.expand(gap - lagrange) != 0:
            raise ProofError(f"{label}: Lagrange's identity fails at d = {size}")
        if sp.expand(lagrange.subs(dict(zip(k, q)), simultaneous=True)) != 0:
            raise ProofError(f"{label}: the Lagrange sum does not vanish at q = k for d = {size}")
        steps.append(Step(sp.Symbol(rf"\lVert \mathrm{{LN}}(x) \rVert^2_{{d={size}}}"), sp.Integer(size),
                          "centring included"))
        steps.append(Step(
            sp.Symbol(rf"\left(\lVert q\rVert^2 \lVert k\rVert^2 - (q \cdot k)^2\right)_{{d={size}}}"),
            sp.Symbol(r"\sum_{i<j} (q_i k_j - q_j k_i)^2"),
            "Lagrange; 0 at q = k",
        ))
    return tuple(steps)


@_theorem("thm-qk-norm-bound", "QK-norm bounds the attention logits")
def qk_norm_bound_theorem(cross_check: bool = True) -> Proof:
    r"""With LayerNorm (no gain) on queries and keys, every scaled logit lies in :math:`[-\sqrt{d_k}, \sqrt{d_k}]`.

    For a symbolic :math:`d_k`: a vector :math:`c` with
    :math:`S = \sum_i c_i^2 > 0`, divided by its population standard deviation
    :math:`\sqrt{S/d_k}`, has squared norm :math:`d_k`. That is
    :math:`\mathrm{LN}(x)` for the centred :math:`c = x - \bar x`. Cauchy–Schwarz,
    :math:`(q \cdot k)^2 \le \lVert q\rVert^2 \lVert k\rVert^2`, follows from
    :math:`\lVert k\rVert^2 \sum_i (q_i - t k_i)^2 \ge 0` at
    :math:`t = q \cdot k / \lVert k\rVert^2`. With both norms
    :math:`\sqrt{d_k}` the logit :math:`z = q \cdot k / \sqrt{d_k}` has
    :math:`z^2 \le d_k`, so :math:`|z| \le \sqrt{d_k}`, with equality at
    :math:`q = k`.

    Parameters
    ----------
    cross_check : bool, default True
        Also check, for :math:`d_k = 2, \dots, 6` and symbolic entries, that
        :math:`\lVert \mathrm{LN}(x)\rVert^2 = d_k` (centring included) and
        Lagrange's identity
        :math:`\lVert q\rVert^2\lVert k\rVert^2 - (q\cdot k)^2 = \sum_{i<j}(q_i k_j - q_j k_i)^2`,
        whose right side is 0 at :math:`q = k`.

    Examples
    --------
    >>> from attention_scaling.proofs import qk_norm_bound_theorem
    >>> proof = qk_norm_bound_theorem(cross_check=False)
    >>> proof.statement
    '\\frac{|q \\cdot k|}{\\sqrt{d_k}} \\le \\sqrt{d_k}'
    >>> print(proof.result)
    Abs(z) <= sqrt(d_k)
    """
    label = "thm-qk-norm-bound"
    i = sp.Symbol("i", integer=True, positive=True)
    c, q, k = (sp.IndexedBase(name, real=True) for name in ("c", "q", "k"))
    total = lambda term: sp.Sum(term, (i, 1, d_k))  # noqa: E731 - a sum over the d_k coordinates
    t = sp.Symbol("t", real=True)
    q_sq, dot, k_sq = sp.symbols(r"\lVert{q}\rVert^2 q\cdot{k} \lVert{k}\rVert^2", real=True)
    z = sp.Symbol("z", real=True)
    spread_sq = _population_variance(total(c[i] ** 2), d_k)
    interval = sp.solveset(z**2 - d_k <= 0, z, sp.S.Reals)
    if interval != sp.Interval(-sp.sqrt(d_k), sp.sqrt(d_k)):
        raise ProofError(f"{label}: z^2 <= d_k gives {interval}, not [-sqrt(d_k), sqrt(d_k)]")
    steps = (
        check(label, total((c[i] / sp.sqrt(spread_sq)) ** 2), d_k,
              reason="definition of LN",
              shown=r"\lVert \mathrm{LN}(x) \rVert^2 = \sum_{i=1}^{d_k} \frac{c_i^2}{S / d_k} = d_k"),
        check(label, total((q[i] - t * k[i]) ** 2),
              total(q[i] ** 2) - 2 * t * total(q[i] * k[i]) + t**2 * total(k[i] ** 2),
              reason="expand the square",
              shown=r"\sum_{i} (q_i - t k_i)^2 = \lVert q\rVert^2 - 2t\, q \cdot k + t^2 \lVert k\rVert^2"),
        check(label, (k_sq * (q_sq - 2 * t * dot + t**2 * k_sq)).subs(t, dot / k_sq), q_sq * k_sq - dot**2,
              reason="at t = q·k / ‖k‖²",
              shown=r"\lVert k\rVert^2 \sum_{i} (q_i - t k_i)^2 = \lVert q\rVert^2 \lVert k\rVert^2 - (q \cdot k)^2"),
        _check_nonnegative(label, sp.Symbol("K", positive=True) * total((q[i] - t * k[i]) ** 2),
                           reason="a sum of squares",
                           shown=r"\lVert q\rVert^2 \lVert k\rVert^2 - (q \cdot k)^2 \ge 0"),
        check(label, d_k - (dot / sp.sqrt(d_k)) ** 2, (d_k * d_k - dot**2) / d_k,
              reason="‖q‖² = ‖k‖² = d_k",
              shown=r"d_k - z^2 = \frac{\lVert q\rVert^2 \lVert k\rVert^2 - (q \cdot k)^2}{d_k} \ge 0"),
        Step(sp.Abs(z), sp.sqrt(d_k), "solveset", relation=r"\le",
             shown=r"\frac{|q \cdot k|}{\sqrt{d_k}} \le \sqrt{d_k}"),
        check(label, (dot / sp.sqrt(d_k)).subs(dot, d_k), sp.sqrt(d_k),
              reason="attained",
              shown=r"z_{q=k} = \frac{d_k}{\sqrt{d_k}} = \sqrt{d_k}"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("q = LN(x), k = LN(y): LayerNorm without gain or bias (and without epsilon)",
         "x and y are not constant vectors"),
        steps,
        _qk_norm_cross_checks(label) if cross_check else (),
        result_index=5,
    )
