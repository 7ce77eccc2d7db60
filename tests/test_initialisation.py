"""Initialisation schemes: the variances they predict, the simulation that measures them, bad input."""

import math

import numpy as np
import pytest

from attention_scaling import initialisation as module
from attention_scaling.initialisation import (
    IN_PROJECTION_LAYOUTS,
    SCHEMES,
    SchemeRow,
    attention_spreads,
    compare_schemes,
    in_projection,
    in_projection_scores,
    predicted_score_variance,
    projected_scores,
    second_moment_estimate,
    unit_variance_scale,
    weight_std,
    xavier_uniform_bound,
    xavier_uniform_variance,
)
from attention_scaling.proofs import d_k, d_model, projected_dot_product, sigma_K, sigma_Q
from attention_scaling.simulate import mean_estimate

SHAPES = [(512, 64), (768, 64), (1024, 128), (8, 3)]


# -- Closed forms -----------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
def test_weight_std_matches_the_fan_formulas(shape):
    fan_in, head = shape
    assert math.isclose(weight_std("xavier-full", *shape) ** 2, 2 / (fan_in + fan_in))
    assert math.isclose(weight_std("xavier-head", *shape) ** 2, 2 / (fan_in + head))
    assert math.isclose(weight_std("xavier-packed", *shape) ** 2, 2 / (fan_in + 3 * fan_in))
    assert math.isclose(weight_std("he", *shape) ** 2, 2 / fan_in)
    assert weight_std("gpt", *shape) == 0.02


def test_the_two_xavier_layouts_differ_unless_the_head_is_the_whole_width():
    assert weight_std("xavier-head", 512, 64) > weight_std("xavier-full", 512, 64)
    assert math.isclose(weight_std("xavier-head", 64, 64), weight_std("xavier-full", 64, 64))


@pytest.fixture(scope="module")
def proved_variance():
    return projected_dot_product(cross_check=False).result.rhs


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("sigmas", [(0.02, 0.02), (0.05, 0.01), (1.0, 0.3)])
def test_prediction_is_the_proved_formula(proved_variance, shape, sigmas):
    proved = proved_variance
    value = float(proved.subs({d_model: shape[0], d_k: shape[1], sigma_Q: sigmas[0], sigma_K: sigmas[1]}))
    assert math.isclose(predicted_score_variance(shape[0], *sigmas), value, rel_tol=1e-12)


def test_unit_variance_scale_turns_the_prediction_into_one():
    for scheme in SCHEMES:
        sigma = weight_std(scheme, 768, 64)
        scale = unit_variance_scale(768, 64, sigma, sigma)
        # Var[c * q.k] = c^2 * d_k * Var[q.k / sqrt(d_k)]
        assert math.isclose(scale**2 * 64 * predicted_score_variance(768, sigma, sigma), 1.0)
    assert math.isclose(unit_variance_scale(768, 64, 768**-0.5, 768**-0.5), 1 / 8)


# -- The simulation -------------------------------------------------------------------


@pytest.mark.parametrize("self_attention", [False, True])
def test_measured_variance_matches_the_theorem_at_a_small_shape(self_attention):
    sigma_q, sigma_k = 0.3, 0.7
    scores = projected_scores(
        8, 3, n_weights=1000, n_tokens=8, seed=1, sigma_q=sigma_q, sigma_k=sigma_k, self_attention=self_attention
    )
    estimate = second_moment_estimate(scores)
    # The diagonal alone: with self_attention, each token scored against itself.
    assert second_moment_estimate(np.diagonal(scores, axis1=1, axis2=2)).contains(
        predicted_score_variance(8, sigma_q, sigma_k)
    )
    assert estimate.contains(predicted_score_variance(8, sigma_q, sigma_k))
    # A planted fault: forgetting the division by sqrt(d_k) is detected.
    assert not estimate.contains(3 * predicted_score_variance(8, sigma_q, sigma_k))
    # The scores have mean 0 (row means are independent across weight draws).
    assert mean_estimate(scores.mean(axis=(1, 2))).contains(0.0)


def test_scaling_the_weights_scales_the_scores_exactly():
    base = projected_scores(16, 4, n_weights=5, n_tokens=7, seed=3)
    scaled = projected_scores(16, 4, n_weights=5, n_tokens=7, seed=3, sigma_q=0.1, sigma_k=0.5)
    assert np.allclose(scaled, 0.05 * base)
    assert np.array_equal(base, projected_scores(16, 4, n_weights=5, n_tokens=7, seed=3))
    assert not np.array_equal(base, projected_scores(16, 4, n_weights=5, n_tokens=7, seed=4))


@pytest.mark.parametrize("self_attention", [False, True])
def test_scores_are_the_projected_dot_products_written_out(self_attention):
    # Rebuild the scores with explicit sums over the same draws, in the order
    # the docstring states: query tokens, key tokens, then one (W_Q, W_K) per draw.
    d_model_, d_k_, n_weights, n_tokens = 5, 2, 3, 4
    rng = np.random.default_rng(8)
    raw_x = rng.standard_normal((n_tokens, d_model_))
    raw_y = raw_x if self_attention else rng.standard_normal((n_tokens, d_model_))
    x = [(row - row.mean()) / row.std() for row in raw_x]
    y = [(row - row.mean()) / row.std() for row in raw_y]
    expected = np.empty((n_weights, n_tokens, n_tokens))
    for draw in range(n_weights):
        w_q, w_k = rng.standard_normal((d_model_, d_k_)), rng.standard_normal((d_model_, d_k_))
        for i in range(n_tokens):
            for j in range(n_tokens):
                q = [sum(x[i][a] * w_q[a, c] for a in range(d_model_)) for c in range(d_k_)]
                k = [sum(y[j][a] * w_k[a, c] for a in range(d_model_)) for c in range(d_k_)]
                expected[draw, i, j] = sum(q_c * k_c for q_c, k_c in zip(q, k)) / math.sqrt(d_k_)
    actual = projected_scores(
        d_model_, d_k_, n_weights=n_weights, n_tokens=n_tokens, seed=8, self_attention=self_attention
    )
    assert np.allclose(actual, expected)


def test_second_moment_estimate_by_hand():
    estimate = second_moment_estimate([[3.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    row_means = np.array([5.0, 1.0, 2.0])
    assert math.isclose(estimate.value, row_means.mean())
    assert math.isclose(estimate.standard_error, row_means.std(ddof=1) / math.sqrt(3))


def test_second_moment_standard_error_is_calibrated_for_correlated_rows():
    # Rows whose entries share a random factor: treating entries as independent
    # would understate the error; grouping by row must not.
    rng = np.random.default_rng(12)
    hits = 0
    for _ in range(300):
        shared = rng.standard_normal((40, 1))
        rows = (shared + rng.standard_normal((40, 10))) / math.sqrt(2)  # E[s^2] = 1
        hits += second_moment_estimate(rows).contains(1.0)
    assert hits >= 285


def test_compare_schemes_uses_common_draws_and_proved_predictions():
    rows = compare_schemes([(64, 8), (96, 16)], n_weights=20, n_tokens=8, seed=9)
    assert [row.scheme for row in rows] == list(SCHEMES) * 2
    for index, shape in enumerate([(64, 8), (96, 16)]):
        unit = second_moment_estimate(projected_scores(*shape, n_weights=20, n_tokens=8, seed=(9, index)))
        per_shape = len(SCHEMES)
        for row in rows[per_shape * index : per_shape * (index + 1)]:
            assert (row.d_model, row.d_k) == shape
            assert math.isclose(row.predicted, (shape[0] * row.sigma_w**2) ** 2)
            assert math.isclose(row.measured.value, unit.value * row.sigma_w**4)
            assert math.isclose(row.z_score, (unit.value - shape[0] ** 2) / unit.standard_error)


# -- Attention at initialisation ---------------------------------------------------


def test_small_scores_give_the_second_order_entropy():
    # For scores with small variance v, H(softmax) = ln n - v_row / 2 + O(v^(3/2)), where
    # v_row is the variance of a row of scores around its own mean: about v (n - 1) / n.
    n, sigma = 64, 0.004
    unit = projected_scores(64, 8, n_weights=20, n_tokens=n, seed=2, self_attention=True)
    (spread,) = attention_spreads(unit, {"small": sigma}, d_model=64)
    v = predicted_score_variance(64, sigma, sigma)
    expected = 1 - v * (n - 1) / n / 2 / math.log(n)
    assert abs(spread.entropy.value - expected) < 0.1 * (1 - expected)
    assert spread.largest_weight.value > 1.0


def test_larger_weights_give_more_peaked_attention():
    unit = projected_scores(64, 8, n_weights=10, n_tokens=32, seed=4, self_attention=True)
    spreads = attention_spreads(unit, {"a": 0.05, "b": 0.12, "c": 0.3}, d_model=64)
    entropies = [spread.entropy.value for spread in spreads]
    largest = [spread.largest_weight.value for spread in spreads]
    assert entropies == sorted(entropies, reverse=True)
    assert largest == sorted(largest)
    assert all(0 < e <= 1 for e in entropies) and all(1 <= w <= 32 for w in largest)
    assert [spread.label for spread in spreads] == ["a", "b", "c"]
    assert math.isclose(spreads[0].score_std, 64 * 0.05**2)


# -- Bad input -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: weight_std("lecun", 8, 2), ValueError),
        (lambda: weight_std("he", 1, 2), ValueError),
        (lambda: weight_std("he", 8.0, 2), TypeError),
        (lambda: weight_std("he", 8, 0), ValueError),
        (lambda: predicted_score_variance(8, 0.0, 1.0), ValueError),
        (lambda: predicted_score_variance(8, "1", 1.0), TypeError),
        (lambda: unit_variance_scale(8, 2, float("nan"), 1.0), ValueError),
        (lambda: projected_scores(8, 2, n_weights=1, n_tokens=1, seed=0), ValueError),
        (lambda: projected_scores(8, 2, n_weights=2, n_tokens=0, seed=0), ValueError),
        (lambda: projected_scores(8, 2, n_weights=2, n_tokens=1, seed=0, sigma_q=-1.0), ValueError),
        (lambda: second_moment_estimate([1.0, 2.0]), ValueError),
        (lambda: second_moment_estimate(np.zeros((3, 0))), ValueError),
        (lambda: second_moment_estimate([[1.0, 2.0]]), ValueError),
        (lambda: second_moment_estimate([[1.0], [np.nan]]), ValueError),
        (lambda: compare_schemes([], n_weights=2, n_tokens=1, seed=0), ValueError),
        (lambda: compare_schemes([(8, 2)], n_weights=2, n_tokens=1, seed=0, schemes=["lecun"]), ValueError),
        (lambda: attention_spreads(np.zeros((2, 4, 4)), {}, d_model=8), ValueError),
        (lambda: attention_spreads(np.zeros((2, 4, 4)), {"a": 0.0}, d_model=8), ValueError),
        (lambda: attention_spreads(np.zeros((2, 4, 1)), {"a": 0.1}, d_model=8), ValueError),
        (lambda: attention_spreads(np.zeros((1, 4, 4)), {"a": 0.1}, d_model=8), ValueError),
        (lambda: attention_spreads(np.zeros((2, 4, 4)), {"a": 0.1}, d_model=8.0), TypeError),
    ],
)
def test_bad_input_is_refused(call, error):
    with pytest.raises(error):
        call()


def test_rows_are_what_compare_schemes_returns():
    row = compare_schemes([(8, 2)], n_weights=2, n_tokens=1, seed=0, schemes=["gpt"])[0]
    assert isinstance(row, SchemeRow) and row.scheme == "gpt"


# -- PyTorch's nn.MultiheadAttention: packed and separate in-projections ---------------


@pytest.mark.parametrize("fans", [(1, 1), (512, 1536), (768, 64), (3, 7)])
def test_xavier_uniform_variance_is_the_variance_of_its_uniform(fans):
    # U(-a, a) has variance a^2 / 3; Glorot's variance is 2 / (fan_in + fan_out).
    bound = xavier_uniform_bound(*fans)
    assert math.isclose(xavier_uniform_variance(*fans), bound**2 / 3, rel_tol=1e-15)
    assert math.isclose(xavier_uniform_variance(*fans), 2 / sum(fans), rel_tol=1e-15)
    assert math.isclose(xavier_uniform_variance(*fans, gain=2.0), 4 * 2 / sum(fans), rel_tol=1e-15)


@pytest.mark.parametrize("embed_dim", [2, 64, 512, 768])
def test_packed_in_projection_gives_a_quarter(embed_dim):
    packed = in_projection(embed_dim, "packed")
    assert packed.query_storage == packed.key_storage == (3 * embed_dim, embed_dim)
    assert math.isclose(packed.query_weight_variance, 1 / (2 * embed_dim), rel_tol=1e-15)
    assert math.isclose(packed.query_variance, 0.5) and math.isclose(packed.key_variance, 0.5)
    assert math.isclose(packed.score_variance, 0.25)
    # The same as the scheme table's packed row and the proved formula (d_model sigma_Q sigma_K)^2.
    sigma = weight_std("xavier-packed", embed_dim, 1)
    assert math.isclose(packed.score_variance, predicted_score_variance(embed_dim, sigma, sigma))


@pytest.mark.parametrize("embed_dim", [2, 64, 512])
def test_separate_square_projections_give_one(embed_dim):
    separate = in_projection(embed_dim, "separate")
    assert separate.query_storage == separate.key_storage == (embed_dim, embed_dim)
    assert math.isclose(separate.query_weight_variance, 1 / embed_dim, rel_tol=1e-15)
    assert math.isclose(separate.score_variance, 1.0)


def test_separate_projections_with_another_key_width():
    separate = in_projection(512, "separate", kdim=64)
    assert separate.key_storage == (512, 64)
    assert math.isclose(separate.key_variance, 64 * 2 / (512 + 64))
    assert math.isclose(separate.score_variance, 2 * 64 / (512 + 64))
    with pytest.raises(ValueError, match="packed layout needs kdim == embed_dim"):
        in_projection(512, "packed", kdim=64)


@pytest.mark.parametrize(("seed", "layout", "kdim"), [(0, "packed", None), (1, "separate", None), (2, "separate", 24)])
def test_simulated_scores_have_the_predicted_variance(seed, layout, kdim):
    assert layout in IN_PROJECTION_LAYOUTS
    scores = in_projection_scores(48, 4, layout=layout, kdim=kdim, n_weights=300, n_tokens=6, seed=(5, seed))
    assert scores.shape == (300, 4, 6, 6)
    estimate = second_moment_estimate(scores)
    assert estimate.contains(in_projection(48, layout, kdim=kdim).score_variance)


def test_simulation_takes_w_q_and_w_k_as_blocks_of_the_packed_matrix():
    # Redo one draw by hand: one (3E, E) uniform matrix, rows 0..E-1 for W_Q and E..2E-1 for W_K.
    embed_dim, heads, n = 8, 2, 3
    scores = in_projection_scores(embed_dim, heads, n_weights=2, n_tokens=n, seed=11)
    rng = np.random.default_rng(11)
    from attention_scaling import layer_norm

    x = layer_norm(rng.standard_normal((n, embed_dim)))
    bound = xavier_uniform_bound(embed_dim, 3 * embed_dim)
    weight = rng.uniform(-bound, bound, size=(3 * embed_dim, embed_dim))
    q = (x @ weight[:embed_dim].T).reshape(n, heads, embed_dim // heads)
    k = (x @ weight[embed_dim : 2 * embed_dim].T).reshape(n, heads, embed_dim // heads)
    expected = np.einsum("nhi,mhi->hnm", q, k) / math.sqrt(embed_dim // heads)
    np.testing.assert_allclose(scores[0], expected, rtol=1e-12)


def test_a_packed_matrix_counted_with_fan_out_e_is_caught(monkeypatch):
    # Planted fault: the packed (3E, E) matrix initialised as if it were E x E (variance 1/E).
    # The simulation then measures a variance near 1, and no longer contains the predicted 1/4.
    real = module.xavier_uniform_bound
    monkeypatch.setattr(module, "xavier_uniform_bound", lambda fan_in, fan_out, gain=1.0: real(fan_in, fan_in, gain))
    estimate = second_moment_estimate(in_projection_scores(48, 4, n_weights=100, n_tokens=6, seed=3))
    assert not estimate.contains(0.25)
    assert estimate.contains(1.0)


def test_agrees_with_torch_multihead_attention_when_available():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    for embed_dim, kdim, layout in [(64, None, "packed"), (64, 32, "separate")]:
        mha = torch.nn.MultiheadAttention(embed_dim, 4, kdim=kdim, vdim=kdim)
        shape = in_projection(embed_dim, layout, kdim=kdim)
        if layout == "packed":
            weight = mha.in_proj_weight.detach().numpy()
            assert weight.shape == shape.query_storage
        else:
            weight = mha.q_proj_weight.detach().numpy()
            assert weight.shape == shape.query_storage
            assert mha.k_proj_weight.shape == shape.key_storage
        bound = xavier_uniform_bound(shape.query_storage[1], shape.query_storage[0])
        assert np.abs(weight).max() <= bound
        # Sample variance of ~12k uniform entries: within 5% of the prediction.
        assert math.isclose(float(weight.var()), shape.query_weight_variance, rel_tol=0.05)


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: xavier_uniform_bound(0, 4), ValueError),
        (lambda: xavier_uniform_bound(4, 4.0), TypeError),
        (lambda: xavier_uniform_variance(4, 4, gain=0.0), ValueError),
        (lambda: in_projection(8, "interleaved"), ValueError),
        (lambda: in_projection(0), ValueError),
        (lambda: in_projection_scores(10, 4, n_weights=2, n_tokens=1, seed=0), ValueError),
        (lambda: in_projection_scores(8, 2, n_weights=1, n_tokens=1, seed=0), ValueError),
        (lambda: in_projection_scores(8, 2, layout="separate", kdim=1, n_weights=2, n_tokens=1, seed=0), ValueError),
    ],
)
def test_bad_projection_input_is_refused(call, error):
    with pytest.raises(error):
        call()
