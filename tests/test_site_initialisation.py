"""Page support of initialisation.md: the records' values, and the page's checks failing when they should."""

import dataclasses
import math
import re
from pathlib import Path

import numpy as np
import pytest

from attention_scaling import layer_norm
from attention_scaling.initialisation import SCHEMES, AttentionSpread, compare_schemes
from attention_scaling.simulate import Estimate
from attention_scaling.site import glue_fields, initialisation as page
from attention_scaling.site.checks import PageCheckError
from attention_scaling.site.initialisation import attention_spread_table, schemes_table
from se_checks import Z, agree, within

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.fixture(scope="module")
def products():
    return page.scheme_products()


@pytest.fixture(scope="module")
def measured():
    return page.scheme_measurements()


@pytest.fixture(scope="module")
def sequences():
    return page.self_scores()


@pytest.fixture(scope="module")
def attention(sequences):
    return page.attention_at_initialisation(sequences)


# -- The records hold the page's numbers ---------------------------------------------------


def test_the_page_tokens_have_squared_norm_d_model():
    tokens = layer_norm(np.random.default_rng(0).normal(loc=3.0, scale=5.0, size=(4, 768)))
    record = page.normalised_tokens(tokens)
    assert record.d_model == 768
    np.testing.assert_allclose(record.squared_norms, 768)


def test_scheme_products(products):
    values = glue_fields(products, "scheme")
    shown = ("scheme_gpt_break_even", "scheme_packed_product", "scheme_packed_score_variance")
    assert {key: values[key] for key in shown} == {"scheme_gpt_break_even": 2500, "scheme_packed_product": 0.5,
                                                   "scheme_packed_score_variance": 0.25}
    assert products.products["xavier-full"] == 1 and products.products["he"] == 2
    assert set(products.products) == set(SCHEMES)


def test_scheme_measurements(measured):
    values = glue_fields(measured, "measured")
    assert {key: values[key] for key in ("measured_n_weights", "measured_n_tokens", "measured_n_scores")} == {
        "measured_n_weights": 20,
        "measured_n_tokens": 64,
        "measured_n_scores": 4096,
    }
    # Seeded: the largest distance, in SE, of 15 measured variances from their predictions;
    # each is about N(0, 1), so all 15 lie within 5 SE (se_checks.Z) of theirs.
    assert 0 <= values["measured_worst_z"] < Z
    assert len(measured.rows) == 3 * len(SCHEMES) == 15
    assert measured.row("xavier-packed", 768).predicted == pytest.approx(0.25, rel=1e-12)
    # Seeded, PyTorch's own draws (uniform, packed): the predicted 1/4 within 5 SE (se_checks.Z).
    assert values["measured_packed_value"] == within(0.25, values["measured_packed_standard_error"])
    assert 0 < values["measured_packed_standard_error"] < 0.25 / 100   # not so large that the check above is vacuous
    assert measured.table == schemes_table(measured.rows)
    assert measured.row("gpt", 768).predicted == pytest.approx(768**2 * 0.02**4)
    with pytest.raises(ValueError, match="no row"):
        measured.row("gpt", 100)


def test_self_scores(sequences):
    values = glue_fields(sequences, "sequences")
    assert (values["sequences_sequence_length"], values["sequences_n_sequences"]) == (128, 24)
    assert sequences.unit_scores.shape == (24, 128, 128)
    # Seeded: the predicted variance 1 within 5 SE (se_checks.Z) of the SE the page reports.
    assert values["sequences_self_variance_value"] == within(1.0, values["sequences_self_variance_standard_error"])
    assert 0 < values["sequences_self_variance_standard_error"] < 0.1


def test_unit_constants(measured):
    record = page.unit_constants(measured)
    assert record.gpt_std == pytest.approx(768 * 0.02**2, rel=1e-12)
    assert record.sqrt_d_k == 8.0
    assert record.he_divisor == pytest.approx(16.0, rel=1e-12)
    assert record.gpt_divisor == pytest.approx(8.0 * 768 * 0.02**2, rel=1e-12)
    assert record.gpt_unit_scale * record.gpt_divisor == pytest.approx(1.0)
    # Seeded: the predicted std d_model * 0.02^2 within 5 SE (se_checks.Z).
    assert record.gpt_measured_std == within(768 * 0.02**2, record.gpt_measured_std_se)
    assert 0 < record.gpt_measured_std_se < 768 * 0.02**2 / 100


def test_attention_at_initialisation(attention, sequences):
    values = glue_fields(attention, "attention")
    assert values["attention_uniform_weight"] == 1 / 128
    # Each scheme's largest weight and entropy, recomputed here from the page's draws with plain NumPy
    # (scores sigma_W^2 times the unit-weight ones, softmax over every key, means over queries, then draws);
    # then against a run with another seed, within 5 combined SE (se_checks.Z).
    other = page.attention_at_initialisation(page.self_scores(seed=2024)).spreads
    n_keys = sequences.unit_scores.shape[-1]
    for scheme in ("gpt", "xavier-full", "he"):
        spread, reference = attention.spreads[scheme], other[scheme]
        scores = spread.sigma_w**2 * np.asarray(sequences.unit_scores, dtype=float)
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        weights /= weights.sum(axis=-1, keepdims=True)
        largest = (n_keys * weights.max(axis=-1)).mean(axis=-1).mean()
        entropy = (-(weights * np.log(weights, where=weights > 0, out=np.zeros_like(weights))).sum(axis=-1)
                   / np.log(n_keys)).mean(axis=-1).mean()
        assert spread.largest_weight.value == pytest.approx(largest, rel=1e-9), scheme
        assert spread.entropy.value == pytest.approx(entropy, rel=1e-9), scheme
        assert values[f"attention_spreads_{scheme}_largest_weight_value"] == pytest.approx(spread.largest_weight.value, rel=1e-12)
        assert values[f"attention_spreads_{scheme}_entropy_value"] == pytest.approx(spread.entropy.value, rel=1e-12)
        agree(spread.largest_weight.value, spread.largest_weight.standard_error,
              reference.largest_weight.value, reference.largest_weight.standard_error)
        agree(spread.entropy.value, spread.entropy.standard_error,
              reference.entropy.value, reference.entropy.standard_error)
    assert attention.table.splitlines()[2] == "| uniform weights | - | 0 | 1 | 1 |"
    assert len(attention.table.splitlines()) == 3 + len(SCHEMES)


# -- The tables -----------------------------------------------------------------------------


def test_schemes_table_has_a_row_per_measurement():
    rows = compare_schemes([(64, 8)], n_weights=4, n_tokens=2, seed=0)
    lines = schemes_table(rows).splitlines()
    assert lines[0] == r"| scheme | $d_{\text{model}}/d_k$ | predicted Var | measured Var ± s.e. | $z$ | scale for Var 1 | $1/\sqrt{d_k}$ |"
    assert lines[1] == "|:---|---:|---:|---:|---:|---:|---:|"
    assert len(lines) == 2 + len(rows)
    assert all(SCHEMES[row.scheme] in line for row, line in zip(rows, lines[2:]))
    assert all(line.count("|") == lines[0].count("|") for line in lines)


def test_attention_spread_table_starts_with_uniform():
    spreads = [AttentionSpread("x", 0.1, 0.5, 8, Estimate(2.0, 0.1), Estimate(0.9, 0.01))]
    lines = attention_spread_table(spreads).splitlines()
    assert lines[:3] == [
        r"| weights | $\sigma_W$ | score std | $n \cdot$ largest weight ± s.e. | entropy / $\ln n$ ± s.e. |",
        "|:---|---:|---:|---:|---:|",
        "| uniform weights | - | 0 | 1 | 1 |",
    ]
    assert lines[3] == "| x | 0.1000 | 0.500 | 2.000 ± 0.100 | 0.90000 ± 0.01000 |"


@pytest.mark.parametrize("render", [schemes_table, attention_spread_table])
def test_tables_refuse_other_rows(render):
    with pytest.raises(TypeError):
        render([object()])


# -- Planted faults: each check can fail ------------------------------------------------------


def test_tokens_without_layer_norm_are_caught():
    tokens = np.random.default_rng(0).normal(loc=3.0, scale=5.0, size=(4, 768))
    with pytest.raises(PageCheckError, match="initialisation-setting.*squared norm d_model"):
        page.normalised_tokens(tokens)


def test_a_wrong_sigma_w_is_caught(monkeypatch):
    monkeypatch.setattr(page, "weight_std", lambda scheme, d_model, d_k: 0.03)
    with pytest.raises(PageCheckError, match="initialisation-schemes.*sigma_W\\^2 equals the symbolic variance"):
        page.scheme_products()


def test_a_measurement_far_from_the_theorem_is_caught(monkeypatch):
    def biased(*args, **kwargs):
        rows = compare_schemes(*args, **kwargs)
        row = rows[0]
        # Four standard errors too high.
        shifted = Estimate(row.predicted + 4 * row.measured.standard_error, row.measured.standard_error)
        return [dataclasses.replace(row, measured=shifted), *rows[1:]]

    monkeypatch.setattr(page, "compare_schemes", biased)
    with pytest.raises(PageCheckError, match="within 3 standard errors of the theorem .worst_z=(3.99|4.0)"):
        page.scheme_measurements(n_weights=4, n_tokens=8)


def test_a_wrong_self_variance_prediction_is_caught(monkeypatch):
    monkeypatch.setattr(page, "predicted_score_variance", lambda d_model, sigma_q, sigma_k: 2.0)
    with pytest.raises(PageCheckError, match="against itself has the predicted variance"):
        page.self_scores(sequence_length=16, n_sequences=4)


def test_a_wrong_unit_scale_is_caught(monkeypatch, measured):
    monkeypatch.setattr(page, "unit_variance_scale", lambda *args: 1.0)
    with pytest.raises(PageCheckError, match="initialisation-constant.*unit_variance_scale"):
        page.unit_constants(measured)


def test_attention_that_does_not_sharpen_is_caught(monkeypatch, sequences):
    # GPT's weights as large as He's: then GPT is no flatter than Xavier.
    monkeypatch.setattr(page, "weight_std", lambda scheme, d_model, d_k: math.sqrt(2 / d_model))
    with pytest.raises(PageCheckError, match="initialisation-uniform.*entropy is higher"):
        page.attention_at_initialisation(sequences)


def test_a_wrong_packed_product_is_caught(monkeypatch):
    # Planted fault: the packed default counted with fan-out d_model, as if W_Q were a separate square matrix.
    real = page.weight_std
    monkeypatch.setattr(page, "weight_std",
                        lambda scheme, d_model, d_k: real("xavier-full" if scheme == "xavier-packed" else scheme, d_model, d_k))
    with pytest.raises(PageCheckError, match="sigma_W\\^2 equals the symbolic variance.*xavier-packed"):
        page.scheme_products()


def test_in_projection_disagreeing_with_the_symbolic_product_is_caught(monkeypatch):
    # Planted fault: in_projection gives the packed layout the separate layout's variance.
    real = page.in_projection
    monkeypatch.setattr(page, "in_projection", lambda embed_dim, layout="packed", **kw: real(embed_dim, "separate"))
    with pytest.raises(PageCheckError, match="in_projection gives the packed layout's scores"):
        page.scheme_products()


def test_pytorch_draws_far_from_the_prediction_are_caught(monkeypatch):
    # Planted fault: the simulation of PyTorch's draws returns scores twice too large.
    real = page.in_projection_scores
    monkeypatch.setattr(page, "in_projection_scores", lambda *args, **kwargs: 2 * real(*args, **kwargs))
    with pytest.raises(PageCheckError, match="PyTorch's packed draws give the predicted variance"):
        page.scheme_measurements(n_weights=4, n_tokens=8)


def test_the_page_no_longer_says_only_one_scheme_gives_unit_variance(products, measured):
    # "Of the three common schemes only one meets that" left out PyTorch's packed default
    # (scaled-score variance 1/4) and GPT at d_model = 2500; the page now glues both.
    text = (DOCS / "initialisation.md").read_text()
    assert "only one meets that" not in text
    intro = text[: text.index("```{code-cell}")]
    used = set(re.findall(r"\{glue:text\}`([\w-]+)", intro))
    assert used == {"scheme_gpt_break_even", "scheme_packed_score_variance"}
    glued = {**glue_fields(products, "scheme"), **glue_fields(measured, "measured")}
    shown = ("scheme_packed_product", "scheme_packed_score_variance", "measured_packed_value",
             "measured_packed_standard_error")
    assert set(shown) <= set(glued)
    for key in shown:
        assert f"{{glue:text}}`{key}" in text
