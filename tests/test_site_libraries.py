"""Page support of "What the libraries do": the defaults list, the overflow table, the glued values, failing checks."""

import math
from pathlib import Path

import numpy as np
import pytest

from attention_scaling import attention_scores
from attention_scaling.libraries import LIBRARY_DEFAULTS
from attention_scaling.site import libraries as page
from attention_scaling.site.checks import PageCheckError

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_defaults_list_cites_every_library():
    items = page.defaults_list().splitlines()
    assert len(items) == len(LIBRARY_DEFAULTS)
    for item, row in zip(items, LIBRARY_DEFAULTS):
        assert item.startswith(f"- **{row.library}** {{cite:p}}`{row.citation}`: `{row.function}`")
        assert item.endswith(f"default {row.default}.")


def test_default_scale_section_values():
    assert page.default_scale_section().glue_values() == {"libraries_head_dims": "1, 16, 64, 128, 256"}


def test_default_scale_section_fails_when_the_default_is_one_over_d_k(monkeypatch):
    def wrong_default(q, k, scale=None):
        return attention_scores(q, k, scale=1 / q.shape[-1] if scale is None else scale)

    monkeypatch.setattr(page, "attention_scores", wrong_default)
    with pytest.raises(PageCheckError, match="libraries-defaults: .*1/sqrt"):
        page.default_scale_section()


def test_scale_order_section_values():
    section = page.scale_order_section()
    assert [row.sigma for row in section.rows] == [16, 64, 96, 128, 256]
    assert section.glue_values() == {
        "libraries_fp16_max": 65504.0,
        "libraries_headroom": math.sqrt(128),
        "libraries_after_96": pytest.approx(0.5295, abs=1e-4),
        "libraries_split_96": 0.0,
        "libraries_split_256": pytest.approx(0.2964, abs=1e-4),
    }
    # Typical products grow as sigma squared (the components are sigma times standard normal).
    typical = np.array([row.typical for row in section.rows])
    sigma = np.array([row.sigma for row in section.rows], dtype=float)
    assert np.allclose(typical / sigma**2, typical[0] / sigma[0] ** 2, rtol=0.2)


def test_order_table_keeps_the_vertical_bars_out_of_the_cell_syntax():
    lines = page.order_table(page.order_rows()).splitlines()
    assert lines[0] == "| σ | typical &#124;q·k&#124; | overflowed, scale after | overflowed, scale split |"
    assert lines[1] == "|---|---|---|---|"
    assert lines[4].startswith("| 96 | ") and lines[4].endswith(" | 53.0% | 0.0% |")
    assert len(lines) == 7


def test_scale_order_section_fails_when_nothing_overflows(monkeypatch):
    real = page.scores_by_order
    # In float64 neither order overflows, so sigma = 96 no longer separates them.
    monkeypatch.setattr(page, "scores_by_order", lambda q, k, **kw: real(q.astype(np.float64), k.astype(np.float64), **kw))
    with pytest.raises(PageCheckError, match="libraries-order: .*sigma = 96"):
        page.scale_order_section()


def test_the_order_section_names_the_documented_reference_and_the_math_kernel_apart():
    # PyTorch documents scaled_dot_product_attention as equivalent to Python code that scales the
    # finished product; only its C++ math kernel splits the scale. The page once called that
    # kernel PyTorch's "reference implementation".
    text = (DOCS / "libraries.md").read_text()
    section = text[text.index("(libraries-order)="):text.index("(libraries-masks)=")]
    assert "reference implementation" not in section
    assert "`query @ key.transpose(-2, -1) * scale_factor`" in section
    assert "{cite:p}`pytorch-sdpa`" in section and "math kernel" in section
