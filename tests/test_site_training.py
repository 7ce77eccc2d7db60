"""Page support of docs/training.md: the gradient check, the first losses, the final table, the tuned rates."""

import dataclasses
import math

import numpy as np
import pytest
from scipy.special import logsumexp

from attention_scaling.site import figures, glue_fields, plots, training as page
from attention_scaling.site.checks import PageCheckError
from attention_scaling.retrieval import gradient_check, init_params, retrieval_batch
from attention_scaling.training import ablation, training_curves_data
from figure_checks import assert_labelled_axes
from se_checks import agree


@pytest.fixture(scope="module")
def curves():
    """The page's ablation (a few seconds), computed once."""
    return training_curves_data()


def test_gradient_numbers_of_the_page_cell():
    rng = np.random.default_rng(0)
    params = init_params(rng, d_model=32, d_k=16)
    batch = retrieval_batch(rng, batch=8, n=16, d_model=32, noise=0.5)
    checked = page.gradient_numbers(gradient_check(params, batch, scale=1 / np.sqrt(16)))
    assert checked.error < 1e-8


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


def first_loss_reference(d_k, scales, *, draws=200, batch=64, n=16, d_model=32, noise=0.5, seed=2024):
    """Mean and standard deviation of the first loss of a run at each scale, over independent starts and first batches.

    Written out here, not with the package's training code: the head starts with
    W_Q, W_K of N(0, 1/d_model) entries; each query is its target key plus noise.
    """
    rng = np.random.default_rng([seed, d_k])
    w_q, w_k = rng.standard_normal((2, draws, d_model, d_k)) / math.sqrt(d_model)
    keys = rng.standard_normal((draws, batch, n, d_model))
    targets = rng.integers(0, n, size=(draws, batch))
    picked = np.take_along_axis(keys, targets[:, :, None, None], axis=2)[:, :, 0]
    queries = picked + noise * rng.standard_normal((draws, batch, d_model))
    # (x_j W_K) . (x W_Q) = x_j . (x W_Q W_K^T): no (batch, n, d_k) array.
    pulled = queries @ (w_q @ np.swapaxes(w_k, 1, 2))
    raw = (keys @ pulled[..., None])[..., 0]
    raw_target = np.take_along_axis(raw, targets[:, :, None], axis=2)[:, :, 0]
    result = []
    for scale in scales:
        losses = (logsumexp(scale * raw, axis=-1) - scale * raw_target).mean(axis=-1)
        result.append((losses.mean(), losses.std(ddof=1)))
    return result


def test_curve_numbers(curves):
    values = glue_fields(page.curve_numbers(curves), "training")
    # A run's first loss is one draw of the loss at the start on one batch: it must lie within
    # 5 standard deviations of that draw (se_checks.Z) of the mean over 200 independent draws.
    for d_k in (16, 64, 256):
        references = first_loss_reference(d_k, (1.0, 1 / math.sqrt(d_k)))
        for policy, (mean, sd) in zip(("none", "sqrt"), references):
            agree(values[f"training_start_loss_{policy}_{d_k}"], sd, mean, sd / math.sqrt(200))
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
    assert lines[:2] == ["| $d_k$ | policy | scale | loss | accuracy | entropy | diverged |",
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


# -- A learning rate for each scale ----------------------------------------------------


@pytest.fixture(scope="module")
def site_tunings():
    """The page's two learning-rate tunings (several seconds), computed once for this file's tests."""
    from attention_scaling.tuning import tuned_learning_rates_data

    return tuned_learning_rates_data()


def test_tuned_numbers_of_the_page(site_tunings):
    values = glue_fields(page.tuned_numbers(*site_tunings), "training_tuned")
    selected = {(opt, variant): [values[f"training_tuned_{opt}_{variant}_{d_k}_lr"] for d_k in (16, 64, 256)]
                for opt in ("adam", "sgd") for variant in ("none", "sqrt", "linear", "t5")}
    root = 10**0.5
    assert selected["adam", "none"] == pytest.approx([1e-2, 1e-2, 1e-2 / root])
    assert selected["adam", "sqrt"] == pytest.approx([1e-2 * root, 1e-2 * root, 1e-2])
    assert selected["adam", "linear"] == pytest.approx([1e-2 * root] * 3)
    assert selected["adam", "t5"] == pytest.approx([1e-2, 1e-2 / root, 1e-3])
    assert selected["sgd", "none"] == [0.1, 0.1, 0.1] and selected["sgd", "sqrt"] == [1.0, 1.0, 1.0]
    assert selected["sgd", "linear"] == [1.0, 10.0, 100.0] and selected["sgd", "t5"] == [0.1, 0.1, 0.01]
    assert values["training_tuned_folding_gap"] == 0.0   # 1/sqrt(d_k) is a power of two at 16, 64, 256
    assert values["training_tuned_adam_ratio_16"] == pytest.approx(1 / root)
    assert values["training_tuned_sgd_ratio_256"] == pytest.approx(0.1)
    assert values["training_tuned_sgd_predicted_64"] == 1 / 64 and values["training_tuned_adam_predicted_64"] == 1 / 8
    assert values["training_tuned_adam_shared_spread_256"] > 2 * values["training_tuned_adam_tuned_spread_256"]
    lo, mean, hi = (values[f"training_tuned_adam_none_256_loss{end}"] for end in ("_lo", "", "_hi"))
    assert lo <= mean <= hi
    assert (values["training_tuned_steps"], values["training_tuned_batch"], values["training_tuned_window"]) == (80, 16, 20)
    assert (values["training_tuned_n_tuning_seeds"], values["training_tuned_n_eval_seeds"]) == (2, 10)


def test_a_wrong_folding_is_caught_by_the_page(site_tunings, monkeypatch):
    # Planted fault: T5's W_Q folded to std (d_model d_k)^(-1) instead of (d_model d_k)^(-1/2).
    from attention_scaling import training

    monkeypatch.setattr(training, "_fold", lambda w_q, c: w_q * c**2 / math.sqrt(w_q.shape[0]))
    with pytest.raises(PageCheckError, match="training-tuned: check failed: T5's folded head computes"):
        page.tuned_numbers(*site_tunings)


def edited(tuning, **changes):
    """A copy of a tuning with some (variant, d_k) entries of its dicts replaced."""
    fields = {name: {**getattr(tuning, name), **entries} for name, entries in changes.items()}
    return dataclasses.replace(tuning, **fields)


@pytest.mark.parametrize(
    "row, changes, match",
    [
        # A selected rate at the end of the grid: the prose says none is.
        (0, {"best": {("sqrt", 64): 0}}, "every selected adam rate is inside its grid"),
        # T5 tuned to the rate of 1/sqrt(d_k).
        (1, {"best": {("t5", 64): 3}}, "T5's selected rate is below that of 1/sqrt"),
        # Tuned runs as far apart as at the shared rate.
        (0, {"eval_loss": {("none", 16): np.full(10, 100.0)}}, "closer tuned than at the shared rate"),
        # Another ratio of the rates of none and sqrt at one d_k.
        (1, {"best": {("none", 64): 1}}, "by the same ratio at every d_k"),
    ],
)
def test_tuned_checks_catch_planted_faults(site_tunings, row, changes, match):
    tunings = list(site_tunings)
    tunings[row] = edited(tunings[row], **changes)
    with pytest.raises(PageCheckError, match=match):
        page.tuned_numbers(*tunings)


def test_tuned_numbers_refuse_other_input(site_tunings):
    adam, sgd = site_tunings
    with pytest.raises(ValueError, match="the adam tuning must use adam"):
        page.tuned_numbers(sgd, sgd)
    with pytest.raises(TypeError, match="the sgd tuning must be a LearningRateTuning; got dict"):
        page.tuned_numbers(adam, {})
    with pytest.raises(ValueError, match="must share"):
        page.tuned_numbers(adam, dataclasses.replace(sgd, steps=79))


def test_tuning_table_has_a_row_per_d_k_and_variant(site_tunings):
    lines = page.tuning_table(*site_tunings).splitlines()
    assert len(lines) == 2 + 12
    assert lines[2].startswith("| 16 | no scaling | 0.01 | ") and "| 0.1 | " in lines[2]
    assert lines[-1].startswith(r"| 256 | T5: $1/\sqrt{d_k}$ folded into $W_Q$ | 0.001 | ")


def test_tuned_figure_draws_a_curve_a_ring_and_a_bar_per_variant(site_tunings):
    figure, axes = figures.new_figure("tuned-learning-rates")
    artists = plots.draw_tuned_learning_rates(axes, site_tunings)
    assert len(artists) == 2 * 3 * 4 * 3 + 1
    assert [ax.get_xscale() for ax in axes.ravel()] == ["log"] * 6
    assert axes[1, 0].get_ylabel() == "SGD: final loss (nats)" and axes[0, 2].get_title() == "Adam, $d_k = 256$"
    # Scores above 10 nats (SGD far above its stable rate) are left out.
    curve = axes[1, 2].get_lines()[0]
    assert np.nanmax(curve.get_ydata()) <= 10


def test_the_tuned_figure_has_labelled_axes(site_tunings):
    # Here rather than in test_site_figures.py: this file computes the tuning.
    assert_labelled_axes(figures.make_figure("tuned-learning-rates", site_tunings), "tuned-learning-rates")


def test_tuned_figure_refuses_the_wrong_grid_or_data(site_tunings):
    with pytest.raises(ValueError, match="2 x 3 grid"):
        plots.draw_tuned_learning_rates(figures.new_figure("training-curves")[1][:, :2], site_tunings)
    with pytest.raises(TypeError, match="sequence of LearningRateTuning"):
        plots.draw_tuned_learning_rates(figures.new_figure("tuned-learning-rates")[1], site_tunings[0])


# -- The ranking of the tuned variants (issue 53, item 12) ----------------------------------------


def test_a_comparison_is_ranked_exactly_when_every_seed_falls_on_one_side(site_tunings):
    # With 10 seeds and 18 comparisons, Bonferroni at 0.05 needs p < 0.0028: only 10 of 10 (p = 0.002) passes.
    adam, sgd = site_tunings
    rows = page.ranking_table(adam, sgd).splitlines()[2:]
    assert len(rows) == 9
    verdicts = []
    order = [(d_k, variant) for d_k in (16, 64, 256) for variant in ("sqrt", "linear", "t5")]  # the table's rows
    for row, (d_k, variant) in zip(rows, order):
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert int(cells[0]) == d_k
        for tuning, (count, verdict) in ((adam, (cells[2], cells[4])), (sgd, (cells[5], cells[7]))):
            difference = tuning.eval_loss["none", d_k] - tuning.eval_loss[variant, d_k]
            higher = int(np.sum(difference > 0))
            assert count == f"{higher} of 10"
            assert verdict == {10: "higher", 0: "lower"}.get(higher, "not ranked"), (tuning.optimizer, d_k, variant)
            verdicts.append(verdict)
    values = glue_fields(page.tuned_numbers(adam, sgd), "training_tuned")
    assert (values["training_tuned_ranked_higher"], values["training_tuned_ranked_lower"],
            values["training_tuned_unranked"]) == tuple(verdicts.count(v) for v in ("higher", "lower", "not ranked"))
    assert values["training_tuned_n_comparisons"] == 18
    assert values["training_tuned_family_p"] == pytest.approx(18 * 2 / 2**10)


def test_three_seeds_could_not_rank_anything_and_the_page_says_so(site_tunings):
    # Planted fault: the old three evaluation seeds. All three on one side has p = 0.25: the page refuses to rank.
    three = [dataclasses.replace(t, eval_seeds=t.eval_seeds[:3], eval_loss={k: v[:3] for k, v in t.eval_loss.items()})
             for t in site_tunings]
    with pytest.raises(PageCheckError, match="every seed on one side is enough to rank a comparison"):
        page.tuned_numbers(*three)
    assert "higher" not in page.ranking_table(*three).replace("seeds higher", "")
