"""Score orders and the documented library defaults."""

import re
from pathlib import Path

import numpy as np
import pytest

from attention_scaling import attention_scores
from attention_scaling.libraries import LIBRARY_DEFAULTS, SCORE_ORDERS, scores_by_order

BIBLIOGRAPHY = Path(__file__).resolve().parents[1] / "docs" / "references.bib"
rng = np.random.default_rng(20261122)


@pytest.mark.parametrize("order", SCORE_ORDERS)
@pytest.mark.parametrize("scale", [None, 1.0, 0.05])
def test_both_orders_agree_with_attention_scores_in_float64(order, scale):
    q, k = rng.standard_normal((2, 3, 5, 16))
    np.testing.assert_allclose(
        scores_by_order(q, k, scale=scale, order=order), attention_scores(q, k, scale=scale), rtol=1e-12
    )


def test_split_order_stays_finite_where_scaling_after_overflows_float16():
    q = np.full((1, 128), 24.0, dtype=np.float16)  # q . k = 128 * 576 = 73728 > 65504
    k = np.full((3, 128), 24.0, dtype=np.float16)
    after = scores_by_order(q, k, order="after")
    split = scores_by_order(q, k, order="split")
    assert after.dtype == split.dtype == np.float16
    assert np.all(np.isinf(after))
    np.testing.assert_allclose(split.astype(np.float64), 73728 / np.sqrt(128), rtol=1e-3)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"order": "before"}, ValueError, "order must be one of"),
        ({"scale": 0.0}, ValueError, "finite and > 0"),
        ({"scale": "0.1"}, TypeError, "real number"),
    ],
)
def test_bad_arguments_are_refused(kwargs, error, message):
    with pytest.raises(error, match=message):
        scores_by_order(np.ones((1, 4)), np.ones((2, 4)), **kwargs)


def test_mixed_dtypes_are_refused():
    with pytest.raises(ValueError, match="share a dtype"):
        scores_by_order(np.ones((1, 4), np.float16), np.ones((2, 4)))


def test_every_library_default_cites_an_entry_of_the_bibliography():
    keys = set(re.findall(r"^@\w+\{([^,]+),", BIBLIOGRAPHY.read_text(), flags=re.MULTILINE))
    assert {row.citation for row in LIBRARY_DEFAULTS} <= keys
    assert len({(row.library, row.parameter) for row in LIBRARY_DEFAULTS}) == len(LIBRARY_DEFAULTS)
