"""The saturated-row theorems: their steps, what they rely on, and planted faults that stop them."""

import pytest
import sympy as sp

from attention_scaling import proofs
from attention_scaling.proofs import ProofError, saturation
from attention_scaling.proofs.engine import KINDS
from attention_scaling.site.statements import statements

JACOBIAN, PROBABILITY = "thm-saturated-jacobian", "thm-gap-probability"
MEAN_LIMIT = "thm-mean-jacobian-limit"
# label -> (checked, cited, argued, measured), and how many cross-checks.
COUNTS = {JACOBIAN: ((10, 0, 7, 0), 1), PROBABILITY: ((6, 0, 5, 0), 0), MEAN_LIMIT: ((4, 0, 7, 0), 0)}


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


def test_they_are_registered_after_what_they_use():
    labels = list(proofs.REGISTRY)
    assert proofs.REGISTRY[JACOBIAN].uses == ("thm-softmax-shift-invariance", "thm-softmax-jacobian")
    assert proofs.REGISTRY[PROBABILITY].uses == (JACOBIAN,)
    assert labels.index("thm-softmax-jacobian") < labels.index(JACOBIAN) < labels.index(PROBABILITY)
    assert proofs.THEOREM_NAMES[JACOBIAN] == "The Jacobian of a saturated row"


def test_the_statements_are_the_bound_and_the_threshold(proved):
    bound = proved[JACOBIAN]
    assert [bound.steps[index].relation for index in bound.results] == [r"\le", r"\le"]
    assert bound.statement == (r"{\lVert J \rVert_{F}} \le 4 {\left(n - 1\right)} e^{- \Delta}, \qquad "
                               r"\Delta \le \ln\left(\frac{4 {\left(n - 1\right)}}{t}\right)")
    chance = proved[PROBABILITY]
    assert chance.statement == (r"{P\left(\lVert J \rVert_{F} \ge t\right)} \le "
                                r"F_{G}{\left(\frac{\ell}{\sigma} \right)}")
    assert chance.steps[9].latex().endswith(r"= \ell f_{G}{\left(0 \right)}")
    assert chance.steps[0].latex().startswith(r"F_{G}{\left(g \right)} = n \int\limits_{-\infty}^{\infty}")
    assert list(statements(bound, chance)) == [JACOBIAN, PROBABILITY]


def test_the_argued_steps_are_the_ones_the_page_names(proved):
    argued = [step.reason for step in proved[JACOBIAN].steps if step.kind == "argued"]
    assert len(argued) == 7
    assert any("cross terms" in reason for reason in argued)
    assert any("thm-softmax-shift-invariance" in reason for reason in argued)
    checked = [step for step in proved[JACOBIAN].steps if step.kind == "checked"]
    # The inequalities in S and in the b_j, which carry the constants, are checked, not argued.
    assert sum(step.relation == r"\le" for step in checked) == 3


# -- Planted faults ---------------------------------------------------------------------


def test_a_smaller_constant_stops_the_jacobian_bound(monkeypatch):
    # 2(1 - p^2) <= 2(1 - p) is false for 0 < p < 1: the constant 4 cannot be halved.
    monkeypatch.setattr(saturation, "_CONSTANT", 2)
    with pytest.raises(ProofError, match=r"thm-saturated-jacobian: SymPy cannot show"):
        saturation.saturated_jacobian()


@pytest.mark.parametrize("wrong", [lambda g: sp.erf(g / sp.sqrt(2)), lambda g: sp.erf(g)])
def test_a_wrong_two_score_gap_distribution_stops_the_probability(monkeypatch, wrong):
    # |X_1 - X_2| is |N(0, 2)|: erf(g/2), not erf(g/sqrt 2) (the gap of N(0, 1) scores) nor erf(g).
    monkeypatch.setattr(saturation, "_two_score_gap_distribution", wrong)
    with pytest.raises(ProofError, match="thm-gap-probability"):
        saturation.gap_probability()


def test_a_wrong_density_at_zero_is_caught():
    phi = saturation._StandardDensity
    x = sp.Symbol("x", real=True)
    with pytest.raises(ProofError):
        proofs.check("planted", 2 * sp.Integral(phi(x) ** 2, (x, -sp.oo, sp.oo)), 1 / sp.sqrt(2 * sp.pi))


def test_the_row_sum_with_a_wrong_sign_rule_is_caught():
    # Taking every entry as positive (no sign flip off the diagonal) gives 0, not 2 p_i (1 - p_i).
    n, i, k = saturation._n, saturation._i, saturation._k
    p = saturation._p
    wrong = sp.Sum(p(i) * (sp.KroneckerDelta(i, k) - p(k)), (k, 1, n))
    with pytest.raises(ProofError):
        proofs.check("planted", proofs.softmax.ForIndices(wrong, (i,), n),
                     proofs.softmax.ForIndices(2 * p(i) * (1 - p(i)), (i,), n))


# -- thm-mean-jacobian-limit (issue 53, item 6) ---------------------------------------------------


def _third_gap_rows(n, seed=0, rows=200_000):
    """Rows of n scores at several spreads, with their top-two gap and their largest-minus-third gap."""
    import numpy as np

    rng = np.random.default_rng(seed)
    x = np.concatenate([spread * rng.standard_normal((rows, n)) for spread in (0.3, 1.0, 3.0, 10.0)])
    ordered = np.sort(x, axis=1)[:, ::-1]
    return x, ordered[:, 0] - ordered[:, 1], ordered[:, 0] - ordered[:, 2]


@pytest.mark.parametrize("n", [3, 4, 8, 16])
def test_the_argued_distance_to_the_two_score_jacobian_holds_on_measured_rows(proved, n):
    # Step 2 is argued: |‖J(x)‖_F - h(Δ)| <= C (n - 2) e^{-Δ_3}. Measure it, with C read off the step.
    import numpy as np
    from attention_scaling.gradients import softmax_jacobian_norm

    bound = proved[MEAN_LIMIT].steps[2].rhs
    x, gap, third = _third_gap_rows(n)
    keep = third < 25   # beyond, float64 cannot resolve e^{-Δ_3} against the norm's rounding
    top = 1 / (1 + np.exp(-gap))
    distance = np.abs(softmax_jacobian_norm(x) - 2 * top * (1 - top))[keep]
    constant = float(bound.subs({sp.Symbol(r"{\left(n - 2\right)}", nonnegative=True): 1,
                                 sp.Symbol(r"\Delta_3", nonnegative=True): 0}))
    assert np.all(distance <= constant * (n - 2) * np.exp(-third[keep]))
    # The measurement can catch a wrong constant: a twentieth of the stated one is broken by some row.
    assert np.any(distance > constant / 20 * (n - 2) * np.exp(-third[keep]))


def test_the_evidence_catches_a_wrong_limit(proved):
    # Planted fault: the limit stated with h = p(1 - p) (the Jacobian's diagonal entry, not its norm): half of f_G(0).
    import dataclasses

    import numpy as np
    from attention_scaling.site.evidence import _mean_jacobian_rows

    proof = proved[MEAN_LIMIT]
    (row,) = _mean_jacobian_rows(np.random.default_rng(0), {MEAN_LIMIT: proof})
    assert row.holds
    steps = list(proof.steps)
    steps[6] = dataclasses.replace(steps[6], rhs=steps[6].rhs / 2)
    (wrong,) = _mean_jacobian_rows(np.random.default_rng(0), {MEAN_LIMIT: dataclasses.replace(proof, steps=tuple(steps))})
    assert not wrong.holds
