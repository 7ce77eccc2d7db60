"""The theorems of folding the constant into W_Q: what they check, and planted faults they catch."""

import pytest
import sympy as sp

from attention_scaling import proofs
from attention_scaling.proofs import ProofError, d_k, d_model

folding = proofs.folding


@pytest.fixture(scope="module")
def fold():
    return proofs.folded_scale()


@pytest.fixture(scope="module")
def update():
    return proofs.logit_update(cross_check=False)


def test_folded_scale_counts_and_statement(fold):
    assert fold.counts() == {"checked": 5, "cited": 1, "argued": 1, "measured": 0}
    assert fold.results == (0, 2, 5)
    assert fold.steps[5].rhs == 1 / (sp.sqrt(d_model) * sp.sqrt(d_k))
    assert fold.steps[6].kind == "cited" and "modeling_t5.py" in fold.steps[6].basis
    assert "_init_weights" in fold.steps[6].basis
    lines = [fold.steps[i].latex() for i in (0, 2, 5)]
    assert fold.statement == r"\begin{gathered}" + r", \\ ".join(lines) + r"\end{gathered}"
    assert "thm-folded-scale" in proofs.REGISTRY and "thm-logit-update" in proofs.REGISTRY
    assert proofs.REGISTRY["thm-logit-update"].uses == ("thm-folded-scale",)


def test_logit_update_counts_statement_and_cross_checks(update):
    assert update.counts() == {"checked": 7, "cited": 0, "argued": 2, "measured": 0}
    assert update.results == (3, 4, 5, 6, 7)
    c = sp.Symbol("c", positive=True)
    # Both paths of the scaled model carry c**2; the folded W_Q path none; the folded W_K path c**2.
    assert [sp.degree(update.steps[i].rhs, c) for i in (3, 4, 5, 6)] == [2, 2, 0, 2]
    assert update.steps[2].kind == update.steps[8].kind == "argued"
    full = proofs.logit_update()
    assert len(full.cross_checks) == 4 * len(folding.CROSS_CHECK_SIZES)
    assert all(step.kind == "checked" for step in full.cross_checks)


def test_planted_wrong_t5_std_is_caught(monkeypatch):
    # A folded init with std (d_model d_k)^(-1) instead of ^(-1/2) does not follow from sigma^2 = 1/d_model.
    monkeypatch.setattr(folding, "T5_QUERY_STD", 1 / (d_model * d_k))
    with pytest.raises(ProofError, match="thm-folded-scale"):
        proofs.folded_scale()


def test_planted_score_that_forgets_c_in_the_query_gradient_is_caught(monkeypatch):
    # The W_Q gradient of a model that drops c there has no c**2 on the query path.
    original = folding._frobenius
    c = sp.Symbol("c", positive=True)

    def forgetful(score, weights, size):
        if weights.name == "W_Q":
            score = score.subs(c, 1)
        return original(score, weights, size)

    monkeypatch.setattr(folding, "_frobenius", forgetful)
    with pytest.raises(ProofError, match="thm-logit-update"):
        proofs.logit_update(cross_check=False)


def test_planted_adam_that_is_not_scale_free_is_caught():
    # Without the square root, m/v is not invariant under g -> a g: the engine refuses it.
    gamma, a = sp.Symbol("gamma", real=True, nonzero=True), sp.Symbol("a", positive=True)
    with pytest.raises(ProofError):
        proofs.check("thm-logit-update", sp.Subs(gamma / gamma**2, gamma, a * gamma), gamma / gamma**2)
