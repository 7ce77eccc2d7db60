"""Page support of docs/saturation.md: the numbers the prose quotes, and the checks that guard them."""

import dataclasses
import math

import numpy as np
import pytest
from scipy import integrate, stats

from attention_scaling import attention_scores, regimes, softmax, softmax_jacobian
from attention_scaling.simulate import SCALINGS
from attention_scaling.site import glue_fields, regimes as site_regimes, saturation
from attention_scaling.site.checks import PageCheckError
from se_checks import SE_REL, Z, agree, combined_se, proportion_se, within

MARGINS = np.array([0.0, 1.0, 2.0, 5.0, 10.0])


def margin_rows(margins=MARGINS, n=4):
    scores = np.zeros((margins.size, n))
    scores[:, 0] = margins
    weights = softmax(scores)
    return margins, weights[:, 0], softmax_jacobian(weights)[:, 0, 0]


@pytest.fixture(scope="module")
def spread():
    return regimes.jacobian_vs_spread_data()


def test_margin_table():
    values = glue_fields(saturation.margin_table(*margin_rows()), "onset")
    assert sorted(values) == sorted(f"onset_{kind}_{m}" for kind in ("weight", "slope") for m in (0, 1, 2, 5, 10))
    assert (values["onset_weight_0"], values["onset_slope_0"]) == (0.25, 0.1875)
    # softmax([10, 0, 0, 0])[0] = e^10 / (e^10 + 3), and the slope is p (1 - p).
    weight = math.exp(10) / (math.exp(10) + 3)
    assert values["onset_weight_10"] == pytest.approx(weight, rel=1e-12)
    assert values["onset_slope_10"] == pytest.approx(weight * (1 - weight), rel=1e-9)


def test_margin_table_fails_when_the_slope_is_not_the_jacobian():
    margins, weight, slope = margin_rows()
    with pytest.raises(PageCheckError, match="each slope equals p_1 \\(1 - p_1\\)"):
        saturation.margin_table(margins, weight, 2 * slope)


def test_margin_table_fails_when_the_largest_margin_does_not_saturate():
    with pytest.raises(PageCheckError, match="at the largest margin the preferred key holds nearly all the weight"):
        saturation.margin_table(*margin_rows(MARGINS[:-1]))


def test_margin_table_needs_rows_of_one_length():
    margins, weight, slope = margin_rows()
    with pytest.raises(ValueError, match="must be 1-D of one length"):
        saturation.margin_table(margins, weight[:2], slope)


def test_onset_numbers():
    numbers = saturation.onset_numbers(regimes.saturation_onset_data())
    # The slope p (1 - p) is a tenth of its peak 1/4 where p = (1 + sqrt(0.9)) / 2, and
    # softmax([x, 0, 0, 0])[0] = p there means x = ln(3 p / (1 - p)).
    p = (1 + math.sqrt(0.9)) / 2
    assert glue_fields(numbers, "onset") == {"onset_margin": pytest.approx(math.log(3 * p / (1 - p)), rel=1e-9), "onset_n": 4}


def test_onset_check_fails_when_the_onset_is_misplaced(monkeypatch):
    # Planted fault: a saturation margin computed for a slope of a fifth of the peak.
    original = regimes.saturation_margin
    monkeypatch.setattr(regimes, "saturation_margin", lambda n: original(n, fraction=0.2))
    with pytest.raises(PageCheckError, match="past the marked margin the slope stays below a tenth of its peak"):
        saturation.onset_numbers(regimes.saturation_onset_data())


def wide_gap_probability(d_k, gap=10.0):
    """P(|q.k_1 - q.k_2| > gap) for q, k_1, k_2 with independent N(0, 1) components, by quadrature.

    Given q, q.(k_1 - k_2) is N(0, 2|q|^2), and |q|^2 is chi-square with d_k degrees of freedom.
    """
    def integrand(r2):
        return 2 * stats.norm.sf(gap / math.sqrt(2 * r2)) * stats.chi2.pdf(r2, d_k)

    low, high = stats.chi2.ppf([1e-12, 1 - 1e-12], d_k)
    return integrate.quad(integrand, low, high, epsabs=1e-12)[0]


def test_wide_head_numbers():
    rng = np.random.default_rng(seed=6)
    d_k, n_queries = 512, 20_000
    q = rng.standard_normal((n_queries, 1, d_k))
    k = rng.standard_normal((n_queries, 2, d_k))
    scores = attention_scores(q, k, scale=1.0)[:, 0, :]
    numbers = saturation.wide_head_numbers(d_k, np.abs(scores[:, 0] - scores[:, 1]) > 10)
    values = glue_fields(numbers, "wide")
    # The true fraction by quadrature; 5 SE (se_checks.Z) of a proportion of n_queries draws.
    p = wide_gap_probability(d_k)
    se = proportion_se(p, n_queries)
    assert values == {
        "wide_d_k": d_k,
        "wide_std": pytest.approx(math.sqrt(d_k), rel=1e-12),
        "wide_gap_fraction": within(p, se),
        "wide_gap_fraction_se": pytest.approx(se, rel=SE_REL),
    }
def test_wide_head_check_fails_when_wide_gaps_are_rare():
    with pytest.raises(PageCheckError, match="a gap of more than 10 between two scores is typical"):
        saturation.wide_head_numbers(512, [True, False, False, False])


def jacobian_norm_reference(spreads, n_keys, n_rows=10_000, seed=2024):
    r"""Mean Frobenius norm of the softmax Jacobian at each spread, computed another way.

    :math:`\lVert \operatorname{diag}(p) - p p^T \rVert_F^2 = \sum p^2 - 2 \sum p^3 + (\sum p^2)^2`,
    over rows of independent N(0, spread^2) scores; 5 times the rows of the page's data.
    """
    z = np.random.default_rng(seed).standard_normal((n_rows, n_keys))
    means, ses = [], []
    for spread in spreads:
        p = np.exp(spread * z - spread * z.max(axis=-1, keepdims=True))
        p /= p.sum(axis=-1, keepdims=True)
        p2 = (p**2).sum(axis=-1)
        norm = np.sqrt(np.maximum(p2 - 2 * (p**3).sum(axis=-1) + p2**2, 0.0))
        means.append(norm.mean())
        ses.append(norm.std(ddof=1) / np.sqrt(n_rows))
    return np.array(means), np.array(ses)


def test_spread_numbers(spread):
    values = glue_fields(saturation.spread_numbers(spread), "spread")
    n = spread.n_keys
    assert (values["spread_n_keys"], n) == (16, 16)
    # All scores equal: J = (I - 11^T/n) / n, whose Frobenius norm is sqrt(n - 1) / n.
    assert values["spread_at_0"] == pytest.approx(math.sqrt(n - 1) / n, rel=1e-12)
    # The rest against an independent computation, within 5 combined SE (se_checks.Z).
    reference, reference_se = jacobian_norm_reference(spread.d_k, n)
    index = {float(s): i for i, s in enumerate(spread.d_k)}
    for key, s in (("spread_at_1", 1.0), ("spread_at_8", 8.0), ("spread_peak", values["spread_peak_at"])):
        i = index[s]
        agree(values[key], spread.jacobian_norm_se[i], reference[i], reference_se[i])
        assert spread.jacobian_norm_se[i] == pytest.approx(reference_se[i] * math.sqrt(10_000 / spread.n_queries),
                                                           rel=SE_REL)
    # The peak is where the true curve peaks: no spread's reference value is higher by 5 combined SE.
    i = index[values["spread_peak_at"]]
    assert reference.max() - reference[i] <= Z * combined_se(spread.jacobian_norm_se[i], reference_se.max(),
                                                             reference_se[i])


def test_spread_check_fails_when_the_curve_is_monotone(spread):
    # Planted fault: a curve that only falls, as a naive argument would expect.
    falling = np.sort(spread.jacobian_norm)[::-1]
    with pytest.raises(PageCheckError, match="with all scores equal the norm is lower than at spread 1"):
        saturation.spread_numbers(dataclasses.replace(spread, jacobian_norm=falling))


def test_spread_numbers_needs_the_quoted_spreads(spread):
    with pytest.raises(ValueError, match="spread must include the spreads 0, 1 and 8"):
        saturation.spread_numbers(dataclasses.replace(spread, d_k=spread.d_k + 0.1))


# -- The gradient, row by row (saturation-distribution) and the first page's example ---------

from attention_scaling import gradients  # noqa: E402
from attention_scaling.saturation import gradient_distribution  # noqa: E402
from attention_scaling.simulate import query_key_scores  # noqa: E402


@pytest.fixture(scope="module")
def gains():
    return gradient_distribution()


def test_distribution_numbers(gains):
    values = glue_fields(saturation.distribution_numbers(gains), "gdist")
    assert (values["gdist_d_k"], values["gdist_widest"], values["gdist_n_keys"], values["gdist_n_queries"]) == (
        512, 4096, 8, 2000)
    summary = gains.summary("logit", "none", 512)
    assert values["gdist_logit_none_median"] == summary.median
    assert (values["gdist_logit_none_median_low"], values["gdist_logit_none_median_high"]) == summary.quantile(0.5)[1:]
    assert values["gdist_logit_none_frac"] == summary.fraction_below
    assert values["gdist_score_sqrt_mean"] == pytest.approx(gains.summary("logit", "sqrt", 512).mean / np.sqrt(512))
    assert values["gdist_score_mean_ratio"] > 1
    # sqrt(d_k) times the unscaled mean gain stays of order one over the sweep: the mean decays like d_k^(-1/2).
    assert 0.8 < values["gdist_scaled_mean_smallest"] < 1.6 and 0.8 < values["gdist_scaled_mean_widest"] < 1.6


def test_distribution_table_has_a_row_per_quantity_and_scaling(gains):
    lines = saturation.distribution_table(gains).splitlines()
    assert len(lines) == 2 + 4 * 3
    assert lines[2].startswith(r"| gain at the logits, $\lVert J(cs)\rVert_F$ | none |")
    with pytest.raises(TypeError, match="GradientDistribution"):
        saturation.distribution_table({})


def swap(data, quantity, mapping):
    """The record with the rows of one quantity's scalings replaced (a planted fault)."""
    summaries = dict(data.summaries)
    for (q, scaling, d_k) in data.summaries:
        if q == quantity and scaling in mapping:
            summaries[q, scaling, d_k] = data.summaries[q, mapping[scaling], d_k]
    return dataclasses.replace(data, summaries=summaries)


@pytest.mark.parametrize(
    ("quantity", "mapping", "match"),
    [
        ("logit", {"none": "sqrt"}, "median gain at the logits is below a hundredth"),
        ("score", {"none": "sqrt"}, "mean score gradient is larger"),
        ("w_q", {"sqrt": "none"}, "mean w_q gradient is larger"),
    ],
)
def test_distribution_checks_fail_when_a_scaling_behaves_like_another(gains, quantity, mapping, match):
    with pytest.raises(PageCheckError, match=match):
        saturation.distribution_numbers(swap(gains, quantity, mapping))


def test_distribution_check_fails_when_the_raw_score_gain_loses_its_factor_c(gains):
    # Planted fault: the gain at the raw score without the chain rule's factor c (the logit gain).
    summaries = dict(gains.summaries)
    for (q, scaling, d_k) in gains.summaries:
        if q == "score":
            summaries[q, scaling, d_k] = gains.summaries["logit", scaling, d_k]
    with pytest.raises(PageCheckError, match="mean score gradient is larger"):
        saturation.distribution_numbers(dataclasses.replace(gains, summaries=summaries))


def test_distribution_numbers_need_the_quoted_sizes(gains):
    with pytest.raises(ValueError, match="must include d_k = 100"):
        saturation.distribution_numbers(gains, d_k=100)


def example_inputs(d_k=512):
    raw, _ = query_key_scores(d_k, 2000, 8)   # as the page's cell draws them
    scores = {name: c(d_k) * raw for name, c in SCALINGS.items()}
    weights = {name: softmax(s) for name, s in scores.items()}
    gains = {name: gradients.softmax_jacobian_norm(s) for name, s in scores.items()}
    return scores, weights, gains


def test_example_numbers_summarise_what_the_page_computed():
    scores, weights, gains = example_inputs()
    values = glue_fields(site_regimes.example_numbers(512, scores, weights, gains), "example")
    assert (values["example_d_k"], values["example_n_queries"], values["example_n_keys"], values["example_uniform"]) == (
        512, 2000, 8, 1 / 8)
    for name, scale in SCALINGS.items():
        largest = weights[name].max(axis=-1)
        assert values[f"example_{name}_std"] == pytest.approx(np.std(scores[name], ddof=1))
        assert values[f"example_{name}_max"] == pytest.approx(largest.mean())
        assert values[f"example_{name}_max_se"] == pytest.approx(largest.std(ddof=1) / np.sqrt(2000))
        assert values[f"example_{name}_grad"] == pytest.approx(np.mean(gains[name]))
        assert values[f"example_{name}_grad_median"] == pytest.approx(np.median(gains[name]))
        assert values[f"example_{name}_score_mean"] == pytest.approx(scale(512) * np.mean(gains[name]))
    assert values["example_none_grad_median"] < 1e-3 < values["example_none_grad_q90"]
    assert values["example_score_mean_ratio"] == pytest.approx(
        values["example_none_score_mean"] / values["example_sqrt_score_mean"])
    threshold = gradients.STARVED_RATIO * np.median(gains["sqrt"])
    assert values["example_grad_threshold"] == pytest.approx(threshold)
    assert values["example_none_grad_frac"] == np.mean(gains["none"] < threshold)


def test_the_example_and_the_chapter_measure_the_same_rows_the_same_way(gains):
    # Issue 53, item 7: one definition of starved, one draw per (d_k, seed), so the first page and the
    # saturation chapter print the same numbers at d_k = 512.
    example = glue_fields(site_regimes.example_numbers(512, *example_inputs()), "example")
    chapter = glue_fields(saturation.distribution_numbers(gains), "gdist")
    for mine, theirs in (("example_none_grad_median", "gdist_logit_none_median"),
                         ("example_none_grad_frac", "gdist_logit_none_frac"),
                         ("example_grad_threshold", "gdist_logit_none_threshold"),
                         ("example_none_grad", "gdist_logit_none_mean"),
                         ("example_score_mean_ratio", "gdist_score_mean_ratio")):
        assert example[mine] == pytest.approx(chapter[theirs], rel=1e-12), mine


def test_example_check_fails_when_the_raw_score_gain_loses_its_factor_c():
    # Planted fault: d_k taken as 1, so every scale is 1 and the gain at the raw score is the gain at the logits.
    scores, weights, gains = example_inputs()
    with pytest.raises(PageCheckError, match="mean gain at the raw score is larger"):
        site_regimes.example_numbers(1, scores, weights, gains)


def test_example_check_fails_when_the_page_says_more_than_its_weights_show():
    # Planted faults: at d_k = 16 unscaled attention is not yet one-hot, and weights that
    # were never normalised (the scores themselves) are nowhere near uniform.
    scores, weights, gains = example_inputs(d_k=16)
    with pytest.raises(PageCheckError, match="largest weight averages above 0.9"):
        site_regimes.example_numbers(16, scores, weights, gains)
    scores, weights, gains = example_inputs()
    with pytest.raises(PageCheckError, match="within a tenth of the uniform"):
        site_regimes.example_numbers(512, scores, {**weights, "linear": np.exp(scores["linear"])}, gains)


def test_example_numbers_refuse_inputs_that_do_not_match():
    scores, weights, gains = example_inputs()
    with pytest.raises(ValueError, match="must have the keys"):
        site_regimes.example_numbers(512, {"none": scores["none"]}, weights, gains)
    with pytest.raises(ValueError, match="one shape"):
        site_regimes.example_numbers(512, scores, {**weights, "sqrt": weights["sqrt"][:10]}, gains)


# -- The exact rate of the mean (thm-mean-jacobian-limit) ------------------------------------------


@pytest.fixture(scope="module")
def mean_rows():
    from attention_scaling.saturation import mean_jacobian_data

    return mean_jacobian_data((512, 65536), n_rows=400_000)


def test_mean_limit_numbers_quote_the_measurement_and_the_limit(mean_rows, gains):
    from attention_scaling.proofs import mean_jacobian_limit
    from attention_scaling.saturation import gap_density_at_zero

    values = glue_fields(saturation.mean_limit_numbers(mean_jacobian_limit(), mean_rows, gains), "mjl")
    assert values["mjl_limit"] == gap_density_at_zero(8)
    assert (values["mjl_dk_first"], values["mjl_dk_last"]) == (512, 65536)
    assert values["mjl_scaled_last"] == mean_rows.scaled_mean[-1, 0]
    assert values["mjl_ratio_limit"] == pytest.approx(gap_density_at_zero(8) / mean_rows.standard_mean[0])
    # The sweep's ratio at 512 is the one the distribution section prints.
    assert values["mjl_ratio_measured"] == pytest.approx(
        glue_fields(saturation.distribution_numbers(gains), "gdist")["gdist_score_mean_ratio"])
    assert (values["mjl_steps_checked"], values["mjl_steps_argued"]) == (4, 7)


def test_mean_limit_check_fails_for_a_wrong_limit(mean_rows, gains):
    # Planted faults: a limit 10 % too large, and the limit of n = 2 keys, f_G(0) = 1/sqrt(pi), quoted for n = 8.
    from attention_scaling.proofs import mean_jacobian_limit

    for wrong in (1.1 * mean_rows.limit, 1 / math.sqrt(math.pi)):
        with pytest.raises(PageCheckError, match="closer to f_G"):
            saturation.mean_limit_numbers(mean_jacobian_limit(), dataclasses.replace(mean_rows, limit=wrong), gains)
    with pytest.raises(TypeError, match="thm-mean-jacobian-limit"):
        saturation.mean_limit_numbers(gradients, mean_rows, gains)
    with pytest.raises(ValueError, match="includes d_k = 100"):
        saturation.mean_limit_numbers(mean_jacobian_limit(), mean_rows, gains, d_k=100)
