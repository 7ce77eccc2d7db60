"""Gradient statistics: the hand-written backward pass, the accurate Jacobian norm, the summaries, seeding, bad input."""

import mpmath
import numpy as np
import pytest

from attention_scaling import saturation, softmax, softmax_jacobian
from attention_scaling import gradients
from attention_scaling.gradients import (
    GRADIENT_QUANTITIES,
    GRADIENT_SCALINGS,
    STARVED_RATIO,
    head_gradients,
    head_loss,
    numerical_head_gradients,
    quantile_interval,
    softmax_jacobian_norm,
    starved_threshold,
    summarise,
    weight_gradient_norms,
    wilson_interval,
)
from attention_scaling.saturation import gradient_distribution
from attention_scaling.simulate import query_key_scores, scale_for

# A correct gradient agrees with central differences (h = 1e-6, float64) to
# about 1e-9 relative to its largest entry; a wrong one is off by order one.
TOLERANCE = 1e-6


def head(seed, *, rows=3, n=4, d_model=5, d_k=6, spread=1.0):
    rng = np.random.default_rng(seed)
    weights = [spread * rng.standard_normal((d_model, d_k)) / np.sqrt(d_model) for _ in range(3)]
    return (rng.standard_normal((rows, d_model)), rng.standard_normal((rows, n, d_model)),
            rng.standard_normal((rows, d_k)), *weights)


def relative_error(exact, numeric):
    worst = max(float(np.max(np.abs(exact[k] - numeric[k]))) for k in ("W_Q", "W_K"))
    largest = max(float(np.max(np.abs(numeric[k]))) for k in ("W_Q", "W_K"))
    return worst / largest


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("scale", [1.0, 0.5, 1 / 6])
def test_backward_pass_matches_central_differences(seed, scale):
    args = (*head(seed), scale)
    assert relative_error(head_gradients(*args), numerical_head_gradients(*args)) < TOLERANCE


def test_the_check_catches_a_gradient_without_the_factor_c():
    # Planted fault: the chain rule's factor c dropped from dL/ds.
    args = (*head(7), 0.25)
    exact = head_gradients(*args)
    without_c = {name: grad / 0.25 for name, grad in exact.items()}
    assert relative_error(without_c, numerical_head_gradients(*args)) > 0.5


def test_the_check_catches_a_swapped_projection(monkeypatch):
    # Planted fault: the backward pass multiplies by W_Q where the chain rule needs W_K.
    args = (*head(8), 0.5)
    numeric = numerical_head_gradients(*args)
    original = gradients._row_backward

    def wrong(x_query, x_keys, upstream, w_q, w_k, w_v, scale):
        d_scores, mixed, q, _ = original(x_query, x_keys, upstream, w_q, w_k, w_v, scale)
        return d_scores, mixed, q, mixed @ w_q

    monkeypatch.setattr(gradients, "_row_backward", wrong)
    assert relative_error(head_gradients(*args), numeric) > 0.1


def test_the_sweep_norms_are_those_of_the_full_gradients():
    x_query, x_keys, upstream, w_q, w_k, w_v = head(3, rows=5, d_k=9)
    scales = [1.0, 1 / 3]
    fast = weight_gradient_norms(x_query, x_keys, upstream, w_q, w_k, w_v, scales)
    for c, norms in zip(scales, fast):
        for b in range(5):
            full = head_gradients(x_query[b:b + 1], x_keys[b:b + 1], upstream[b:b + 1], w_q, w_k, w_v, c)
            assert norms["w_q"][b] == pytest.approx(np.linalg.norm(full["W_Q"]), rel=1e-10)
            assert norms["w_k"][b] == pytest.approx(np.linalg.norm(full["W_K"]), rel=1e-10)


def test_loss_is_the_upstream_gradient_dotted_with_the_attention_output():
    x_query, x_keys, upstream, w_q, w_k, w_v = head(4)
    q, k, v = x_query @ w_q, x_keys @ w_k, x_keys @ w_v
    p = softmax(0.3 * np.einsum("bd,bjd->bj", q, k))
    expected = float(np.sum(upstream * np.einsum("bj,bjd->bd", p, v)))
    assert head_loss(x_query, x_keys, upstream, w_q, w_k, w_v, 0.3) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_jacobian_norm_agrees_with_the_jacobian_for_moderate_logits(seed):
    z = np.random.default_rng(seed).normal(scale=3.0, size=(50, 8))
    np.testing.assert_allclose(softmax_jacobian_norm(z), np.linalg.norm(softmax_jacobian(softmax(z)), axis=(-2, -1)),
                               rtol=1e-10)


@pytest.mark.parametrize("gap", [20.0, 45.0, 120.0, 400.0])
def test_jacobian_norm_keeps_its_relative_accuracy_in_saturated_rows(gap):
    z = [gap, 0.0, -3.0, 0.5]
    with mpmath.workdps(80):
        e = [mpmath.e ** mpmath.mpf(x) for x in z]
        p = [x / sum(e) for x in e]
        exact = mpmath.sqrt(sum((p[i] * ((1 if i == j else 0) - p[j])) ** 2 for i in range(4) for j in range(4)))
    assert float(softmax_jacobian_norm(z)) == pytest.approx(float(exact), rel=1e-12)


def test_the_naive_jacobian_norm_would_fail_the_accuracy_test():
    # Planted fault: the norm from softmax_jacobian(softmax(z)) loses the top key's diagonal entry.
    z = np.array([45.0, 0.0, -3.0, 0.5])
    naive = float(np.linalg.norm(softmax_jacobian(softmax(z))))
    assert abs(naive / float(softmax_jacobian_norm(z)) - 1) > 0.1


def test_score_gain_is_c_times_logit_gain_against_an_independent_computation():
    data = gradient_distribution([64], n_queries=300, seed=3)
    scores, _ = query_key_scores(64, 300, 8, seed=3)
    for scaling in GRADIENT_SCALINGS:
        c = scale_for(scaling, 64)
        jacobian = softmax_jacobian(softmax(c * scores))
        # The plain Jacobian loses about 1e-16 absolutely in saturated rows (which the accurate norm does not).
        np.testing.assert_allclose(data.samples["score", scaling][0], c * np.linalg.norm(jacobian, axis=(-2, -1)),
                                   rtol=1e-9, atol=1e-15)


def test_the_independent_computation_catches_a_score_gain_without_c(monkeypatch):
    # Planted fault: the score gain reported without the chain rule's factor c.
    original = saturation._sizes

    def without_c(*args):
        sizes = original(*args)
        for scaling in sizes:
            sizes[scaling]["score"] = sizes[scaling]["logit"]
        return sizes

    monkeypatch.setattr(saturation, "_sizes", without_c)
    with pytest.raises(AssertionError):
        test_score_gain_is_c_times_logit_gain_against_an_independent_computation()


def test_scores_from_their_exact_law_match_explicit_dot_products():
    # s_j = |q| z_j has the law of q . k_j: compare quantiles with explicit draws at d_k = 16.
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((20_000, 1, 16)), rng.standard_normal((20_000, 2, 16))
    explicit = (q @ k.swapaxes(-1, -2))[:, 0, :]
    law, norms = query_key_scores(16, 20_000, 2)
    np.testing.assert_allclose(np.quantile(norms, [0.1, 0.5, 0.9]),
                               np.quantile(np.linalg.norm(q[:, 0], axis=-1), [0.1, 0.5, 0.9]), rtol=0.02)
    for values in (lambda s: s[:, 0], lambda s: s[:, 0] - s[:, 1], lambda s: s[:, 0] * s[:, 1]):
        a, b = np.quantile(values(explicit), [0.1, 0.5, 0.9]), np.quantile(values(law), [0.1, 0.5, 0.9])
        # Sample quantiles of 20 000 draws differ by about 0.01-0.02 standard deviations.
        np.testing.assert_allclose(a / values(explicit).std(), b / values(explicit).std(), atol=0.06)


def test_sweep_is_seeded_and_independent_of_other_sizes():
    one = gradient_distribution([16, 64], n_queries=60, seed=5)
    two = gradient_distribution([16, 64], n_queries=60, seed=5)
    alone = gradient_distribution([64], n_queries=60, seed=5)
    for key, values in one.samples.items():
        assert np.array_equal(values, two.samples[key])
        assert np.array_equal(values[1], alone.samples[key][0])
    other = gradient_distribution([16], n_queries=60, seed=6)
    assert not np.array_equal(one.samples["logit", "none"][0], other.samples["logit", "none"][0])


def test_summaries_hold_every_quantity_scaling_and_d_k():
    data = gradient_distribution([16, 256], n_queries=200)
    assert set(data.summaries) == {(q, s, d) for q in GRADIENT_QUANTITIES for s in GRADIENT_SCALINGS for d in (16, 256)}
    for (quantity, scaling, d_k), summary in data.summaries.items():
        row = data.samples[quantity, scaling][data.d_k.index(d_k)]
        assert summary.median == pytest.approx(np.median(row))
        assert summary.mean == pytest.approx(row.mean())
        threshold = STARVED_RATIO * np.median(data.samples[quantity, "sqrt"][data.d_k.index(d_k)])
        assert summary.threshold == pytest.approx(threshold)
        assert summary.fraction_below == np.mean(row < threshold)
        assert summary.fraction_low <= summary.fraction_below <= summary.fraction_high
        for level in summary.levels:
            value, low, high = summary.quantile(level)
            assert low <= value <= high


def test_the_phenomenon_most_rows_starve_while_the_mean_at_the_raw_score_is_larger():
    data = gradient_distribution([1024], n_queries=1000)
    none, sqrt = (data.summary("logit", policy, 1024) for policy in ("none", "sqrt"))
    assert none.quantile(0.5)[2] < 1e-3 < sqrt.quantile(0.5)[1]
    assert data.summary("logit", "none", 1024).fraction_low > 0.5
    raw_none, raw_sqrt = data.summary("score", "none", 1024), data.summary("score", "sqrt", 1024)
    assert raw_none.mean - 3 * raw_none.mean_se > raw_sqrt.mean + 3 * raw_sqrt.mean_se


def test_quantile_interval_covers_as_promised():
    # Over many seeded samples of 200 uniforms, the 95 % interval for the 0.1 quantile covers 0.1 about 95 % of the time.
    rng = np.random.default_rng(1)
    covered = [low <= 0.1 <= high for low, high in
               (quantile_interval(rng.random(200), 0.1)[1:] for _ in range(2000))]
    assert 0.93 < np.mean(covered) < 0.985


def test_wilson_interval_matches_the_textbook_formula_and_stays_in_range():
    low, high = wilson_interval(30, 100)
    assert (round(low, 4), round(high, 4)) == (0.2189, 0.3958)
    assert wilson_interval(100, 100)[1] == 1.0 and wilson_interval(0, 100)[0] == 0.0


def test_summarise_counts_strictly_below_the_threshold():
    summary = summarise([1.0, 2.0, 3.0, 4.0], threshold=2.0)
    assert summary.fraction_below == 0.25 and summary.n_rows == 4
    with pytest.raises(ValueError, match="level must be one of"):
        summary.quantile(0.3)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: gradient_distribution([0]), ValueError, "d_k must be an integer >= 1"),
        (lambda: gradient_distribution([16, 16]), ValueError, "without repeats"),
        (lambda: gradient_distribution([16], n_keys=1), ValueError, "n_keys must be an integer >= 2"),
        (lambda: gradient_distribution([16], n_queries=2.5), TypeError, "n_queries must be an integer"),
        (lambda: gradient_distribution([16], n_queries=50), ValueError, "n_queries must be a multiple of n_weight_draws"),
        (lambda: gradient_distribution([16], n_weight_draws=1), ValueError, "n_weight_draws must be an integer >= 2"),
        (lambda: summarise([1.0, 2.0, 3.0], 1.0, groups=2), ValueError, "equal blocks of at least 2"),
        (lambda: summarise([1.0, 2.0, 3.0, 4.0], 1.0, groups=4), ValueError, "equal blocks of at least 2"),
        (lambda: starved_threshold([0.0, 0.0]), ValueError, "starved threshold must be finite and > 0"),
        (lambda: starved_threshold([]), ValueError, "non-empty 1-D"),
        (lambda: query_key_scores(16, 0, 8), ValueError, "n_rows must be an integer >= 1"),
        (lambda: query_key_scores(16, 5, 1), ValueError, "n_keys must be an integer >= 2"),
        (lambda: softmax_jacobian_norm([]), ValueError, "n >= 1"),
        (lambda: softmax_jacobian_norm([1.0, np.nan]), ValueError, "logits must contain only finite values"),
        (lambda: softmax_jacobian_norm(["a"]), TypeError, "logits must be a real numeric array"),
        (lambda: head_loss(*head(0)[:3], np.ones((5, 6)), np.ones((5, 6)), np.ones((5, 7)), 1.0), ValueError,
         "w_q, w_k and w_v must all have shape"),
        (lambda: head_loss(np.ones((2, 5)), *head(0)[1:], 1.0), ValueError, "x_keys must have shape \\(2, n, 5\\)"),
        (lambda: head_loss(*head(0)[:2], np.ones((3, 2)), *head(0)[3:], 1.0), ValueError, "upstream must have shape"),
        (lambda: head_loss(*head(0), -1.0), ValueError, "scale must be finite and > 0"),
        (lambda: numerical_head_gradients(*head(0), 1.0, step=0), ValueError, "step must be finite and > 0"),
        (lambda: quantile_interval([1.0, 2.0], 1.0), ValueError, "level must lie strictly between 0 and 1"),
        (lambda: summarise([1.0], 1.0), ValueError, "at least 2 draws"),
        (lambda: summarise([1.0, 2.0], 1.0, levels=(0.1,)), ValueError, "levels must include 0.5"),
        (lambda: wilson_interval(5, 4), ValueError, "successes must be at most n"),
        (lambda: gradient_distribution([16], n_queries=40).summary("logit", "none", 32), ValueError,
         "must be one of the sweep's"),
    ],
)
def test_bad_input_is_refused_with_a_clear_error(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("n", [1, 7, 100, 2000])
@pytest.mark.parametrize("level", [0.01, 0.1, 0.5, 0.9, 0.99])
def test_the_order_statistic_indices_match_scipy_binomial_quantiles(n, level):
    # The package computes binomial quantiles itself (scipy is only a test dependency).
    stats = pytest.importorskip("scipy.stats")
    from attention_scaling.gradients import _binomial_quantile
    for q in (0.025, 0.5, 0.975):
        assert _binomial_quantile(q, n, level) == int(stats.binom.ppf(q, n, level))


# -- Rows that share a draw (issue 53, item 14) -------------------------------------------------


def _shared_draws(rng, groups=10, rows=50):
    """Rows whose blocks share an offset: between-block spread 1, within-block spread 0.1, true median 0."""
    return np.repeat(rng.normal(size=groups), rows) + 0.1 * rng.normal(size=groups * rows)


def test_grouped_intervals_cover_the_median_where_the_independent_ones_do_not():
    # 200 seeded data sets; a 95 % interval should cover the true median 0 in about 190 of them. The
    # standard error of a coverage near 0.95 over 200 sets is 0.015: below 0.90 is more than 3 of them off.
    rng = np.random.default_rng(7)
    covered = {"grouped": 0, "independent": 0}
    for _ in range(200):
        x = _shared_draws(rng)
        for name, groups in (("grouped", 10), ("independent", 1)):
            _, low, high = summarise(x + 5, 1.0, groups=groups).quantile(0.5)
            covered[name] += low <= 5 <= high
    assert covered["grouped"] / 200 >= 0.90
    assert covered["independent"] / 200 < 0.5   # the practice initialisation.md rejects under-covers badly


def test_grouped_standard_errors_come_from_the_spread_between_blocks():
    x = _shared_draws(np.random.default_rng(8)) + 5
    blocks = x.reshape(10, 50)
    summary = summarise(x, 5.0, groups=10)
    assert summary.mean_se == pytest.approx(blocks.mean(axis=1).std(ddof=1) / np.sqrt(10))
    assert summary.fraction_se == pytest.approx((blocks < 5.0).mean(axis=1).std(ddof=1) / np.sqrt(10))
    assert summary.fraction_low <= summary.fraction_below <= summary.fraction_high


def test_the_sweep_summarises_the_projections_by_their_weight_draws():
    data = gradient_distribution([64], n_queries=200, n_weight_draws=10)
    for quantity in ("w_q", "w_k"):
        row = data.samples[quantity, "sqrt"][0]
        summary = data.summary(quantity, "sqrt", 64)
        assert summary.mean_se == pytest.approx(row.reshape(10, 20).mean(axis=1).std(ddof=1) / np.sqrt(10))
    # The scores' rows share nothing: their summaries treat the rows as independent.
    logit = data.samples["logit", "none"][0]
    assert data.summary("logit", "none", 64).mean_se == pytest.approx(logit.std(ddof=1) / np.sqrt(200))
