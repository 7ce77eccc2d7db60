"""The theorems of the temperatures section: how each step is known, what it prints, and false claims caught."""

import time

import pytest
import sympy as sp

from attention_scaling import proofs
from attention_scaling.proofs import ProofError

# Planted faults replace the names that the theorems' own module calls.
temperatures = proofs.temperatures


@pytest.mark.parametrize(
    ("prove", "checked"),
    [(proofs.length_temperatures, 10), (proofs.entropy_temperature, 7)],
)
def test_every_step_is_checked(prove, checked):
    proof = prove()
    assert proof.counts() == {"checked": checked, "cited": 0, "argued": 0, "measured": 0}
    assert proof.status == "checked"


def test_registered_after_the_theorems_they_use():
    assert proofs.REGISTRY["thm-length-temperatures"].uses == ("thm-needle-limit",)
    assert proofs.REGISTRY["thm-entropy-temperature"].uses == ("thm-gaussian-logit-moments",)
    labels = list(proofs.REGISTRY)
    assert labels.index("thm-needle-limit") < labels.index("thm-length-temperatures")


def test_each_proof_is_fast():
    for prove in (proofs.length_temperatures, proofs.entropy_temperature):
        start = time.perf_counter()
        prove()
        # The brief's budget is 0.5 s on an idle core; allow for a loaded test machine.
        assert time.perf_counter() - start < 2.0


def test_what_the_length_theorem_prints():
    steps = proofs.length_temperatures().steps
    assert steps[0].latex() == r"\log_{512} n = \frac{\ln n}{\ln 512}"
    assert steps[1].latex() == r"\log_{512} 512 = 1"
    assert steps[2].latex() == r"\sum_{i=1}^{d} c {q}_{i} c {k}_{i} = c^{2} \sum_{i=1}^{d} {k}_{i} {q}_{i}"
    assert [step.rhs for step in steps[6:9]] == [1, 1, 0]
    assert steps[9].rhs == sp.Interval.open(sp.Symbol(r"\ln 512", positive=True) / sp.Symbol(r"\beta_0", positive=True), sp.oo)


def test_what_the_entropy_theorem_prints():
    proof = proofs.entropy_temperature()
    assert proof.steps[1].rhs == 1 - sp.Symbol(r"\kappa", positive=True)
    assert proof.steps[2].relation == "<"
    assert proof.results == (1, 3, 6)


def test_a_wrong_base_for_su_is_caught(monkeypatch):
    # Plant: log_512 n evaluated as ln n / ln 1024; step 0 (and step 1) must fail.
    monkeypatch.setattr(temperatures._LogBase, "doit",
                        lambda self, deep=True, **hints: temperatures._Log(self.args[0]) / temperatures._Log(2 * self.args[1]))
    with pytest.raises(ProofError, match="thm-length-temperatures"):
        proofs.length_temperatures()


def test_a_shrinking_needle_weight_is_caught(monkeypatch):
    # Plant: the needle's competitors weighted by e^{+a m} instead of e^{-a m}; the limits to 1 must fail.
    def wrong(multiplier):
        a = sp.Symbol("a", positive=True)
        return 1 / (1 + (sp.exp(temperatures._u) - 1) * sp.exp(a * multiplier))

    monkeypatch.setattr(temperatures, "_needle", wrong)
    with pytest.raises(ProofError, match="thm-length-temperatures"):
        proofs.length_temperatures()


def test_without_ln_n_positive_the_uniqueness_step_is_not_proved(monkeypatch):
    # Plant: ln n as a bare real symbol; the sign of the derivative is then unknown, and the check must refuse it.
    monkeypatch.setattr(temperatures, "_log_n", sp.Symbol(r"{\ln n}", real=True))
    with pytest.raises(ProofError, match="thm-entropy-temperature"):
        proofs.entropy_temperature()
