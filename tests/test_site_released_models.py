"""The ledger of released models (attention_scaling.released_models) and its page support."""

import math

import numpy as np
import pytest
import sympy as sp

from attention_scaling import softmax

from attention_scaling.proofs import REGISTRY, Proved
from attention_scaling.released_models import LEDGER, SYMBOLS, LedgerRow, qk_clip, sigmoid_gate, sink_margin, softpick
from attention_scaling.temperatures import llama4_multiplier, yarn_scale
from attention_scaling.site import released_models as page
from attention_scaling.site.checks import PageCheckError
from attention_scaling.site.evidence import EVIDENCE
from attention_scaling.site.figures import FIGURES, make_figure
from figure_checks import assert_labelled_axes


def test_the_theorem_states_the_square_and_the_mistake():
    proof = page.yarn_factor()
    assert proof.label == page.LABEL and proof.counts() == {"checked": 1, "cited": 1, "argued": 1, "measured": 0}
    # The factor the proof cites from YaRN's Eq. 22 is the library's YaRN scale, and DeepSeek-V3's row is its square.
    cited = proof.steps[0].rhs
    for s in (2, 8, 40, 1000):
        assert math.isclose(float(yarn_scale(s)), float(cited.subs(page._ln_s, math.log(s))), rel_tol=1e-12)
    deepseek = next(row for row in LEDGER if row.name == "DeepSeek-V3")
    assert math.isclose(deepseek.ratio, float(yarn_scale(deepseek.parameters["s"])) ** 2, rel_tol=1e-12)


def test_the_llama4_row_is_the_librarys_temperature_at_every_position():
    row = next(row for row in LEDGER if row.name.startswith("Llama 4"))
    for position in (0, 8190, 8191, 131071, 10**6):
        values = dict(row.parameters, position=position)
        factor = float(row.factor.subs({SYMBOLS[name]: value for name, value in values.items()}))
        assert math.isclose(factor * math.sqrt(row.d_k), float(llama4_multiplier(position + 1)), rel_tol=1e-12)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="how is 'run' or 'cited'"):
        LedgerRow("x", SYMBOLS["d_k"] ** -0.5, {"d_k": 64}, "somewhere", "read")
    with pytest.raises(ValueError, match="every symbol"):
        LedgerRow("x", SYMBOLS["layer"] / SYMBOLS["d_k"], {"d_k": 64}, "somewhere", "cited")


def test_each_row_has_a_source_and_the_derived_columns_follow_from_its_value():
    assert len(LEDGER) >= 12 and len({row.name for row in LEDGER}) == len(LEDGER)
    for row in LEDGER:
        assert row.source.strip()
        assert math.isclose(row.ratio, row.value * math.sqrt(row.d_k))
        assert math.isclose(row.score_variance, row.ratio**2)
    table, sources = page.ledger_table().splitlines(), page.ledger_sources().splitlines()
    assert len(table) == len(LEDGER) + 2 and len(sources) == len(LEDGER)


def test_a_row_far_from_the_textbook_scale_that_the_prose_does_not_name_is_refused():
    # Planted fault: a new row at twice the textbook scale, which the section's list does not name.
    doubled = LedgerRow("Doubled", 2 * SYMBOLS["d_k"] ** sp.Rational(-1, 2), {"d_k": 64}, "nowhere", "cited")
    with pytest.raises(PageCheckError, match="released-models-ledger"):
        page.ledger_numbers((*LEDGER, doubled))
    numbers = page.ledger_numbers()
    assert numbers.n_rows == len(LEDGER) and numbers.n_run == sum(row.how == "run" for row in LEDGER)


def test_the_figure_and_evidence_are_registered():
    assert FIGURES["released-models"].draw is page.draw_ledger_ratios
    assert_labelled_axes(make_figure("released-models"), "released-models")
    assert page.yarn_factor_rows in EVIDENCE
    (row,) = page.yarn_factor_rows(np.random.default_rng(0), Proved())
    assert row.theorem == page.LABEL and row.holds and math.isclose(row.proved, float(yarn_scale(40)) ** 2)


def test_the_exercise_scalar_gives_unit_variance():
    gemma = next(row for row in LEDGER if row.name == "Gemma 2 27B")
    scalar = page.unit_variance_scalar(gemma)
    assert scalar == gemma.d_k and math.isclose(gemma.score_variance, gemma.d_k / 144)


def test_qk_clip_multiplies_every_logit_by_eta_whatever_the_split():
    rng = np.random.default_rng(5)
    x, w_q, w_k = rng.standard_normal((16, 8)), rng.standard_normal((8, 4)), rng.standard_normal((8, 4))
    logits = (x @ w_q) @ (x @ w_k).T
    for alpha in (0.0, 0.3, 0.5, 1.0):
        clipped_q, clipped_k = qk_clip(w_q, w_k, max_logit=4.0, threshold=1.0, alpha=alpha)
        np.testing.assert_allclose((x @ clipped_q) @ (x @ clipped_k).T, logits / 4, rtol=1e-12)
    unchanged = qk_clip(w_q, w_k, max_logit=0.5, threshold=1.0)
    np.testing.assert_array_equal(unchanged[0], w_q)
    with pytest.raises(ValueError, match="alpha in"):
        qk_clip(w_q, w_k, max_logit=4.0, alpha=1.5)
    with pytest.raises(ValueError, match="must be positive"):
        qk_clip(w_q, w_k, max_logit=0.0)


def test_the_clipped_heads_reach_tau_and_a_wrong_clip_is_refused(monkeypatch):
    heads = page.clipped_heads(n_heads=50)
    clipped = heads.before > heads.threshold
    assert clipped.any() and (~clipped).any()
    np.testing.assert_allclose(heads.after[~clipped], heads.before[~clipped], rtol=1e-12)
    assert page.qk_clip_bound().counts() == {"checked": 2, "cited": 0, "argued": 1, "measured": 0}
    # Planted fault: both weight matrices multiplied by eta, so every logit by eta squared.
    monkeypatch.setattr(page, "qk_clip", lambda w_q, w_k, max_logit, threshold: (w_q * threshold / max_logit,
                                                                                  w_k * threshold / max_logit))
    with pytest.raises(PageCheckError, match="released-models-qk-clip"):
        page.clipped_heads(n_heads=50)


def test_the_clip_evidence_is_registered_and_holds():
    assert page.qk_clip_rows in EVIDENCE
    (row,) = page.qk_clip_rows(np.random.default_rng(1), Proved())
    assert row.theorem == page.CLIP_LABEL and row.holds and row.proved == 100


def test_the_yarn_mistakes_are_ordered_and_a_misread_factor_is_refused(monkeypatch):
    mistakes = page.yarn_mistakes()
    assert math.isclose(mistakes.correct_factor, mistakes.wrong_power_factor**2)
    assert math.isclose(mistakes.wrong_direction_factor * mistakes.wrong_power_factor, 1)
    # The margin gives the needle weight 1/2 at the trained length with no factor.
    assert math.isclose(float(page.needle_weight(mistakes.trained, mistakes.margin, 1.0)), 0.5)
    # Planted fault: a YaRN scale below 1, which reverses the order the prose states.
    monkeypatch.setattr(page, "yarn_scale", lambda extension: 0.9)
    with pytest.raises(PageCheckError, match="released-models-yarn"):
        page.yarn_mistakes()
    with pytest.raises(ValueError, match="trained < n"):
        page.yarn_mistakes(trained=4096, n=4096)


def test_softpick_is_eq_1_and_its_rows_sum_to_at_most_1():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((50, 64))
    direct = np.maximum(np.exp(x) - 1, 0) / np.abs(np.exp(x) - 1).sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(softpick(x, eps=0.0), direct, rtol=1e-12)
    assert np.all(softpick(x).sum(axis=-1) < 1)
    np.testing.assert_allclose(softpick(np.abs(x)).sum(axis=-1), 1, rtol=1e-6)
    assert np.all(np.isfinite(softpick(1000 + x)))  # the shifted form does not overflow
    with pytest.raises(ValueError, match="finite scores"):
        softpick([0.0, np.inf])
    assert page.softpick_row_sum().counts() == {"checked": 3, "cited": 0, "argued": 2, "measured": 0}


def test_softpick_rows_rise_with_the_mean_and_softmax_in_its_place_is_refused(monkeypatch):
    rows = page.softpick_rows(n=256, n_rows=40)
    assert rows.median_sum["0"] < rows.median_sum["1"] < rows.median_sum["3"] and rows.largest_sum <= 1 + 1e-12
    for name in rows.median_sum:
        assert rows.low_sum[name] <= rows.median_sum[name] <= rows.high_sum[name]
    # Planted fault: weights that sum to more than 1.
    monkeypatch.setattr(page, "softpick", lambda x: 1.01 * softmax(x))
    with pytest.raises(PageCheckError, match="released-models-softpick"):
        page.softpick_rows(n=256, n_rows=40)
    assert page.softpick_rows_evidence in EVIDENCE


def test_a_sink_at_the_margin_holds_its_weight_and_bad_input_is_refused():
    for n, weight in ((1, 0.5), (4096, 0.9), (65536, 0.99)):
        logits = np.concatenate([[float(sink_margin(n, weight))], np.zeros(n)])
        assert math.isclose(softmax(logits)[0], weight, rel_tol=1e-12)
    with pytest.raises(ValueError, match="weight in"):
        sink_margin(16, 1.0)
    with pytest.raises(ValueError, match="n >= 1"):
        sink_margin(0, 0.5)
    assert page.sink_margin_bound().counts() == {"checked": 3, "cited": 0, "argued": 1, "measured": 0}


def test_a_fixed_sink_fades_with_n_and_a_softmax_at_half_the_logits_is_refused(monkeypatch):
    rows = page.sink_rows(ns=(256, 4096), n_rows=40)
    assert rows.sink_weight["256"] > rows.sink_weight["4096"]
    for name in rows.sink_weight:
        assert rows.low_weight[name] <= rows.sink_weight[name] <= rows.high_weight[name]
        assert math.isclose(rows.eviction_factor[name], 1 / (1 - rows.sink_weight[name]), rel_tol=0.05)
    # Planted fault: the logits halved inside the softmax, so the sink falls below the theorem's bound.
    monkeypatch.setattr(page, "softmax", lambda x: softmax(0.5 * np.asarray(x)))
    with pytest.raises(PageCheckError, match="released-models-sinks"):
        page.sink_rows(ns=(256, 4096), n_rows=40)


def test_the_gate_is_a_sigmoid_that_does_not_overflow():
    z = np.linspace(-30, 30, 61)
    np.testing.assert_allclose(sigmoid_gate(3.0, z), 3.0 / (1 + np.exp(-z)), rtol=1e-12)
    assert sigmoid_gate(1.0, -1000.0) == 0.0
    with pytest.raises(ValueError, match="finite"):
        sigmoid_gate(1.0, np.nan)
    assert page.gate_gradient().counts() == {"checked": 4, "cited": 1, "argued": 1, "measured": 0}


def test_the_gated_heads_report_quantiles_and_a_gradient_without_the_gate_is_refused(monkeypatch):
    heads = page.gated_heads(n_heads=40)
    assert heads.gate_low < heads.gate_median < heads.gate_high
    assert heads.ratio_low <= heads.ratio_median <= heads.ratio_high
    assert math.isclose(float(sigmoid_gate(1.0, heads.tenth_gate_logit)), 0.1)
    # Planted fault: the chain rule without the gate's factor; central differences of the gated loss disagree.
    ungated = page._score_gradient
    monkeypatch.setattr(page, "_score_gradient", lambda scores, v, gate, upstream: ungated(scores, v, 1.0, upstream))
    with pytest.raises(PageCheckError, match="released-models-gated"):
        page.gated_heads(n_heads=5)
    # The same fault: the per-row gate no longer factors out, and its evidence row fails.
    assert [row.holds for row in page.gate_gradient_rows(np.random.default_rng(4), Proved())] == [True, False]


def test_the_critical_scale_has_three_limits_and_its_evidence_sees_a_wrong_cosine(monkeypatch):
    proof = page.critical_log_n()
    assert [proof.steps[index].rhs for index in proof.results[1:]] == [1, 0, sp.Rational(1, 2)]
    assert "thm-needle-limit" in REGISTRY[page.CRITICAL_LABEL].uses
    for function in (page.sink_margin_rows, page.gate_gradient_rows, page.critical_log_n_rows):
        assert function in EVIDENCE
        assert all(row.holds for row in function(np.random.default_rng(3), Proved()))
    # Planted fault: tokens whose pairwise cosine is 0.05 above the one the factor assumes.
    simplex = page._simplex_tokens
    monkeypatch.setattr(page, "_simplex_tokens", lambda n, cosine: simplex(n, cosine + 0.05))
    assert not page.critical_log_n_rows(np.random.default_rng(3), Proved())[0].holds
