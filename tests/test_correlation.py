"""Correlated queries and keys: the draws, the sweep, the tail check, norm growth, and their proofs."""

import math

import numpy as np
import pytest
import sympy as sp

from attention_scaling import proofs
from attention_scaling._attention import attention_scores
from attention_scaling.correlation import (
    CorrelatedLogits,
    NormGrowth,
    correlated_dot_products,
    correlated_logit_sweep,
    correlated_logits_data,
    linear_logit_tail,
    norm_growth,
    predicted_logit_mean,
    predicted_logit_std,
)
from attention_scaling.proofs import E, ProofError, RandomVariables, Var, check, d_k, rho
from attention_scaling.simulate import mean_estimate, variance_estimate

# -- The draws ----------------------------------------------------------------------------


def test_draws_match_an_explicit_construction_of_q_and_k():
    # The function uses q.k = rho*sum(Z^2) + sqrt(1 - rho^2)*sum(Z W); build q and k
    # coordinate by coordinate from the same generator and compare.
    size, n, rhos = 8, 50, np.array([-0.3, 0.0, 0.7])
    rng = np.random.default_rng(11)
    z, w = rng.standard_normal((n, size)), rng.standard_normal((n, size))
    for row, r in enumerate(rhos):
        q, k = z, r * z + math.sqrt(1 - r**2) * w
        np.testing.assert_allclose(correlated_dot_products(size, n, rhos, seed=11)[row], (q * k).sum(axis=1))


def test_draws_made_in_several_blocks_keep_the_model():
    # d_k = 4096 makes blocks of 256 rows; the later blocks must be drawn like the first.
    draws = correlated_dot_products(4096, 1000, [0.5], seed=3)[0]
    assert mean_estimate(draws[256:]).contains(0.5 * 4096)
    assert variance_estimate(draws[256:]).contains(4096 * 1.25)
    assert len(np.unique(draws)) == draws.size  # no block repeated


def test_each_coordinate_pair_has_correlation_rho():
    draws = correlated_dot_products(1, 200_000, [0.0, 0.4, -0.8], seed=5)
    for row, r in zip(draws, [0.0, 0.4, -0.8]):
        assert mean_estimate(row).contains(r)  # E[q_1 k_1] = rho, with unit variances


def test_moments_agree_with_the_sympy_theorem_and_not_with_independence():
    theorem = proofs.correlated_dot_product()
    mean_rhs, variance_rhs = theorem.steps[-2].rhs, theorem.steps[-1].rhs
    size, r = 32, 0.5
    draws = correlated_dot_products(size, 40_000, [r], seed=7)[0]
    mean, variance = mean_estimate(draws), variance_estimate(draws)
    assert mean.contains(float(mean_rhs.subs({rho: r, d_k: size})))
    assert variance.contains(float(variance_rhs.subs({rho: r, d_k: size})))
    # The independent case (mean 0, variance d_k) is far outside the intervals.
    assert not mean.contains(0.0) and not variance.contains(float(size))


def test_rho_one_gives_the_squared_norm():
    draws = correlated_dot_products(6, 20, [1.0, -1.0], seed=0)
    assert (draws[0] > 0).all()
    np.testing.assert_allclose(draws[1], -draws[0])


# -- Predictions against the theorem --------------------------------------------------------


@pytest.mark.parametrize("r", [0.0, 0.1, 0.5, -0.4])
@pytest.mark.parametrize("size", [1, 16, 1024])
def test_predictions_equal_the_proved_moments(r, size):
    steps = proofs.correlated_scaling_limits().steps
    # steps: E[./sqrt d], lim, Var[./sqrt d], E[./d], Var[./d], ...
    values = {name: float(steps[index].rhs.subs({rho: r, d_k: size}))
              for name, index in (("sqrt_mean", 0), ("sqrt_var", 2), ("linear_mean", 3), ("linear_var", 4))}
    assert predicted_logit_mean(r, size, "sqrt") == pytest.approx(values["sqrt_mean"])
    assert predicted_logit_mean(r, size, "linear") == pytest.approx(values["linear_mean"])
    assert predicted_logit_std(r, size, "sqrt") ** 2 == pytest.approx(values["sqrt_var"])
    assert predicted_logit_std(r, size, "linear") ** 2 == pytest.approx(values["linear_var"])


def test_predictions_broadcast():
    means = predicted_logit_mean(np.array([[0.0], [0.5]]), np.array([[4, 16]]), "sqrt")
    np.testing.assert_allclose(means, [[0.0, 0.0], [1.0, 2.0]])


# -- The sweep ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sweep():
    # A seed other than the page's, so the tests do not only re-run the page.
    return correlated_logit_sweep([16, 64, 256], [0.0, 0.3, 0.9], 3000, seed=99)


def test_sweep_agrees_with_the_theorem(sweep):
    for moments in sweep.values():
        # 9 points per statistic; 4 standard errors keeps chance failures rare.
        assert np.abs(moments.mean_z).max() < 4
        assert np.abs(moments.std_z).max() < 4


def test_sweep_would_catch_a_wrong_prediction(sweep):
    linear = sweep["linear"]
    # Claiming a mean of 1.1 rho (a 10 % error) is rejected at rho = 0.9 for d_k >= 64.
    wrong = np.abs(linear.mean[2, 1:] - 1.1 * 0.9) / linear.mean_se[2, 1:]
    assert (wrong > 4).all()


def test_the_two_scales_differ_by_sqrt_d_k(sweep):
    factor = np.sqrt(sweep["sqrt"].d_k)
    np.testing.assert_allclose(sweep["sqrt"].mean, sweep["linear"].mean * factor)
    np.testing.assert_allclose(sweep["sqrt"].std, sweep["linear"].std * factor)


def test_sweep_points_do_not_depend_on_the_other_dimensions(sweep):
    alone = correlated_logit_sweep([64], [0.0, 0.3, 0.9], 3000, seed=99)
    np.testing.assert_array_equal(alone["linear"].mean[:, 0], sweep["linear"].mean[:, 1])


def test_standard_errors_match_the_scatter_over_seeds():
    # Repeat a small sweep over many seeds: the spread of the estimates across
    # seeds must match the standard errors the sweep reports.
    runs = [correlated_logit_sweep([32], [0.5], 400, seed=s)["linear"] for s in range(60)]
    means = np.array([run.mean[0, 0] for run in runs])
    stds = np.array([run.std[0, 0] for run in runs])
    assert 0.75 < means.std(ddof=1) / np.mean([run.mean_se[0, 0] for run in runs]) < 1.3
    assert 0.75 < stds.std(ddof=1) / np.mean([run.std_se[0, 0] for run in runs]) < 1.3


# -- Chebyshev ----------------------------------------------------------------------------------


def test_tail_is_below_chebyshev_and_matches_a_direct_count():
    tail = linear_logit_tail([16, 64, 256], 0.5, 0.1, 2000, seed=4)
    assert (tail.fraction <= tail.bound).all()
    np.testing.assert_allclose(tail.bound, np.minimum(1, 1.25 / (np.array([16, 64, 256]) * 0.01)))
    logits = correlated_dot_products(64, 2000, [0.5], seed=(4, 64))[0] / 64
    assert tail.fraction[1] == np.mean(np.abs(logits - 0.5) >= 0.1)
    assert tail.fraction[0] > tail.fraction[-1]  # concentration


# -- Norm growth --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def growth():
    return norm_growth(2 ** (np.arange(7) / 2), n_queries=128, seed=3)


def test_logits_grow_with_the_square_of_the_gain_under_both_scales(growth):
    for policy in ("sqrt", "linear"):
        np.testing.assert_allclose(growth.logit_std[policy] / growth.logit_std[policy][0], growth.gains**2,
                                   rtol=1e-12)
        assert growth.rescaling_error[policy].max() < 1e-12


def test_linear_scale_lags_by_a_gain_of_d_k_to_the_quarter(growth):
    # d_k = 64: d_k^(1/4) = 2^(3/2), three steps of the sqrt(2) grid.
    np.testing.assert_allclose(growth.max_weight["linear"][3:], growth.max_weight["sqrt"][:-3], rtol=1e-9)


def test_attention_sharpens_as_the_gain_grows(growth):
    for policy in ("sqrt", "linear"):
        assert (np.diff(growth.max_weight[policy]) > 0).all()


def test_logit_spread_matches_an_independent_recomputation():
    result = norm_growth([1.0, 3.0], d_model=16, d_k=8, n_keys=4, n_queries=32, seed=1)
    rng = np.random.default_rng(1)
    w_q, w_k = rng.standard_normal((16, 8)) / 4, rng.standard_normal((16, 8)) / 4
    q = rng.standard_normal((32, 1, 16)) @ w_q
    k = rng.standard_normal((32, 4, 16)) @ w_k
    expected = attention_scores(3 * q, 3 * k, scale=1 / 8).std()
    assert result.logit_std["linear"][1] == pytest.approx(expected)


# -- Bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: correlated_dot_products(0, 10, [0.1], seed=0), ValueError, "d_k must be an integer >= 1"),
        (lambda: correlated_dot_products(4.0, 10, [0.1], seed=0), TypeError, "d_k must be an integer"),
        (lambda: correlated_dot_products(4, 10, [1.5], seed=0), ValueError, r"\[-1, 1\]"),
        (lambda: correlated_dot_products(4, 10, [], seed=0), ValueError, "non-empty"),
        (lambda: correlated_logit_sweep("16", [0.1], 10, seed=0), TypeError, "sequence of integers"),
        (lambda: correlated_logit_sweep([16], [0.1], 3, seed=0), ValueError, "n_samples must be an integer >= 4"),
        (lambda: predicted_logit_mean(0.1, 16, "none"), ValueError, "policy must be one of"),
        (lambda: predicted_logit_std(0.1, 0, "sqrt"), ValueError, "d_k must hold integers >= 1"),
        (lambda: linear_logit_tail([16], 0.1, 0.0, 10, seed=0), ValueError, "epsilon must be"),
        (lambda: norm_growth([2.0, 1.0]), ValueError, "first gain"),
        (lambda: norm_growth([1.0, -1.0]), ValueError, "finite values > 0"),
        (lambda: norm_growth([1.0], n_keys=1), ValueError, "n_keys must be an integer >= 2"),
    ],
)
def test_bad_input_is_refused(call, error, message):
    with pytest.raises(error, match=message):
        call()


# -- The proofs ---------------------------------------------------------------------------------


def test_theorem_results_for_symbolic_d_k():
    limits, growth = proofs.correlated_scaling_limits(), proofs.logit_norm_growth()
    # Stated: E and Var divided by sqrt(d_k); shown beside them, the same divided by d_k and the ratio of gains.
    assert [sp.simplify(limits.steps[index].rhs - value) for index, value in
            ((0, rho * sp.sqrt(d_k)), (2, 1 + rho**2), (3, rho), (4, (1 + rho**2) / d_k))] == [0, 0, 0, 0]
    assert sp.simplify(limits.result.rhs - (1 + rho**2)) == 0
    assert sp.simplify(growth.steps[-1].rhs - d_k ** sp.Rational(1, 4)) == 0


def test_step_kinds_of_the_correlation_theorems():
    limits, growth = proofs.correlated_scaling_limits(), proofs.logit_norm_growth()
    assert limits.counts() == {"checked": 8, "cited": 1, "argued": 0, "measured": 0}
    assert growth.counts() == {"checked": 7, "cited": 0, "argued": 0, "measured": 0}
    assert (limits.status, growth.status) == ("cited", "checked")
    chebyshev = limits.steps[6]
    assert chebyshev.kind == "cited" and chebyshev.relation == r"\le"
    assert chebyshev.basis == "Wasserman (2004), Thm 4.2"
    # The cited step's right side is the checked step's left side: the chain is joined, not retyped.
    assert chebyshev.rhs == limits.steps[7].lhs
    assert proofs.REGISTRY["thm-correlated-scaling-limits"].uses == ("thm-correlated-dot-product",)
    assert proofs.REGISTRY["thm-logit-norm-growth"].uses == ("thm-correlated-dot-product",)


def test_no_shown_strings_and_no_direct_steps_in_the_module():
    text = open(proofs.correlation.__file__, encoding="utf-8").read()
    assert "shown=" not in text and "Step(" not in text and "result_index" not in text


def test_the_correlation_steps_print_in_the_page_notation():
    limits = [step.latex() for step in proofs.correlated_scaling_limits().steps]
    assert limits[1] == r"\lim_{d_{k} \to \infty}\left(\frac{1}{\sqrt{d_{k}} \rho}\right) = 0"
    assert limits[6].startswith(r"\Pr\left(\left|{\rho - \frac{q \cdot k}{d_{k}}}\right| \geq \varepsilon\right) \le")
    growth = [step.latex() for step in proofs.logit_norm_growth().steps]
    assert growth[0].startswith(r"\sum_{i=1}^{d_{k}} c \left(g {q}_{i}\right) \left(g {k}_{i}\right) =")
    assert growth[-1] == (r"\frac{g_{\sigma}\left(\frac{1}{d_{k}}\right)}{g_{\sigma}\left(\frac{1}{\sqrt{d_{k}}}\right)}"
                          r" = \sqrt[4]{d_{k}}")


def test_the_gain_is_solved_when_the_step_is_checked():
    gain = proofs.correlation._Gain(1 / sp.sqrt(d_k))
    level = sp.Symbol(r"\sigma", positive=True)
    assert sp.simplify(gain.doit() - sp.sqrt(level) / (1 + rho**2) ** sp.Rational(1, 4)) == 0


def test_a_false_gain_identity_or_ratio_is_caught():
    i = sp.Symbol("i", integer=True, positive=True)
    q, k = sp.IndexedBase("q", real=True), sp.IndexedBase("k", real=True)
    g, c = sp.symbols("g c", positive=True)
    gained = proofs.correlation._Parenthesised
    with pytest.raises(ProofError, match="^thm-logit-norm-growth"):
        check("thm-logit-norm-growth", sp.Sum(c * gained(g * q[i]) * gained(g * k[i]), (i, 1, d_k)),
              g * c * sp.Sum(q[i] * k[i], (i, 1, d_k)))
    ratio = proofs.correlation._Gain(1 / d_k) / proofs.correlation._Gain(1 / sp.sqrt(d_k))
    with pytest.raises(ProofError, match="^thm-logit-norm-growth"):
        check("thm-logit-norm-growth", ratio, sp.sqrt(d_k))


def test_a_limit_taken_at_a_large_finite_d_k_fails_the_limits_theorem(monkeypatch):
    monkeypatch.setattr(sp.Limit, "doit", lambda self, **hints: self.args[0].subs(self.args[1], 10**6))
    with pytest.raises(ProofError, match="^thm-correlated-scaling-limits"):
        proofs.correlated_scaling_limits()


def test_planted_false_claims_about_correlated_logits_raise():
    rv, *_, dot = proofs.variance._correlated_dot_product()
    # The textbook belief that 1/sqrt(d_k) gives unit variance fails once rho != 0.
    with pytest.raises(ProofError, match="^thm-correlated-scaling-limits"):
        check("thm-correlated-scaling-limits", Var(dot / sp.sqrt(d_k)), 1, rv)
    with pytest.raises(ProofError, match="^thm-correlated-scaling-limits"):
        check("thm-correlated-scaling-limits", E(dot / d_k), 0, rv)
    gain = sp.Symbol("g", positive=True)
    with pytest.raises(ProofError, match="^thm-logit-norm-growth"):
        check("thm-logit-norm-growth", E(gain**2 * dot / d_k), gain * rho, rv)


def test_a_wrong_correlated_model_fails_both_theorems(monkeypatch):
    # k_i = rho Z_i + W_i forgets the sqrt(1 - rho^2): k_i no longer has unit variance.
    def broken():
        rv = RandomVariables()
        normal = {3: 0, 4: 3}
        Z, W = rv.add_family("Z", 0, 1, normal), rv.add_family("W", 0, 1, normal)
        q = rv.define_family("q", lambda index: Z[index])
        k = rv.define_family("k", lambda index: rho * Z[index] + W[index])
        i = sp.Symbol("i", integer=True, positive=True)
        return rv, Z, q, k, rv.define(r"q \cdot k", sp.Sum(q[i] * k[i], (i, 1, d_k)))

    monkeypatch.setattr(proofs.correlation, "_correlated_dot_product", broken)
    with pytest.raises(ProofError, match="^thm-correlated-scaling-limits"):
        proofs.correlated_scaling_limits()
    with pytest.raises(ProofError, match="^thm-logit-norm-growth"):
        proofs.logit_norm_growth()


# -- The data of the correlated-logits figure ------------------------------------------------


def test_correlated_logits_data_is_the_seeded_sweep_under_both_scales():
    data = correlated_logits_data(n_samples=50, seed=2024)
    assert isinstance(data, CorrelatedLogits)
    assert list(data.by_policy()) == ["sqrt", "linear"]
    assert data.sqrt.d_k.tolist() == [16, 32, 64, 128, 256, 512, 1024]
    assert data.sqrt.rho.tolist() == [0.0, 0.1, 0.5] and data.sqrt.n_samples == 50
    sweep = correlated_logit_sweep(data.sqrt.d_k, [0.0, 0.1, 0.5], 50, seed=2024)
    for policy, moments in data.by_policy().items():
        assert moments.policy == policy
        assert np.array_equal(moments.mean, sweep[policy].mean)


def test_with_means_the_correlated_mean_is_d_k_times_rho_plus_the_product_of_means():
    # Why the model needs mean 0: shifting q_i by mu_q and k_i by mu_k moves E[q.k] to d_k (rho + mu_q mu_k),
    # as the page now says.
    mu_q, mu_k = sp.symbols("mu_q mu_k", real=True)
    rv = RandomVariables()
    normal = {3: 0, 4: 3}
    Z, W = rv.add_family("Z", 0, 1, normal), rv.add_family("W", 0, 1, normal)
    q = rv.define_family("q", lambda index: mu_q + Z[index])
    k = rv.define_family("k", lambda index: mu_k + rho * Z[index] + sp.sqrt(1 - rho**2) * W[index])
    i = sp.Symbol("i", integer=True, positive=True)
    dot = rv.define(r"q \cdot k", sp.Sum(q[i] * k[i], (i, 1, d_k)))
    assert sp.simplify(rv.evaluate(E(dot)) - d_k * (rho + mu_q * mu_k)) == 0
    with pytest.raises(ProofError):
        check("thm-correlated-scaling-limits", E(dot / d_k), rho, rv)
