"""Page support of "Low precision": its tables, the values the page glues, and checks that fail."""

import math

import numpy as np
import pytest

from attention_scaling import softmax
from attention_scaling.low_precision import FORMATS, float_format, precision_grid
from attention_scaling.site import glue_fields, low_precision as page
from attention_scaling.site.checks import PageCheckError
from se_checks import SE_REL, agree, mean_and_se, within


def test_formats_table_rows_read_back():
    lines = page.formats_table().splitlines()
    assert len(lines) == 2 + len(FORMATS)
    assert lines[1] == "|:---|---:|---:|---:|---:|---:|"
    for line, name in zip(lines[2:], FORMATS):
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        f = float_format(name)
        assert cells[0] == name and int(cells[1]) == f.significant_bits
        assert float(cells[2]) == pytest.approx(f.largest, rel=1e-3)
        assert float(cells[3]) == pytest.approx(math.log(f.largest), abs=0.01)
        assert float(cells[5]) == pytest.approx(math.log(f.smallest_subnormal / 2), abs=0.01)


def test_grid_table():
    scores = np.array([[12.0, 11.0, 3.0], [12.0, 10.0, 3.0]], dtype=np.float16)
    lines = page.grid_table(precision_grid(scores, d_k=4)).splitlines()
    assert len(lines) == 6
    assert lines[2] == "| no | no | 12.0 | 0\u00a0% | — | — |"
    assert lines[5].startswith("| yes | yes | 6.0 | 100\u00a0% |") and "±" in lines[5]
    with pytest.raises(TypeError, match="GridCell"):
        page.grid_table([object()])


def test_formats_section_values():
    values = glue_fields(page.formats_section(), "formats")
    assert values["formats_half_largest"] == 65504.0
    assert values["formats_half_significant_bits"] == 11 and values["formats_brain_significant_bits"] == 8
    assert values["formats_ln_largest"] == pytest.approx(math.log(65504), rel=1e-15)
    assert (values["formats_below"], values["formats_above"], values["formats_bracket_step"]) == (
        11.0859375, 11.09375, 2.0**-7)
    assert values["formats_exp_below"] == 65248.0
    bf16_max = (2 - 2.0**-7) * 2.0**127   # 8 significant bits, float32's exponent range
    assert values["formats_brain_largest"] == bf16_max
    assert values["formats_brain_ln_largest"] == pytest.approx(math.log(bf16_max), rel=1e-12)
    assert values["formats_single_ln_largest"] == pytest.approx(math.log(float(np.finfo(np.float32).max)), rel=1e-12)
    assert (values["formats_rounded_257"], values["formats_spacing"]) == (256.0, 1.0)
    assert values["formats_exact_low"] + values["formats_exact_high"] == pytest.approx(1.0)
    assert values["formats_exact_low"] == pytest.approx(1 / (1 + math.exp(0.5)))


def test_formats_section_fails_when_bfloat16_does_not_round(monkeypatch):
    monkeypatch.setattr(page, "to_bfloat16", lambda x: np.asarray(x, dtype=np.float32))
    with pytest.raises(PageCheckError, match="low-precision-formats: .*257 rounds to 256"):
        page.formats_section()


def test_overflow_section_values():
    values = glue_fields(page.overflow_section(), "overflow")
    assert values["overflow_naive_printed"] == "[nan  0.  0.]"
    assert values["overflow_stable_printed"] == "[7.310e-01 2.688e-01 9.018e-05]"
    assert 0 < values["overflow_stable_error"] < 2.0**-11
    assert values["overflow_exp_12"] == pytest.approx(math.exp(12))
    assert (values["overflow_example_d_k"], values["overflow_example_std"]) == (64, 8.0)


def test_overflow_section_fails_when_the_naive_softmax_does_not_overflow(monkeypatch):
    monkeypatch.setattr(page, "naive_softmax", softmax)
    with pytest.raises(PageCheckError, match="low-precision-overflow: .*returns NaN"):
        page.overflow_section()


def float16_row_reference(d_k, n_keys, n_rows=20_000, seed=2024):
    """Largest weight and entropy of softmax(scores) and softmax(scores / sqrt(d_k)), drawn another way.

    With q and k of N(1, 1) components, given q the scores q.k_j are independent
    N(sum q, |q|^2); they are rounded to float16 as on the page, and the softmax
    is taken here in float64. Returns (mean, SE) pairs for the raw and scaled weight and entropy.
    """
    rng = np.random.default_rng(seed)
    q = rng.normal(1.0, 1.0, (n_rows, d_k))
    scores = (q.sum(axis=1, keepdims=True) + np.linalg.norm(q, axis=1, keepdims=True)
              * rng.standard_normal((n_rows, n_keys))).astype(np.float16)
    out = {}
    for name, logits in (("raw", scores.astype(np.float64)),
                         ("scaled", (scores / np.float16(math.sqrt(d_k))).astype(np.float64))):
        p = np.exp(logits - logits.max(axis=-1, keepdims=True))
        p /= p.sum(axis=-1, keepdims=True)
        out[f"{name}_weight"] = mean_and_se(p.max(axis=-1))
        with np.errstate(divide="ignore", invalid="ignore"):
            out[f"{name}_entropy"] = mean_and_se(-np.where(p > 0, p * np.log(p), 0.0).sum(axis=-1))
    return out


def test_two_jobs_section_values():
    section = page.two_jobs_section()
    values = glue_fields(section, "grid")
    d_k, n_keys, n_queries = 256, 8, 2000
    assert (values["grid_d_k"], values["grid_n_keys"], values["grid_n_queries"]) == (d_k, n_keys, n_queries)
    # Components of mean 1 and variance 1: E[q.k] = d_k. A row's mean score varies by
    # Var(sum q) + E|q|^2 / n_keys = d_k + 2 d_k / n_keys; 5 SE (se_checks.Z) over the rows.
    mean_se = math.sqrt((d_k + 2 * d_k / n_keys) / n_queries)
    assert values["grid_mean_score"] == within(d_k, mean_se)
    assert values["grid_scaled_mean"] == within(math.sqrt(d_k), mean_se / math.sqrt(d_k))
    assert values["grid_smallest_row_max"] > float_format("float16").exp_overflow
    # The weights and entropies against an independent float64 computation, within 5
    # combined SE; each reported SE against the reference's, rescaled to n_queries rows.
    reference = float16_row_reference(d_k, n_keys)
    for name in ("raw_weight", "raw_entropy", "scaled_weight", "scaled_entropy"):
        value, se = values[f"grid_{name}"], values[f"grid_{name}_se"]
        agree(value, se, *reference[name])
        assert se == pytest.approx(reference[name][1] * math.sqrt(20_000 / n_queries), rel=SE_REL), name
    assert values["grid_uniform_entropy"] == pytest.approx(math.log(8))
    assert values["grid_subtraction_error"] < 10 * 2.0**-11
    assert (values["grid_product_d_k"], values["grid_component"], values["grid_exact_product"]) == (128, 25.0, 80000.0)
    assert values["grid_largest_safe_component"] == pytest.approx(math.sqrt(65504 / 128))
    assert values["grid_divided_first"] == 7068.0
    assert values["grid_divided_exact"] == pytest.approx(80000 / math.sqrt(128))


def test_two_jobs_section_fails_when_the_scaled_scores_stay_in_range(monkeypatch):
    real = page.rounded_scores
    # Scores 16 times smaller: divided by sqrt(256) they no longer overflow exp in float16.
    monkeypatch.setattr(page, "rounded_scores", lambda q, k, name: real(q / 16, k, name))
    with pytest.raises(PageCheckError, match="low-precision-two-jobs: .*overflows float16 exp"):
        page.two_jobs_section()


def test_underflow_section_values():
    values = glue_fields(page.underflow_section(), "underflow")
    assert values["underflow_half_smallest_subnormal"] == 2.0**-24 and values["underflow_half_smallest_normal"] == 2.0**-14
    assert values["underflow_ln_smallest_subnormal"] == pytest.approx(-24 * math.log(2))
    assert values["underflow_ln_smallest_normal"] == pytest.approx(-14 * math.log(2))
    assert values["underflow_zero_below"] == pytest.approx(-25 * math.log(2))
    assert values["underflow_far_weights_printed"] == "[1.00e+00 4.54e-05 5.96e-08 0.00e+00]"
    # The float64 softmax of [0, -10, -17, -18], in closed form.
    total = 1 + math.exp(-10) + math.exp(-17) + math.exp(-18)
    assert values["underflow_far_exact_2"] == pytest.approx(math.exp(-17) / total, rel=1e-12)
    assert values["underflow_far_exact_3"] == pytest.approx(math.exp(-18) / total, rel=1e-12)
    assert values["underflow_lost_per_key"] == 2.0**-25
    assert (values["underflow_many_keys"], values["underflow_many_keys_lost"]) == (4096, 4096 * 2.0**-25)


def test_underflow_section_fails_when_the_weights_do_not_underflow(monkeypatch):
    monkeypatch.setattr(page, "softmax", lambda x: softmax(np.asarray(x, dtype=np.float64)))
    with pytest.raises(PageCheckError, match="low-precision-underflow: .*weight of -18 is 0"):
        page.underflow_section()
