"""The bounded-logit theorems: step kinds, statements, speed, and planted faults that stop them."""

import time

import pytest
import sympy as sp

from attention_scaling import proofs
from attention_scaling.proofs import ProofError
from attention_scaling.proofs import bounded_logits
from attention_scaling.proofs.engine import KINDS

CAP, QKNORM, DISPERSION = "thm-soft-cap-bound", "thm-qknorm-scale", "thm-dispersion"
COUNTS = {CAP: (8, 0, 3, 0), QKNORM: (6, 0, 6, 0), DISPERSION: (5, 0, 2, 0)}


@pytest.mark.parametrize("label", list(COUNTS))
def test_the_theorems_pass_with_their_step_kinds(label):
    start = time.perf_counter()
    proof = proofs.prove(label)
    assert time.perf_counter() - start < 1.5  # 0.2, 0.06 and 0.04 s on the build machine
    assert proof.counts() == dict(zip(KINDS, COUNTS[label]))
    assert all(step.reason for step in proof.steps), "every step says why it holds"


def test_they_are_registered_after_what_they_use():
    labels = list(proofs.REGISTRY)
    for label in COUNTS:
        assert all(labels.index(used) < labels.index(label) for used in proofs.REGISTRY[label].uses)


def test_the_statements_say_what_the_page_says():
    cap = proofs.soft_cap_bound()
    n, b = sp.Symbol("n", integer=True, positive=True), sp.Symbol("b", positive=True)
    assert [step.relation for step in [cap.steps[i] for i in cap.results]] == ["=", "<", r"\le", r"\ge"]
    assert sp.simplify([cap.steps[i] for i in cap.results][2].rhs - 1 / (1 + (n - 1) * sp.exp(-2 * b))) == 0
    spread = proofs.dispersion()
    delta, theta = sp.Symbol(r"\delta", nonnegative=True), sp.Symbol(r"\theta", positive=True)
    assert sp.simplify(spread.steps[spread.results[0]].rhs - sp.exp(delta / theta) / n) == 0
    assert proofs.qknorm_scale().steps[-1].rhs == sp.Symbol("g", positive=True) ** 2 / sp.Symbol(
        "d", integer=True, positive=True)


def test_a_negative_cap_fails_the_limits(monkeypatch):
    # Plant a fault: C < 0, so C tanh(z/C) -> -C as z -> infinity, not C.
    monkeypatch.setattr(bounded_logits, "_cap", sp.Symbol("C", negative=True))
    with pytest.raises(ProofError, match=CAP):
        bounded_logits.soft_cap_bound()


def test_a_wrong_closed_form_of_the_largest_weight_is_caught(monkeypatch):
    # Plant a fault: the range is [-b, 2b]: e^(2b) / (e^(2b) + (n - 1) e^(-b)) is not 1 / (1 + (n - 1) e^(-2b)).
    n = bounded_logits._n

    def shifted(label, bound):
        top = sp.exp(2 * bound) / (sp.exp(2 * bound) + (n - 1) * sp.exp(-bound))
        return (bounded_logits.check(label, top, 1 / (1 + (n - 1) * sp.exp(-2 * bound))),)

    monkeypatch.setattr(bounded_logits, "_weight_extremes", shifted)
    with pytest.raises(ProofError, match=CAP):
        bounded_logits.soft_cap_bound()


def test_a_wrong_coordinate_moment_is_caught(monkeypatch):
    # Plant a fault: the circle's average of cos^2 claimed for sin^2 cos^2 (1/8, not 1/2).
    original = sp.cos
    monkeypatch.setattr(bounded_logits.sp, "cos", lambda x: original(x) * sp.sin(x))
    with pytest.raises(ProofError, match=QKNORM):
        bounded_logits.qknorm_scale()


def test_a_bound_that_does_not_vanish_is_caught(monkeypatch):
    # Plant a fault: a gap y of unknown sign; the needle no longer provably lies under e^delta / n.
    monkeypatch.setattr(bounded_logits, "_y", sp.Symbol("y", real=True))
    with pytest.raises(ProofError, match=DISPERSION):
        bounded_logits.dispersion()
