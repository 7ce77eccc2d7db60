"""Page support of "Logit growth, QK-norm and entropy collapse": the values the page glues, and checks that fail."""

import dataclasses
import math

import numpy as np
import pytest
import sympy as sp

from attention_scaling.logit_growth import entropy_bound_check, entropy_collapse_data, logit_growth, zhai_entropy_bound
from attention_scaling.site import glue_fields, logit_growth as page
from attention_scaling.site.checks import PageCheckError
from se_checks import Z, agree, mean_and_se, proportion_se


@pytest.fixture(scope="module")
def growth():
    return page.growth_section()


@pytest.fixture(scope="module")
def qk():
    return page.qk_norm_section()


@pytest.fixture(scope="module")
def entropy_check():
    return page.entropy_check_section()


@pytest.fixture(scope="module")
def collapse_data():
    return entropy_collapse_data()


def layer_norm(x):
    """LayerNorm without gain, written out: centred, then divided by the root-mean-square."""
    centred = x - x.mean(axis=-1, keepdims=True)
    return centred / np.sqrt((centred**2).mean(axis=-1, keepdims=True))


def growth_reference(c, *, trials=64, d_model=256, d_k=64, n_tokens=64, seed=2024):
    """Logit std, mean entropy and mean largest weight of the page's random head at growth c, over many trials."""
    rng = np.random.default_rng(seed)
    stds, entropies, largest = (np.empty(trials) for _ in range(3))
    for trial in range(trials):
        x = layer_norm(rng.standard_normal((n_tokens, d_model)))
        w_q, w_k = rng.standard_normal((2, d_model, d_k)) / math.sqrt(d_model)
        logits = c**2 * (x @ w_q) @ (x @ w_k).T / math.sqrt(d_k)
        p = np.exp(logits - logits.max(axis=-1, keepdims=True))
        p /= p.sum(axis=-1, keepdims=True)
        stds[trial] = logits.std()
        entropies[trial] = -np.sum(p * np.log(np.where(p > 0, p, 1.0)), axis=-1).mean()
        largest[trial] = p.max(axis=-1).mean()
    return {"std": mean_and_se(stds), "entropy": mean_and_se(entropies), "max": mean_and_se(largest)}


def test_growth_section_values(growth):
    values = glue_fields(growth, "growth")
    g = growth.measurement
    assert (values["growth_measurement_d_model"], values["growth_measurement_d_k"], values["growth_measurement_n_tokens"],
            values["growth_measurement_n_trials"]) == (256, 64, 64, 16)
    assert values["growth_uniform_entropy"] == pytest.approx(math.log(64))
    assert values["growth_c_max"] == 8.0
    # The logit std grows exactly as c**2 ...
    assert values["growth_logit_std_max"] == pytest.approx(64 * g.logit_std[0], rel=1e-12)
    # ... and the rest against the same head simulated here over 64 trials, within 5
    # combined SE (se_checks.Z). At c = 1 the logits have variance 1 (components of
    # variance 1, divided by sqrt(d_k)); their std is about 1.
    first, last = growth_reference(1.0), growth_reference(8.0)
    agree(g.logit_std[0], g.logit_std_se[0], *first["std"])
    for key, reference, column in (("first", first, 0), ("last", last, -1)):
        agree(values[f"growth_entropy_{key}"], values[f"growth_entropy_{key}_se"], *reference["entropy"])
        agree(values[f"growth_max_weight_{key}"], values[f"growth_max_weight_{key}_se"], *reference["max"])
        assert values[f"growth_entropy_{key}_se"] == g.entropy_se[column] > 0
    assert all(values[key] > 0 for key in values if key.endswith("_se"))


def test_growth_table_has_one_row_per_factor(growth):
    lines = growth.table.splitlines()
    g = growth.measurement
    assert lines[0] == "| growth $c$ | logit std | entropy (nats) | largest weight |"
    assert lines[1] == "|---:|---:|---:|---:|"
    assert len(lines) == 2 + len(g.growth)
    assert lines[-1].startswith(f"| 8 | {g.logit_std[-1]:.3f} ± {g.logit_std_se[-1]:.3f} | ")


def test_growth_section_fails_when_the_std_does_not_grow_as_c_squared(monkeypatch):
    def bent(*args, **kwargs):
        result = logit_growth(*args, **kwargs)
        return dataclasses.replace(result, logit_std=result.logit_std * (1 + 1e-6 * np.arange(result.growth.size)))

    monkeypatch.setattr(page, "logit_growth", bent)
    with pytest.raises(PageCheckError, match=r"logit-growth-demo: .*grows as c\*\*2"):
        page.growth_section()


def qk_norm_reference(replicates=25, d_k=128, n=256, seed=2024):
    """The page's random QK-norm experiment, written out and repeated: its largest logits and gained bound."""
    rng = np.random.default_rng(seed)
    largest, gained, bounds = (np.empty(replicates) for _ in range(3))
    for i in range(replicates):
        q = layer_norm(rng.standard_normal((n, d_k)) * rng.uniform(0.1, 10.0, (n, 1)))
        k = layer_norm(rng.standard_normal((n, d_k)) ** 3)
        gain_q, gain_k = rng.uniform(0.5, 3.0, (2, d_k))
        largest[i] = np.abs(q @ k.T).max() / math.sqrt(d_k)
        gained[i] = np.abs((gain_q * q) @ (gain_k * k).T).max() / math.sqrt(d_k)
        bounds[i] = math.sqrt(d_k) * np.max(gain_q * gain_k)
    return {name: (x.mean(), x.std(ddof=1)) for name, x in
            (("qk_random_max", largest), ("qk_gained_max", gained), ("qk_gained_bound", bounds))}


def test_qk_norm_section_values(qk):
    values = glue_fields(qk, "qk")
    assert (values["qk_d_k"], values["qk_n"], values["qk_n_pairs"]) == (128, 256, 65536)
    assert values["qk_bound"] == values["qk_sqrt_128"] == pytest.approx(math.sqrt(128))
    assert values["qk_random_max"] <= values["qk_bound"] and values["qk_gained_max"] <= values["qk_gained_bound"]
    # Each largest logit, and the gained bound, is one draw of a maximum: within 5 of its
    # standard deviations (se_checks.Z) of the mean over 25 repetitions written out here.
    reference = qk_norm_reference()
    for key, (mean, sd) in reference.items():
        agree(values[key], sd, mean, sd / math.sqrt(25))
    # The gains are at most 3 each: the gained bound is at most 9 sqrt(d_k).
    assert values["qk_gained_bound"] <= 9 * math.sqrt(128)
    assert values["qk_aligned_error"] < 1e-12
    assert values["qk_fp16_max"] == 65504 and isinstance(values["qk_fp16_max"], int)
    assert values["qk_fp16_log"] == pytest.approx(math.log(65504))
    assert (values["qk_gain_low"], values["qk_gain_high"], values["qk_scalar_gain"]) == (0.5, 3.0, 2.0)
    assert values["qk_scalar_aligned"] == pytest.approx(4 * math.sqrt(128))


def test_qk_norm_section_fails_when_a_logit_exceeds_the_bound(monkeypatch):
    monkeypatch.setattr(page, "qk_norm_bound", lambda d_k, **gains: 1.0)
    with pytest.raises(PageCheckError, match="logit-growth-qk-numbers: .*within sqrt"):
        page.qk_norm_section()


def test_qk_norm_section_fails_when_the_theorem_caps_gained_logits_at_sqrt_d_k():
    # Planted: a statement of thm-qk-norm-bound whose interval ignores the gains, the
    # overstatement of issue 13 ("caps every logit at sqrt(d_k)"). Its step is a valid
    # check; only the bound it states disagrees with the measured gained logits.
    from attention_scaling.proofs import Proof, d_k
    from attention_scaling.proofs.engine import check_solutions

    z = sp.Symbol("z", real=True)
    plain = check_solutions("thm-qk-norm-bound", z, z**2 <= d_k, sp.S.Reals, sp.Interval(-sp.sqrt(d_k), sp.sqrt(d_k)))
    overstated = Proof("QK-norm", "thm-qk-norm-bound", (), (plain,))
    with pytest.raises(PageCheckError, match="logit-growth-qk-numbers: check failed: the bounds without and with gains"):
        page.qk_norm_section(n=8, proof=overstated)


def test_entropy_check_section_values(entropy_check):
    values = glue_fields(entropy_check, "check")
    assert values["check_n_heads"] == 600 and values["check_violations"] == 0
    assert (values["check_t_low"], values["check_t_high"]) == (2, 64)
    assert 0.01 <= values["check_sigma_low"] < values["check_sigma_high"] <= 100
    assert 0 <= values["check_min_gap"] < 1e-6
    assert values["check_rows_checked"] == 18000
    assert values["check_tight_error"] < 1e-12 and values["check_tight_sigma_max"] == 40.0
    assert values["check_weights_deficit"] == pytest.approx(0.0236, abs=1e-3)   # the worst case is not random
    # The share of heads that break the misread bound: against 400 heads drawn with another seed,
    # within 5 combined SE (se_checks.Z) of two proportions.
    more = entropy_bound_check(400, seed=2024)
    reference = float(np.mean(more.min_entropy < zhai_entropy_bound(more.sigma / more.x_norm, more.n_tokens)))
    share = values["check_misread_violations"] / 600
    agree(share, proportion_se(share, 600), reference, proportion_se(reference, 400))


def test_entropy_check_section_fails_when_a_head_breaks_the_bound(monkeypatch):
    real = page.entropy_bound_check

    def lowered(*args, **kwargs):
        check = real(*args, **kwargs)
        return dataclasses.replace(check, min_entropy=check.min_entropy - 0.5)

    monkeypatch.setattr(page, "entropy_bound_check", lowered)
    with pytest.raises(PageCheckError, match="logit-growth-entropy-check: .*no random head") as error:
        page.entropy_check_section(50)
    assert "violations=" in str(error.value)


def test_entropy_collapse_section_values(collapse_data):
    values = glue_fields(page.entropy_collapse_section(collapse_data), "collapse")
    assert (values["collapse_n_tokens"], values["collapse_n_heads"]) == (16, 200)
    assert values["collapse_log_t"] == pytest.approx(math.log(16))
    assert values["collapse_bound_12"] == pytest.approx(8.33e-4, rel=1e-2)
    # The median of 200 heads' shares lies, within 5 SE of a proportion of 200 (se_checks.Z),
    # at the middle of their distribution, here from 400 heads drawn with another seed.
    more = entropy_bound_check(400, seed=2024, n_tokens=(16, 16), sigma_range=(1e-2, 1e3))
    shares = more.max_row_norm / more.sigma
    half_width = Z * proportion_se(0.5, 200)
    low, high = np.quantile(shares, [0.5 - half_width, 0.5 + half_width])
    assert low <= values["collapse_median_row_share"] <= high


def test_entropy_collapse_section_fails_when_a_worst_case_head_is_off_the_bound(collapse_data):
    planted = dataclasses.replace(collapse_data, tight_entropy=collapse_data.tight_entropy * (1 + 1e-6))
    with pytest.raises(PageCheckError, match="fig-entropy-collapse.*worst-case heads lie on the bound"):
        page.entropy_collapse_section(planted)
