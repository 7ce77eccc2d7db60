"""A course that cites the built site through intersphinx gets readable link texts.

The course is a small Sphinx project built in a temporary directory, offline
and strict (``-nW``), whose ``intersphinx_mapping`` points at this checkout's
``_build/html/objects.inv`` as a local file. Its page cites a theorem, a
lemma, an equation, a figure, an exercise and sections with bare ``:ref:``
(no title of its own; ``:ref:`` is also the role that reaches an equation
through intersphinx), so each link's text is the name the site's objects.inv
gives the label.

What the links must read is not taken from objects.inv: the kind and number
are read from the site's own page, next to the item the link leads to ("Fig.
5.3", "(2.3)"), and the titles below are written out by hand, their
mathematics as a reader would type it. The README's example is built and
checked as well.
"""

import re
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# Any base URL will do: the inventory is read from disk and nothing is fetched.
BASE = "https://course.example/whysqrtdk/"

# Label -> what follows the number in the link's text.
NUMBERED = {
    "thm-dot-product-variance": " (Mean and variance of the dot product)",
    "lem-product-variance": " (Variance of a product)",
    "eq-dot-product-variance": "",
    # The caption the issue quoted as raw LaTeX ("c\, q \cdot k"); its first sentence.
    "fig-correlated-logits": ": The mean of the scaled logit c q · k against dₖ, divided by √dₖ (left) and by dₖ (right), for three correlations ρ",
    "ex-std-512": " (Standard deviation at dₖ = 512)",
}
# Sections have no number: the link reads the title, its mathematics as text.
SECTIONS = {
    "regimes-variance": "The variance grows like dₖ",
    "scaling-why-not-dk": "Why not dₖ",
    "regimes-temperature": None,  # no mathematics: the title the page shows
}
# How the pages write a number, and how a citation spells it out.
WORDS = {"Fig.": "Figure"}
# The labels of the site's numbered items, and how their names in objects.inv begin.
NUMBERED_LABEL = re.compile(r"(thm|lem|eq|fig|ex)-")
NUMBERED_NAME = re.compile(r"(?:Theorem|Lemma|Figure|Exercise) \d+(?:\.\d+)*|Equation \(\d+(?:\.\d+)*\)")
# The README's example: ``:ref:`whysqrtdk:LABEL` `` shows as "TEXT".
README_EXAMPLE = re.compile(r"``:ref:`whysqrtdk:(?P<label>[\w-]+)` `` shows\s+as\s+\"(?P<text>[^\"]+)\"")


def shown_number(html: Path, page: str, anchor: str) -> str:
    """What the site's page shows as the number of the item with id ``anchor``: "Theorem 2.1", "Fig. 5.3", "(2.3)"."""
    text = (html / page).read_text(encoding="utf-8")
    after = text[text.index(f'id="{anchor}"') :]
    number = re.search(r'<span class="(?:caption-number|eqno)">([^<]+)', after)
    assert number, f"no number after #{anchor} on {page}"
    return number.group(1).strip()


def cited_as(shown: str) -> str:
    """The number as a citation reads it: "Figure 5.3" for "Fig. 5.3", "Equation (2.3)" for "(2.3)"."""
    if shown.startswith("("):
        return f"Equation {shown}"
    word, number = shown.split(" ", 1)
    return f"{WORDS.get(word, word)} {number}"


def section_title(html: Path, page: str, anchor: str) -> str:
    text = (html / page).read_text(encoding="utf-8")
    heading = re.search(rf'<section id="{anchor}">.*?<h\d>(.*?)<a class="headerlink"', text, re.S)
    assert heading, f"no section #{anchor} on {page}"
    return heading.group(1).strip()


def build_course(tmp_path: Path, html: Path, labels: list[str]) -> list[tuple[str, str]]:
    """Build a course page citing ``labels`` with bare ``:ref:``; (href, text) of each link, in order."""
    course = tmp_path / "course"
    course.mkdir()
    (course / "conf.py").write_text(
        "extensions = ['sphinx.ext.intersphinx']\n"
        f"intersphinx_mapping = {{'whysqrtdk': ({BASE!r}, {str(html / 'objects.inv')!r})}}\n"
    )
    items = "".join(f"- :ref:`whysqrtdk:{label}`\n" for label in labels)
    (course / "index.rst").write_text(f"Course notes\n============\n\nAs the site shows:\n\n{items}")
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-n", "-W", "-q", "-b", "html", str(course), str(out)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    page = (out / "index.html").read_text(encoding="utf-8")
    links = re.findall(r'<a class="reference external" href="([^"]+)"[^>]*><span[^>]*>([^<]*)</span></a>', page)
    assert len(links) == len(labels), page
    return links


@pytest.fixture(scope="module")
def course_links(repo_html, tmp_path_factory):
    """label -> (page, anchor, link text) for every label the course cites."""
    readme = README_EXAMPLE.search((REPO / "README.md").read_text(encoding="utf-8"))
    assert readme, "README.md has no intersphinx example of the form ``:ref:`whysqrtdk:LABEL` `` shows as \"TEXT\""
    labels = [*NUMBERED, *SECTIONS, readme["label"]]
    links = build_course(tmp_path_factory.mktemp("course"), repo_html, labels)
    cited = {}
    for label, (href, text) in zip(labels, links):
        assert href.startswith(BASE), href
        page, _, anchor = href.removeprefix(BASE).partition("#")
        cited[label] = (page, anchor, text)
    return cited


@pytest.mark.parametrize("label", NUMBERED)
def test_a_numbered_item_is_cited_by_the_number_its_page_shows_and_its_title(course_links, repo_html, label):
    page, anchor, text = course_links[label]
    assert text == cited_as(shown_number(repo_html, page, anchor)) + NUMBERED[label]


@pytest.mark.parametrize("label", SECTIONS)
def test_a_section_is_cited_by_its_title_in_plain_text(course_links, repo_html, label):
    page, anchor, text = course_links[label]
    assert text == (SECTIONS[label] or section_title(repo_html, page, anchor))


def test_no_link_text_is_a_label_or_latex(course_links):
    for label, (_, _, text) in course_links.items():
        assert label not in text and not re.search(r"[\\$]|[_^]\{", text), (label, text)


def test_the_readme_example_reads_as_the_readme_says(course_links):
    readme = README_EXAMPLE.search((REPO / "README.md").read_text(encoding="utf-8"))
    assert course_links[readme["label"]][2] == " ".join(readme["text"].split())


def test_every_theorem_equation_figure_and_exercise_is_listed_by_the_number_its_page_shows(repo_html):
    body = zlib.decompress((repo_html / "objects.inv").read_bytes().split(b"\n", 4)[4]).decode()
    checked = 0
    for line in body.splitlines():
        label, role, _, uri, name = line.split(" ", 4)
        if role != "std:label" or not NUMBERED_LABEL.match(label):
            continue
        page, _, anchor = uri.partition("#")
        if anchor.endswith("$"):  # objects.inv's shorthand for an anchor that ends with the label
            anchor = anchor[:-1] + label
        number = NUMBERED_NAME.match(name)
        assert number, f"{label} is listed as {name!r}, not by its number"
        assert number.group() == cited_as(shown_number(repo_html, page, anchor)), (label, name)
        # No LaTeX, and no label where the page shows a reference ("Theorem 13.3").
        assert not re.search(r"[\\$]|[_^]\{|(?<![\w-])(?:thm|lem|eq|fig|ex)-[a-z]", name), (label, name)
        checked += 1
    # 26 theorems and lemmas, 43 equations, 18 figures and 16 exercises when this was written.
    assert checked >= 100, f"only {checked} numbered labels in objects.inv"
