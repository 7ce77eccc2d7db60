"""Citation: the checks on what the build finds, the BibTeX, and versions that agree.

The items come from Sphinx's environment (docs/_ext/citations.py); tests/test_ext.py
builds a small site to check that end. Here: the pure functions, on items as
the build hands them over.
"""

import html
import re
from pathlib import Path

import pytest

import attention_scaling
from attention_scaling.site.citation import (
    BIB_FILE, Citable, CitationError, bibliography, bibtex, caption_title, citables, latex_text, site_bibtex,
)

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
    assert "note     = {Why {$\\sqrt{d_{k}}$}, version 9.9.9, regimes.html\\#fig-three-regimes}" in entry
    assert entry.count("{") == entry.count("}")
    # With the site's address, the item's absolute URL, and no relative anchor in the note.
    hosted = bibtex(item, "9.9.9", base_url="https://example.org/why/")
    assert "url      = {https://example.org/why/regimes.html#fig-three-regimes}" in hosted
    assert "note     = {Why {$\\sqrt{d_{k}}$}, version 9.9.9}" in hosted


@pytest.mark.parametrize(
    ("text", "latex"),
    [
        ("Why √d_k, and why not d_k", "Why {$\\sqrt{d_{k}}$}, and why not {$d_{k}$}"),
        ("Folding the constant into W_Q", "Folding the constant into {$W_{Q}$}"),
        ("Su’s scale: 10 %–90 % bands", "Su's scale: 10 \\%--90 \\% bands"),
        ("$x_i$ & #1 {a} ~b^ c\\d", "{$x_i$} \\& \\#1 \\{a\\} \\textasciitilde{}b\\textasciicircum{} c\\textbackslash{}d"),
        ("$\\sqrt{\\ln n}$ beside d_model and x_12", "{$\\sqrt{\\ln n}$} beside {$d_{\\mathrm{model}}$} and {$x_{12}$}"),
    ],
)
def test_titles_are_written_as_latex_that_pdflatex_accepts(text, latex):
    assert latex_text(text) == latex


@pytest.mark.parametrize(("text", "advice"), [("μP at width d", "as \\$...\\$ mathematics on the page"),
                                             ("the $σ$ of the scores", "as a LaTeX command inside"),
                                             ("costs $5, and $x$", "has a \\$ that opens no formula")])
def test_a_character_latex_cannot_take_is_named(text, advice):
    with pytest.raises(CitationError, match=advice):
        latex_text(text)


# Outside $...$, a LaTeX special that is not escaped.
UNESCAPED = re.compile(r"(?<!\\)[_%&#^~]")


def bib_problems(text: str) -> list[str]:
    """What a BibTeX parser or pdfLaTeX would reject in ``text``: a parse error, a character beyond ASCII, a bare special."""
    from pybtex.database import parse_string
    from pybtex.scanner import PybtexSyntaxError

    try:
        entries = parse_string(text, "bibtex").entries
    except PybtexSyntaxError as error:
        return [f"pybtex: {error}"]
    problems = []
    for key, entry in entries.items():
        # pybtex keeps author apart from the other fields, as a list of persons.
        written = [(name, value) for name, value in entry.fields.items() if name.lower() != "url"]  # url: verbatim
        written += [(role, str(person)) for role, people in entry.persons.items() for person in people]
        for name, value in written:
            if not value.isascii() or UNESCAPED.search(re.sub(r"\$[^$]*\$", "", value)):
                problems.append(f"{key}.{name}: {value!r}")
    return problems


def test_the_bibliography_is_one_file_that_a_bibtex_parser_reads():
    items = citables(FOUND, NUMBERS)
    text = bibliography(items, "9.9.9", base_url="https://example.org/why/")
    assert bib_problems(text) == []
    from pybtex.database import parse_string

    entries = parse_string(text, "bibtex").entries
    assert list(entries) == ["whysqrtdk"] + [f"whysqrtdk-{item.label}" for item in items]
    assert entries["whysqrtdk-ex-std-512"].fields["url"] == "https://example.org/why/exercises.html#ex-std-512"
    # Planted faults: the raw note, author and title, as the entries were written before, are caught.
    assert bib_problems(text.replace("Why {$\\sqrt{d_{k}}$}, version", "Why √d_k, version"))
    assert bib_problems(text.replace("{The Why {$\\sqrt{d_{k}}$} authors}", "{The Why √d_k authors}"))
    assert bib_problems(text.replace("Standard deviation at", "Standard_deviation at"))


def test_the_built_site_publishes_every_entry_in_one_file_linked_from_the_cite_page(repo_html):
    cite = (repo_html / "cite.html").read_text(encoding="utf-8")
    assert f'href="{BIB_FILE}"' in cite
    text = (repo_html / BIB_FILE).read_text(encoding="ascii")
    assert bib_problems(text) == []
    # The same entries, to the letter, as the page shows them (its code blocks are highlighted: tags stripped).
    shown = re.findall(r"^@misc\{.*?^\}", html.unescape(re.sub(r"<[^>]+>", "", cite)), re.M | re.S)
    assert re.findall(r"^@misc\{.*?^\}", text, re.M | re.S) == shown and len(shown) > 60


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
