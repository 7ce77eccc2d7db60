"""Page support of docs/saturation.md: the numbers the prose quotes, and the checks that guard them."""

import dataclasses

import numpy as np
import pytest

from attention_scaling import attention_scores, regimes, softmax, softmax_jacobian
from attention_scaling.site import saturation
from attention_scaling.site.checks import PageCheckError

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
    values = saturation.margin_table(*margin_rows()).glue_values()
    assert sorted(values) == sorted(f"onset_{kind}_{m}" for kind in ("weight", "slope") for m in (0, 1, 2, 5, 10))
    assert (values["onset_weight_0"], values["onset_slope_0"]) == (0.25, 0.1875)
    assert values["onset_weight_10"] == pytest.approx(0.999864, abs=1e-6)
    assert values["onset_slope_10"] == pytest.approx(0.000136, abs=1e-6)


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
    assert numbers.glue_values() == {"onset_margin": pytest.approx(4.7355, abs=1e-4), "onset_n": 4}


def test_onset_check_fails_when_the_onset_is_misplaced(monkeypatch):
    # Planted fault: a saturation margin computed for a slope of a fifth of the peak.
    original = regimes.saturation_margin
    monkeypatch.setattr(regimes, "saturation_margin", lambda n: original(n, fraction=0.2))
    with pytest.raises(PageCheckError, match="past the marked margin the slope stays below a tenth of its peak"):
        saturation.onset_numbers(regimes.saturation_onset_data())


def test_wide_head_numbers():
    rng = np.random.default_rng(seed=6)
    d_k, n_queries = 512, 20_000
    q = rng.standard_normal((n_queries, 1, d_k))
    k = rng.standard_normal((n_queries, 2, d_k))
    scores = attention_scores(q, k, scale=1.0)[:, 0, :]
    numbers = saturation.wide_head_numbers(d_k, np.abs(scores[:, 0] - scores[:, 1]) > 10)
    assert numbers.glue_values() == {
        "saturation_d_k": 512,
        "saturation_std": pytest.approx(22.627, abs=1e-3),
        "gap_fraction": 0.75525,
        "gap_fraction_se": pytest.approx(0.00304, abs=1e-5),
    }


def test_wide_head_check_fails_when_wide_gaps_are_rare():
    with pytest.raises(PageCheckError, match="a gap of more than 10 between two scores is typical"):
        saturation.wide_head_numbers(512, [True, False, False, False])


def test_spread_numbers(spread):
    values = saturation.spread_numbers(spread).glue_values()
    assert values == {
        "spread_n_keys": 16,
        "spread_at_1": pytest.approx(0.3050, abs=1e-4),
        "spread_at_8": pytest.approx(0.1744, abs=1e-4),
        "spread_peak": pytest.approx(0.3369, abs=1e-4),
        "spread_peak_at": 2.0,
        "spread_at_0": pytest.approx(0.2421, abs=1e-4),
    }


def test_spread_check_fails_when_the_curve_is_monotone(spread):
    # Planted fault: a curve that only falls, as a naive argument would expect.
    falling = np.sort(spread.jacobian_norm)[::-1]
    with pytest.raises(PageCheckError, match="with all scores equal the norm is lower than at spread 1"):
        saturation.spread_numbers(dataclasses.replace(spread, jacobian_norm=falling))


def test_spread_numbers_needs_the_quoted_spreads(spread):
    with pytest.raises(ValueError, match="spread must include the spreads 0, 1 and 8"):
        saturation.spread_numbers(dataclasses.replace(spread, d_k=spread.d_k + 0.1))
