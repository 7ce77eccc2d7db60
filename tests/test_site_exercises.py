"""The records of site.exercises: each solution's numbers, and the checks that can stop the build."""

import math
import re
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from attention_scaling import naive_softmax, saturation_margin, softmax, softmax_jacobian
from attention_scaling.proofs import d_k
from attention_scaling.simulate import Estimate, dot_product_samples, variance_estimate
from attention_scaling.regimes import attention_regimes
from attention_scaling.site import correlation, exercises, initialisation, libraries, logit_growth, low_precision, scaling
from attention_scaling.site import glue_fields, subtraction_vs_division
from attention_scaling.site.checks import PageCheckError
from page_sources import page_source
from se_checks import dot_variance_se, within

DOCS = Path(__file__).resolve().parents[1] / "docs"
# An exercise and its solution, up to the solution's end, named by its label.
EXERCISE = re.compile(r"```\{exercise\}[^\n]*\n:label: (ex-[\w-]+)\n.*?```\{solution-end\}", re.S)


def exercise_pages() -> dict[str, tuple[str, str]]:
    """Each exercise of the site, by label: its page and its text with its solution, as written."""
    return {match[1]: (page.stem, match[0]) for page in sorted(DOCS.glob("*.md")) for match in EXERCISE.finditer(page_source(page))}


def test_there_are_at_least_20_exercises_in_at_least_8_chapters():
    pages = [page for page, _ in exercise_pages().values()]
    assert len(pages) >= 20 and len(set(pages)) >= 8, sorted(pages)
    assert "exercises" not in pages  # the Exercises page is the index


# The solutions' answers, as the pages compute them.
QKN_KEYS = int(np.ceil(1 + np.exp(16)))
ORDER_LIMITS = {"after": np.sqrt(65504 / 128), "split": np.sqrt(65504 / np.sqrt(128))}
BF16_LARGEST, BF16_SMALLEST = (2 - 2**-7) * 2.0**127, 2.0**-133
CORRELATION_ROOTS = [-1 / sp.sqrt(d_k - 1), 1 / sp.sqrt(d_k - 1)]
HALVING_SCORES, HALVING_DIVISOR = np.array([12.0, 4.0, 0.0, -4.0]), 10.464490318324055


def uniform_init_estimate():
    from attention_scaling.initialisation import projected_scores, second_moment_estimate

    sigma = np.sqrt(1 / (3 * 512))
    return second_moment_estimate(projected_scores(512, 64, n_weights=200, n_tokens=8, seed=3, sigma_q=sigma, sigma_k=sigma))


@pytest.fixture(scope="module")
def answers():
    """Every answer's glue keys and values, from the solutions' own computations (as on the page)."""
    ablation = {
        policy: attention_regimes([16, 1024], policy, n_keys=16, n_queries=200, seed=21)
        for policy in ("none", "sqrt", "linear")
    }
    sweep = {
        factor: attention_regimes([64], lambda d, f=factor: 1 / (f * np.sqrt(d)), n_keys=16, n_queries=500, seed=22)
        for factor in (0.5, 1.0, 2.0)
    }
    margin = saturation_margin(4, fraction=0.1)
    x = np.array([1.0, 2.0, 3.0])
    scores = np.array([12.0, 11.0, 0.0], dtype=np.float16)
    largest = float(np.finfo(np.float16).max)
    return {
        "ex-std-512": glue_fields(exercises.std_512_answer(np.sqrt(512), 20_000, variance_estimate(dot_product_samples(512, 20_000, seed=512))), "ex_std_512"),
        "ex-saturation-point": glue_fields(exercises.saturation_answer(margin, softmax([margin, 0.0, 0.0, 0.0])[0]), "ex_saturation"),
        "ex-scaling-ablation": glue_fields(exercises.ablation_answer(ablation), "ex_ablation"),
        "ex-temperature-sweep": glue_fields(exercises.temperature_answer(sweep), "ex_tau"),
        "ex-jacobian-peaked-uniform": glue_fields(exercises.jacobian_answer(softmax_jacobian(np.array([0.97, 0.01, 0.01, 0.01])), softmax_jacobian(np.full(4, 0.25))), "ex_jac"),
        "ex-shift-invariance": glue_fields(exercises.shift_answer(x, (softmax(x), softmax(10 * x))), "ex_shift"),
        "ex-fp16-overflow": glue_fields(exercises.fp16_answer(largest, float(np.log(largest)), naive_softmax(scores), softmax(scores)), "ex_fp16"),
        "ex-correlated-scale": glue_fields(exercises.correlated_answer(0.5 * 1024 / np.sqrt(1024), 0.5 * 1024 / 1024), "ex_corr"),
        # The chapters' own exercises, with their page support in the chapter's module.
        "ex-scaling-power": glue_fields(scaling.power_answer([sp.Rational(1, 2)], 256, 1 / 16), "ex_power"),
        "ex-uniform-init": glue_fields(initialisation.uniform_init_answer(1 / 9, np.sqrt(64) / 3, uniform_init_estimate(), 64), "ex_uniform"),
        "ex-qknorm-keys": glue_fields(logit_growth.qk_norm_keys_answer(QKN_KEYS, softmax([8.0] + [-8.0] * 999), 64), "ex_qkn"),
        "ex-fp16-order-limit": glue_fields(libraries.order_limit_answer(ORDER_LIMITS, 128), "ex_order"),
        "ex-bf16-range": glue_fields(low_precision.bfloat16_answer(BF16_LARGEST, BF16_SMALLEST, np.log(BF16_LARGEST), np.log(BF16_SMALLEST / 2)), "ex_bf16"),
        "ex-correlation-threshold": glue_fields(correlation.correlation_threshold_answer(CORRELATION_ROOTS, 1023**-0.5, 1024), "ex_corr"),
        "ex-halving-divisor": glue_fields(subtraction_vs_division.halving_answer(HALVING_SCORES, HALVING_DIVISOR, 8.0), "ex_halving"),
    }


@pytest.fixture(scope="module")
def values(answers):
    merged = {}
    for answer in answers.values():
        assert not set(merged) & set(answer)
        merged |= answer
    return merged


def test_each_record_glues_the_keys_its_solution_uses(answers):
    texts = exercise_pages()
    for label, answer in answers.items():
        assert set(re.findall(r"\{glue:text\}`([\w-]+)", texts[label][1])) == set(answer), label


def test_values(values):
    assert values["ex_std_512_std"] == pytest.approx(math.sqrt(512), rel=1e-15)
    assert values["ex_std_512_n_draws"] == 20_000 and isinstance(values["ex_std_512_n_draws"], int)
    # The simulated std is sqrt(512) within 5 SE (se_checks.Z): the variance's SE over
    # 20 000 draws, divided by 2 sqrt(512) (the delta method for a square root).
    assert values["ex_std_512_simulated_std"] == within(math.sqrt(512), dot_variance_se(512, 20_000) / (2 * math.sqrt(512)))
    # Where the slope p (1 - p) is a tenth of 1/4: p = (1 + sqrt(0.9)) / 2.
    assert values["ex_saturation_weight"] == pytest.approx((1 + math.sqrt(0.9)) / 2, rel=1e-9)
    assert values["ex_ablation_none_max"] > values["ex_ablation_sqrt_max"] > values["ex_ablation_linear_max"] > 1 / 16
    assert values["ex_tau_half_max"] > values["ex_tau_one_max"] > values["ex_tau_two_max"]
    assert values["ex_jac_uniform"] == pytest.approx(np.sqrt(3) / 4)
    assert values["ex_shift_weights"] == "[0.09  0.245 0.665]"
    assert values["ex_fp16_largest"] == 65504.0 and values["ex_fp16_naive"] == "[nan  0.  0.]"
    assert (values["ex_corr_sqrt_mean"], values["ex_corr_linear_mean"]) == (16.0, 0.5)


def test_the_projection_constant_is_checked():
    sigma = sp.Symbol("sigma", positive=True)
    assert exercises.projection_scale_answer([sigma**2 * sp.sqrt(d_k)]) == sigma**2 * sp.sqrt(d_k)
    with pytest.raises(PageCheckError, match="ex-projection-scale: check failed"):
        exercises.projection_scale_answer([sigma * sp.sqrt(d_k)])
    with pytest.raises(PageCheckError, match="ex-projection-scale"):
        exercises.projection_scale_answer([-(sigma**2) * sp.sqrt(d_k), sigma**2 * sp.sqrt(d_k)])


def test_a_simulation_that_disagrees_stops_the_page():
    with pytest.raises(PageCheckError, match="ex-std-512: check failed: the simulated variance agrees"):
        exercises.std_512_answer(np.sqrt(512), 20_000, Estimate(530.0, 5.0))
    with pytest.raises(PageCheckError, match="the answer is sqrt"):
        exercises.std_512_answer(np.sqrt(511), 20_000, Estimate(512.0, 5.0))


def test_a_softmax_that_is_not_shift_invariant_stops_the_page(monkeypatch):
    # Plant a fault: a softmax that forgets to normalise depends on the shift.
    monkeypatch.setattr(exercises, "softmax", lambda x: np.exp(np.asarray(x) - 1000.0))
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(PageCheckError, match=r"ex-shift-invariance: check failed: softmax\(x \+ 1000\)"):
        exercises.shift_answer(x, (softmax(x), softmax(10 * x)))


def test_equal_ratios_with_equal_weights_stop_the_page():
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(PageCheckError, match="equal ratios, different weights"):
        exercises.shift_answer(x, (softmax(x), softmax(x)))


def test_an_overflow_that_did_not_happen_stops_the_page():
    scores = np.array([12.0, 11.0, 0.0], dtype=np.float16)
    with pytest.raises(PageCheckError, match="the unshifted softmax overflows"):
        exercises.fp16_answer(65504.0, float(np.log(65504.0)), softmax(scores), softmax(scores))


def test_the_other_checks_can_fail(answers):
    with pytest.raises(PageCheckError, match="ex-saturation-point"):
        exercises.saturation_answer(3.0, softmax([3.0, 0.0, 0.0, 0.0])[0])
    with pytest.raises(PageCheckError, match="ex-jacobian-peaked-uniform"):
        exercises.jacobian_answer(softmax_jacobian(np.full(4, 0.25)), softmax_jacobian(np.array([0.97, 0.01, 0.01, 0.01])))
    with pytest.raises(PageCheckError, match="ex-correlated-scale"):
        exercises.correlated_answer(0.5, 16.0)
    curves = attention_regimes([1024], "sqrt", n_keys=16, n_queries=20, seed=0)
    with pytest.raises(PageCheckError, match="ex-scaling-ablation.*falls"):
        exercises.ablation_answer({"none": curves, "sqrt": curves, "linear": curves})
    with pytest.raises(PageCheckError, match="every policy was simulated"):
        exercises.ablation_answer({"none": curves})
    with pytest.raises(PageCheckError, match="ex-temperature-sweep"):
        exercises.temperature_answer({0.5: curves, 1.0: curves, 2.0: curves})


# -- The chapters' own exercises ---------------------------------------------------------------


def test_the_new_answers(values):
    assert values["ex_power_alpha"] == 0.5 and values["ex_power_linear_std"] == 0.0625
    assert values["ex_uniform_variance"] == pytest.approx(1 / 9) and values["ex_uniform_divisor"] == pytest.approx(8 / 3)
    assert values["ex_qkn_keys"] == QKN_KEYS == 8_886_112
    assert values["ex_qkn_short_weight"] == pytest.approx(1 / (1 + 999 * math.exp(-16)), rel=1e-12)
    assert values["ex_order_ratio"] == pytest.approx(128**0.25)
    assert values["ex_bf16_overflow"] == pytest.approx(math.log(BF16_LARGEST), rel=1e-12)
    assert values["ex_bf16_zero_below"] == pytest.approx(math.log(BF16_SMALLEST / 2), rel=1e-12)
    assert values["ex_bf16_zero_below"] < -92
    assert values["ex_corr_threshold"] == pytest.approx(1 / math.sqrt(1023), rel=1e-12)
    assert values["ex_halving_divisor"] == pytest.approx(HALVING_DIVISOR, rel=1e-12) and values["ex_halving_usual_weight"] > 0.5


def test_wrong_powers_and_spreads_stop_the_page():
    with pytest.raises(PageCheckError, match="ex-scaling-power: check failed: the only power is alpha = 1/2"):
        scaling.power_answer([sp.Integer(1)], 256, 1 / 16)
    with pytest.raises(PageCheckError, match="1/sqrt\\(d_k\\)"):
        scaling.power_answer([sp.Rational(1, 2)], 256, 1 / 256)


def test_a_wrong_initialisation_answer_stops_the_page():
    estimate = uniform_init_estimate()
    with pytest.raises(PageCheckError, match="ex-uniform-init: check failed: the scaled scores have variance"):
        initialisation.uniform_init_answer(1 / 3, np.sqrt(64) / 3, estimate, 64)
    with pytest.raises(PageCheckError, match="the divisor"):
        initialisation.uniform_init_answer(1 / 9, np.sqrt(64), estimate, 64)
    # Plant a fault: a simulation with the wrong weight variance.
    wrong = initialisation.second_moment_estimate(
        initialisation.projected_scores(512, 64, n_weights=200, n_tokens=8, seed=3, sigma_q=np.sqrt(1 / 512), sigma_k=np.sqrt(1 / 512)))
    with pytest.raises(PageCheckError, match="the simulated variance agrees"):
        initialisation.uniform_init_answer(1 / 9, np.sqrt(64) / 3, wrong, 64)


def test_a_wrong_number_of_keys_or_a_row_short_of_the_bound_stops_the_page():
    with pytest.raises(PageCheckError, match="ex-qknorm-keys: check failed: the bound falls to 1/2 first"):
        logit_growth.qk_norm_keys_answer(QKN_KEYS - 1, softmax([8.0] + [-8.0] * 999), 64)
    with pytest.raises(PageCheckError, match="the extreme row reaches the bound"):
        logit_growth.qk_norm_keys_answer(QKN_KEYS, softmax([8.0] + [-7.5] * 999), 64)


def test_a_limit_that_float16_does_not_confirm_stops_the_page(monkeypatch):
    with pytest.raises(PageCheckError, match="ex-fp16-order-limit: check failed: the score is finite just below"):
        libraries.order_limit_answer(dict(ORDER_LIMITS, split=ORDER_LIMITS["after"]), 128)
    with pytest.raises(PageCheckError, match="both orders have a limit"):
        libraries.order_limit_answer({"after": ORDER_LIMITS["after"]}, 128)
    # Plant a fault: scores computed in float64, which never overflow here.
    wide = libraries.scores_by_order
    monkeypatch.setattr(libraries, "scores_by_order", lambda q, k, **kw: wide(q.astype(np.float64), k.astype(np.float64), **kw))
    with pytest.raises(PageCheckError, match="overflows just above"):
        libraries.order_limit_answer(ORDER_LIMITS, 128)


def test_wrong_bfloat16_numbers_stop_the_page():
    largest32 = float(np.finfo(np.float32).max)
    with pytest.raises(PageCheckError, match="ex-bf16-range: check failed: the extreme numbers are bfloat16's"):
        low_precision.bfloat16_answer(largest32, BF16_SMALLEST, np.log(largest32), np.log(BF16_SMALLEST / 2))
    with pytest.raises(PageCheckError, match="ln\\(largest\\) and ln\\(smallest / 2\\)"):
        low_precision.bfloat16_answer(BF16_LARGEST, BF16_SMALLEST, np.log(BF16_LARGEST), np.log(BF16_SMALLEST))


def test_wrong_correlation_roots_stop_the_page():
    with pytest.raises(PageCheckError, match="ex-correlation-threshold: check failed: the roots"):
        correlation.correlation_threshold_answer([-1 / sp.sqrt(d_k), 1 / sp.sqrt(d_k)], 1024**-0.5, 1024)
    with pytest.raises(PageCheckError, match="the positive root"):
        correlation.correlation_threshold_answer(CORRELATION_ROOTS, 1024**-0.5, 1024)


def test_a_divisor_that_does_not_halve_the_top_weight_stops_the_page(monkeypatch):
    with pytest.raises(PageCheckError, match="ex-halving-divisor: check failed: the top weight is 1/2"):
        subtraction_vs_division.halving_answer(HALVING_SCORES, 8.0, 8.0)
    # Plant a fault: a softmax that ignores its input never falls through one half.
    monkeypatch.setattr(subtraction_vs_division, "softmax", lambda x: np.full(np.shape(x), 0.5))
    with pytest.raises(PageCheckError, match="falls through 1/2"):
        subtraction_vs_division.halving_answer(HALVING_SCORES, HALVING_DIVISOR, 8.0)
