r"""The proof engine: sealed steps that say how they are known, proofs, one registry.

A theorem (in the chapter modules of :mod:`attention_scaling.proofs`, or in
a newer page's support module) is a function that derives its result step by step and returns a :class:`Proof`.
A :class:`Step` is sealed: only this module's functions make one, and each
says how the step is known. :func:`check` and the other ``check_*`` functions
have SymPy verify it (a step that SymPy does not reduce raises
:class:`ProofError` naming the theorem, so a false claim stops the build of
any page that states it); :func:`cite`, :func:`argue` and :func:`measure`
record a step that SymPy does not verify, with its source, its argument or
its evidence row, and the page marks it as such. The statement a page
displays is printed from the proof's result steps. :func:`theorem` and
:func:`derivation` register results in ``REGISTRY``, which :func:`prove_all` runs.

Expectations are distribution-free (:mod:`attention_scaling.proofs.moments`,
re-exported here). A random variable is a SymPy symbol known only through the
moments declared for it in a :class:`RandomVariables` collection, and
:math:`\mathbb{E}` is evaluated with two rules: linearity, and
:math:`\mathbb{E}[XY] = \mathbb{E}[X]\,\mathbb{E}[Y]` for distinct (hence
independent) variables. Nothing else about a distribution is assumed unless a
theorem says so.
"""

from __future__ import annotations

import functools
import multiprocessing
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

import sympy as sp
import sympy.stats

from attention_scaling.proofs.display import KINDS, MARKERS, Derivation, Math, reason_parts
from attention_scaling.proofs.moments import E, RandomVariables, Var, _sum_out

__all__ = [
    "Derivation",
    "E",
    "KINDS",
    "Math",
    "Proof",
    "ProofError",
    "REGISTRY",
    "RandomVariables",
    "Registered",
    "Step",
    "THEOREMS",
    "THEOREM_NAMES",
    "Var",
    "argue",
    "check",
    "check_inequality",
    "check_nonnegative",
    "check_nonzero",
    "check_solutions",
    "cite",
    "derivation",
    "measure",
    "prove",
    "prove_all",
    "step_counts",
    "theorem",
]


class ProofError(AssertionError):
    """A claimed identity that SymPy did not reduce to ``0 = 0``."""


# Only the functions of this module hold the seal, so only they can make a Step.
_SEAL = object()


@dataclass(frozen=True)
class Step:
    r"""One equation (or inequality) ``lhs relation rhs`` of a derivation, and how it is known.

    A step cannot be constructed directly: it is made by :func:`check` and
    the other ``check_*`` functions (kind ``"checked"``, verified by SymPy), by
    :func:`cite` (``"cited"``: a source and locator), by :func:`argue`
    (``"argued"``: in words) or by :func:`measure` (``"measured"``: an
    evidence row). The equation shown is always the one held in ``lhs`` and
    ``rhs``, printed by SymPy; unevaluated SymPy objects (``Sum``,
    ``Derivative``, :class:`E`) keep it in the page's notation.

    Examples
    --------
    >>> from attention_scaling.proofs import Step
    >>> Step(1, 1)
    Traceback (most recent call last):
    ...
    TypeError: a Step is made only by check(), cite(), argue() or measure(), which say how it is known
    """

    lhs: sp.Basic
    rhs: sp.Basic
    reason: str = ""
    relation: str = "="
    kind: str = "checked"
    basis: str = ""
    _seal: object = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        if self._seal is not _SEAL:
            raise TypeError("a Step is made only by check(), cite(), argue() or measure(), which say how it is known")

    def __reduce__(self):  # unpickled (prove_all's processes) sealed again: the seal is not pickled
        return _step, (self.lhs, self.rhs, self.reason, self.relation, self.kind, self.basis)

    def latex(self) -> str:
        """The step's relation in LaTeX, as SymPy prints its two sides."""
        return f"{sp.latex(self.lhs)} {self.relation} {sp.latex(self.rhs)}"

    def marker(self) -> str:
        """The LaTeX mark of the step's kind: a check mark, or the kind in words."""
        return MARKERS[self.kind]

    def note(self) -> str:
        """The words beside the step: its reason, and for a cited or measured step its source or evidence row."""
        basis = {"cited": self.basis, "measured": f"evidence: {self.basis}"}.get(self.kind, "")
        return "; ".join(part for part in (self.reason, basis) if part)

    def _repr_markdown_(self) -> str:
        return Derivation((self,))._repr_markdown_()


def _step(lhs, rhs, reason: str, relation: str = "=", kind: str = "checked", basis: str = "") -> Step:
    if relation not in _RELATIONS:
        raise ValueError(f"relation must be one of {list(_RELATIONS)}; got {relation!r}")
    reason_parts(reason)  # refuses unpaired $ signs here, where the traceback names the result
    return Step(sp.sympify(lhs), sp.sympify(rhs), reason, relation, kind, basis, _seal=_SEAL)


def _evaluated(expr, variables: RandomVariables | None) -> sp.Expr:
    """``expr`` with E/Var evaluated, and every unevaluated Sum, Limit, Derivative and Integral carried out, simplified."""
    expr = sp.sympify(expr)
    if variables is not None:
        # Unsimplified: the difference is reduced once, below.
        expr = variables._evaluate(expr)
    expr = expr.replace(lambda e: isinstance(e, sp.Sum), lambda e: _sum_out(e.function, e.limits))
    # sympy.stats' unevaluated Expectation and Variance integrate (or enumerate) over their distributions.
    expr = _stats_evaluated(expr)
    return _reduced(expr.doit())


def _reduced(expr: sp.Expr) -> sp.Expr:
    """``expr`` simplified, or 0 as soon as a cheaper rewrite than ``simplify`` shows that it is 0.

    ``expand`` and ``cancel`` each rewrite an expression into an equal one,
    so when either gives exactly 0 the expression is 0; ``simplify`` tries
    many rewrites and was most of the cost of a check. Anything they do not
    reduce to 0 gets the full ``simplify``, as before, so no difference that
    ``simplify`` reduces is missed, and a non-zero difference is reported
    simplified.

    Examples
    --------
    >>> import sympy as sp
    >>> x = sp.Symbol("x")
    >>> _reduced((x + 1) ** 2 - x**2 - 2 * x - 1)
    0
    >>> _reduced(sp.sin(x) ** 2 + sp.cos(x) ** 2 - 1)
    0
    >>> _reduced((x + 1) ** 2 - x**2)
    2*x + 1
    """
    for rewrite in (sp.expand, sp.cancel):
        if rewrite(expr) == 0:
            return sp.S.Zero
    return sp.simplify(expr)


def _stats_evaluated(expr: sp.Expr) -> sp.Expr:
    """``expr`` with sympy.stats' unevaluated Variance, Expectation (and the like) worked out from the distributions.

    A variance or covariance is first written as expectations by sympy.stats'
    own definition, and each expectation split by sympy.stats' linearity
    into expectations of single terms; each term is then integrated (or
    summed) over its distribution, once: a term met again, in a larger sum
    or in another check, is taken from :func:`_term_expectation`'s memory.
    Anything else that sympy.stats can integrate is integrated whole.
    """
    if not expr.has(sp.stats.Expectation, sp.stats.Variance, sp.stats.Covariance):
        return expr.replace(lambda e: hasattr(e, "evaluate_integral"), lambda e: e.evaluate_integral())
    moments = expr.atoms(sp.stats.Variance, sp.stats.Covariance)
    expr = expr.xreplace({moment: moment.rewrite(sp.stats.Expectation) for moment in moments})
    linear = {expectation: expectation.expand() for expectation in expr.atoms(sp.stats.Expectation)}
    expr = expr.xreplace(linear)
    expr = expr.xreplace({term: _term_expectation(term) for term in expr.atoms(sp.stats.Expectation)})
    return expr.replace(lambda e: hasattr(e, "evaluate_integral"), lambda e: e.evaluate_integral())


@functools.lru_cache(maxsize=None)
def _term_expectation(expectation: sp.Expr) -> sp.Expr:
    """The value of one sympy.stats ``Expectation`` of a single term (a pure function, memoised).

    A product of powers of independent variables, each with a distribution of
    its own, is the product of their moments: sympy.stats treats variables
    declared separately as independent, and integrating over the product of
    their densities factorises the same way. Each moment is integrated once
    per distribution and power (:func:`_moment`), so that the 16 products of
    ``Var(q_1 k_1 + ... + q_4 k_4)`` cost four one-dimensional integrals
    instead of sixteen multidimensional ones. Any other term (a joint
    distribution, a condition, a function of a variable that is not a power)
    is integrated whole.

    Examples
    --------
    >>> import sympy as sp
    >>> from sympy.stats import Expectation, Normal, Rademacher, Uniform
    >>> q, k = Uniform("q", -sp.sqrt(3), sp.sqrt(3)), Normal("k", 0, 1)
    >>> _term_expectation(Expectation(5 * q**4 * k**2))
    9
    >>> _term_expectation(Expectation(sp.exp(Rademacher("r"))))
    exp(-1)/2 + E/2
    """
    powers = _independent_powers(expectation)
    if powers is None:
        return expectation.evaluate_integral()
    coefficient, factors = powers
    return coefficient * sp.Mul(*(_moment(variable, power) for variable, power in factors))


def _independent_powers(expectation: sp.Expr) -> tuple[sp.Expr, list[tuple[sp.Expr, int]]] | None:
    """``E[c X^a Y^b ...]`` as ``(c, [(X, a), (Y, b), ...])`` for distinct single variables, else None.

    A single variable is one declared on its own (``Normal("x", 0, 1)``): its
    probability space is a ``SinglePSpace``. A component of a joint
    distribution is an ``Indexed`` expression, not a ``RandomSymbol``.
    """
    if len(expectation.args) != 1:  # a conditional expectation
        return None
    variables = sp.stats.rv.random_symbols(expectation.args[0])
    coefficient, product = expectation.args[0].as_independent(*variables, as_Add=False)
    factors = []
    for factor in sp.Mul.make_args(product):
        variable, power = factor.as_base_exp()
        alone = isinstance(variable, sp.stats.rv.RandomSymbol) and isinstance(variable.pspace, sp.stats.rv.SinglePSpace)
        if not (alone and power.is_Integer and power > 0):
            return None
        factors.append((variable, int(power)))
    if len({variable for variable, _ in factors}) != len(factors):
        return None
    return coefficient, factors


# Moments of single-variable distributions, by (space type, distribution, power).
_MOMENTS: dict[tuple, sp.Expr] = {}


def _moment(variable: sp.Expr, power: int) -> sp.Expr:
    """``E[variable^power]``, integrated (or summed) by sympy.stats once per distribution and power."""
    key = (type(variable.pspace), variable.pspace.distribution, power)
    if key not in _MOMENTS:
        _MOMENTS[key] = sp.stats.Expectation(variable**power).evaluate_integral()
    return _MOMENTS[key]


def check(theorem: str, lhs, rhs, variables: RandomVariables | None = None, reason: str = "") -> Step:
    r"""Check that SymPy reduces ``lhs - rhs`` to zero, or raise :class:`ProofError`.

    Parameters
    ----------
    theorem : str
        Label of the theorem the step belongs to; it names the failure.
    lhs, rhs : sympy.Expr or number
        The two sides, as the page shows them. Unevaluated ``Sum``, ``Limit``,
        ``Derivative``, ``Integral`` and ``Subs`` in them are carried out, and
        :class:`E` and :class:`Var` evaluated with ``variables``, before the
        difference is simplified.
    variables : RandomVariables, optional
        The random variables the sides refer to.
    reason : str, optional
        Why the step holds, shown beside it.

    Returns
    -------
    Step
        The checked equation, of kind ``"checked"``, displayed as LaTeX in a notebook.

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
    difference = _evaluated(lhs - rhs, variables)
    if difference.has(sp.Piecewise):
        raise ProofError(f"{theorem}: the check of {lhs} = {rhs} left a Piecewise condition: {difference}")
    if difference != 0:
        raise ProofError(
            f"{theorem}: SymPy does not reduce {lhs} = {rhs} to an identity; lhs - rhs simplifies to {difference}"
        )
    return _step(lhs, rhs, reason)


def cite(theorem: str, lhs, rhs, source: str, locator: str, relation: str = "=", reason: str = "") -> Step:
    r"""A step taken from the literature: shown with its source and locator, and marked *cited*.

    SymPy does not check it; the page says where it is proved.

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs import E, cite
    >>> X = sp.Symbol("X", positive=True)
    >>> jensen = "Cover and Thomas, Elements of Information Theory (2006)"
    >>> step = cite("demo", sp.log(E(X)), E(sp.log(X)), jensen, "Thm 2.6.2 (Jensen)", r"\ge")
    >>> step.kind, step.marker(), step.note()
    ('cited', '\\text{[cited]}', 'Cover and Thomas, Elements of Information Theory (2006), Thm 2.6.2 (Jensen)')
    """
    if not source.strip() or not locator.strip():
        raise ValueError(f"{theorem}: a cited step needs a source and a locator")
    return _step(lhs, rhs, reason, relation, "cited", f"{source}, {locator}")


def argue(theorem: str, lhs, rhs, argument: str, relation: str = "=") -> Step:
    r"""A step that holds by an argument in words, shown beside it and marked *argued*.

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs import argue
    >>> argue("demo", sp.Symbol("a"), sp.Symbol("b"), "a and b count the same set").marker()
    '\\text{[argued]}'
    """
    if not argument.strip():
        raise ValueError(f"{theorem}: an argued step needs its argument in words")
    return _step(lhs, rhs, argument, relation, "argued", argument)


def measure(theorem: str, lhs, rhs, evidence: str, relation: str = "=", reason: str = "") -> Step:
    r"""A step that holds by a seeded measurement: marked *measured*, naming its evidence row.

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs import measure
    >>> step = measure("demo", sp.Symbol("m"), 1, "gaussian-max")
    >>> step.marker(), step.note()
    ('\\text{[measured]}', 'evidence: gaussian-max')
    """
    if not evidence.strip():
        raise ValueError(f"{theorem}: a measured step needs the evidence row that measures it")
    return _step(lhs, rhs, reason, relation, "measured", evidence)


# The SymPy relation of each Step.relation.
_RELATIONS = {"=": sp.Eq, r"\le": sp.Le, r"\ge": sp.Ge, "<": sp.Lt, ">": sp.Gt, r"\neq": sp.Ne, r"\in": None}


@dataclass(frozen=True)
class Proof:
    r"""The record of a proved theorem.

    Attributes
    ----------
    name : str
        Human-readable name.
    label : str
        Stable label, the same as on the page that states the theorem.
    assumptions : tuple of str
        What the theorem assumes, in words.
    steps : tuple of Step
        The derivation, in order, each step with its kind.
    cross_checks : tuple of Step
        Special cases checked another way (fixed sizes, named distributions).
    results : tuple of int
        Which steps the theorem states (default: the last).
    result : sympy.Rel
        The relation of the last result step.
    statement : str
        The stated results in LaTeX, printed from those steps: this is what the
        page displays as the theorem's equation. One or two results share a
        line; three or more are stacked, one per line, so that a narrow column
        shows them all without scrolling.

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs import Proof, check
    >>> x = sp.Symbol("x")
    >>> proof = Proof("demo", "thm-demo", (), (check("thm-demo", (x + 1) ** 2, x**2 + 2 * x + 1),))
    >>> proof.statement
    '\\left(x + 1\\right)^{2} = x^{2} + 2 x + 1'
    >>> proof.counts()
    {'checked': 1, 'cited': 0, 'argued': 0, 'measured': 0}
    >>> steps = tuple(check("thm-demo", x + n, n + x) for n in range(3))
    >>> print(Proof("demo", "thm-demo", (), steps, results=(0, 1, 2)).statement)
    \begin{gathered}x = x, \\ x + 1 = x + 1, \\ x + 2 = x + 2\end{gathered}
    """

    name: str
    label: str
    assumptions: tuple[str, ...]
    steps: tuple[Step, ...]
    cross_checks: tuple[Step, ...] = ()
    results: tuple[int, ...] = (-1,)
    result: sp.Basic = field(init=False)
    statement: str = field(init=False)

    def __post_init__(self):
        if not self.steps or not self.results:
            raise ValueError(f"{self.label}: a proof needs steps and at least one result")
        stated = [self.steps[index] for index in self.results]
        final = stated[-1]
        relation = _RELATIONS[final.relation] or (lambda lhs, rhs, evaluate: sp.Contains(lhs, rhs, evaluate=False))
        object.__setattr__(self, "result", relation(final.lhs, final.rhs, evaluate=False))
        lines = [step.latex() for step in stated]
        statement = r", \qquad ".join(lines) if len(lines) < 3 else (
            r"\begin{gathered}" + r", \\ ".join(lines) + r"\end{gathered}")
        object.__setattr__(self, "statement", statement)

    def counts(self) -> dict[str, int]:
        """How many steps of the derivation are of each kind, in the order of ``KINDS``."""
        return {kind: sum(step.kind == kind for step in self.steps) for kind in KINDS}

    @property
    def status(self) -> str:
        """``"checked"`` if every step is, else the first of cited, argued, measured that occurs."""
        counts = self.counts()
        return next((kind for kind in KINDS[1:] if counts[kind]), "checked")

    def statement_math(self) -> "Math":
        """The statement as a display-math object, for myst-nb's ``glue`` and ``{glue:math}``."""
        return Math(self.statement)

    def _repr_markdown_(self) -> str:
        return Derivation(self.steps)._repr_markdown_()


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
    uses : tuple of str
        Labels of the registered results its derivation relies on (the edges
        of the dependency graph).

    Examples
    --------
    >>> from attention_scaling.proofs import REGISTRY
    >>> entry = REGISTRY["logit-growth-quadratic"]
    >>> entry.kind, entry.name
    ('derivation', 'The logits are quadratic in the weights')
    >>> entry.run().reason
    'the scalar $c$ comes out of each projection'
    """

    label: str
    name: str
    kind: str
    run: Callable[[], Proof | Derivation | Step]
    uses: tuple[str, ...] = ()


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


#: The proof function of each theorem, by label (a read-only view of ``REGISTRY``).
THEOREMS: Mapping[str, Callable[[], Proof]] = _TheoremView(lambda entry: entry.run)
#: The name of each theorem, by label: what the pages and citations call it.
THEOREM_NAMES: Mapping[str, str] = _TheoremView(lambda entry: entry.name)


def _register(label: str, name: str, kind: str, uses: tuple[str, ...]):
    def register(function: Callable[[], Proof | Derivation | Step]):
        if label in REGISTRY:
            raise ValueError(f"{label} is registered twice: give the second result a label of its own")
        unknown = [used for used in uses if used not in REGISTRY]
        if unknown:  # attention_scaling.proofs imports the chapter modules in the order of the chapters
            raise ValueError(f"{label} uses {unknown}, which are not registered before it: register them first")
        REGISTRY[label] = Registered(label, name, kind, function, tuple(uses))
        return function

    return register


def theorem(label: str, name: str, uses: tuple[str, ...] = ()):
    r"""Register a theorem: decorate the function, without arguments, that returns its :class:`Proof`.

    Registered, it is run by :func:`prove`, :func:`prove_all` and ``python -m
    attention_scaling prove``, drawn in the dependency graph, and must be
    stated on a page and measured by an evidence row.

    Parameters
    ----------
    label, name : str
        Its stable label, ``thm-...`` (``lem-...`` for a lemma), as on its page; what pages call it.
    uses : tuple of str
        The labels of the registered results it builds on, registered before it.

    Raises
    ------
    ValueError
        If ``label`` is registered already, or a label in ``uses`` is not.

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs import REGISTRY, Proof, check, prove, theorem
    >>> x = sp.Symbol("x", real=True)
    >>> @theorem("thm-demo-square", "The square of a sum")
    ... def demo_square() -> Proof:
    ...     step = check("thm-demo-square", (x + 1) ** 2, x**2 + 2 * x + 1, reason="expand")
    ...     return Proof("The square of a sum", "thm-demo-square", ("x is real",), (step,))
    >>> prove("thm-demo-square").statement
    '\\left(x + 1\\right)^{2} = x^{2} + 2 x + 1'
    >>> theorem("thm-demo-square", "Again")(demo_square)
    Traceback (most recent call last):
    ...
    ValueError: thm-demo-square is registered twice: give the second result a label of its own
    >>> del REGISTRY["thm-demo-square"]  # the example leaves the registry as it found it
    """
    return _register(label, name, "theorem", uses)


def derivation(label: str, name: str, uses: tuple[str, ...] = ()):
    r"""Register a derivation: steps shown in the page section ``label``, not a theorem; as :func:`theorem`.

    Examples
    --------
    >>> from attention_scaling.proofs import REGISTRY
    >>> REGISTRY["logit-growth-entropy-why"].kind, REGISTRY["logit-growth-entropy-why"].uses
    ('derivation', ('thm-softmax-shift-invariance',))
    """
    return _register(label, name, "derivation", uses)


def step_counts(outcome: Proof | Derivation | Step) -> dict[str, int]:
    """How many steps of a registered result are of each kind, in the order of ``KINDS``.

    Examples
    --------
    >>> from attention_scaling.proofs import prove, step_counts
    >>> step_counts(prove("thm-scaled-variance"))["checked"] > 0
    True
    """
    if isinstance(outcome, Step):
        return {kind: int(outcome.kind == kind) for kind in KINDS}
    return outcome.counts()


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


def _run_timed(label: str) -> tuple[str, Proof | Derivation | Step | ProofError, float]:
    start = time.perf_counter()  # a failure is an outcome too
    try:
        outcome: Proof | Derivation | Step | ProofError = REGISTRY[label].run()
    except ProofError as error:
        outcome = error
    return label, outcome, time.perf_counter() - start


def prove_all(jobs: int = 1) -> list[tuple[str, Proof | Derivation | Step | ProofError, float]]:
    """Run everything in ``REGISTRY``; return ``(label, result or error, seconds)`` for each, in registry order.

    With ``jobs`` above 1 the results run in processes forked from this one
    (they see this registry, test replacements included) and come back
    pickled, with new SymPy dummies (SymPy evaluates what it unpickles: a side held unevaluated may not stay so).
    Without fork (Windows, macOS' default) everything runs here, in turn.
    """
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        raise ValueError(f"jobs must be a whole number of processes, at least 1; got {jobs!r}")
    labels = list(REGISTRY)
    if jobs == 1 or len(labels) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return [_run_timed(label) for label in labels]
    # Fork, not spawn: a spawned process would rebuild the registry and miss a caller's replacement.
    with multiprocessing.get_context("fork").Pool(min(jobs, len(labels))) as pool:
        # One result per task, so that a long proof does not hold short ones behind it.
        found = {outcome[0]: outcome for outcome in pool.imap_unordered(_run_timed, labels, chunksize=1)}
    return [found[label] for label in labels]


class Proved(Mapping):
    """The registered results by label, each run at most once for whoever holds this mapping.

    A page that needs many results (its evidence rows, its claims) asks this
    mapping instead of calling :func:`prove` again for each use: a result is
    run the first time it is looked up, or taken from the outcomes of a
    :func:`prove_all` the page ran (``Proved(prove_all())`` proves nothing
    again). Membership and ``len`` run nothing; ``values()``, ``items()`` and
    ``==`` run every proof not run yet. It lives as long as the caller keeps
    it, one page's execution or one call, and is never written anywhere.

    Parameters
    ----------
    outcomes : iterable of (label, result or ProofError, seconds), optional
        What :func:`prove_all` returned.

    Raises
    ------
    KeyError
        On looking up a label that is not registered.
    ProofError
        On looking up a result whose proof failed.

    Examples
    --------
    >>> from attention_scaling.proofs import Proved
    >>> proved = Proved()
    >>> proved["thm-scaled-variance"] is proved["thm-scaled-variance"]  # run once
    True
    >>> "thm-missing" in proved
    False
    >>> proved["thm-missing"]  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    KeyError: "no theorem labelled 'thm-missing'; known labels: ...
    """

    def __init__(self, outcomes=()):
        self._results = {label: outcome for label, outcome, _seconds in outcomes}

    def __getitem__(self, label: str) -> Proof | Derivation | Step:
        if label not in self._results:
            self._results[label] = _run_timed(label)[1] if label in REGISTRY else prove(label)
        outcome = self._results[label]
        if isinstance(outcome, ProofError):
            # The stored error, with the traceback of this lookup only (it would grow with each).
            raise outcome.with_traceback(None)
        return outcome

    def __contains__(self, label: object) -> bool:
        return label in REGISTRY

    def __iter__(self) -> Iterator[str]:
        return iter(REGISTRY)

    def __len__(self) -> int:
        return len(REGISTRY)


# -- Checks beyond identities ---------------------------------------------------------------


def check_nonzero(theorem: str, lhs, rhs, reason: str = "") -> Step:
    r"""Check that SymPy decides ``lhs - rhs`` is not zero (the claim :math:`lhs \neq rhs`).

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs import check_nonzero
    >>> check_nonzero("demo", sp.exp(1), 2).latex()
    'e \\neq 2'
    """
    lhs, rhs = sp.sympify(lhs), sp.sympify(rhs)
    if _evaluated(lhs - rhs, None).is_zero is not False:
        raise ProofError(f"{theorem}: SymPy cannot show that {lhs} differs from {rhs}")
    return _step(lhs, rhs, reason, r"\neq")


# For each relation lhs R rhs: the difference that must have a sign, and the sign.
_SIGNS = {
    r"\le": (lambda lhs, rhs: rhs - lhs, "nonnegative"),
    "<": (lambda lhs, rhs: rhs - lhs, "positive"),
    r"\ge": (lambda lhs, rhs: lhs - rhs, "nonnegative"),
    ">": (lambda lhs, rhs: lhs - rhs, "positive"),
}


def check_inequality(theorem: str, lhs, rhs, relation: str, reason: str = "") -> Step:
    r"""Check that SymPy's assumptions decide ``lhs relation rhs``, with ``relation`` one of ≤, <, ≥, >.

    Unevaluated objects in the sides are carried out first. If the
    assumptions cannot read the sign of the difference as it stands, it is
    cancelled into one quotient of expanded polynomials, so that sums of
    non-negative terms show their sign; if SymPy still cannot decide the
    sign, the claim is not proved.

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs import check_inequality
    >>> x = sp.Symbol("x", positive=True)
    >>> check_inequality("demo", x**2 + 1, 1, ">").latex()
    'x^{2} + 1 > 1'
    >>> check_inequality("demo", x, 1, ">")
    Traceback (most recent call last):
    ...
    attention_scaling.proofs.engine.ProofError: demo: SymPy cannot show that x > 1; the gap x - 1 is not positive
    """
    if relation not in _SIGNS:
        raise ValueError(f"relation must be one of {list(_SIGNS)}; got {relation!r}")
    lhs, rhs = sp.sympify(lhs), sp.sympify(rhs)
    difference, sign = _SIGNS[relation]
    gap = difference(lhs, rhs).doit()
    if getattr(gap, f"is_{sign}") is not True:
        # Each rewrite costs more than the last; try them only while the sign is hidden.
        for rewrite in (sp.together, sp.cancel):
            gap = rewrite(gap)
            if getattr(gap, f"is_{sign}") is True:
                break
        else:
            raise ProofError(f"{theorem}: SymPy cannot show that {lhs} {relation} {rhs}; the gap {gap} is not {sign}")
    return _step(lhs, rhs, reason, relation)


def check_nonnegative(theorem: str, expr, reason: str = "") -> Step:
    r"""Check that SymPy's assumptions decide ``expr >= 0`` (a square, a sum of squares).

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs import check_nonnegative
    >>> x = sp.Symbol("x", real=True)
    >>> check_nonnegative("demo", x**2).latex()
    'x^{2} \\ge 0'
    """
    return check_inequality(theorem, expr, 0, r"\ge", reason)


def check_solutions(theorem: str, variable: sp.Symbol, condition, domain, solutions, reason: str = "") -> Step:
    r"""Check that SymPy's ``solveset`` finds exactly ``solutions`` for ``condition`` in ``domain``.

    The step reads :math:`\{x \in D \mid \text{condition}\} = \text{solutions}`;
    ``solutions`` may be ``sympy.S.EmptySet`` (no point satisfies it).

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs import check_solutions
    >>> z = sp.Symbol("z", real=True)
    >>> check_solutions("demo", z, z**2 <= 4, sp.S.Reals, sp.Interval(-2, 2)).latex()
    '\\left\\{z\\; \\middle|\\; z \\in \\mathbb{R} \\wedge z^{2} \\leq 4 \\right\\} = \\left[-2, 2\\right]'
    """
    found = sp.solveset(condition, variable, domain)
    if found != solutions:
        raise ProofError(f"{theorem}: solveset gives {found} for {condition} on {domain}, not {solutions}")
    return _step(sp.ConditionSet(variable, condition, domain), solutions, reason)
