"""The softmax theorems and the scaled variance on the sealed engine.

What each theorem's steps are (their kinds, counted), that every step is
shown as SymPy prints the expression it checked, that a planted fault in a
checked sub-expression stops the theorem, and that the pages state each
theorem by gluing the proof's statement.
"""


import pytest
import sympy as sp

from attention_scaling import proofs
from attention_scaling.proofs import Derivation, E, ProofError, Var, check
from attention_scaling.proofs.engine import KINDS, check_inequality, check_solutions
from attention_scaling.site.statements import statements

softmax_module, scaling_module = proofs.softmax, proofs.scaling
SoftmaxWeight, ForIndices = softmax_module.SoftmaxWeight, softmax_module.ForIndices

SHIFT, JACOBIAN, STABLE, SCALED = (
    "thm-softmax-shift-invariance",
    "thm-softmax-jacobian",
    "thm-stable-softmax-bounds",
    "thm-scaled-variance",
)

# label -> (checked, cited, argued, measured) of the derivation, and how many cross-checks.
COUNTS = {
    SHIFT: ((5, 0, 0, 0), 5),
    JACOBIAN: ((10, 0, 0, 0), 0),
    STABLE: ((10, 0, 1, 0), 10),
    SCALED: ((7, 0, 0, 0), 0),
}


@pytest.fixture(scope="module")
def proved():
    return {label: proofs.prove(label) for label in COUNTS}


@pytest.mark.parametrize("label", list(COUNTS))
def test_step_kinds_are_counted(proved, label):
    proof = proved[label]
    counts, n_cross = COUNTS[label]
    assert proof.counts() == dict(zip(KINDS, counts))
    assert proof.status == ("argued" if counts[2] else "checked")
    assert len(proof.cross_checks) == n_cross
    assert all(step.kind == "checked" for step in proof.cross_checks)


def test_the_only_argued_step_is_the_rewriting_of_the_denominator(proved):
    [argued] = [step for step in proved[STABLE].steps if step.kind == "argued"]
    assert argued.marker() == r"\text{[argued]}"
    assert "1/(1 + a)" in argued.reason
    assert sp.latex(argued.lhs) == r"\sum_{j=1}^{n} e^{- m + {x}_{j}}"


def test_uses_are_the_results_the_proofs_rely_on():
    assert proofs.REGISTRY[SCALED].uses == ("thm-dot-product-variance",)
    assert proofs.REGISTRY[STABLE].uses == (SHIFT,)
    assert proofs.REGISTRY[SHIFT].uses == proofs.REGISTRY[JACOBIAN].uses == ()


# -- What is shown is what was checked ------------------------------------------------


@pytest.mark.parametrize("label", list(COUNTS))
def test_every_row_is_printed_from_its_checked_expressions(proved, label):
    proof = proved[label]
    for step in proof.steps + proof.cross_checks:
        assert step.latex() == f"{sp.latex(step.lhs)} {step.relation} {sp.latex(step.rhs)}"
    statement = r", \qquad ".join(proof.steps[index].latex() for index in proof.results)
    assert proof.statement == statement
    assert r"\text" not in proof.statement
    rows = Derivation(proof.steps).latex()
    for step in proof.steps:
        assert f"{sp.latex(step.lhs)} &{step.relation} {sp.latex(step.rhs)} &&" in rows


@pytest.mark.parametrize("label", list(COUNTS))
def test_the_shown_equations_check_again_as_they_stand(proved, label):
    # The objects on the page are the objects SymPy checks: checking them again passes
    # (the random-variable steps need their RandomVariables, and are left out).
    for step in proved[label].steps + proved[label].cross_checks:
        if step.lhs.has(E, Var) or isinstance(step.lhs, sp.ConditionSet):
            continue
        if step.kind == "checked" and step.relation == "=":
            check(label, step.lhs, step.rhs)
        elif step.kind == "checked" and step.relation in {r"\le", "<", r"\ge", ">"}:
            check_inequality(label, step.lhs, step.rhs, step.relation)


def test_statements_say_what_the_theorems_state(proved):
    assert proved[SHIFT].statement == (
        r"\operatorname{softmax}_{i}\left(x + c \mathbf{1}\right) = \operatorname{softmax}_{i}\left(x\right)"
    )
    jacobian, row_sum = proved[JACOBIAN].statement.split(r", \qquad ")
    assert jacobian == r"\frac{\partial}{\partial {x}_{k}} p_{i} = \left(\delta_{i k} - p_{k}\right) p_{i}"
    assert row_sum == r"\sum_{k=1}^{n} \frac{\partial}{\partial {x}_{k}} p_{i} = 0"
    assert proved[STABLE].statement == (
        r"\operatorname{softmax}_{i}\left(x\right) = \frac{e^{- m + {x}_{i}}}{\sum_{j=1}^{n} e^{- m + {x}_{j}}}"
    )
    assert proved[SCALED].statement == (
        r"\operatorname{Var}\left[\frac{X}{c}\right] = \frac{\operatorname{Var}\left[X\right]}{c^{2}}"
    )


def test_the_scaled_variance_steps_the_evidence_page_reads(proved):
    # site/evidence.py reads steps 5 and 6: Var[q.k/sqrt(d_k)] = 1 and Var[q.k/d_k] = 1/d_k.
    steps = proved[SCALED].steps
    assert (steps[5].rhs, steps[6].rhs) == (1, 1 / proofs.d_k)
    assert steps[4].rhs == sp.FiniteSet(sp.sqrt(proofs.d_k))


# -- The printing objects ------------------------------------------------------------


def test_softmax_weight_is_its_definition():
    x, n, i, c = sp.IndexedBase("x"), sp.Symbol("n"), sp.Symbol("i"), sp.Symbol("c")
    j = sp.Symbol("j", integer=True, positive=True)
    assert SoftmaxWeight(x, i, n, shift=c).doit() == sp.exp(x[i] + c) / sp.Sum(sp.exp(x[j] + c), (j, 1, n))
    assert SoftmaxWeight((1, 0), 2).doit() == 1 / (sp.E + 1)
    assert sp.latex(SoftmaxWeight(x, i, n, shift=-c)) == r"\operatorname{softmax}_{i}\left(x - c \mathbf{1}\right)"
    assert sp.latex(SoftmaxWeight(x, i, n, name="p")) == "p_{i}"
    # A summation index distinct from the weight's own.
    assert SoftmaxWeight(x, j, n).doit().has(sp.Symbol("l", integer=True, positive=True))


def test_softmax_weight_refuses_what_it_cannot_define():
    with pytest.raises(ValueError, match="needs its length n"):
        SoftmaxWeight(sp.IndexedBase("x"), 1)
    with pytest.raises(ValueError, match="index must be 1..2"):
        SoftmaxWeight((1, 0), 3).doit()


def test_for_indices_uses_the_range_and_renames_summation_indices():
    x = sp.IndexedBase("x")
    n, j, k = sp.symbols("n j k", integer=True, positive=True)
    # Without the range, SymPy keeps the case k > n: the check refuses it.
    picked = sp.Sum(x[j] * sp.KroneckerDelta(j, k), (j, 1, n))
    with pytest.raises(ProofError, match="Piecewise"):
        check("demo", picked, x[k])
    check("demo", ForIndices(picked, (k,), n), x[k])
    renamed = sp.Sum(sp.exp(x[k]), (k, 1, n)) / sp.Sum(sp.exp(x[j]), (j, 1, n))
    with pytest.raises(ProofError):
        check("demo", renamed, 1)
    check("demo", ForIndices(renamed, (), n), 1)
    assert sp.latex(ForIndices(renamed, (), n)) == sp.latex(renamed)


# -- Planted faults stop the theorem -------------------------------------------------


def _planted_doit(numerator, denominator):
    """A SoftmaxWeight.doit built from a wrong numerator or normaliser (for an IndexedBase)."""

    def doit(self, **hints):
        j = sp.Symbol("j", integer=True, positive=True)
        top = numerator(self.logits[self.index] + self.shift)
        return top / denominator(sp.Sum(sp.exp(self.logits[j] + self.shift), (j, 1, self.length)), self)

    return doit


def test_a_softmax_that_keeps_the_shift_fails_shift_invariance(monkeypatch):
    # The shift added to the numerator only: the weights would move.
    fault = _planted_doit(sp.exp, lambda total, weight: total.subs(weight.shift, 0))
    monkeypatch.setattr(SoftmaxWeight, "doit", fault)
    with pytest.raises(ProofError, match=f"^{SHIFT}: "):
        proofs.softmax_shift_invariance()


def test_a_normaliser_without_the_scores_fails_the_jacobian(monkeypatch):
    # Forget that the normaliser depends on x_k: the quotient rule loses -p_i p_k.
    fault = _planted_doit(sp.exp, lambda total, weight: sp.Symbol("Z", positive=True))
    monkeypatch.setattr(SoftmaxWeight, "doit", fault)
    with pytest.raises(ProofError, match=f"^{JACOBIAN}: SymPy does not reduce"):
        proofs.softmax_jacobian_theorem()


def test_a_jacobian_entry_that_does_not_vanish_fails_the_theorem(monkeypatch):
    # A weight for scores [t, 0] that stays at 1/2: its diagonal entry tends to 1/4, not 0.
    original = SoftmaxWeight.doit

    def stuck(self, **hints):
        return sp.Rational(1, 2) if self.logits == sp.Tuple(sp.Symbol("t", real=True), 0) else original(self, **hints)

    monkeypatch.setattr(SoftmaxWeight, "doit", stuck)
    with pytest.raises(ProofError, match=f"^{JACOBIAN}: .*Limit"):
        proofs.softmax_jacobian_theorem()


def test_a_dot_product_of_variance_two_per_coordinate_fails_the_scaled_variance(monkeypatch):
    original = scaling_module._dot_product
    monkeypatch.setattr(scaling_module, "_dot_product", lambda rv, mq, vq, mk, vk: original(rv, mq, 2 * vq, mk, vk))
    with pytest.raises(ProofError, match=f"^{SCALED}: .*d_k/c\\*\\*2"):
        proofs.scaled_variance()


def test_a_wrong_root_is_not_checked():
    c = sp.Symbol("c", positive=True)
    with pytest.raises(ProofError, match=f"^{SCALED}: solveset gives"):
        check_solutions(SCALED, c, sp.Eq(proofs.d_k / c**2, 1), sp.Interval.open(0, sp.oo), sp.FiniteSet(proofs.d_k))


# -- The pages state the theorems by glue ---------------------------------------------


def test_the_glued_value_is_the_statement(proved):
    values = statements(*proved.values())
    for label, proof in proved.items():
        assert values[label].latex == proof.statement
        assert values[label]._repr_latex_() == f"$${proof.statement}$$"
