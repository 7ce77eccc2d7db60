"""Page support of docs/training.md: the gradient check, the first losses, and the final table."""

import dataclasses
import math

import numpy as np
import pytest

from attention_scaling.site import training as page
from attention_scaling.site.checks import PageCheckError
from attention_scaling.retrieval import gradient_check, init_params, retrieval_batch
from attention_scaling.training import ablation, training_curves_data


@pytest.fixture(scope="module")
def curves():
    """The page's ablation (a few seconds), computed once."""
    return training_curves_data()


def test_gradient_numbers_of_the_page_cell():
    rng = np.random.default_rng(0)
    params = init_params(rng, d_model=32, d_k=16)
    batch = retrieval_batch(rng, batch=8, n=16, d_model=32, noise=0.5)
    checked = page.gradient_numbers(gradient_check(params, batch, scale=1 / np.sqrt(16)))
    assert checked.error < 1e-8 and checked.glue_values() == {"training_gradient_error": checked.error}


def test_gradient_numbers_fail_for_a_wrong_gradient():
    rng = np.random.default_rng(0)
    params = init_params(rng, d_model=6, d_k=4)
    batch = retrieval_batch(rng, batch=4, n=5, d_model=6, noise=0.5)
    # Planted fault: gradients of the wrong sign.
    from attention_scaling.retrieval import loss_and_grads

    _, grads = loss_and_grads(params, batch, 0.5)
    error = gradient_check(params, batch, 0.5, grads={name: -g for name, g in grads.items()})
    with pytest.raises(PageCheckError, match="training.md, section training-task: check failed: the hand-written gradient agrees"):
        page.gradient_numbers(error)


def test_curve_numbers(curves):
    values = page.curve_numbers(curves).glue_values()
    expected_start = {("none", 16): 6.009, ("none", 64): 13.606, ("none", 256): 32.836,
                      ("sqrt", 16): 2.904, ("sqrt", 64): 3.173, ("sqrt", 256): 3.512}
    for (policy, d_k), loss in expected_start.items():
        assert values[f"training_{policy}_{d_k}_start"] == pytest.approx(loss, abs=1e-3)
    assert values["training_uniform_loss"] == math.log(16)
    assert (values["training_steps"], values["training_lr"]) == (200, 0.01)
    assert len(values) == 9 + 3


def test_curve_check_fails_when_unscaled_runs_start_below_uniform(curves):
    # Planted fault: the unscaled runs replaced by the runs divided by d_k, which start near uniform.
    runs = {(d_k, policy): curves.runs[d_k, "linear" if policy == "none" else policy] for d_k, policy in curves.runs}
    with pytest.raises(PageCheckError, match="without scaling the first loss (grows with d_k|is above)"):
        page.curve_numbers(dataclasses.replace(curves, runs=runs))


def test_ablation_table_renders_every_run_in_order(curves):
    table = page.ablation_table(curves.runs)
    lines = table.splitlines()
    assert lines[:2] == ["| d_k | policy | scale | loss | accuracy | entropy | diverged |",
                         "|---:|:---|---:|---:|---:|---:|:---|"]
    assert lines[2].startswith("| 16 | none | 1 | ") and lines[3].startswith("| 16 | sqrt | 0.25 | ")
    assert len(lines) == 2 + 9 and all(line.endswith("| - |") for line in lines[2:])


def test_tiny_ablation_tabulates_with_a_window():
    results = ablation((2, 4), ("none", "sqrt"), steps=3, batch=2, n=3, d_model=4)
    assert len(page.ablation_table(results, window=2).splitlines()) == 2 + 4


def test_ablation_table_shows_divergence():
    results = ablation((2,), ("sqrt",), steps=3, batch=2, n=3, d_model=4)
    record = dataclasses.replace(results[2, "sqrt"], diverged_at=1)
    assert page.ablation_table({(2, "sqrt"): record}).splitlines()[-1].endswith("| step 1 |")


def test_ablation_table_refuses_other_input():
    with pytest.raises(TypeError, match="results must be the dict returned by ablation; got list"):
        page.ablation_table([1, 2])
    with pytest.raises(ValueError, match="window"):
        page.ablation_table({}, window=0)
