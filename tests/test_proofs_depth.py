"""The depth theorems: their steps and statements, and planted faults that stop them."""

import pytest
import sympy as sp

from attention_scaling import proofs
from attention_scaling.proofs import ProofError
from attention_scaling.proofs import depth
from attention_scaling.proofs.engine import KINDS
from attention_scaling.site.statements import statements

CONTRACTION, LIPSCHITZ = "thm-attention-contraction", "thm-dot-product-not-lipschitz"
# label -> (checked, cited, argued, measured), and how many cross-checks.
COUNTS = {CONTRACTION: ((10, 0, 4, 0), 2), LIPSCHITZ: ((5, 0, 1, 0), 2)}


@pytest.fixture(scope="module")
def proved():
    return {label: proofs.prove(label) for label in COUNTS}


@pytest.mark.parametrize("label", list(COUNTS))
def test_the_theorems_pass_with_their_step_kinds(proved, label):
    proof = proved[label]
    counts, n_cross = COUNTS[label]
    assert proof.counts() == dict(zip(KINDS, counts))
    assert proof.status == "argued"
    assert len(proof.cross_checks) == n_cross and all(step.kind == "checked" for step in proof.cross_checks)
    assert all(step.reason for step in proof.steps), "every step says why it holds"


def test_they_are_registered_together_and_after_what_they_use():
    labels = list(proofs.REGISTRY)
    assert labels.index(LIPSCHITZ) == labels.index(CONTRACTION) + 1
    assert labels.index(CONTRACTION) > labels.index("thm-softmax-shift-invariance")
    assert proofs.REGISTRY[CONTRACTION].uses == ("thm-softmax-shift-invariance",)
    assert proofs.THEOREM_NAMES[LIPSCHITZ] == "Dot-product self-attention is not Lipschitz"


def test_the_statements(proved):
    contraction = proved[CONTRACTION]
    assert contraction.statement.endswith(r"{\operatorname{spread}(x)} \left(1 - e^{- \delta}\right)")
    assert [contraction.steps[index].relation for index in contraction.results] == [r"\le", r"\le"]
    lipschitz = proved[LIPSCHITZ]
    assert lipschitz.steps[0].rhs == sp.Symbol("t", positive=True) ** 2 / 4 + sp.Rational(1, 2)
    assert r"\frac{\partial}{\partial x_{1}} f_{1}" in lipschitz.statement and lipschitz.statement.endswith("> K")
    assert lipschitz.steps[5].latex().startswith(r"\lim_{t \to \infty}") and lipschitz.steps[5].rhs == 1
    assert list(statements(contraction, lipschitz)) == [CONTRACTION, LIPSCHITZ]


def test_the_proofs_are_fast():
    import time

    for function in (depth.attention_contraction, depth.dot_product_not_lipschitz):
        start = time.perf_counter()
        function()
        assert time.perf_counter() - start < 1.5  # 0.3 s and 0.1 s on the build machine; slack for load


def test_a_wrong_attention_function_fails_the_derivative(monkeypatch):
    # Plant a fault: logits 2 x_1 x_j instead of x_1 x_j. The derivative becomes 1/2 + t^2/2.
    original = depth._Row.doit

    def doubled(self, deep=True, **hints):
        first, second, kind = self.args
        if kind != 0:
            return original(self, deep=deep, **hints)
        weights = [sp.exp(2 * first * first), sp.exp(2 * first * second)]
        return (weights[0] * first + weights[1] * second) / (weights[0] + weights[1])

    monkeypatch.setattr(depth._Row, "doit", doubled)
    with pytest.raises(ProofError, match="thm-dot-product-not-lipschitz"):
        depth.dot_product_not_lipschitz()


def test_dot_product_logits_in_the_l2_row_fail_the_limit(monkeypatch):
    # Plant a fault: the "L2" row computes dot-product attention, whose derivative has no finite limit.
    original = depth._Row.doit
    monkeypatch.setattr(depth._Row, "doit", lambda self, deep=True, **hints: original(
        depth._Row(self.args[0], self.args[1], 0), deep=deep, **hints))
    with pytest.raises(ProofError):
        depth.dot_product_not_lipschitz()


def test_an_unsigned_gap_fails_the_upper_bound(monkeypatch):
    # Plant a fault: M - x_j no longer known to be >= 0, so the upper bound on the rest is not proved.
    monkeypatch.setattr(depth, "_a", sp.IndexedBase("a", real=True))
    with pytest.raises(ProofError, match="thm-attention-contraction"):
        depth.attention_contraction()


def test_an_unsigned_logit_spread_fails_the_monotonicity(monkeypatch):
    # Plant a fault: delta_0 of unknown sign, so the factor need not grow with the scale c.
    monkeypatch.setattr(depth, "_delta0", sp.Symbol(r"\delta_0", real=True))
    with pytest.raises(ProofError, match="thm-attention-contraction"):
        depth.attention_contraction()
