"""Page support of docs/scaling.md: the numeric check of both scales."""

import numpy as np
import pytest

from attention_scaling import attention_scores, softmax
from attention_scaling.simulate import Estimate, dot_product_samples, variance_estimate
from attention_scaling.site import glue_fields, scaling as page
from attention_scaling.site.checks import PageCheckError
from se_checks import SE_REL, agree, dot_variance_se, mean_and_se, within


def page_cell(d_k=256, n_samples=100_000, n_keys=8):
    """What the page's visible cell computes."""
    samples = dot_product_samples(d_k, n_samples, seed=5)
    by_sqrt = variance_estimate(samples / np.sqrt(d_k))
    by_d_k = variance_estimate(samples / d_k)
    rng = np.random.default_rng(seed=7)
    q = rng.standard_normal((2000, 1, d_k))
    k = rng.standard_normal((2000, n_keys, d_k))
    largest = softmax(attention_scores(q, k, scale=1 / d_k)).max(axis=-1)
    return by_sqrt, by_d_k, largest


@pytest.fixture(scope="module")
def cell():
    return page_cell()


def largest_weight_reference(d_k, n_keys, scale, n_rows=100_000, seed=2024):
    """The mean largest weight, drawn another way: given q, the scores q.k_j are independent N(0, |q|^2)."""
    rng = np.random.default_rng(seed)
    norm = np.sqrt(rng.chisquare(d_k, (n_rows, 1)))
    logits = scale * norm * rng.standard_normal((n_rows, n_keys))
    weights = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return mean_and_se(1 / weights.sum(axis=-1))


def test_numeric_check(cell):
    d_k, n, n_keys = 256, 100_000, 8
    values = glue_fields(page.numeric_check(*cell, d_k=d_k, n_samples=n, n_keys=n_keys), "check")
    # Each seeded estimate against its true value within 5 SE (se_checks.Z), the SE the
    # code reports; and that SE against the one theory gives for n draws (se_checks.SE_REL).
    se_sqrt, se_linear = dot_variance_se(d_k, n) / d_k, dot_variance_se(d_k, n) / d_k**2
    flat_max, flat_max_se = values.pop("check_flat_max_value"), values.pop("check_flat_max_standard_error")
    assert values == {
        "check_d_k": d_k,
        "check_n_samples": n,
        "check_by_sqrt_value": within(1.0, values["check_by_sqrt_standard_error"]),
        "check_by_sqrt_standard_error": pytest.approx(se_sqrt, rel=SE_REL),
        "check_by_d_k_value": within(1 / d_k, values["check_by_d_k_standard_error"]),
        "check_by_d_k_standard_error": pytest.approx(se_linear, rel=SE_REL),
        "check_by_d_k_proved": 1 / d_k,
        "check_n_keys": n_keys,
        "check_uniform_weight": 1 / n_keys,
    }
    # The mean largest weight has no closed form: an independent, larger computation.
    reference, reference_se = largest_weight_reference(d_k, n_keys, 1 / d_k)
    agree(flat_max, flat_max_se, reference, reference_se)
    # 2000 queries against the reference's 100 000 rows.
    assert flat_max_se == pytest.approx(reference_se * np.sqrt(100_000 / 2000), rel=SE_REL)


def test_numeric_check_fails_when_the_scaled_variance_is_not_1(cell):
    _, by_d_k, largest = cell
    with pytest.raises(PageCheckError, match="divided by sqrt\\(d_k\\), the scores' variance is 1"):
        page.numeric_check(Estimate(1.1, 0.01), by_d_k, largest, d_k=256, n_samples=100_000, n_keys=8)


def test_numeric_check_fails_when_the_linear_scale_is_off(cell):
    by_sqrt, _, largest = cell
    with pytest.raises(PageCheckError, match="divided by d_k, the scores' variance is 1/d_k"):
        page.numeric_check(by_sqrt, Estimate(1 / 128, 1e-5), largest, d_k=256, n_samples=100_000, n_keys=8)


def test_numeric_check_fails_when_attention_is_not_flat(cell):
    # Planted fault: the largest weights of scores divided by sqrt(d_k) instead of d_k.
    by_sqrt, by_d_k, _ = cell
    rng = np.random.default_rng(seed=7)
    q, k = rng.standard_normal((200, 1, 256)), rng.standard_normal((200, 8, 256))
    peaked = softmax(attention_scores(q, k, scale=1 / 16)).max(axis=-1)
    with pytest.raises(PageCheckError, match="the largest weight is barely above uniform"):
        page.numeric_check(by_sqrt, by_d_k, peaked, d_k=256, n_samples=100_000, n_keys=8)
