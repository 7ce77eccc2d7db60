"""Page support of "What the libraries do": the defaults list, the overflow table, the glued values, failing checks."""

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, stats

from attention_scaling import attention_scores
from attention_scaling.libraries import LIBRARY_DEFAULTS
from attention_scaling.site import glue_fields, libraries as page
from attention_scaling.site.checks import PageCheckError
from se_checks import within

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_defaults_list_cites_every_library():
    items = page.defaults_list().splitlines()
    assert len(items) == len(LIBRARY_DEFAULTS)
    for item, row in zip(items, LIBRARY_DEFAULTS):
        assert item.startswith(f"- **{row.library}** {{cite:p}}`{row.citation}`: `{row.function}`")
        assert item.endswith(f"default {row.default}.")


def test_default_scale_section_values():
    assert glue_fields(page.default_scale_section(), "libraries") == {"libraries_head_dims_text": "1, 16, 64, 128, 256"}


def test_default_scale_section_fails_when_the_default_is_one_over_d_k(monkeypatch):
    def wrong_default(q, k, scale=None):
        return attention_scores(q, k, scale=1 / q.shape[-1] if scale is None else scale)

    monkeypatch.setattr(page, "attention_scores", wrong_default)
    with pytest.raises(PageCheckError, match="libraries-defaults: .*1/sqrt"):
        page.default_scale_section()


def overflow_fraction(sigma, d_k, n, factor):
    r"""The true fraction of the n x n float16 scores factor q.k that overflow, and its standard error.

    q and k are sigma times independent N(0, 1) vectors, so given q the score
    is N(0, (factor sigma^2 |q|)^2), with |q| chi-distributed (d_k degrees of
    freedom): a score overflows (rounds past 65504, from 65520 on) with
    probability g(|q|) = 2 Phi(-t / |q|). The n^2 scores share their queries and keys, so the
    fraction's variance is (p (1 - p) + 2 (n - 1) Var g(|q|)) / n^2, not p (1 - p) / n^2.
    Both by quadrature.
    """
    t = 65520.0 / (factor * sigma**2)
    low, high = stats.chi.ppf([1e-13, 1 - 1e-13], d_k)

    def expect(f):
        return integrate.quad(lambda r: f(r) * stats.chi.pdf(r, d_k), low, high, epsabs=1e-13)[0]

    p = expect(lambda r: 2 * stats.norm.sf(t / r))
    spread = expect(lambda r: (2 * stats.norm.sf(t / r)) ** 2) - p**2
    return p, np.sqrt(p * (1 - p) + 2 * (n - 1) * spread) / n


def test_scale_order_section_values():
    d_k, n = 128, 64
    section = page.scale_order_section(d_k=d_k, n=n)
    assert [row.sigma for row in section.rows] == [16, 64, 96, 128, 256]
    # Scaling after the product overflows where the float16 product does; the split order
    # multiplies the product by the float16 square root of the scale, twice.
    after = overflow_fraction(96, d_k, n, 1.0)
    split = overflow_fraction(256, d_k, n, float(np.float16(math.sqrt(1 / math.sqrt(d_k)))) ** 2)
    assert glue_fields(section, "libraries") == {
        "libraries_d_k": d_k,
        "libraries_fp16_max": float(np.finfo(np.float16).max),
        "libraries_headroom": math.sqrt(d_k),
        # Each within 5 SE (se_checks.Z) of its true fraction.
        "libraries_after_96": within(*after),
        # At sigma = 96 the split order overflows with probability 3e-11 a score: none of 4096 does.
        "libraries_split_96": 0.0,
        "libraries_split_256": within(*split),
    }
    # Typical products grow as sigma squared (the components are sigma times standard normal).
    typical = np.array([row.typical for row in section.rows])
    sigma = np.array([row.sigma for row in section.rows], dtype=float)
    assert np.allclose(typical / sigma**2, typical[0] / sigma[0] ** 2, rtol=0.2)


def test_order_table_keeps_the_vertical_bars_out_of_the_cell_syntax():
    rows = page.order_rows()
    lines = page.order_table(rows).splitlines()
    assert lines[0] == r"| $\sigma$ | typical $\lvert q \cdot k\rvert$ | overflowed, scale after | overflowed, scale split |"
    assert lines[1] == "|---|---|---|---|"
    # The row of sigma = 96 shows its seeded fractions as percentages (their values: test_scale_order_section_values).
    assert rows[2].sigma == 96 and 0 < rows[2].after < 1 and rows[2].split == 0
    assert lines[4].startswith("| 96 | ") and lines[4].endswith(f" | {rows[2].after:.1%} | 0.0% |")
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
