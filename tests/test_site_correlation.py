"""Page support of correlation.md: the records' values, and the page's checks failing when they should."""

import dataclasses
import math
import re
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from scipy import integrate, stats

from attention_scaling import proofs
from attention_scaling.correlation import correlated_logits_data, linear_logit_tail, norm_growth
from attention_scaling.site import correlation as page, glue_fields
from attention_scaling.site.checks import PageCheckError
from attention_scaling.site.correlation import norm_growth_table, tail_table
from se_checks import SE_REL, agree, proportion_se, within


@pytest.fixture(scope="module")
def sweep():
    # The page's figure data: seven head dimensions, three correlations, 4000 draws, seed 2024.
    return correlated_logits_data(n_samples=4000, seed=2024)


@pytest.fixture(scope="module")
def tail(sweep):
    linear = sweep.linear
    return linear_logit_tail(linear.d_k.tolist(), 0.5, 0.1, linear.n_samples, seed=2024)


@pytest.fixture(scope="module")
def growth():
    return norm_growth(2 ** (np.arange(9) / 2))


def _agree():
    d = sp.Symbol("d", positive=True)
    return sp.solveset(sp.Eq(8 / d, 1 / sp.sqrt(d)), d, sp.Interval.open(0, sp.oo))


# -- The records hold the page's numbers ---------------------------------------------------


def test_logit_gap():
    assert glue_fields(page.logit_gap(rho=0.5, d_k=1024), "gap") == {
        "gap_rho": 0.5,
        "gap_d_k": 1024,
        "gap_sqrt_gap": 16.0,
        "gap_linear_gap": 0.5,
    }


def test_correlated_sweep(sweep):
    values = glue_fields(page.correlated_sweep(sweep), "sweep")
    keys = ("sweep_logits_linear_n_samples", "sweep_d_min", "sweep_d_max", "sweep_points")
    assert {key: values[key] for key in keys} == {
        "sweep_logits_linear_n_samples": 4000,
        "sweep_d_min": 16,
        "sweep_d_max": 1024,
        "sweep_points": 21,
    }
    assert values["sweep_sqrt_predicted_mean"] == 16.0
    assert values["sweep_sqrt_predicted_std"] == pytest.approx(np.sqrt(1.25), rel=1e-12)
    assert values["sweep_linear_predicted_std"] == pytest.approx(np.sqrt(1.25 / 1024), rel=1e-12)
    # Seeded: each moment at d_k = 1024 against its proved value within 5 SE (se_checks.Z).
    # The mean of rho d_k / c has SE sqrt(1 + rho^2) c / sqrt(n); the std's SE is about
    # std / sqrt(2 (n - 1)) (the logit is nearly normal); the reported SEs must match (SE_REL).
    n, d, rho = 4000, 1024, 0.5
    for name, c in (("sqrt", 1 / math.sqrt(d)), ("linear", 1 / d)):
        std = math.sqrt((1 + rho**2) * d) * c
        assert values[f"sweep_{name}_mean"] == within(rho * d * c, values[f"sweep_{name}_mean_se"])
        assert values[f"sweep_{name}_mean_se"] == pytest.approx(std / math.sqrt(n), rel=SE_REL)
        assert values[f"sweep_{name}_std"] == within(std, values[f"sweep_{name}_std_se"])
        assert values[f"sweep_{name}_std_se"] == pytest.approx(std / math.sqrt(2 * (n - 1)), rel=SE_REL)
    # The largest distance of a point from its proved value, in SE: the page allows 3.
    assert 0 < values["sweep_max_mean_z"] <= 3 and 0 < values["sweep_max_std_z"] <= 3


def linear_tail_probability(d, rho, epsilon):
    r"""P(|q.k / d - rho| > epsilon) for k = rho q + sqrt(1 - rho^2) xi, by quadrature.

    Given A = |q|^2 (chi-square, d degrees of freedom), q.k = rho A + sqrt((1 - rho^2) A) N(0, 1).
    """
    def given(a):
        s = math.sqrt((1 - rho**2) * a)
        shift = rho * (a - d)
        return stats.norm.cdf((-epsilon * d - shift) / s) + stats.norm.sf((epsilon * d - shift) / s)

    low, high = stats.chi2.ppf([1e-13, 1 - 1e-13], d)
    return integrate.quad(lambda a: given(a) * stats.chi2.pdf(a, d), low, high, epsabs=1e-14, limit=200)[0]


def test_chebyshev_tail(tail):
    record = page.chebyshev_tail(tail)
    values = glue_fields(record, "tail")
    assert (values["tail_check_rho"], values["tail_check_epsilon"]) == (0.5, 0.1)
    assert values["tail_last_bound"] == pytest.approx(1.25 / (1024 * 0.01), rel=1e-12)
    # The exact tail probability by quadrature; 5 SE of a proportion of the draws (se_checks.Z).
    p = linear_tail_probability(1024, 0.5, 0.1)
    assert values["tail_last_fraction"] == within(p, proportion_se(p, tail.n_samples))
    assert p < values["tail_last_bound"]   # Chebyshev's bound holds, loosely
    assert record.table == tail_table(tail)
    assert record.table.splitlines()[-1] == (
        f"| 1024 | {tail.fraction[-1]:.4f} ± {tail.fraction_se[-1]:.4f} | {values['tail_last_bound']:.4f} |")


def test_mup_scales():
    record = page.mup_scales(_agree())
    assert glue_fields(record, "mup") == {"mup_ratio_256": 0.5, "mup_ratio_1024": 0.25}


def norm_growth_reference(gains, *, repeats=30, d_model=64, d_k=64, n_keys=16, n_queries=512, seed=2024):
    """Mean and spread over repeats of the mean largest weight under 1/d_k, at the first and last gain."""
    rng = np.random.default_rng(seed)
    means = np.empty((repeats, len(gains)))
    for r in range(repeats):
        w_q, w_k = rng.standard_normal((2, d_model, d_k)) / math.sqrt(d_model)
        q = rng.standard_normal((n_queries, 1, d_model)) @ w_q
        k = rng.standard_normal((n_queries, n_keys, d_model)) @ w_k
        raw = (q @ k.swapaxes(-1, -2))[:, 0, :] / d_k
        for i, gain in enumerate(gains):
            logits = gain**2 * raw
            weights = np.exp(logits - logits.max(axis=-1, keepdims=True))
            means[r, i] = (1 / weights.sum(axis=-1)).mean()
    return {"first": (means[:, 0].mean(), means[:, 0].std(ddof=1)),
            "last": (means[:, -1].mean(), means[:, -1].std(ddof=1))}


def test_growth_without_alignment(growth):
    record = page.growth_without_alignment(growth, shift=3)
    values = glue_fields(record, "growth")
    assert {key: values[key] for key in ("growth_norms_d_k", "growth_norms_n_keys", "growth_norms_n_queries")} == {
        "growth_norms_d_k": 64,
        "growth_norms_n_keys": 16,
        "growth_norms_n_queries": 512,
    }
    assert values["growth_d_k_fourth_root"] == pytest.approx(2 ** 1.5, rel=1e-12)
    assert (values["growth_uniform_weight"], values["growth_max_gain"]) == (0.0625, 16.0)
    # Seeded: one draw of the projections W_Q, W_K is shared by all 512 queries, so the
    # reported SE (over queries) leaves out the spread between draws. Each mean largest weight
    # must lie within 5 standard deviations (se_checks.Z) of the whole experiment, repeated here.
    for key, (mean, sd) in norm_growth_reference((1.0, 16.0)).items():
        agree(values[f"growth_linear_{key}"], sd, mean, sd / math.sqrt(30))
        assert values[f"growth_linear_{key}_se"] > 0
    assert record.table == norm_growth_table(growth)


# -- The tables -----------------------------------------------------------------------------


def test_tail_table():
    lines = tail_table(linear_logit_tail([16, 64], 0.5, 0.1, 100, seed=0)).splitlines()
    assert lines[:2] == [r"| $d_k$ | fraction at least $\varepsilon$ from $\rho$ | Chebyshev bound |", "|---:|---:|---:|"]
    assert len(lines) == 4 and lines[2].startswith("| 16 | ")


def test_norm_growth_table(growth):
    lines = norm_growth_table(growth).splitlines()
    assert lines[0] == (
        r"| gain $g$ | logit s.d., $1/\sqrt{d_k}$ | logit s.d., $1/d_k$ | largest weight, $1/\sqrt{d_k}$ | largest weight, $1/d_k$ |"
    )
    assert lines[1] == "|---:|---:|---:|---:|---:|"
    assert len(lines) == 2 + growth.gains.size
    assert lines[2].startswith("| 1 | ") and f"{growth.max_weight['linear'][0]:.3f}" in lines[2]


@pytest.mark.parametrize("render, name", [(tail_table, "TailCheck"), (norm_growth_table, "NormGrowth")])
def test_tables_refuse_other_objects(render, name):
    with pytest.raises(TypeError, match=name):
        render({})


# -- Planted faults: each check can fail ------------------------------------------------------


def test_a_sample_mean_off_its_proved_value_is_caught(sweep):
    linear = sweep.linear
    shifted = dataclasses.replace(linear, mean=linear.mean + 4 * linear.mean_se)
    with pytest.raises(PageCheckError, match="correlation-simulation.*every sample mean lies within 3"):
        page.correlated_sweep(dataclasses.replace(sweep, linear=shifted))


def test_a_sample_spread_off_its_proved_value_is_caught(sweep):
    root = sweep.sqrt
    shifted = dataclasses.replace(root, std=root.std - 4 * root.std_se)
    with pytest.raises(PageCheckError, match="every sample standard deviation lies within 3"):
        page.correlated_sweep(dataclasses.replace(sweep, sqrt=shifted))


def test_a_tail_above_the_bound_is_caught(tail):
    with pytest.raises(PageCheckError, match="below Chebyshev's bound"):
        page.chebyshev_tail(dataclasses.replace(tail, bound=tail.fraction))


def test_a_tail_that_does_not_shrink_is_caught(tail):
    # A fraction that stays flat (at 0, so the bound still holds) does not shrink.
    flat = dataclasses.replace(tail, fraction=np.zeros_like(tail.fraction), fraction_se=np.zeros_like(tail.fraction))
    with pytest.raises(PageCheckError, match="the observed tail shrinks as d_k grows"):
        page.chebyshev_tail(flat)


def test_scales_agreeing_twice_are_caught():
    with pytest.raises(PageCheckError, match="correlation-mup.*agree at d = 64 and nowhere else"):
        page.mup_scales(sp.FiniteSet(16, 64))


def test_logits_not_growing_like_g_squared_are_caught(growth):
    error = {scale: values + 1e-9 for scale, values in growth.rescaling_error.items()}
    with pytest.raises(PageCheckError, match="correlation-norms.*g\\^2 times its value at gain 1"):
        page.growth_without_alignment(dataclasses.replace(growth, rescaling_error=error))


def test_a_wrong_shift_is_caught(growth):
    with pytest.raises(PageCheckError, match="d_k\\^\\(1/4\\)"):
        page.growth_without_alignment(growth, shift=2)


def test_a_linear_scale_not_lagging_the_root_is_caught(growth):
    weights = {"sqrt": growth.max_weight["sqrt"], "linear": growth.max_weight["linear"] * 1.01}
    with pytest.raises(PageCheckError, match="repeat those under 1/sqrt\\(d_k\\)"):
        page.growth_without_alignment(dataclasses.replace(growth, max_weight=weights))


# -- The theorem statements: printed from the checks ----------------------------------------------

PAGE = Path(__file__).resolve().parents[1] / "docs" / "correlation.md"


def _displays():
    return {**page.theorem_displays(proofs.correlated_scaling_limits()),
            **page.theorem_displays(proofs.logit_norm_growth())}


def test_every_displayed_equation_of_a_theorem_is_glued_from_its_checked_steps():
    text = PAGE.read_text(encoding="utf-8")
    pasted = dict(re.findall(r"```\{glue:math\} ([\w-]+)\n(?::label: ([\w-]+)\n)?", text))
    displays = _displays()
    assert set(pasted) == set(displays)
    assert {key: label for key, label in pasted.items() if label} == {
        "thm-correlated-scaling-limits": "eq-correlated-sqrt",
        "eq-correlated-linear": "eq-correlated-linear",
        "eq-correlated-chebyshev": "eq-correlated-chebyshev",
        "thm-logit-norm-growth": "eq-logit-gain",
        "eq-gain-ratio": "eq-gain-ratio",
    }
    limits, growth = proofs.correlated_scaling_limits(), proofs.logit_norm_growth()
    assert displays[limits.label].latex == limits.statement
    assert displays[growth.label].latex == growth.statement
    rows = displays["eq-correlated-chebyshev"].latex.removeprefix(r"\begin{aligned}").removesuffix(r"\end{aligned}")
    assert [row.replace(" &", " ", 1) for row in rows.split(",\\\\ ")] == [step.latex() for step in limits.steps[6:9]]
    assert displays["eq-gain-ratio"].latex == page.aligned_display(growth, (6,)).latex
    assert displays["eq-correlated-linear"].latex == page.aligned_display(limits, (3, 4)).latex
    for theorem in re.findall(r"````\{prf:theorem\}.*?\n````\n", text, flags=re.S):
        assert "$$" not in theorem


def test_the_page_says_which_step_is_cited():
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    proof = text[text.index("The moments follow from"):text.index("limits = correlated_scaling_limits()")]
    assert "cited, not derived" in proof and "SymPy checks every other step" in proof


def test_the_correlated_model_states_its_zero_means():
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    model = text[text.index("(correlation-model)="):text.index("(correlation-limits)=")]
    assert "jointly Gaussian with mean 0, unit variances and correlation $\\rho$" in model
    assert "d_k(\\rho + \\mu_q\\mu_k)" in model
    assert "with mean 0" in " ".join(proofs.correlated_scaling_limits().assumptions)
    assert "with mean 0" in " ".join(proofs.logit_norm_growth().assumptions)
