"""Page support of docs/scaling.md: the numeric check of both scales."""

import numpy as np
import pytest

from attention_scaling import attention_scores, softmax
from attention_scaling.simulate import Estimate, dot_product_samples, variance_estimate
from attention_scaling.site import scaling as page
from attention_scaling.site.checks import PageCheckError


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


def test_numeric_check(cell):
    values = page.numeric_check(*cell, d_k=256, n_samples=100_000, n_keys=8).glue_values()
    assert values == {
        "check_d_k": 256,
        "check_n": 100_000,
        "sqrt_variance": pytest.approx(1.0046, abs=1e-4),
        "sqrt_se": pytest.approx(0.00452, abs=1e-5),
        "linear_variance": pytest.approx(0.003924, abs=1e-6),
        "linear_se": pytest.approx(1.764e-05, abs=1e-8),
        "linear_target": 1 / 256,
        "flat_n_keys": 8,
        "flat_max": pytest.approx(0.1363, abs=1e-4),
        "flat_max_se": pytest.approx(9.03e-05, abs=1e-7),
        "flat_uniform": 0.125,
    }


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
