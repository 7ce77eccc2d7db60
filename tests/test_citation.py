"""Citation: the checks on what the build finds, the BibTeX, and versions that agree.

The items come from Sphinx's environment (docs/_ext/citations.py); tests/test_ext.py
builds a small site to check that end. Here: the pure functions, on items as
the build hands them over.
"""

import re
from pathlib import Path

import pytest

import attention_scaling
from attention_scaling.site.citation import Citable, CitationError, bibtex, caption_title, citables, site_bibtex

ROOT = Path(__file__).resolve().parents[1]

FOUND = [
    ("lemma", "lem-product-variance", "Variance of a product", "dot-product-variance"),
    ("theorem", "thm-dot-product-variance", "Mean and variance of the dot product", "dot-product-variance"),
    ("figure", "fig-three-regimes", "The three regimes", "regimes"),
    ("theorem", "thm-softmax-shift-invariance", "Softmax ignores shifts", "subtraction-vs-division"),
    ("exercise", "ex-std-512", "Standard deviation at $d_k = 512$", "exercises"),
]
NUMBERS = {
    "lem-product-variance": (2, 1),
    "thm-dot-product-variance": (2, 1),
    "fig-three-regimes": (5, 3),
    "thm-softmax-shift-invariance": (1, 1),
    "ex-std-512": (16, 1),
}


def test_items_are_numbered_and_in_the_order_of_the_site():
    items = citables(FOUND, NUMBERS)
    assert [(item.label, item.number) for item in items] == [
        ("thm-softmax-shift-invariance", "1.1"),
        ("lem-product-variance", "2.1"),  # before the theorem with the same number, as on its page
        ("thm-dot-product-variance", "2.1"),
        ("fig-three-regimes", "5.3"),
        ("ex-std-512", "16.1"),
    ]
    assert items[2].anchor == "dot-product-variance.html#thm-dot-product-variance"


@pytest.mark.parametrize(
    ("found", "numbers", "message"),
    [
        # sphinx-proof gives an unlabelled theorem a generated label, theorem-N.
        ([("theorem", "theorem-3", "Unlabelled", "scaling")], {"theorem-3": (3, 2)}, r"the theorem 'Unlabelled' on page 'scaling' has label 'theorem-3'.*'thm-'"),
        ([("figure", "", "A caption", "regimes")], {}, r"figure 'A caption' on page 'regimes' has label ''"),
        ([("figure", "thm-wrong", "A caption", "regimes")], {"thm-wrong": (5, 1)}, r"starting with 'fig-'"),
        ([("exercise", "ex-a", "A", "exercises")], {}, r"the exercise 'ex-a' on page 'exercises' has no number"),
        ([("theorem", "thm-a", "  ", "scaling")], {"thm-a": (3, 1)}, r"the theorem 'thm-a' on page 'scaling' has no title"),
        ([("theorem", "thm-a", "A", "scaling"), ("theorem", "thm-a", "A", "regimes")], {"thm-a": (3, 1)}, r"label 'thm-a' is used twice, on pages 'scaling' and 'regimes'"),
        ([("remark", "rem-a", "A", "scaling")], {"rem-a": (3, 1)}, r"kind must be one of theorem, lemma, figure, exercise; got 'remark'"),
    ],
)
def test_an_item_that_cannot_be_cited_is_named(found, numbers, message):
    with pytest.raises(CitationError, match=message):
        citables(found, numbers)


def test_bibtex_names_the_number_title_and_anchor():
    item = Citable("figure", "fig-three-regimes", "The three regimes", "regimes", "5.3")
    entry = bibtex(item, "9.9.9")
    assert entry.startswith("@misc{whysqrtdk-fig-three-regimes,\n")
    assert "title    = {Figure 5.3: The three regimes}" in entry
    assert "note     = {Why √d_k, version 9.9.9, regimes.html#fig-three-regimes}" in entry
    assert entry.count("{") == entry.count("}")


@pytest.mark.parametrize(
    ("caption", "title"),
    [
        ("Softmax of $[x, 0, 0, 0]$: the weight and its slope. The dotted line marks $x = 4.74$.", "Softmax of $[x, 0, 0, 0]$: the weight and its slope"),
        ("Lowest row entropy against $\\boldsymbol{\\sigma}$ for\n$T = 16$ tokens. Left: 200 heads.", "Lowest row entropy against $\\boldsymbol{\\sigma}$ for $T = 16$ tokens"),
        # A full stop inside mathematics does not end the sentence.
        ("Values $a. B$ shown", "Values $a. B$ shown"),
    ],
)
def test_a_figure_is_titled_by_the_first_sentence_of_its_caption(caption, title):
    assert caption_title(caption) == title


def test_versions_agree():
    cff = (ROOT / "CITATION.cff").read_text()
    assert f'version: "{attention_scaling.__version__}"' in cff
    assert f"version = {{{attention_scaling.__version__}}}" in site_bibtex()
    assert re.search(r'date-released: "(\d{4})', cff).group(1) in site_bibtex()
