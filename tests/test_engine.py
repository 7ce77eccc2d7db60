"""The sealed engine: how each step is known, the statement printed from the result, sums over coordinates."""

import re

import pytest
import sympy as sp

from attention_scaling import proofs
from attention_scaling.proofs import (
    KINDS,
    Derivation,
    E,
    Proof,
    ProofError,
    RandomVariables,
    Var,
    argue,
    check,
    check_inequality,
    check_solutions,
    cite,
    measure,
)

x = sp.Symbol("x", positive=True)
i, j = sp.symbols("i j", integer=True, positive=True)
n = sp.Symbol("n", integer=True, positive=True)


def one_of_each():
    return (
        check("demo", (x + 1) ** 2, x**2 + 2 * x + 1, reason="expand"),
        cite("demo", sp.log(E(x)), E(sp.log(x)), "Cover and Thomas, Elements of Information Theory (2006)",
             "Thm 2.6.2", r"\ge"),
        argue("demo", sp.Symbol("a"), sp.Symbol("b"), "a and b count the same pairs"),
        measure("demo", sp.Symbol("m"), 1, "gaussian-max", r"\le"),
    )


def test_each_kind_has_its_own_marker_in_the_derivation():
    steps = one_of_each()
    assert [step.kind for step in steps] == list(KINDS)
    rows = Derivation(steps).latex().removeprefix(r"\begin{aligned}").split(r" \\ ")
    # The kind comes first in each row, where a narrow column cannot hide it; the basis comes last.
    assert rows[0].startswith(r"\checkmark &&")
    assert rows[1].startswith(r"\text{[cited]} &&")
    assert r"\text{(Cover and Thomas, Elements of Information Theory (2006), Thm 2.6.2)}" in rows[1]
    assert rows[2].startswith(r"\text{[argued]} &&") and "a and b count the same pairs" in rows[2]
    assert rows[3].startswith(r"\text{[measured]} &&") and "evidence: gaussian-max" in rows[3]
    assert len({step.marker() for step in steps}) == 4


def table_cells(markdown: str) -> list[list[str]]:
    """The cells of each body row of a Markdown table, split where a ``|`` is not escaped."""
    return [[cell.strip() for cell in re.split(r"(?<!\\)\|", row)[1:-1]] for row in markdown.splitlines()[2:]]


def test_a_page_shows_each_step_with_its_reason_in_words_beside_the_math():
    # The reasons are text cells, not \text{} inside the formula, so they wrap instead of running out of its box.
    z = sp.Symbol("z")
    steps = (*one_of_each(), check("demo", sp.Abs(z), sp.Abs(-z), reason="|z| = |-z|; a * b, [c] & d_k"))
    table = Derivation(steps)._repr_markdown_()
    assert table.splitlines()[:2] == ["| kind | step | reason |", "| :-: | :-- | :-- |"]
    rows = table_cells(table)
    assert [row[0] for row in rows] == ["✓", "[cited]", "[argued]", "[measured]", "✓"]
    for step, (_, math, reason) in zip(steps, rows):
        assert math.startswith("$\\displaystyle ") and math.endswith("$") and "|" not in math, math
        assert "text{(" not in math and re.sub(r"\\(.)", r"\1", reason) == step.note(), (math, reason)
    assert r"\left\vert {z}\right\vert" in rows[-1][1]
    # A reason on two lines stays in its row.
    assert len(Derivation((check("demo", 1, 1, reason="two\nlines"),))._repr_markdown_().splitlines()) == 3
    # A lone step and a proof show the same table.
    assert steps[-1]._repr_markdown_() == Derivation(steps[-1:])._repr_markdown_()
    proof = Proof("demo", "thm-demo", (), steps)
    assert proof._repr_markdown_() == table


def test_the_mathematics_of_a_reason_is_inline_math_between_its_words():
    z = sp.Symbol("z")
    step = check("demo", sp.Abs(z), sp.Abs(-z), reason=r"so $\lvert z\rvert = |-z|$ for every $z$, as $\|z\|$ is")
    [(_, _, reason)] = table_cells(Derivation((step,))._repr_markdown_())
    # The math stays LaTeX, with its bars as commands (a | would end the cell); the words are escaped.
    assert reason == r"so $\lvert z\rvert = \vert -z\vert $ for every $z$\, as $\Vert z\Vert $ is", reason
    latex = Derivation((step,)).latex()
    assert latex.endswith(r"&& \text{(so }\lvert z\rvert = |-z|\text{ for every }z\text{, as }\|z\|\text{ is)}\end{aligned}"), latex


def test_the_build_finds_step_tables_by_the_header_they_are_written_with():
    import step_tables  # docs/_ext/ (on pytest's pythonpath), which marks the tables for the stylesheet

    header = Derivation(one_of_each())._repr_markdown_().splitlines()[0]
    assert tuple(cell.strip() for cell in header.strip("|").split("|")) == step_tables.STEP_TABLE_HEADER


def test_unchecked_kinds_need_their_basis():
    with pytest.raises(ValueError, match="source and a locator"):
        cite("demo", 1, 1, "Cover and Thomas", " ")
    with pytest.raises(ValueError, match="argument in words"):
        argue("demo", 1, 1, "")
    with pytest.raises(ValueError, match="evidence row"):
        measure("demo", 1, 1, "")


def test_counts_and_status_follow_the_steps():
    steps = one_of_each()
    proof = Proof("demo", "thm-demo", (), steps, results=(0,))
    assert proof.counts() == {"checked": 1, "cited": 1, "argued": 1, "measured": 1}
    assert proof.status == "cited"
    assert Proof("demo", "thm-demo", (), steps[:1]).status == "checked"
    assert Proof("demo", "thm-demo", (), (steps[0], steps[2])).status == "argued"


def test_the_statement_is_printed_from_the_result_steps():
    steps = one_of_each()
    proof = Proof("demo", "thm-demo", (), steps, results=(0, 1))
    assert proof.statement == steps[0].latex() + r", \qquad " + steps[1].latex()
    assert proof.statement_math()._repr_latex_() == f"$${proof.statement}$$"
    assert proof.result == sp.Ge(sp.log(E(x)), E(sp.log(x)), evaluate=False)


def test_unevaluated_objects_are_carried_out_and_printed_as_written():
    step = check("demo", sp.Derivative(x**3, x), 3 * x**2)
    assert step.latex() == r"\frac{d}{d x} x^{3} = 3 x^{2}"
    with pytest.raises(ProofError, match="^demo"):
        check("demo", sp.Integral(x, (x, 0, 1)), 1)
    assert check_inequality("demo", sp.Sum(x, (i, 1, n)), 0, ">").latex().startswith(r"\sum_{i=1}^{n} x")


def test_solution_sets_are_checked_both_ways():
    z = sp.Symbol("z", real=True)
    assert check_solutions("demo", z, z**2 > 1, sp.Interval(-1, 1), sp.S.EmptySet).rhs == sp.S.EmptySet
    with pytest.raises(ProofError, match="solveset gives"):
        check_solutions("demo", z, z**2 > 1, sp.S.Reals, sp.S.EmptySet)


# -- Sums over coordinates: the split into i = j and i != j is derived, not assumed ----


def test_pairs_of_coordinates_split_by_a_kronecker_delta():
    rv = RandomVariables()
    q, k = rv.add_family("q", 0, 1), rv.add_family("k", 0, 1)
    assert rv.evaluate(E(q[i] * k[i] * q[j] * k[j])) == sp.KroneckerDelta(i, j)
    mean = RandomVariables()
    a = mean.add_family("a", 2, 1)
    assert sp.simplify(mean.evaluate(E(a[i] * a[j])) - (4 + sp.KroneckerDelta(i, j))) == 0


def test_the_double_sum_counts_the_diagonal_for_a_symbolic_size():
    rv = RandomVariables()
    assert rv.evaluate(sp.Sum(sp.KroneckerDelta(i, j), (j, 1, n), (i, 1, n))) == n
    X = rv.add_family("X", 1, 2)
    assert sp.expand(rv.evaluate(E(sp.Sum(X[i], (i, 1, n)) ** 2))) == n**2 + 2 * n


def test_a_rule_that_forgets_the_diagonal_fails_the_dot_product_theorem(monkeypatch):
    # Planted fault: every pair treated as independent, as if i never equalled j.
    monkeypatch.setattr(RandomVariables, "_term_expectation", RandomVariables._distinct_expectation)
    with pytest.raises(ProofError, match="^thm-dot-product-variance"):
        proofs.dot_product_variance(cross_check=False)


def test_more_than_two_summation_indices_are_refused():
    rv = RandomVariables()
    X = rv.add_family("X", 0, 1)
    l = sp.Symbol("l", integer=True, positive=True)
    with pytest.raises(NotImplementedError, match="more than two summation indices"):
        rv.expectation(X[i] * X[j] * X[l])


def test_theorem_2_1_shows_the_diagonal_step():
    proof = proofs.dot_product_variance(cross_check=False)
    assert proof.counts() == {"checked": len(proof.steps), "cited": 0, "argued": 0, "measured": 0}
    latex = Derivation(proof.steps).latex()
    assert r"\delta_{i j}" in latex and r"\sum_{\substack{1 \leq j \leq d_{k}\\1 \leq i \leq d_{k}}}" in latex
    assert proof.statement == r"\mathbb{E}\left[q \cdot k\right] = 0, \qquad \operatorname{Var}\left[q \cdot k\right] = d_{k}"


def test_the_general_moments_condition_is_not_zero_means():
    # Var[q.k / sqrt(d_k)] = 1 with mu_q = sigma_q = 1/sqrt(2), mu_k = 0, sigma_k = 1: zero means are not needed.
    general = proofs.dot_product_general_moments().result.rhs / proofs.d_k
    half = sp.sqrt(sp.Rational(1, 2))
    value = general.subs({proofs.mu_q: half, proofs.sigma_q: half, proofs.mu_k: 0, proofs.sigma_k: 1})
    assert sp.simplify(value) == 1


def test_two_results_share_a_line_and_three_are_stacked():
    x = sp.Symbol("x")
    steps = tuple(check("thm-demo", x + n, n + x) for n in range(3))
    two = Proof("demo", "thm-demo", (), steps, results=(0, 1)).statement
    three = Proof("demo", "thm-demo", (), steps, results=(0, 1, 2)).statement
    assert two == r"x = x, \qquad x + 1 = x + 1"
    assert three.startswith(r"\begin{gathered}") and three.count(r"\\") == 2 and r"\qquad" not in three


def test_the_cheap_reduction_still_rejects_a_false_identity():
    # check() tries expand and cancel before simplify; neither may take a non-zero difference to 0.
    with pytest.raises(ProofError, match="simplifies to 2"):
        check("demo", (x + 1) ** 2, x**2 + 2 * x - 1)
    with pytest.raises(ProofError):
        check("demo", (x**2 - 1) / (x - 1), x - 1)
    with pytest.raises(ProofError):  # only simplify could have shown it, and it is false
        check("demo", sp.sin(x) ** 2 + sp.cos(x) ** 2, 2)


def test_sympy_stats_moments_evaluated_term_by_term_still_reject_a_wrong_variance():
    import sympy.stats

    dot = sum(sympy.stats.Normal(f"q_{m}", 0, 1) * sympy.stats.Uniform(f"k_{m}", -sp.sqrt(3), sp.sqrt(3))
              for m in (1, 2))
    assert check("demo", sympy.stats.Variance(dot), 2).kind == "checked"
    with pytest.raises(ProofError):
        check("demo", sympy.stats.Variance(dot), 3)
    with pytest.raises(ProofError):  # the mean term of the definition is not lost in the split
        check("demo", sympy.stats.Variance(dot + 1), sympy.stats.Expectation((dot + 1) ** 2))


def test_a_product_of_independent_powers_is_the_integral_of_the_whole_term():
    # _term_expectation factorises E[c X^a Y^b] into moments; sympy.stats' own integral is the reference.
    import sympy.stats
    from sympy.stats import Expectation

    from attention_scaling.proofs.engine import _term_expectation

    q = sympy.stats.Uniform("q_u", -sp.sqrt(3), sp.sqrt(3))
    k = sympy.stats.Normal("k_n", 0, 2)
    r = sympy.stats.Rademacher("r_r")
    for term in (q**4 * k**2, 3 * q**2 * k**2 * r, x * q * k**3, q**3, k**4 * r**2):
        expectation = Expectation(term)
        assert sp.simplify(_term_expectation(expectation) - expectation.evaluate_integral()) == 0, term


def test_correlated_variables_are_not_factorised():
    # A joint distribution is integrated whole: E[N_0 N_1] is the correlation, not E[N_0] E[N_1] = 0.
    import sympy.stats
    from sympy.stats import Expectation

    from attention_scaling.proofs import engine

    half = sp.Rational(1, 2)
    pair = sympy.stats.Normal("pair", [0, 0], [[1, half], [half, 1]])
    assert sp.simplify(engine._term_expectation(Expectation(pair[0] * pair[1]))) == half


def test_the_factorisation_check_catches_moments_memoised_by_power_alone(monkeypatch):
    # Planted fault: a memory of moments that forgets the distribution (Uniform's 4th moment is 9/5,
    # Normal(0, 2)'s is 48). The comparison with sympy.stats' whole integrals must then fail.
    from attention_scaling.proofs import engine

    by_power = {}

    def forgetful_moment(variable, power):
        if power not in by_power:
            by_power[power] = sp.stats.Expectation(variable**power).evaluate_integral()
        return by_power[power]

    monkeypatch.setattr(engine, "_moment", forgetful_moment)
    engine._term_expectation.cache_clear()
    with pytest.raises(AssertionError):
        test_a_product_of_independent_powers_is_the_integral_of_the_whole_term()
    engine._term_expectation.cache_clear()


def test_a_sum_of_unknown_sequences_is_split_term_by_term_without_searching_for_a_closed_form(monkeypatch):
    # Sum.doit looked for a closed form of x_i^2 (hypergeometric terms) and found none: a quarter of prove's time.
    from attention_scaling.proofs.moments import _sum_out

    u, v = sp.IndexedBase("u", real=True), sp.IndexedBase("v", real=True)
    t = sp.Symbol("t", real=True)
    expected = sp.Sum(u[i] ** 2, (i, 1, n)) - 2 * t * sp.Sum(u[i] * v[i], (i, 1, n)) + t**2 * sp.Sum(v[i] ** 2, (i, 1, n)) + 3 * n

    def no_search(self, **hints):
        raise AssertionError(f"Sum.doit was asked for {self}")

    with monkeypatch.context() as patched:
        patched.setattr(sp.Sum, "doit", no_search)
        split = _sum_out((u[i] - t * v[i]) ** 2 + 3, ((i, 1, n),))
    assert split == expected
    # The same value as the sum written out, for five terms.
    assert sp.expand(split.subs(n, 5).doit() - sp.Sum((u[i] - t * v[i]) ** 2 + 3, (i, 1, 5)).doit()) == 0


@pytest.mark.parametrize("body", [x * i + i**2, sp.IndexedBase("u")[i + 1] - sp.IndexedBase("u")[i], sp.KroneckerDelta(i, j)])
def test_a_sum_with_a_closed_form_or_a_shift_is_left_to_sympy(body):
    from attention_scaling.proofs.moments import _sum_of_unknown_sequences

    assert _sum_of_unknown_sequences(sp.expand(body), i, 1, n) is None
    assert _sum_of_unknown_sequences(sp.IndexedBase("u")[i], i, 1, 4) is None  # a number of terms: SymPy writes them out
