"""The proofs of the logit-growth and initialisation chapters: what they check, how they show it, and planted faults.

Covers ``thm-qk-norm-bound``, the derivations ``logit-growth-quadratic`` and
``logit-growth-entropy-why``, ``thm-projected-dot-product``, and the way
their two pages state them: the statement glued from the proof, and no
sentence that claims more than the proof's step kinds allow.
"""

import re
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from attention_scaling import proofs
from attention_scaling.logit_growth import zhai_entropy_bound
from attention_scaling.proofs import E, ProofError, RandomVariables, Var, check, d_k
from attention_scaling.proofs.engine import argue, check_nonnegative, check_solutions
from attention_scaling.proofs.logit_growth import EntropyBound

# A planted fault must replace the name that the theorem's own module looks up.
qk_norm, initialisation = proofs.logit_growth, proofs.initialisation
DOCS = Path(__file__).parent.parent / "docs"
QK = "thm-qk-norm-bound"
PROJECTED = "thm-projected-dot-product"


@pytest.fixture(scope="module")
def qk_proof():
    return proofs.qk_norm_bound_theorem()


@pytest.fixture(scope="module")
def projected_proof():
    return proofs.projected_dot_product()


# -- The QK-norm bound --------------------------------------------------------------------


def test_qk_norm_bound_is_checked_in_every_step_and_states_the_gained_interval(qk_proof):
    assert qk_proof.counts() == {"checked": 12, "cited": 0, "argued": 0, "measured": 0}
    assert qk_proof.status == "checked"
    assert all(step.kind == "checked" for step in qk_proof.cross_checks)
    assert len(qk_proof.cross_checks) == 15  # three checks at each d = 2..6
    largest = sp.Symbol("M", positive=True)
    plain, gained = qk_proof.steps[5].rhs, qk_proof.steps[11].rhs
    assert plain == sp.Interval(-sp.sqrt(d_k), sp.sqrt(d_k))
    assert gained == sp.Interval(-largest * sp.sqrt(d_k), largest * sp.sqrt(d_k))
    assert gained.subs(largest, 1) == plain  # without gains (M = 1) the stated bound is sqrt(d_k)
    assert qk_proof.results == (11,) and qk_proof.statement == qk_proof.steps[11].latex()
    assert isinstance(qk_proof.result, sp.Eq)


def test_qk_norm_bound_keeps_the_steps_the_evidence_page_measures(qk_proof):
    # site/evidence.py reads step 0 (the squared norm d_k) and step 6 (the value sqrt(d_k) at q = k).
    assert qk_proof.steps[0].rhs == d_k
    assert qk_proof.steps[6].rhs == sp.sqrt(d_k)


def test_qk_norm_bound_shows_sums_and_substitutions_not_names(qk_proof):
    # What the page shows is what SymPy checked: unevaluated sums and substitutions.
    notation = (sp.Sum, initialisation._SquaredNorm, initialisation._Dot)
    assert all(step.lhs.has(*notation) or isinstance(step.lhs, sp.ConditionSet) for step in qk_proof.steps)
    assert isinstance(qk_proof.steps[0].lhs, sp.Subs) and isinstance(qk_proof.steps[6].lhs, sp.Subs)
    assert qk_proof.steps[1].latex() == (
        r"\sum_{i=1}^{d_{k}} \left(- t {v}_{i} + {u}_{i}\right)^{2} = "
        r"t^{2} \lVert v \rVert^{2} - 2 t \left(u \cdot v\right) + \lVert u \rVert^{2}"
    )


def test_qk_norm_bound_fails_if_layer_norm_were_bessel_corrected(monkeypatch):
    # LayerNorm divides by the population standard deviation; with the sample one, ||LN(x)||^2 = d - 1.
    monkeypatch.setattr(qk_norm, "_population_variance", lambda sum_of_squares, size: sum_of_squares / (size - 1))
    with pytest.raises(ProofError, match=f"^{QK}: SymPy does not reduce"):
        proofs.qk_norm_bound_theorem(cross_check=False)
    with pytest.raises(ProofError, match=f"^{QK}: SymPy does not reduce"):
        qk_norm._qk_norm_cross_checks(QK, sizes=[3])


def test_qk_norm_bound_refuses_the_overstated_bounds():
    z, w = sp.Symbol("z", real=True), sp.Symbol("w", real=True)
    largest = sp.Symbol("M", positive=True)
    # The bound is sqrt(d_k), not d_k.
    with pytest.raises(ProofError, match=f"^{QK}: solveset gives"):
        check_solutions(QK, z, z**2 <= d_k, sp.S.Reals, sp.Interval(-d_k, d_k))
    # With gains the logits are not capped at sqrt(d_k): the gained interval is M times wider.
    with pytest.raises(ProofError, match=f"^{QK}: solveset gives"):
        check_solutions(QK, w, w**2 <= largest**2 * d_k, sp.S.Reals, sp.Interval(-sp.sqrt(d_k), sp.sqrt(d_k)))


def test_qk_norm_bound_sign_checks_are_not_vacuous():
    i = sp.Symbol("i", integer=True, positive=True)
    q, k, g = (sp.IndexedBase(name, real=True) for name in "qkg")
    total = lambda term: sp.Sum(term, (i, 1, d_k))  # noqa: E731
    # A sum of products has no sign; a sum of squares has.
    with pytest.raises(ProofError, match="cannot show"):
        check_nonnegative(QK, total(q[i] * k[i]))
    # M^2 - g_i^2 has no sign until M is the largest |g_i|: that is why the proof writes it as h_i >= 0.
    with pytest.raises(ProofError, match="cannot show"):
        check_nonnegative(QK, total((1 - g[i] ** 2) * q[i] ** 2))


def test_qk_norm_cross_checks_expand_the_mean_and_lagrange(qk_proof):
    first = qk_proof.cross_checks[:3]
    assert [step.rhs for step in first] == [2, first[1].rhs, 0]
    assert isinstance(first[2].lhs, sp.Subs)
    with pytest.raises(ProofError, match=f"^{QK}"):
        i, j = sp.symbols("i j", integer=True, positive=True)
        q, k = sp.IndexedBase("q", real=True), sp.IndexedBase("k", real=True)
        # Planted: Lagrange's sum without the factor 1/2 counts every pair twice.
        check(QK, sp.Sum(q[i] ** 2, (i, 1, 3)) * sp.Sum(k[i] ** 2, (i, 1, 3)) - sp.Sum(q[i] * k[i], (i, 1, 3)) ** 2,
              sp.Sum((q[i] * k[j] - q[j] * k[i]) ** 2, (j, 1, 3), (i, 1, 3)))


# -- Logit growth's derivations -----------------------------------------------------


def test_quadratic_growth_step_is_checked_and_shows_the_sums():
    step = proofs.prove("logit-growth-quadratic")
    assert isinstance(step, proofs.Step) and step.kind == "checked"
    assert step.lhs.has(sp.Sum) and "c^{2}" in sp.latex(step.rhs)
    assert step.reason == "the scalar $c$ comes out of each projection"


def test_quadratic_growth_step_refuses_a_false_identity(monkeypatch):
    # Planted fault: the claimed side divides by sqrt(d_k + 1), not sqrt(d_k).
    root, calls = sp.sqrt, []

    def second_root_off_by_one(expr, *args, **kwargs):
        calls.append(expr)
        return root(expr + 1 if len(calls) == 2 else expr, *args, **kwargs)

    monkeypatch.setattr(sp, "sqrt", second_root_off_by_one)
    with pytest.raises(ProofError, match="^logit-growth-quadratic: SymPy does not reduce"):
        proofs.quadratic_growth_step()


def test_quadratic_growth_step_refuses_linear_growth(monkeypatch):
    # Planted fault: the key's projection drops its scale, so the logit grows as c, not c^2.
    real_doit = qk_norm._Projection.doit

    def unscaled_key(self, **hints):
        vector, matrix, column, length, _ = self.args
        return real_doit(qk_norm._Projection(vector, matrix, column, length, 1)) if str(matrix) == "W_K" else real_doit(self)

    monkeypatch.setattr(qk_norm._Projection, "doit", unscaled_key)
    with pytest.raises(ProofError, match="^logit-growth-quadratic"):
        proofs.quadratic_growth_step()


def test_entropy_bound_derivation_checks_four_steps():
    derivation = proofs.prove("logit-growth-entropy-why")
    assert isinstance(derivation, proofs.Derivation)
    assert derivation.counts() == {"checked": 4, "cited": 0, "argued": 0, "measured": 0}
    assert isinstance(derivation.steps[3].lhs, sp.Derivative)
    assert derivation.steps[2].latex() == r"B\left(0\right) = \log{\left(T \right)}"


def test_entropy_bound_derivation_catches_a_bound_without_its_square_roots(monkeypatch):
    # Planted fault: sqrt dropped, so the bound is no longer the one-peak entropy at the largest gap.
    monkeypatch.setattr(sp, "sqrt", lambda expr, *args, **kwargs: expr)
    with pytest.raises(ProofError, match="^logit-growth-entropy-why"):
        proofs.entropy_bound_derivation()


def test_entropy_bound_derivation_refuses_a_rising_bound():
    derivation = proofs.entropy_bound_derivation()
    slope = derivation.steps[3]
    with pytest.raises(ProofError, match="^logit-growth-entropy-why"):
        check("logit-growth-entropy-why", slope.lhs, -slope.rhs)


@pytest.mark.parametrize("tokens", [2, 16, 64])
def test_the_symbolic_bound_is_the_numerical_one_the_page_plots(tokens):
    # The B(sigma) that SymPy differentiates is the bound that zhai_entropy_bound computes for the figures.
    sigma = sp.Symbol(r"\boldsymbol{\sigma}", nonnegative=True)
    T = sp.Symbol("T", integer=True, positive=True)
    for value in (0.0, 0.5, 4.0, 12.0):
        symbolic = float(EntropyBound(sigma).doit().subs({sigma: value, T: tokens}))
        assert np.isclose(symbolic, float(zhai_entropy_bound(value, tokens)), rtol=1e-12, atol=0)


# -- The projected dot product ------------------------------------------------------


def test_projected_dot_product_counts_its_argued_independence(projected_proof):
    assert projected_proof.counts() == {"checked": 12, "cited": 0, "argued": 2, "measured": 0}
    assert projected_proof.status == "argued"
    argued = [step for step in projected_proof.steps if step.kind == "argued"]
    assert all("independent" in step.reason and step.marker() == r"\text{[argued]}" for step in argued)
    assert all(step.kind == "checked" for step in projected_proof.cross_checks)


def test_projected_dot_product_states_the_scaled_variance(projected_proof):
    unscaled, scaled = projected_proof.steps[11], projected_proof.steps[12]
    assert projected_proof.results == (12,) and projected_proof.statement == scaled.latex()
    assert unscaled.lhs.has(Var) and sp.simplify(unscaled.rhs - d_k * scaled.rhs) == 0
    assert sp.simplify(projected_proof.result.rhs - (proofs.d_model * proofs.sigma_Q * proofs.sigma_K) ** 2) == 0
    assert r"\operatorname{Var}\left[\frac{q \cdot k}{\sqrt{d_{k}}}\right]" in projected_proof.statement
    assert projected_proof.steps[-1].rhs == sp.FiniteSet(1 / sp.sqrt(proofs.d_model))
    assert sum("x' = x" in step.reason for step in projected_proof.cross_checks) == 3


def test_projected_dot_product_shows_the_column_sums(projected_proof):
    diagonal, below, above = projected_proof.steps[3:6]
    assert all(step.lhs.has(sp.Sum) and step.lhs.has(E) for step in (diagonal, below, above))
    assert r"1 \leq b \leq a - 1" in below.latex() and r"a + 1 \leq b \leq d_{model}" in above.latex()
    assert below.rhs == above.rhs == 0


def test_projected_dot_product_refuses_a_variance_that_forgets_the_width():
    # Planted fault: Var[q.k / sqrt(d_k)] = sigma_Q^2 sigma_K^2, as if the projected
    # coordinates had the weights' variance instead of d_model times it.
    rv = RandomVariables()
    *_, dot = proofs.variance._dot_product(rv, 0, proofs.d_model * proofs.sigma_Q**2, 0, proofs.d_model * proofs.sigma_K**2)
    with pytest.raises(ProofError, match=f"^{PROJECTED}"):
        check(PROJECTED, Var(dot / sp.sqrt(d_k)), proofs.sigma_Q**2 * proofs.sigma_K**2, rv)


def test_projected_dot_product_fails_when_the_general_theorem_is_wrong(monkeypatch):
    # Reusing a broken general-moments result (no factor d_k) must stop the proof.
    original = proofs.dot_product_general_moments

    def broken():
        proof = original()
        wrong = argue(proof.label, proof.result.lhs, proof.result.rhs / d_k, "planted")
        return proofs.Proof(proof.name, proof.label, proof.assumptions, (wrong,))

    monkeypatch.setattr(initialisation, "dot_product_general_moments", broken)
    with pytest.raises(ProofError, match=f"^{PROJECTED}"):
        proofs.projected_dot_product(cross_check=False)


def test_projected_dot_product_fails_when_weight_entries_are_correlated(monkeypatch):
    # Planted fault: distinct entries with E[W_ai W_bi] = sigma^2 (perfectly
    # correlated) break the independence the proof rests on; it must notice.
    original = RandomVariables.expectation

    def correlated(self, expr):
        value = original(self, expr)
        names = {str(s) for s in sp.sympify(expr).free_symbols}
        return proofs.sigma_Q**2 if names == {"W_{ai}", "W_{bi}"} and sp.sympify(expr).is_Mul else value

    monkeypatch.setattr(RandomVariables, "expectation", correlated)
    with pytest.raises(ProofError, match=f"^{PROJECTED}"):
        proofs.projected_dot_product(cross_check=False)


def test_projected_cross_checks_fail_without_the_factor_d_k(monkeypatch):
    # Planted fault: Var[q.k] claimed without the factor d_k (the width of the head) at fixed sizes.
    real_check = initialisation.check

    def without_width(label, lhs, rhs, variables=None, reason=""):
        return real_check(label, lhs, rhs / 2 if r"\times 2$" in reason else rhs, variables, reason)

    monkeypatch.setattr(initialisation, "check", without_width)
    with pytest.raises(ProofError, match=f"^{PROJECTED}"):
        initialisation._projection_cross_checks(PROJECTED)


def test_the_registry_records_what_each_result_uses():
    uses = {label: proofs.REGISTRY[label].uses for label in
            ("logit-growth-quadratic", QK, "logit-growth-entropy-why", PROJECTED)}
    assert uses == {
        "logit-growth-quadratic": (),
        QK: (),
        "logit-growth-entropy-why": ("thm-softmax-shift-invariance",),
        PROJECTED: ("thm-dot-product-general-moments", "thm-scaled-variance"),
    }


# -- The pages state what was checked ------------------------------------------------

PAGES = {"logit-growth.md": {QK: "eq-qk-norm-bound"}, "initialisation.md": {PROJECTED: "eq-projected-score-variance"}}


def _theorem_block(text: str, label: str) -> str:
    """The body of the prf:theorem directive with this label (fenced with four backticks)."""
    match = re.search(r"````\{prf:theorem\}[^\n]*\n:label: " + re.escape(label) + r"\n(.*?)\n````\n", text, re.S)
    assert match, f"no four-backtick prf:theorem labelled {label}"
    return match.group(1)


@pytest.mark.parametrize("page", list(PAGES))
def test_theorem_statements_are_glued_from_the_proof(page):
    text = (DOCS / page).read_text(encoding="utf-8")
    for label, equation in PAGES[page].items():
        block = _theorem_block(text, label)
        assert f"```{{glue:math}} {label}\n:label: {equation}\n```" in block
        assert "$$" not in block, "a typed display equation in the statement"
    assert "for key, value in statements(proof).items(): glue(key, value, display=False)" in text


def _proof_claims(text: str) -> list[tuple[str, str]]:
    """(theorem label, proof text) for each prf:proof that follows a prf:theorem."""
    claims = []
    for match in re.finditer(r":label: (thm-[\w-]+)\n.*?```\{prf:proof\}\n(.*?)\n```", text, re.S):
        claims.append((match.group(1), match.group(2)))
    return claims


def _overclaims(text: str) -> list[str]:
    """Proof texts that say SymPy checks every (or each) step, of a theorem that has unchecked steps, unmarked."""
    found = []
    for label, proof_text in _proof_claims(text):
        words = " ".join(proof_text.split())
        if re.search(r"(every|each) step", words) and "marked ✓" not in words and proofs.prove(label).status != "checked":
            found.append(label)
    return found


@pytest.mark.parametrize("page", list(PAGES))
def test_no_proof_says_every_step_is_checked_unless_it_is(page):
    assert _overclaims((DOCS / page).read_text(encoding="utf-8")) == []


def test_the_every_step_test_catches_the_old_initialisation_proof():
    text = (DOCS / "initialisation.md").read_text(encoding="utf-8")
    planted = text.replace("SymPy checks every step\nmarked ✓,", "SymPy checks each step,")
    assert planted != text
    assert _overclaims(planted) == [PROJECTED]


def _ungained_caps(text: str) -> list[str]:
    """Sentences that cap or bound every logit at sqrt(d_k) without a word on the gain."""
    sentences = re.split(r"(?<=[.;])\s+", " ".join(text.split()))
    claims = [s for s in sentences if re.search(r"\b(caps?|bounds?)\b.*every logit|every logit.*\b(caps?|at most)\b", s)]
    return [s for s in claims if r"\sqrt{d_k}" in s and "gain" not in s]


def test_the_page_does_not_cap_every_logit_at_sqrt_d_k_without_the_gain():
    text = (DOCS / "logit-growth.md").read_text(encoding="utf-8")
    assert _ungained_caps(text) == []
    # The sentence of issue 13 is caught.
    overstated = "LayerNorm on queries and keys (QK-norm) caps every logit at $\\sqrt{d_k}$, which this page proves."
    assert _ungained_caps(overstated) == [overstated]


# -- The vector notation the steps print ---------------------------------------------


def test_norms_and_dot_products_print_as_the_page_writes_them_and_check_as_sums():
    n = sp.Symbol("n", integer=True, positive=True)
    q, k, g = (sp.IndexedBase(name, real=True) for name in "qkg")
    norm, dot = initialisation._SquaredNorm, initialisation._Dot
    assert sp.latex(norm(n, q) * norm(n, k) - dot(n, q, k) ** 2) == (
        r"\lVert k \rVert^{2} \lVert q \rVert^{2} - \left(q \cdot k\right)^{2}"
    )
    assert sp.latex(dot(n, (g, q), k)) == r"\left(g \odot q\right) \cdot k"
    assert dot(n, q, q) == norm(n, q) and norm(n, q).is_nonnegative
    i = initialisation._coordinate
    assert dot(n, (g, q), k).doit() == sp.Sum(g[i] * q[i] * k[i], (i, 1, n))
    # A false identity between them is refused, like one between the sums.
    with pytest.raises(ProofError, match="^demo"):
        check("demo", norm(n, q) * norm(n, k), dot(n, q, k) ** 2)


def test_where_substitutes_before_it_evaluates():
    n = sp.Symbol("n", integer=True, positive=True)
    q = sp.IndexedBase("q", real=True)
    norm = initialisation._SquaredNorm(n, q)
    assert initialisation._Where(3 * norm, norm, n).doit() == 3 * n
    # SymPy's own Subs evaluates first: the norm is a sum by the time it looks for it.
    assert sp.Subs(3 * norm, norm, n).doit() != 3 * n
