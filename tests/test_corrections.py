"""Sentences that said more than the site checked (issue 53's review), and may not come back.

Each correction here is a wording that contradicted a checked or measured
result on the site; where the page support can check the corrected claim
itself, its own test does (tests/test_site_bounded_logits.py). The rest are
held here: the old wording, on the page it was on, and why it was wrong.
"""

import re

import pytest

from page_sources import REPO, page_source

WITHDRAWN = [
    ("dot-product-variance.md", "are sufficient, not necessary",
     "zero means with sigma = 2 give variance 16 (general_moments_example checks it): they are not sufficient"),
    ("dot-product-variance.md", "keeping it of order one takes a division\nby $d_k$",
     "a mean shared by every key is a shift that softmax ignores, and any c = O(1/d_k) bounds the gap"),
    ("correlation.md", "only dividing by $d_k$ keeps it bounded",
     "any scale c = O(1/d_k) keeps it bounded"),
    ("long-sequences.md", "unless the scale grows like $\\ln n$.",
     "c ln n with c Delta < 1 still loses the needle (thm-needle-limit): the condition is s Delta > 1"),
    ("long-sequences.md", "keeps its weight only under a scale that grows like $\\ln n$",
     "the same condition, in the chapter's summary"),
    ("low-precision.md", "cannot prevent an overflow",
     "the scale keeps the float16 score finite on this page and on subtraction-vs-division: it does not guarantee it"),
    ("subtraction-vs-division.md", "but different outputs: any vector and a multiple of it.",
     "false for constant vectors and for the multiple 1"),
    ("bounded-logits.md", "not a replacement for\nthe scale",
     "by the median the cap of 10 is no worse than the standard scale; only the starved fraction tells against it"),
    ("depth.md", "so the *smaller* the scale of the\nlogits, the faster a stack",
     "Theorem 14.1 bounds one layer; W_V can expand again, so the ordering across layers is measured, not proved"),
    ("depth.md", "the faster the collapse, as the theorem says",
     "the same ordering, where it is measured"),
    ("training.md", "the unscaled one somewhat\nworse at the larger $d_k$",
     "three seeds with overlapping ranges do not rank the variants; the sign test over ten seeds does, where it can"),
    ("training.md", "still ends with the\nhighest mean loss under both optimisers",
     "a ranking by mean loss over three seeds (d_k = 64, SGD: [0.038, 0.094] against [0.054, 0.079]) is not supported"),
    ("saturation.md", "still pass a gradient falls like $1/\\sqrt{d_k}$.",
     "Theorem 4.3 is an upper bound: the fraction falls at least that fast; the matching rate is measured"),
    ("saturation.md", "decays only like\n$d_k^{-1/2}$ while",
     "the lower rate of the mean is measured (slope about -0.5), not proved"),
]


@pytest.mark.parametrize(("page", "wording", "why"), WITHDRAWN, ids=[f"{page}: {why[:40]}" for page, _, why in WITHDRAWN])
def test_a_withdrawn_wording_does_not_come_back(page, wording, why):
    assert wording not in page_source(REPO / "docs" / page), f"{page} says {wording!r} again, but {why}"


def test_the_entropy_bound_is_labelled_as_secondary_where_it_is_documented():
    # The page says the statement comes from secondary sources; the library's docstring must not say more.
    from attention_scaling.logit_growth import zhai_entropy_bound

    assert "as secondary sources state Theorem 3.1" in zhai_entropy_bound.__doc__.splitlines()[0]
    assert "We have not seen the statement in the\nprimary text" in page_source(REPO / "docs" / "logit-growth.md")


def _page_text(html_file) -> str:
    """A built page's text, tags removed and whitespace collapsed."""
    return " ".join(re.sub(r"<[^>]+>", " ", html_file.read_text(encoding="utf-8")).split())


def test_a_quantity_prints_the_same_number_on_every_page(repo_html):
    # Item 7: one definition of starved, one draw per (d_k, seed). The first page and the saturation chapter
    # measured different draws and printed 3.8 and 3.6 for one ratio; three pages printed the median at 4096
    # as 1.7e-12, 1.6e-12 and 2.0e-12.
    from attention_scaling.saturation import gradient_distribution

    data = gradient_distribution([512, 4096])
    text = {page: _page_text(repo_html / f"{page}.html") for page in ("index", "saturation", "bounded-logits")}
    typical = data.summary("logit", "none", 512)
    ratio = data.summary("score", "none", 512).mean / data.summary("score", "sqrt", 512).mean
    widest = data.summary("score", "none", 4096).median   # c = 1: the gain at the logits is the gain at the score
    printed = [("index", f"{typical.median:.1e}"), ("saturation", f"{typical.median:.1e}"),
               ("index", f"{typical.fraction_below:.3f}"), ("saturation", f"{typical.fraction_below:.3f}"),
               ("index", f"{ratio:.1f} times"), ("saturation", f"{ratio:.1f} times"),
               ("saturation", f"{widest:.1e}"), ("bounded-logits", f"{widest:.1e}")]
    missing = [(page, number) for page, number in printed if number not in text[page]]
    assert not missing, f"pages that do not print the site's one value of a quantity: {missing}"
