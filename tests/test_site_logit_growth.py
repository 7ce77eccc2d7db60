"""Page support of "Logit growth, QK-norm and entropy collapse": the values the page glues, and checks that fail."""

import dataclasses
import math

import numpy as np
import pytest
import sympy as sp

from attention_scaling.logit_growth import entropy_collapse_data, logit_growth
from attention_scaling.site import logit_growth as page
from attention_scaling.site.checks import PageCheckError


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


def test_growth_section_values(growth):
    values = growth.glue_values()
    assert (values["growth_d_model"], values["growth_d_k"], values["growth_tokens"], values["growth_trials"]) == (
        256, 64, 64, 16)
    assert values["growth_uniform"] == pytest.approx(math.log(64))
    assert values["growth_c_max"] == 8.0
    # The logit std starts near 1 and grows exactly as c**2.
    assert values["growth_std_max"] == pytest.approx(64 * growth.measurement.logit_std[0], rel=1e-12)
    assert values["growth_std_max"] == pytest.approx(64.5, abs=0.5)
    assert values["growth_entropy_first"] == pytest.approx(3.679, abs=0.02)
    assert values["growth_entropy_last"] == pytest.approx(0.0636, abs=0.02)
    assert values["growth_max_first"] == pytest.approx(0.108, abs=0.005)
    assert values["growth_max_last"] == pytest.approx(0.975, abs=0.01)
    assert all(values[key] > 0 for key in values if key.endswith("_se"))


def test_growth_table_has_one_row_per_factor(growth):
    lines = growth.table.splitlines()
    assert lines[0] == "| growth $c$ | logit std | entropy (nats) | largest weight |"
    assert lines[1] == "|---:|---:|---:|---:|"
    assert len(lines) == 2 + len(growth.measurement.growth)
    assert lines[-1].startswith("| 8 | 64.508 ± ")


def test_growth_section_fails_when_the_std_does_not_grow_as_c_squared(monkeypatch):
    def bent(*args, **kwargs):
        result = logit_growth(*args, **kwargs)
        return dataclasses.replace(result, logit_std=result.logit_std * (1 + 1e-6 * np.arange(result.growth.size)))

    monkeypatch.setattr(page, "logit_growth", bent)
    with pytest.raises(PageCheckError, match=r"logit-growth-demo: .*grows as c\*\*2"):
        page.growth_section()


def test_qk_norm_section_values(qk):
    values = qk.glue_values()
    assert (values["qk_d"], values["qk_n"], values["qk_pairs"]) == (128, 256, 65536)
    assert values["qk_bound"] == values["sqrt_128"] == pytest.approx(math.sqrt(128))
    assert values["qk_random_max"] == pytest.approx(3.959, abs=1e-3)
    assert values["qk_aligned_error"] < 1e-12
    assert values["fp16_max"] == 65504 and isinstance(values["fp16_max"], int)
    assert values["fp16_log"] == pytest.approx(math.log(65504))
    assert (values["gain_low"], values["gain_high"], values["scalar_gain"]) == (0.5, 3.0, 2.0)
    assert values["gained_max"] == pytest.approx(21.77, abs=0.01)
    assert values["gained_bound"] == pytest.approx(87.08, abs=0.01)
    assert values["scalar_aligned"] == pytest.approx(4 * math.sqrt(128))


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
    values = entropy_check.glue_values()
    assert values["check_n"] == 600 and values["check_violations"] == 0
    assert (values["check_t_low"], values["check_t_high"]) == (2, 64)
    assert 0.01 <= values["check_sigma_low"] < values["check_sigma_high"] <= 100
    assert 0 <= values["check_min_gap"] < 1e-6
    assert values["misread_violations"] == 318
    assert values["rows_count"] == 18000
    assert values["tight_error"] < 1e-12 and values["tight_sigma_max"] == 40.0
    assert values["weights_deficit"] == pytest.approx(0.0236, abs=1e-3)


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
    values = page.entropy_collapse_section(collapse_data).glue_values()
    assert (values["collapse_t"], values["collapse_n"]) == (16, 200)
    assert values["collapse_log_t"] == pytest.approx(math.log(16))
    assert values["collapse_bound_12"] == pytest.approx(8.33e-4, rel=1e-2)
    assert values["collapse_row_share"] == pytest.approx(0.154, abs=1e-3)


def test_entropy_collapse_section_fails_when_a_worst_case_head_is_off_the_bound(collapse_data):
    planted = dataclasses.replace(collapse_data, tight_entropy=collapse_data.tight_entropy * (1 + 1e-6))
    with pytest.raises(PageCheckError, match="fig-entropy-collapse.*worst-case heads lie on the bound"):
        page.entropy_collapse_section(planted)
