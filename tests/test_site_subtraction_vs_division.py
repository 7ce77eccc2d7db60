"""Page support of docs/subtraction-vs-division.md: the stability and division examples."""

import math
import re
from pathlib import Path

import numpy as np
import pytest

from attention_scaling import naive_softmax, softmax
from attention_scaling.site import glue_fields, subtraction_vs_division as page
from attention_scaling.site.checks import PageCheckError

SCORES = np.array([800.0, 801.0, 803.0])
DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_stability_example():
    stable = softmax(SCORES)
    same = np.allclose(softmax(SCORES - SCORES.max()), stable, rtol=0, atol=1e-15)
    values = glue_fields(page.stability_example(stable, naive_softmax(SCORES), same), "stability")
    assert values == {
        "stability_stable_weights": "[0.0420 0.1142 0.8438]",
        "stability_naive_weights": "[nan nan nan]",
        "stability_float64_max_log": pytest.approx(np.log(np.finfo(np.float64).max), rel=1e-12),
    }


def test_stability_example_fails_when_the_naive_version_does_not_overflow():
    # Planted fault: scores small enough for the naive formula.
    small = SCORES - 800
    with pytest.raises(PageCheckError, match="computing softmax as written overflows"):
        page.stability_example(softmax(small), naive_softmax(small), True)


def test_stability_example_fails_when_shifting_changed_the_weights():
    with pytest.raises(PageCheckError, match="softmax of the shifted scores equals softmax of the scores"):
        page.stability_example(softmax(SCORES), naive_softmax(SCORES), False)


def test_division_example():
    scores = np.array([12.0, 4.0, 0.0, -4.0])
    values = glue_fields(page.division_example(64, softmax(scores), softmax(scores / 8)), "division")
    assert values == {"division_d_k": 64, "division_raw": "[0.9997 0.0003 0.0000 0.0000]",
                      "division_scaled": "[0.5793 0.2131 0.1293 0.0784]"}


def test_division_example_fails_when_the_division_sharpens():
    # Planted fault: multiplying by sqrt(d_k) instead of dividing.
    scores = np.array([12.0, 4.0, 0.0, -4.0])
    with pytest.raises(PageCheckError, match="dividing by sqrt\\(d_k\\) makes the weights less peaked"):
        page.division_example(64, softmax(scores), softmax(scores * 8))


def test_product_overflow():
    values = glue_fields(page.product_overflow(), "overflow")
    assert values == {
        "overflow_d_k": 128,
        "overflow_component": 25.0,
        "overflow_fp16_max": 65504.0,
        "overflow_exact": 80000.0,
        "overflow_product": math.inf,
        "overflow_scaled_after": math.inf,
        "overflow_divided_first": 7068.0,
    }


def test_product_overflow_fails_when_the_product_fits():
    # Planted fault: components small enough for float16.
    with pytest.raises(PageCheckError, match="the float16 score q.k overflows"):
        page.product_overflow(component=20.0)


def test_product_overflow_fails_when_dividing_first_does_not_help():
    # Planted fault: so large that even q / sqrt(d_k) . k overflows.
    with pytest.raises(PageCheckError, match="dividing q by sqrt\\(d_k\\) before the product keeps the score finite"):
        page.product_overflow(component=300.0)


def test_the_division_section_glues_the_overflow_and_no_longer_denies_it():
    # The section once said the division "is not there to prevent overflow either", against the
    # libraries and low-precision pages: in float16, dividing q first keeps q.k finite.
    text = (DOCS / "subtraction-vs-division.md").read_text()
    section = text[text.index("(subtraction-division)="):]
    assert "not there to prevent overflow" not in section
    used = set(re.findall(r"\{glue:text\}`(overflow_[\w]+)", section))
    assert used == set(glue_fields(page.product_overflow(), "overflow"))
    assert "{ref}`libraries-order`" in section and "{ref}`low-precision`" in section
