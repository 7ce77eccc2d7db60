r"""The proof engine: SymPy-checked steps, random variables known by their moments, one registry.

A theorem (in the chapter modules of :mod:`attention_scaling.proofs`) is a
function that derives its result step by step with :func:`check`, which has
SymPy reduce each step to an identity, and returns a :class:`Proof`. A step
that SymPy does not reduce raises :class:`ProofError` naming the theorem, so
a false claim stops the build of any page that states it. Every theorem, and
every derivation a page shows without stating it as a theorem, is registered
in ``REGISTRY``, which :func:`prove_all` runs.

Expectations are distribution-free. A random variable is a SymPy symbol known
only through the moments declared for it in a :class:`RandomVariables`
collection, and :math:`\mathbb{E}` is evaluated with two rules: linearity, and
:math:`\mathbb{E}[XY] = \mathbb{E}[X]\,\mathbb{E}[Y]` for distinct (hence
independent) variables. Nothing else about a distribution is assumed unless a
theorem says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

import sympy as sp
from sympy.printing.precedence import PRECEDENCE

__all__ = [
    "Derivation",
    "E",
    "Proof",
    "ProofError",
    "REGISTRY",
    "RandomVariables",
    "Registered",
    "Step",
    "THEOREMS",
    "THEOREM_NAMES",
    "Var",
    "check",
    "prove",
    "prove_all",
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
    attention_scaling.proofs.engine.ProofError: demo: SymPy does not reduce Var(X/c) = Var(X)/c to an identity; lhs - rhs simplifies to sigma_X**2*(1 - c)/c**2
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



# -- The registry ------------------------------------------------------------------------


@dataclass(frozen=True)
class Registered:
    """One entry of ``REGISTRY``: a theorem, or a derivation that a page shows.

    Attributes
    ----------
    label : str
        The key. A theorem's label (``thm-…``, ``lem-…``) as on its page; for a
        derivation, the label of the page section that shows it.
    name : str
        Human-readable name.
    kind : {"theorem", "derivation"}
        A theorem returns a :class:`Proof`; a derivation returns the checked
        :class:`Step` or :class:`Derivation` its section displays.
    run : callable
        Runs the checks with their defaults; raises :class:`ProofError` if one
        fails.

    Examples
    --------
    >>> from attention_scaling.proofs import REGISTRY
    >>> entry = REGISTRY["logit-growth-quadratic"]
    >>> entry.kind, entry.name
    ('derivation', 'The logits are quadratic in the weights')
    >>> entry.run().reason
    'the scalar c comes out of each projection'
    """

    label: str
    name: str
    kind: str
    run: Callable[[], Proof | Derivation | Step]


#: Everything :func:`prove_all` runs, by label, in the order of registration
#: (the import order of the chapter modules in ``attention_scaling.proofs``).
REGISTRY: dict[str, Registered] = {}


class _TheoremView(Mapping):
    """The theorems of ``REGISTRY``, read live, each entry seen through ``pick``."""

    def __init__(self, pick: Callable[[Registered], object]) -> None:
        self._pick = pick

    @staticmethod
    def _theorems() -> dict[str, Registered]:
        # REGISTRY is looked up on each access, so replacing it (as a test may) is seen here too.
        return {label: entry for label, entry in REGISTRY.items() if entry.kind == "theorem"}

    def __getitem__(self, label: str):
        return self._pick(self._theorems()[label])

    def __iter__(self) -> Iterator[str]:
        return iter(self._theorems())

    def __len__(self) -> int:
        return len(self._theorems())

    def __repr__(self) -> str:
        return repr(dict(self))


#: The proof function of each theorem, by label (a read-only view of ``REGISTRY``).
THEOREMS: Mapping[str, Callable[[], Proof]] = _TheoremView(lambda entry: entry.run)
#: The name of each theorem, by label: what the pages and citations call it.
THEOREM_NAMES: Mapping[str, str] = _TheoremView(lambda entry: entry.name)


def _register(label: str, name: str, kind: str):
    def register(function: Callable[[], Proof | Derivation | Step]):
        REGISTRY[label] = Registered(label, name, kind, function)
        return function

    return register


def _theorem(label: str, name: str):
    """Register a theorem: a function returning a :class:`Proof` labelled ``label``."""
    return _register(label, name, "theorem")


def _derivation(label: str, name: str):
    """Register a derivation shown in the page section labelled ``label``."""
    return _register(label, name, "derivation")


def prove(label: str) -> Proof | Derivation | Step:
    """Run the checks registered under this label: a theorem's proof, or a derivation.

    Examples
    --------
    >>> from attention_scaling.proofs import prove
    >>> prove("thm-scaled-variance").name
    'Scaling a random variable'
    >>> len(prove("logit-growth-entropy-why").steps)
    4
    """
    if label not in REGISTRY:
        raise KeyError(f"no theorem labelled {label!r}; known labels: {', '.join(REGISTRY)}")
    return REGISTRY[label].run()


def prove_all() -> list[tuple[str, Proof | Derivation | Step | ProofError, float]]:
    """Run everything in ``REGISTRY``; return ``(label, result or error, seconds)`` for each."""
    outcomes = []
    for label, entry in REGISTRY.items():
        start = time.perf_counter()
        try:
            outcome: Proof | Derivation | Step | ProofError = entry.run()
        except ProofError as error:
            outcome = error
        outcomes.append((label, outcome, time.perf_counter() - start))
    return outcomes


# -- Checks beyond identities ---------------------------------------------------------------


def _check_nonzero(theorem: str, lhs, rhs, reason: str = "", shown: str | None = None) -> Step:
    """Check that SymPy decides ``lhs - rhs`` is not zero (the claim ``lhs != rhs``)."""
    lhs, rhs = sp.sympify(lhs), sp.sympify(rhs)
    if sp.simplify(lhs - rhs).is_zero is not False:
        raise ProofError(f"{theorem}: SymPy cannot show that {lhs} differs from {rhs}")
    return Step(lhs, rhs, reason, relation=r"\neq", shown=shown)


def _check_nonnegative(theorem: str, expr, reason: str = "", shown: str | None = None) -> Step:
    """Check that SymPy's assumptions decide ``expr >= 0`` (a square, a sum of squares)."""
    expr = sp.sympify(expr)
    if expr.is_nonnegative is not True:
        raise ProofError(f"{theorem}: SymPy cannot show that {expr} >= 0")
    return Step(expr, sp.Integer(0), reason, relation=r"\ge", shown=shown)


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
