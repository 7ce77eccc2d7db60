"""The logit-update measurement of attention_scaling.folding and its page support."""

import numpy as np
import pytest

import attention_scaling.folding as folding
from attention_scaling.folding import logit_updates
from attention_scaling.retrieval import forward, init_params, retrieval_batch
from attention_scaling.site.checks import PageCheckError
from attention_scaling.site.folding import folding_section

SMALL = dict(n_seeds=3, d_model=8, batch=4, n=4)


def test_seeded_and_reproducible():
    first, second = logit_updates((4, 16), **SMALL), logit_updates((4, 16), **SMALL)
    other = logit_updates((4, 16), **SMALL, seed=1)
    for key in first.scaled_over_folded:
        np.testing.assert_array_equal(first.scaled_over_folded[key], second.scaled_over_folded[key])
        np.testing.assert_array_equal(first.unscaled_over_folded[key], second.unscaled_over_folded[key])
    assert not np.array_equal(first.scaled_over_folded["sgd", "both"], other.scaled_over_folded["sgd", "both"])


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(d_ks=()), ValueError),
        (dict(d_ks=16), ValueError),
        (dict(d_ks=(0,)), ValueError),
        (dict(n=1), ValueError),
        (dict(lr=-1.0), ValueError),
        (dict(lr=float("nan")), ValueError),
        (dict(n_seeds=1.5), TypeError),
    ],
)
def test_validation(kwargs, error):
    with pytest.raises(error):
        logit_updates(**{"d_ks": (4,), **SMALL, **kwargs})


def test_sgd_ratio_is_c_squared_and_adam_ratio_c():
    result = logit_updates((4, 16, 64), **SMALL)
    c = 1 / np.sqrt([4, 16, 64])
    np.testing.assert_allclose(result.scaled_over_folded["sgd", "W_Q"], np.repeat(c[:, None] ** 2, 3, 1), rtol=1e-9)
    np.testing.assert_allclose(result.scaled_over_folded["adam", "W_Q"], np.repeat(c[:, None], 3, 1), rtol=1e-4)
    np.testing.assert_allclose(result.scaled_over_folded["sgd", "W_K"], 1, rtol=1e-9)
    np.testing.assert_allclose(result.prediction("sgd", "W_Q"), c**2)
    assert result.prediction("sgd", "both") is None


def test_folded_forward_pass_is_the_scaled_one_and_a_wrong_fold_is_not():
    rng = np.random.default_rng(3)
    batch = retrieval_batch(rng, 4, 5, 8, 0.5)
    params = init_params(rng, 8, 16)
    scaled = forward(params, batch, 0.25)[1]["scores"]
    folded = forward({"W_Q": params["W_Q"] / 4, "W_K": params["W_K"]}, batch, 1.0)[1]["scores"]
    wrong = forward({"W_Q": params["W_Q"] / 16, "W_K": params["W_K"]}, batch, 1.0)[1]["scores"]  # std (d_model d_k)^-1
    np.testing.assert_allclose(folded, scaled, rtol=1e-12)
    assert not np.allclose(wrong, scaled)


def test_page_checks_catch_a_head_that_forgets_c_in_the_query_gradient(monkeypatch):
    folding_section(d_ks=(4, 16), n_seeds=2)  # the honest head passes
    original = folding.loss_and_grads

    def forgetful(params, batch, scale):
        loss, grads = original(params, batch, scale)
        return loss, {"W_Q": grads["W_Q"] / scale, "W_K": grads["W_K"]}

    monkeypatch.setattr(folding, "loss_and_grads", forgetful)
    with pytest.raises(PageCheckError, match="initialisation-folding"):
        folding_section(d_ks=(4, 16), n_seeds=2)
