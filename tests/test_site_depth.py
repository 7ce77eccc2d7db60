"""Page support of the depth page, its claims and evidence rows: each check, and a planted fault it catches."""

import dataclasses
import math

import numpy as np
import pytest

from attention_scaling import proofs
from attention_scaling.depth import contraction_ratios, lipschitz_growth_data, rank_collapse_data
from attention_scaling.site import claim_checks, evidence, glue_fields
from attention_scaling.site import depth as page
from attention_scaling.site.checks import PageCheckError
from attention_scaling.site.claims import CLAIMS, Verdict


@pytest.fixture(scope="module")
def collapse():
    return rank_collapse_data()


@pytest.fixture(scope="module")
def ratios():
    rng = np.random.default_rng(1)
    return contraction_ratios(rng, n_heads=16), contraction_ratios(rng, n_heads=16, scale=1 / 64)


@pytest.fixture(scope="module")
def growth():
    return lipschitz_growth_data()


def test_the_collapse_numbers(collapse, ratios):
    values = glue_fields(page.collapse_section(collapse), "collapse")
    assert values["collapse_linear_reach"] <= values["collapse_sqrt_reach"] <= values["collapse_none_reach"]
    assert values["collapse_sqrt_rms_double"] < values["collapse_sqrt_rms_exp"]
    assert values["collapse_sqrt_skip_rms_exp"] < values["collapse_sqrt_skip_rms_double"]
    values = glue_fields(page.contraction_section(proofs.attention_contraction(), *ratios), "contraction")
    assert values["contraction_steps_checked"] == 10 and values["contraction_steps_argued"] == 4
    assert values["contraction_sqrt_worst"] <= 1


def test_a_layer_beating_the_bound_is_caught(collapse, ratios):
    # Plant a fault: one head shrinks a column by less than the proved factor allows.
    (ratio, factor), linear = ratios
    broken = ratio.copy()
    broken[0] = factor[0] * 1.01
    with pytest.raises(PageCheckError, match="1 - e"):
        page.contraction_section(proofs.attention_contraction(), (broken, factor), linear)


def test_skips_that_collapse_are_caught(collapse):
    # Plant a fault: the skip stacks are replaced by the pure ones.
    residual = {(policy, skip): collapse.residual[(policy, False)] for policy, skip in collapse.residual}
    planted = dataclasses.replace(collapse, residual=residual)
    with pytest.raises(PageCheckError, match="skip connections"):
        page.collapse_section(planted)


def test_a_wrong_order_of_scales_is_caught(collapse):
    # Plant a fault: the 1/d_k and unscaled stacks swap.
    residual = dict(collapse.residual)
    for skip in (False, True):
        residual[("none", skip)], residual[("linear", skip)] = residual[("linear", skip)], residual[("none", skip)]
    with pytest.raises(PageCheckError, match="smaller the scale"):
        page.collapse_section(dataclasses.replace(collapse, residual=residual))


def test_the_lipschitz_numbers(growth):
    values = glue_fields(page.lipschitz_section(proofs.dot_product_not_lipschitz(), growth), "lip")
    assert 1.8 <= values["lip_slope"] <= 2.2 and values["lip_l2_max"] < 3
    assert values["lip_dot_last_low"] <= values["lip_dot_last"] <= values["lip_dot_last_high"]
    assert values["lip_steps_checked"] == 5


def test_a_growing_l2_norm_is_caught(growth):
    planted = dataclasses.replace(growth, l2_origin=growth.dot_origin)
    with pytest.raises(PageCheckError, match="L2 norm"):
        page.lipschitz_section(proofs.dot_product_not_lipschitz(), planted)


def test_a_norm_below_the_bound_is_caught(growth):
    planted = dataclasses.replace(growth, dot_origin=growth.dot_origin * 0.9)
    with pytest.raises(PageCheckError, match="lower bound"):
        page.lipschitz_section(proofs.dot_product_not_lipschitz(), planted)


def test_the_exercises_check_their_answers():
    assert glue_fields(page.contraction_answer(1 - math.exp(-2), 48), "ex_contraction")["ex_contraction_layers"] == 48
    with pytest.raises(PageCheckError, match="least"):
        page.contraction_answer(1 - math.exp(-2), 47)
    with pytest.raises(PageCheckError, match="factor"):
        page.contraction_answer(1 - math.exp(-1), 48)
    assert glue_fields(page.lipschitz_answer(2 * math.sqrt(99.5)), "ex_lipschitz")["ex_lipschitz_measured"] == \
        pytest.approx(100)
    with pytest.raises(PageCheckError, match="sqrt"):
        page.lipschitz_answer(20.0)


def test_the_glue_functions_give_statements_and_figures():
    values = page.collapse_glue(proofs.attention_contraction())
    assert values["thm-attention-contraction"].latex == proofs.attention_contraction().statement
    assert hasattr(values["fig-rank-collapse"], "savefig")


# -- claims ---------------------------------------------------------------------------------------

def _assess(key):
    return next(claim for claim in CLAIMS if claim.key == key).assess()


def test_the_depth_claims_and_their_verdicts():
    expected = {
        "dong-doubly-exponential": Verdict.UNCHECKED,
        "dong-skips": Verdict.CONDITIONAL,
        "noci-vanishing-gradients": Verdict.CONDITIONAL,
        "kim-not-lipschitz": Verdict.HOLDS,
        "kim-l2-lipschitz": Verdict.UNCHECKED,
    }
    assert {key: _assess(key).verdict for key in expected} == expected
    assert _assess("kim-not-lipschitz").outcome.theorems[0].label == "thm-dot-product-not-lipschitz"


def _exponential_stack(*_args, **_kwargs):
    data = rank_collapse_data(depth=12, n_tokens=8, d=16, n_seeds=3)
    curve = np.exp(-0.5 * np.arange(13))
    return dataclasses.replace(data, residual={key: np.tile(curve, (3, 1)) for key in data.residual})


def test_an_exponential_collapse_fails_the_doubly_exponential_claim(monkeypatch):
    monkeypatch.setattr(claim_checks, "rank_collapse_data", _exponential_stack)
    assert not claim_checks.collapse_is_doubly_exponential(None).agrees


def test_skips_that_collapse_fail_the_skip_claim(monkeypatch):
    data = rank_collapse_data()
    collapsed = dataclasses.replace(data, residual={(policy, skip): data.residual[(policy, False)]
                                                    for policy, skip in data.residual})
    monkeypatch.setattr(claim_checks, "rank_collapse_data", lambda: collapsed)
    assert not claim_checks.skips_stop_collapse(None).agrees


def test_a_gradient_that_does_not_vanish_fails_the_noci_claim(monkeypatch):
    monkeypatch.setattr(claim_checks, "query_gradient_norm", lambda *args: 1.0)
    assert not claim_checks.collapsed_queries_get_no_gradient(None).agrees


def test_a_growing_l2_norm_fails_the_kim_claim(monkeypatch, growth):
    monkeypatch.setattr(claim_checks, "lipschitz_growth_data",
                        lambda: dataclasses.replace(growth, l2_origin=growth.dot_origin))
    assert not claim_checks.l2_norms_stay_bounded(None).agrees


# -- evidence -------------------------------------------------------------------------------------

def test_the_depth_evidence_rows_hold_and_catch_a_wrong_derivative(monkeypatch):
    rows = evidence._depth_rows(np.random.default_rng(2017), proofs.Proved(), 20_000)
    assert [row.theorem for row in rows] == ["thm-attention-contraction", "thm-dot-product-not-lipschitz"]
    assert all(row.holds for row in rows)
    # Plant a fault: the measured derivative is off by 1e-3, far beyond the rounding tolerance.
    monkeypatch.setattr(evidence, "partial_derivative", lambda t: 0.5 + t**2 / 4 + 1e-3)
    assert not evidence._depth_rows(np.random.default_rng(2017), proofs.Proved(), 20_000)[1].holds
