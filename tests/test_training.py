"""Training ablation: the hand-written gradient, the optimisers, seeding, records, bad input."""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from attention_scaling import attention_scores, log_softmax
from attention_scaling.simulate import scale_for
from attention_scaling.retrieval import (
    RetrievalBatch,
    backward,
    forward,
    gradient_check,
    init_params,
    loss_and_grads,
    numerical_gradients,
    retrieval_batch,
)
from attention_scaling.training import TrainingCurves, TrainingRecord, ablation, train, training_curves_data
from attention_scaling.tuning import (
    ADAM_LEARNING_RATES,
    SGD_LEARNING_RATES,
    VARIANTS,
    folding_gap,
    select_learning_rate,
    tune_learning_rates,
    tuned_learning_rates_data,
)

POLICIES = ("none", "sqrt", "linear")

# A correct gradient agrees with central differences (h = 1e-6, float64) to
# about 1e-9 relative; a wrong one is off by order one. The tolerance sits
# between, well away from both.
TOLERANCE = 1e-6
# ...unless the whole gradient is tiny (two nearly equal keys give one): the
# central difference itself then carries a rounding error of about
# eps * loss / h, some 1e-10 at these losses, which is not small relative to
# it. Below this absolute floor a difference says nothing about the gradient.
ROUNDING_FLOOR = 1e-8


def problem(seed, *, batch=4, n=5, d_model=4, d_k=3, noise=0.5, spread=1.0):
    """A small random problem: a batch and parameters, multiplied by ``spread``."""
    rng = np.random.default_rng(seed)
    data = retrieval_batch(rng, batch, n, d_model, noise)
    params = {name: spread * w for name, w in init_params(rng, d_model, d_k).items()}
    return params, data


# -- The forward pass ------------------------------------------------------------------


@pytest.mark.parametrize("policy", POLICIES)
def test_forward_matches_an_independent_computation(policy):
    # Project the keys explicitly and score them with the package's
    # attention_scores: a different route to the same loss.
    params, data = problem(0, batch=6, n=7, d_model=5, d_k=4)
    scale = scale_for(policy, 4)
    q = data.queries @ params["W_Q"]
    k = data.keys @ params["W_K"]
    scores = attention_scores(q[:, None, :], k, scale=scale)[:, 0, :]
    expected = -np.mean(log_softmax(scores)[np.arange(6), data.targets])
    loss, cache = forward(params, data, scale)
    assert loss == pytest.approx(expected, rel=1e-12)
    np.testing.assert_allclose(cache["scores"], scores, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(cache["weights"].sum(axis=1), 1.0, rtol=1e-14)


def test_zero_weights_give_log_n():
    _, data = problem(1, n=9)
    zero = {"W_Q": np.zeros((4, 3)), "W_K": np.zeros((4, 3))}
    assert forward(zero, data, 1.0)[0] == pytest.approx(math.log(9), rel=1e-15)


def test_saturated_wrong_answer_has_a_finite_loss():
    # p_target underflows to 0 in float64, yet log_softmax keeps the loss exact.
    params, data = problem(2, d_k=3, spread=30.0)
    loss, cache = forward(params, data, 1.0)
    assert np.isfinite(loss) and loss > 50
    assert np.any(cache["weights"][np.arange(4), data.targets] == 0.0)


# -- The backward pass against finite differences -------------------------------------


@pytest.mark.parametrize("policy", POLICIES)
@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    batch=st.integers(1, 5),
    n=st.integers(2, 6),
    d_model=st.integers(1, 5),
    d_k=st.integers(1, 5),
    noise=st.floats(0.0, 2.0),
    spread=st.floats(0.2, 2.0),
)
# Found by Hypothesis: keys 2e-4 apart, a gradient of 5e-5, central differences
# off by 6e-11 (1.03e-6 of the gradient): rounding in the check, not an error.
@example(seed=14309913, batch=1, n=2, d_model=1, d_k=1, noise=0.0, spread=0.5)
def test_backward_matches_finite_differences(policy, seed, batch, n, d_model, d_k, noise, spread):
    params, data = problem(seed, batch=batch, n=n, d_model=d_model, d_k=d_k, noise=noise, spread=spread)
    scale = scale_for(policy, d_k)
    numeric = numerical_gradients(params, data, scale)
    _, grads = loss_and_grads(params, data, scale)
    for name, gradient in grads.items():
        error = np.max(np.abs(gradient - numeric[name]))
        assert error <= TOLERANCE * np.max(np.abs(numeric[name])) + ROUNDING_FLOOR, (name, error)


@pytest.mark.parametrize("policy", POLICIES)
def test_backward_matches_finite_differences_entrywise(policy):
    params, data = problem(3, d_k=4)
    scale = scale_for(policy, 4)
    numeric = numerical_gradients(params, data, scale)
    _, cache = forward(params, data, scale)
    exact = backward(params, cache)
    for name in ("W_Q", "W_K"):
        np.testing.assert_allclose(exact[name], numeric[name], rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("policy", ["sqrt", "linear"])
def test_check_detects_a_dropped_scale_factor(policy):
    # The true gradient carries the factor c; a backward pass that forgot it
    # returns grads / c. (Under "none", c = 1 and the mistake is invisible,
    # so only the two policies with c < 1 can expose it.)
    d_k = 4
    scale = scale_for(policy, d_k)
    params, data = problem(4, d_k=d_k)
    correct = loss_and_grads(params, data, scale)[1]
    without_scale = {name: g / scale for name, g in correct.items()}
    assert gradient_check(params, data, scale, grads=correct) < TOLERANCE
    assert gradient_check(params, data, scale, grads=without_scale) > 0.5


@pytest.mark.parametrize(
    "mistake",
    [
        pytest.param(lambda g: {"W_Q": g["W_K"], "W_K": g["W_Q"]}, id="swapped"),
        pytest.param(lambda g: {name: -v for name, v in g.items()}, id="sign"),
        pytest.param(lambda g: {name: v * 4 for name, v in g.items()}, id="batch-sum-not-mean"),
        pytest.param(lambda g: {"W_Q": g["W_Q"], "W_K": np.zeros_like(g["W_K"])}, id="missing-W_K"),
    ],
)
@pytest.mark.parametrize("policy", POLICIES)
def test_check_detects_planted_mistakes(mistake, policy):
    params, data = problem(5, batch=4, d_model=3, d_k=3)
    scale = scale_for(policy, 3)
    wrong = mistake(loss_and_grads(params, data, scale)[1])
    assert gradient_check(params, data, scale, grads=wrong) > 0.1


def test_check_resolves_a_small_error_in_one_entry():
    # An error of 1e-4 (relative to the largest entry) in one entry is far
    # below what a plot would show, yet the check measures it, and it is 100
    # times the tolerance.
    params, data = problem(6)
    grads = {name: g.copy() for name, g in loss_and_grads(params, data, 1.0)[1].items()}
    largest = max(np.abs(g).max() for g in grads.values())
    grads["W_K"][1, 2] += 1e-4 * largest
    assert gradient_check(params, data, 1.0, grads=grads) == pytest.approx(1e-4, rel=1e-3)


def test_gradient_is_proportional_to_scale_at_uniform_attention():
    # With W_K = 0 every score is 0 whatever c is, so p is uniform and the
    # gradient is exactly linear in c.
    params, data = problem(7)
    params["W_K"] = np.zeros_like(params["W_K"])
    g1 = loss_and_grads(params, data, 1.0)[1]
    g8 = loss_and_grads(params, data, 0.125)[1]
    for name in g1:
        np.testing.assert_allclose(g8[name], g1[name] / 8, rtol=1e-14, atol=1e-300)


# -- Optimisers and training -----------------------------------------------------------


def first_step(optimizer, *, seed=3, d_k=6, lr=0.01):
    """The record of a one-step run and the gradient at its start, recomputed."""
    config = dict(batch=8, n=4, d_model=5, noise=0.5)
    record = train(d_k, "sqrt", steps=1, lr=lr, seed=seed, optimizer=optimizer, **config)
    # The documented seeding: data from default_rng([seed, 0]), weights from default_rng([seed, 1]).
    data_rng = np.random.default_rng([seed, 0])
    data = retrieval_batch(data_rng, config["batch"], config["n"], config["d_model"], config["noise"])
    start = init_params(np.random.default_rng([seed, 1]), config["d_model"], d_k)
    loss, grads = loss_and_grads(start, data, 1 / math.sqrt(d_k))
    return record, start, loss, grads


def test_first_sgd_step_is_minus_lr_times_gradient():
    record, start, loss, grads = first_step("sgd", lr=0.3)
    assert record.loss[0] == loss
    for name in grads:
        np.testing.assert_allclose(record.params[name], start[name] - 0.3 * grads[name], rtol=1e-14)


def test_first_adam_step_moves_every_weight_by_lr():
    # After one step Adam's bias-corrected update is lr g / (|g| + eps): lr
    # times the sign of the gradient, short by lr eps / |g| at most.
    lr, eps = 0.01, 1e-8
    record, start, _, grads = first_step("adam", lr=lr)
    for name, g in grads.items():
        shortfall = np.abs(record.params[name] - (start[name] - lr * np.sign(g)))
        assert np.all(shortfall <= lr * eps / np.abs(g) * (1 + 1e-6) + 1e-15)
        assert np.all(np.abs(record.params[name] - start[name]) <= lr)


def test_loss_decreases_for_sqrt_at_d_k_16():
    record = train(16, "sqrt", seed=0)
    first, last = record.loss[:10].mean(), record.loss[-10:].mean()
    assert last < 0.5 * first
    assert record.accuracy[-10:].mean() > record.accuracy[:10].mean()


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_records_have_the_documented_shapes_and_ranges(optimizer):
    n, batch, steps = 6, 10, 12
    record = train(8, "linear", steps=steps, batch=batch, n=n, d_model=4, optimizer=optimizer, seed=2)
    assert isinstance(record, TrainingRecord)
    assert (record.d_k, record.policy, record.scale) == (8, "linear", 1 / 8)
    assert (record.optimizer, record.seed) == (optimizer, 2)
    assert record.steps == steps
    for curve in (record.loss, record.entropy, record.accuracy):
        assert curve.shape == (steps,) and curve.dtype == np.float64
        assert np.all(np.isfinite(curve))
    assert np.all(record.loss > 0)
    assert np.all((record.entropy >= 0) & (record.entropy <= math.log(n) + 1e-12))
    # Accuracy on a batch of 10 is a whole number of tenths.
    np.testing.assert_allclose(record.accuracy * batch, np.round(record.accuracy * batch), atol=1e-12)
    assert record.params["W_Q"].shape == record.params["W_K"].shape == (4, 8)
    assert record.diverged_at is None
    assert set(record.final(3)) == {"loss", "entropy", "accuracy"}


def test_records_are_read_only():
    record = train(4, "sqrt", steps=2, batch=2)
    with pytest.raises(ValueError):
        record.loss[0] = 0.0
    with pytest.raises(ValueError):
        record.params["W_Q"][0, 0] = 0.0
    with pytest.raises(AttributeError):
        record.lr = 1.0


def test_callable_policy():
    def half(d_k):
        return 0.5

    record = train(4, half, steps=3, batch=2)
    assert (record.policy, record.scale) == ("half", 0.5)


def test_overflowing_scores_stop_the_run_and_leave_nan():
    record = train(8, lambda d_k: 1e308, steps=5, batch=4)
    assert record.diverged_at == 0
    assert np.all(np.isnan(record.loss)) and np.all(np.isnan(record.accuracy))
    params, data = problem(8)
    with pytest.raises(FloatingPointError, match="overflowed"):
        forward(params, data, 1e308)


# -- Determinism -----------------------------------------------------------------------


def test_retrieval_batch_is_seeded_and_shaped():
    a = retrieval_batch(np.random.default_rng(9), 3, 5, 7, 0.25)
    b = retrieval_batch(np.random.default_rng(9), 3, 5, 7, 0.25)
    assert isinstance(a, RetrievalBatch)
    assert a.queries.shape == (3, 7) and a.keys.shape == (3, 5, 7) and a.targets.shape == (3,)
    assert a.queries.dtype == a.keys.dtype == np.float64
    assert np.all((a.targets >= 0) & (a.targets < 5))
    for x, y in zip(a, b):
        assert np.array_equal(x, y)


def test_queries_have_unit_variance_components():
    queries = retrieval_batch(np.random.default_rng(10), 4000, 2, 8, 1.5).queries
    assert queries.var() == pytest.approx(1.0, abs=0.05)


def test_training_is_deterministic_and_depends_on_the_seed():
    a = train(16, "sqrt", steps=30, seed=4)
    b = train(16, "sqrt", steps=30, seed=4)
    c = train(16, "sqrt", steps=30, seed=5)
    for field in ("loss", "entropy", "accuracy"):
        assert np.array_equal(getattr(a, field), getattr(b, field))
    for name in ("W_Q", "W_K"):
        assert np.array_equal(a.params[name], b.params[name])
    assert not np.array_equal(a.loss, c.loss)


def test_ablation_shares_data_and_initial_weights():
    results = ablation((4, 8), POLICIES, steps=4, batch=16, n=5, d_model=6, seed=1)
    again = ablation((4, 8), POLICIES, steps=4, batch=16, n=5, d_model=6, seed=1)
    for key, record in results.items():
        assert np.array_equal(record.loss, again[key].loss)
    for d_k in (4, 8):
        # The first accuracy depends only on the initial weights and the first
        # batch (argmax ignores the positive scale), so it is the same for
        # every policy at one d_k.
        first = {results[d_k, p].accuracy[0] for p in POLICIES}
        assert len(first) == 1
        # An ablation run is the same as a single run with the same arguments.
        alone = train(d_k, "linear", steps=4, batch=16, n=5, d_model=6, seed=1)
        assert np.array_equal(alone.loss, results[d_k, "linear"].loss)


def test_tiny_ablation_runs():
    results = ablation((2, 4), ("none", "sqrt"), steps=3, batch=2, n=3, d_model=4)
    assert list(results) == [(2, "none"), (2, "sqrt"), (4, "none"), (4, "sqrt")]
    assert all(r.steps == 3 for r in results.values())


# -- Bad input -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, kwargs, error, match",
    [
        ((0, "sqrt"), {}, ValueError, "d_k"),
        ((2.0, "sqrt"), {}, TypeError, "d_k"),
        ((True, "sqrt"), {}, TypeError, "d_k"),
        ((4, "cube"), {}, ValueError, "scale_policy"),
        ((4, 2), {}, TypeError, "scale_policy"),
        ((4, lambda d_k: -1.0), {}, ValueError, "factor"),
        ((4, "sqrt"), {"steps": 0}, ValueError, "steps"),
        ((4, "sqrt"), {"lr": 0.0}, ValueError, "lr"),
        ((4, "sqrt"), {"lr": -0.1}, ValueError, "lr"),
        ((4, "sqrt"), {"lr": float("nan")}, ValueError, "lr"),
        ((4, "sqrt"), {"lr": "0.1"}, TypeError, "lr"),
        ((4, "sqrt"), {"n": 1}, ValueError, "n must"),
        ((4, "sqrt"), {"batch": 0}, ValueError, "batch"),
        ((4, "sqrt"), {"d_model": 0}, ValueError, "d_model"),
        ((4, "sqrt"), {"noise": -0.1}, ValueError, "noise"),
        ((4, "sqrt"), {"noise": float("inf")}, ValueError, "noise"),
        ((4, "sqrt"), {"seed": -1}, ValueError, "seed"),
        ((4, "sqrt"), {"seed": 1.5}, TypeError, "seed"),
        ((4, "sqrt"), {"optimizer": "rmsprop"}, ValueError, "optimizer"),
    ],
)
def test_train_rejects_bad_input(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        train(*args, steps=kwargs.pop("steps", 2), **kwargs)


@pytest.mark.parametrize(
    "args, error, match",
    [
        ((0, 2, 3, 4, 0.5), TypeError, "rng"),
        ((None, 0, 3, 4, 0.5), ValueError, "batch"),
        ((None, 2, 1, 4, 0.5), ValueError, "n must"),
        ((None, 2, 3, 0, 0.5), ValueError, "d_model"),
        ((None, 2, 3, 4, -1.0), ValueError, "noise"),
    ],
)
def test_retrieval_batch_rejects_bad_input(args, error, match):
    args = (np.random.default_rng(0) if args[0] is None else args[0], *args[1:])
    with pytest.raises(error, match=match):
        retrieval_batch(*args)


def test_init_params_rejects_bad_input():
    with pytest.raises(ValueError, match="d_k"):
        init_params(np.random.default_rng(0), 4, 0)
    with pytest.raises(TypeError, match="rng"):
        init_params(0, 4, 2)


def test_forward_and_backward_reject_bad_input():
    params, data = problem(11)
    with pytest.raises(ValueError, match="scale"):
        forward(params, data, 0.0)
    with pytest.raises(TypeError, match="params"):
        forward({"W_Q": params["W_Q"]}, data, 1.0)
    with pytest.raises(ValueError, match="W_K"):
        forward({"W_Q": params["W_Q"], "W_K": params["W_K"][:, :2]}, data, 1.0)
    with pytest.raises(ValueError, match="params"):
        forward({"W_Q": np.full((4, 3), np.nan), "W_K": params["W_K"]}, data, 1.0)
    with pytest.raises(ValueError, match="queries"):
        forward(params, data._replace(queries=data.queries[:, :2]), 1.0)
    with pytest.raises(ValueError, match="targets"):
        forward(params, data._replace(targets=data.targets + 5), 1.0)
    with pytest.raises(TypeError, match="targets"):
        forward(params, data._replace(targets=data.targets.astype(float)), 1.0)
    with pytest.raises(TypeError, match="batch"):
        forward(params, [data.queries, data.keys, data.targets], 1.0)
    _, cache = forward(params, data, 1.0)
    with pytest.raises(TypeError, match="cache"):
        backward(params, {"q": cache["q"]})
    with pytest.raises(ValueError, match="d_k"):
        backward({name: w[:, :2] for name, w in params.items()}, cache)


def test_gradient_check_rejects_misshapen_gradients():
    params, data = problem(12)
    grads = loss_and_grads(params, data, 1.0)[1]
    with pytest.raises(ValueError, match="W_Q"):
        gradient_check(params, data, 1.0, grads={"W_Q": grads["W_Q"][:2], "W_K": grads["W_K"]})
    with pytest.raises(TypeError, match="grads"):
        gradient_check(params, data, 1.0, grads={"W_Q": grads["W_Q"]})
    with pytest.raises(ValueError, match="step"):
        numerical_gradients(params, data, 1.0, step=0.0)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"d_values": ()}, ValueError, "d_values"),
        ({"d_values": (4, 4)}, ValueError, "d_values"),
        ({"d_values": (4, 0)}, ValueError, "d_values"),
        ({"d_values": 4}, TypeError, "d_values"),
        ({"policies": ()}, ValueError, "policies"),
        ({"policies": "sqrt"}, TypeError, "policies"),
        ({"policies": ("sqrt", "sqrt")}, ValueError, "distinct"),
        ({"policies": ("sqrt", "cube")}, ValueError, "scale_policy"),
        ({"lr": 0}, ValueError, "lr"),
    ],
)
def test_ablation_rejects_bad_input(kwargs, error, match):
    kwargs = {"d_values": (4,), "policies": ("sqrt",), "steps": 2, "batch": 2, **kwargs}
    with pytest.raises(error, match=match):
        ablation(**kwargs)


# -- The data of the learning-curve figure ------------------------------------------------


def test_training_curves_data_wraps_the_ablation(monkeypatch):
    # The default ablation takes seconds; a tiny one shows the wrapping.
    from attention_scaling import training

    tiny = ablation((8, 2), ("sqrt", "none"), steps=2, batch=2, n=3, d_model=4, seed=5)
    seeds = []
    monkeypatch.setattr(training, "ablation", lambda seed: seeds.append(seed) or tiny)
    data = training_curves_data(seed=5)
    assert isinstance(data, TrainingCurves) and seeds == [5]
    assert data.runs is tiny
    assert data.d_values == (2, 8) and data.policies == ("sqrt", "none")


# -- T5's folding ----------------------------------------------------------------------


@pytest.mark.parametrize("d_k", [3, 16, 48, 256])
def test_folded_head_starts_with_the_scaled_heads_scores(d_k):
    # 1/sqrt(3) and 1/sqrt(48) are not powers of two: the products round, by a few ulps.
    assert folding_gap(d_k) < 1e-14
    folded, scaled = train(d_k, "sqrt", steps=3, fold=True), train(d_k, "sqrt", steps=3)
    assert folded.loss[0] == pytest.approx(scaled.loss[0], rel=1e-13)
    assert (folded.scale, folded.folded, scaled.folded, folded.policy) == (1.0, True, False, "sqrt")
    # ...but not afterwards: the same step moves the folded head's scores more.
    assert folded.loss[2] != pytest.approx(scaled.loss[2], rel=1e-6)


def test_folded_initial_query_weights_have_t5s_spread():
    # std (d_model d_k)^(-1/2): Mesh TensorFlow's and Hugging Face T5's query initialisation.
    d_model, d_k = 32, 256
    record = train(d_k, "sqrt", steps=1, lr=1e-12, d_model=d_model, fold=True)
    assert record.params["W_Q"].std() == pytest.approx((d_model * d_k) ** -0.5, rel=0.02)


def test_a_wrong_folding_factor_is_caught(monkeypatch):
    # Planted fault: W_Q folded to std (d_model d_k)^(-1) instead of (d_model d_k)^(-1/2).
    from attention_scaling import training

    monkeypatch.setattr(training, "_fold", lambda w_q, c: w_q * c**2 / math.sqrt(w_q.shape[0]))
    assert folding_gap(64) > 0.5
    assert train(64, "sqrt", steps=1, fold=True).loss[0] != pytest.approx(train(64, "sqrt", steps=1).loss[0], rel=1e-3)


def test_fold_must_be_a_bool():
    with pytest.raises(TypeError, match="fold must be a bool; got str"):
        train(4, "sqrt", steps=1, fold="yes")


# -- Tuning the learning rate ----------------------------------------------------------

TINY = {"steps": 8, "batch": 4, "n": 5, "d_model": 6, "window": 3}


def test_select_learning_rate_takes_the_lowest_finite_score_and_the_first_of_ties():
    assert select_learning_rate([0.9, 0.2, 0.5]) == 1
    assert select_learning_rate([0.3, 0.2, 0.2]) == 1
    assert select_learning_rate([np.inf, np.nan, 3.0]) == 2
    with pytest.raises(ValueError, match="every learning rate diverged"):
        select_learning_rate([np.inf, np.nan])
    with pytest.raises(ValueError, match="non-empty 1-D"):
        select_learning_rate([])


def test_tuning_selects_the_argmin_of_the_mean_final_loss_over_tuning_seeds():
    # Recompute every score from independent calls of train: the rule, run by hand.
    lrs = (1e-3, 1e-2, 1e-1, 1.0)
    tuned = tune_learning_rates((4, 8), ("none", "t5"), lrs, tuning_seeds=(0, 1), eval_seeds=(7, 9), **TINY)
    settings = {key: TINY[key] for key in ("steps", "batch", "n", "d_model")}
    for variant, fold_policy in (("none", ("none", False)), ("t5", ("sqrt", True))):
        policy, fold = fold_policy
        for d_k in (4, 8):
            scores = [np.mean([train(d_k, policy, lr=lr, seed=seed, fold=fold, **settings).final(3)["loss"]
                               for seed in (0, 1)]) for lr in lrs]
            np.testing.assert_allclose(tuned.scores[variant, d_k], scores, rtol=1e-12)
            assert tuned.best[variant, d_k] == int(np.argmin(scores))
            best = lrs[int(np.argmin(scores))]
            assert tuned.best_lr(variant, d_k) == best
            fresh = [train(d_k, policy, lr=best, seed=seed, fold=fold, **settings).final(3) for seed in (7, 9)]
            np.testing.assert_allclose(tuned.eval_loss[variant, d_k], [f["loss"] for f in fresh], rtol=1e-12)
            np.testing.assert_allclose(tuned.eval_accuracy[variant, d_k], [f["accuracy"] for f in fresh])
    assert tuned.on_edge() == [key for key, i in tuned.best.items() if i in (0, 3)]


def test_a_diverging_rate_loses():
    # SGD at a rate of 1e100 on an unscaled head: the scores overflow within a few steps.
    tuned = tune_learning_rates((8,), ("none",), (1e-2, 1e100), optimizer="sgd", **TINY)
    assert tuned.scores["none", 8][1] == np.inf and tuned.best_lr("none", 8) == 1e-2
    assert tuned.on_edge() == [("none", 8)]
    with pytest.raises(ValueError, match="every learning rate diverged"):
        tune_learning_rates((8,), ("none",), (1e100,), optimizer="sgd", **TINY)


def test_tuning_is_seeded_and_read_only():
    a = tune_learning_rates((4,), ("sqrt",), (1e-2, 1e-1), **TINY)
    b = tune_learning_rates((4,), ("sqrt",), (1e-2, 1e-1), **TINY)
    assert np.array_equal(a.scores["sqrt", 4], b.scores["sqrt", 4])
    assert np.array_equal(a.eval_loss["sqrt", 4], b.eval_loss["sqrt", 4])
    other = tune_learning_rates((4,), ("sqrt",), (1e-2, 1e-1), tuning_seeds=(15, 16), **TINY)
    assert not np.array_equal(a.scores["sqrt", 4], other.scores["sqrt", 4])
    with pytest.raises(ValueError):
        a.eval_loss["sqrt", 4][0] = 0.0


def test_default_grids_follow_the_optimiser():
    assert ADAM_LEARNING_RATES[0] == pytest.approx(10**-3.5) and ADAM_LEARNING_RATES[-1] == pytest.approx(0.1)
    assert SGD_LEARNING_RATES == (1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1000.0)
    assert tune_learning_rates((4,), ("sqrt",), optimizer="sgd", **TINY).lrs == SGD_LEARNING_RATES
    assert VARIANTS == {"none": ("none", False), "sqrt": ("sqrt", False), "linear": ("linear", False),
                        "t5": ("sqrt", True)}


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"d_values": ()}, ValueError, "d_values"),
        ({"d_values": 4}, TypeError, "d_values"),
        ({"variants": ("sqrt", "cube")}, ValueError, "variants must be distinct names"),
        ({"variants": ("sqrt", "sqrt")}, ValueError, "variants must be distinct names"),
        ({"variants": "sqrt"}, TypeError, "variants"),
        ({"lrs": ()}, TypeError, "lrs"),
        ({"lrs": (0.1, 0.01)}, ValueError, "strictly increasing"),
        ({"lrs": (0.0, 0.01)}, ValueError, "lrs entry"),
        ({"tuning_seeds": ()}, ValueError, "tuning_seeds"),
        ({"eval_seeds": (1, 2)}, ValueError, "eval_seeds must be fresh: they share \\[1\\]"),
        ({"eval_seeds": (3, 3)}, ValueError, "eval_seeds"),
        ({"window": 9}, ValueError, "window must be at most steps = 8"),
        ({"optimizer": "rmsprop"}, ValueError, "optimizer"),
    ],
)
def test_tuning_rejects_bad_input(kwargs, error, match):
    kwargs = {"d_values": (4,), "variants": ("sqrt",), "lrs": (1e-2,), **TINY, **kwargs}
    with pytest.raises(error, match=match):
        tune_learning_rates(**kwargs)


def test_tuned_learning_rates_data_gives_both_tunings_the_same_settings():
    settings = dict(d_values=(8,), steps=6, window=2, tuning_seeds=(0,), eval_seeds=(1,))
    adam, sgd = tuned_learning_rates_data(**settings)
    assert (adam.optimizer, sgd.optimizer) == ("adam", "sgd")
    for tuning in (adam, sgd):
        alone = tune_learning_rates(optimizer=tuning.optimizer, **settings)
        assert (tuning.d_values, tuning.steps, tuning.window, tuning.tuning_seeds, tuning.eval_seeds) == ((8,), 6, 2, (0,), (1,))
        assert tuning.best == alone.best and all(np.array_equal(tuning.eval_loss[key], alone.eval_loss[key], equal_nan=True)
                                                 for key in alone.eval_loss)
    with pytest.raises(TypeError, match="leave out optimizer"):
        tuned_learning_rates_data(optimizer="adam")


@pytest.mark.parametrize("signs", [[1] * 10, [1] * 9 + [-1], [1] * 7 + [-1] * 3, [1, -1] * 5, [-1] * 4, [1]])
def test_the_sign_test_is_scipys_exact_binomial_test(signs):
    stats = pytest.importorskip("scipy.stats")
    from attention_scaling.tuning import sign_test

    differences = np.array(signs, dtype=float) * np.linspace(0.5, 1.5, len(signs))
    expected = stats.binomtest(int(np.sum(differences > 0)), len(signs), 0.5).pvalue
    assert sign_test(differences) == pytest.approx(expected, rel=1e-12)
    # Zero differences carry no sign: adding them changes nothing.
    assert sign_test(np.append(differences, [0.0, 0.0])) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("bad", [[], [0.0, 0.0], [1.0, np.nan], [[1.0]]])
def test_the_sign_test_refuses_what_has_no_sign(bad):
    from attention_scaling.tuning import sign_test

    with pytest.raises(ValueError, match="differences must"):
        sign_test(bad)
