"""The printed book: the PDF that ``make pdf`` wrote (tools/print_book.py).

CI runs ``make pdf`` after ``make html`` (.ci/run), and these tests read the
book it left in ``_build/pdf``; the ``repo_pdf`` fixture (tests/conftest.py)
runs ``make pdf`` when there is none. What a book must hold is decided by one
function, :func:`book_problems`, from the built HTML: enough pages for the
text of the site, every chapter, every theorem's number as the site shows
it, every solution opened, every figure as an image, and the chapters in the
site's order. Planted faults (the book without its images, cut short, or with
two chapters swapped) show that it notices what is missing or misplaced.
"""

import functools
import math
import re
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
from sphinx.util.images import get_image_size

pypdf = pytest.importorskip("pypdf", reason="pypdf is not installed (the test extra)")
bs4 = pytest.importorskip("bs4", reason="beautifulsoup4 is not installed (the docs extra)")
# Poppler's pdftotext reads the book's text in seconds, pypdf in minutes.
if shutil.which("pdftotext") is None:
    pytest.skip("no pdftotext (on Debian: apt-get install poppler-utils)", allow_module_level=True)

# Characters of a page's article text (TeX source and code included) that one
# page of the book holds at most. The book prints the site at about 10 pt on
# A4 (tools/print_book.py), and its densest pages, the bibliography's, hold
# about 3 000; the API reference and the chapters 1 500 to 2 700. A book with
# fewer pages than the site's text divided by this has lost some of it.
CHARS_PER_PAGE = 4_000


# Parsing the site takes most of a check's time; the planted faults reuse it.
@functools.cache
def _article(path: Path):
    """The parsed article of a built page (read, never changed)."""
    return bs4.BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser").select_one("article[role=main]")


def _words(text: str) -> str:
    """Text with runs of white space made one space, as a PDF's text comes out."""
    return re.sub(r"\s+", " ", text).strip()


def _book_text(pdf: Path) -> str:
    """The text of every page of ``pdf``, white space made single spaces."""
    result = subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"], capture_output=True, text=True, check=True)
    return _words(result.stdout)


def _longest_prose(element) -> str:
    """The longest stretch of ``element``'s text between two formulas (a formula's TeX annotation is not printed)."""
    copy = bs4.BeautifulSoup(str(element), "html.parser")
    for formula in copy.select(".math"):
        formula.replace_with("\0")
    return max((_words(run) for run in copy.get_text(" ").split("\0")), key=len)


def site_contents(html: Path) -> list[Path]:
    """The pages in the book: ``index.html`` and every toctree entry of the index, in order."""
    pages = [html / "index.html"]
    for link in _article(html / "index.html").select(".toctree-wrapper a.reference.internal"):
        page = html / link["href"].split("#")[0]
        if page not in pages:
            pages.append(page)
    return pages


@dataclass(frozen=True)
class Chapter:
    """What the book must print of one page of the site."""

    page: Path
    title: str
    sheets: int  # pages of the book that its text needs at least
    numbers: tuple[str, ...]  # theorems, lemmas, exercises... with the numbers the site gives them
    solutions: tuple[str, ...]  # the first words of each solution: solutions are open on paper


# The planted faults check books against the same site: what it requires is read from its HTML once.
@functools.cache
def site_chapters(html: Path) -> tuple[Chapter, ...]:
    """The chapters of the book that the site at ``html`` makes, in order."""
    chapters = []
    for page in site_contents(html):
        article = _article(page)
        solutions = []
        for solution in article.select("div.solution"):
            first = solution.select_one("section p")
            words = " ".join(_longest_prose(first).split()[:6]) if first else ""
            if words:
                solutions.append(words)
        title = bs4.BeautifulSoup(str(article.h1), "html.parser")
        for permalink in title.select(".headerlink"):  # not printed (print.css)
            permalink.decompose()
        chapters.append(Chapter(
            page=page,
            title=_words(title.get_text(" ")),
            sheets=max(1, math.ceil(len(_words(article.get_text(" "))) / CHARS_PER_PAGE)),
            numbers=tuple(_words(caption.get_text()) for caption in article.select(".admonition-title .caption-number")),
            solutions=tuple(solutions),
        ))
    return tuple(chapters)


@functools.cache
def site_figures(html: Path) -> dict[str, tuple[int, int]]:
    """Each PNG figure of the site's chapters, by file name: its width and height in pixels."""
    figures = {html / img["src"] for chapter in site_chapters(html) for img in _article(chapter.page).select("img")
               if img["src"].endswith(".png")}
    return {figure.name: get_image_size(str(figure)) for figure in sorted(figures)}


def book_problems(pdf: Path, html: Path, solutions: bool = True) -> list[str]:
    """What the book at ``pdf`` lacks of the site at ``html``; an empty list for a good book.

    ``solutions=False`` checks the student's edition: the same book, with not one solution printed.
    """
    reader = pypdf.PdfReader(pdf)
    text = _book_text(pdf)
    problems = []
    chapters = site_chapters(html)
    # The chapters in the site's order (make pdf prints them several at a time), each from a later sheet.
    bookmarks = [item for item in reader.outline if not isinstance(item, list)][1:]
    if [_words(item.title) for item in bookmarks] != [chapter.title for chapter in chapters]:
        problems.append(f"the chapters' bookmarks are not the site's pages in order: {[item.title for item in bookmarks]}")
    starts = [reader.get_destination_page_number(item) for item in bookmarks]
    if starts != sorted(set(starts)):
        problems.append(f"the chapters do not start on pages in the order of the book: {starts}")
    # Title page and contents, then each page of the site from a new sheet.
    floor = 2 + sum(chapter.sheets for chapter in chapters)
    if len(reader.pages) < floor:
        problems.append(f"{len(reader.pages)} pages, fewer than the {floor} that the site's text needs")
    for chapter in chapters:
        if chapter.title not in text:
            problems.append(f"{chapter.page.name}: the chapter title {chapter.title!r} is not in the book")
        for number in chapter.numbers:
            if number not in text:
                problems.append(f"{chapter.page.name}: {number!r} is not in the book")
        for words in chapter.solutions:
            if solutions and words not in text:
                problems.append(f"{chapter.page.name}: the solution with {words!r} is not printed")
            if not solutions and words in text:
                problems.append(f"{chapter.page.name}: the solution with {words!r} is printed in the student's edition")
    # Every figure is in the book as an image of its own size in pixels
    # (Chromium embeds a PNG as it is; other images, such as the shadows of
    # theorem boxes, have other sizes).
    images = {size for page in reader.pages for size in _image_sizes(page.get("/Resources"))}
    figures = site_figures(html)
    missing = [name for name, size in figures.items() if size not in images]
    if missing:
        problems.append(f"{len(missing)} of the site's {len(figures)} figures are not images in the book: {missing[:3]}")
    return problems


def _image_sizes(resources) -> set[tuple[int, int]]:
    """Width and height in pixels of the images that ``resources`` (and forms in it) hold."""
    sizes = set()
    xobjects = resources.get_object().get("/XObject") if resources is not None else None
    for reference in xobjects.get_object().values() if xobjects is not None else ():
        xobject = reference.get_object()
        if xobject.get("/Subtype") == "/Image":
            sizes.add((int(xobject["/Width"]), int(xobject["/Height"])))
        elif xobject.get("/Subtype") == "/Form":
            sizes |= _image_sizes(xobject.get("/Resources"))
    return sizes


def test_the_book_holds_the_whole_site(repo_pdf, repo_html):
    assert book_problems(repo_pdf, repo_html) == []


def test_the_students_book_holds_the_whole_site_but_the_solutions(repo_student_pdf, repo_html):
    assert sum(len(chapter.solutions) for chapter in site_chapters(repo_html)) > 10
    assert book_problems(repo_student_pdf, repo_html, solutions=False) == []
    assert "Student's edition" in _book_text(repo_student_pdf)[:2000]


def test_a_students_book_with_the_solutions_is_caught(repo_pdf, repo_html):
    # The planted fault: the instructor's book handed out as the student's.
    problems = book_problems(repo_pdf, repo_html, solutions=False)
    solutions = sum(len(chapter.solutions) for chapter in site_chapters(repo_html))
    assert len(problems) == solutions and all("printed in the student's edition" in problem for problem in problems)


def test_the_book_shows_theorem_numbers_as_the_site_does(repo_pdf, repo_html):
    # The number the site prints for the variance theorem, read from its HTML.
    article = _article(repo_html / "dot-product-variance.html")
    number = _words(article.select_one("#thm-dot-product-variance .caption-number").get_text())
    assert re.fullmatch(r"Theorem \d+\.\d+", number)
    assert number in _book_text(repo_pdf)


def test_a_book_without_its_figures_is_caught(repo_pdf, repo_html, tmp_path):
    writer = pypdf.PdfWriter(clone_from=repo_pdf)
    # The planted fault: every image taken out of the pages that hold one. (writer.remove_images()
    # rewrites every page, drawings too, and took 40 of this test's 48 s.)
    holding_images = [page for page in writer.pages if _image_sizes(page.get("/Resources"))]
    assert holding_images, "the book holds no image to take out"
    for page in holding_images:
        writer.remove_objects_from_page(page, pypdf.ObjectDeletionFlag.XOBJECT_IMAGES)
    stripped = tmp_path / "no-figures.pdf"
    writer.write(stripped)
    problems = book_problems(stripped, repo_html)
    assert len(problems) == 1 and "figures are not images in the book" in problems[0], problems


def test_a_book_cut_short_is_caught(repo_pdf, repo_html, tmp_path):
    reader = pypdf.PdfReader(repo_pdf)
    writer = pypdf.PdfWriter()
    # A tenth: the API reference is half the book, so a third would still hold every chapter.
    for page in reader.pages[: len(reader.pages) // 10]:
        writer.add_page(page)
    short = tmp_path / "short.pdf"
    writer.write(short)
    problems = book_problems(short, repo_html)
    assert any("pages, fewer than" in problem for problem in problems), problems
    assert any("is not in the book" in problem for problem in problems), problems


def test_a_book_with_two_chapters_swapped_is_caught(repo_pdf, repo_html, tmp_path):
    reader = pypdf.PdfReader(repo_pdf)
    writer = pypdf.PdfWriter()
    for page in reader.pages:
        writer.add_page(page)
    chapters = [item for item in reader.outline if not isinstance(item, list)]
    # The book's pages as they are; its bookmarks with the second and third chapters in each other's place.
    chapters[2], chapters[3] = chapters[3], chapters[2]
    for item in chapters:
        writer.add_outline_item(title=item.title, page_number=reader.get_destination_page_number(item))
    swapped = tmp_path / "swapped.pdf"
    writer.write(swapped)
    problems = book_problems(swapped, repo_html)
    assert any("not the site's pages in order" in problem for problem in problems), problems
    assert any("do not start on pages in the order of the book" in problem for problem in problems), problems


def test_the_pages_printed_at_once_come_back_in_the_order_of_the_contents(tmp_path, monkeypatch):
    """tools/print_book.py prints with two Chromiums at once, the largest pages first; the parts are bound in the site's order."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "tools"))
    import print_book

    printed_by, first_pages = {}, set()
    # Each printer's first page waits for the other's: both print, whichever thread starts first.
    both_printing, printer = threading.Barrier(2, timeout=10), threading.local()

    def print_page(page, url, pdf, student):
        name = url.rsplit("/", 1)[-1]
        if not getattr(printer, "started", False):
            printer.started = True
            first_pages.add(name)
            both_printing.wait()
        printed_by[name] = threading.get_ident()
        writer = pypdf.PdfWriter()
        for _ in range(1 + len(name) % 3):
            writer.add_blank_page(595, 842)
        writer.write(pdf)
        if name.endswith(("1.html", "2.html")):  # these pages hold solutions: a shorter student's page
            shorter = pypdf.PdfWriter()
            shorter.add_blank_page(595, 842)
            shorter.write(student)
            return (name,), (name, "without solutions")
        return (name,), None

    # The other printer runs in its thread as the real one does, without starting a Chromium.
    monkeypatch.setattr(print_book, "_print_page", print_page)
    monkeypatch.setattr(print_book, "_another_printer", lambda *args: print_book._print_queued(None, *args))
    toc = [(f"page-{number}.html", f"Page {number}") for number in range(12)]
    sizes = [(number * 7) % 12 + 1 for number in range(12)]  # not in the contents' order; the largest are 5 and 10
    for (name, _), size in zip(toc, sizes):
        (tmp_path / name).write_text("x" * size, encoding="utf-8")
    parts = print_book._print_site(None, tmp_path, tmp_path, toc, printers=2)
    assert [(part.name, part.title) for part in parts] == toc
    assert [len(part.pdf.pages) for part in parts] == [1 + len(name) % 3 for name, _ in toc]
    with_solutions = [part.name for part in parts if part.student is not part.pdf]
    assert with_solutions == ["page-1.html", "page-2.html", "page-11.html"]
    assert all(len(part.student.pages) == 1 and part.student_headings[-1] == "without solutions"
               for part in parts if part.name in with_solutions)
    assert all(part.edition("student") == (part.pdf, part.headings) for part in parts if part.name not in with_solutions)
    assert len(set(printed_by.values())) == 2
    assert first_pages == {"page-5.html", "page-10.html"}


def test_the_home_and_cite_pages_link_both_editions_where_make_pdf_puts_them(repo_pdf, repo_student_pdf, repo_html):
    for page in ("index.html", "cite.html"):
        links = {link["href"] for link in _article(repo_html / page).select("a[href^='book/']")}
        assert links == {"book/why-sqrt-dk.pdf", "book/why-sqrt-dk-student.pdf"}, (page, links)
        for href in links:
            published = repo_html / href
            assert published.exists(), f"{page} links {href}, which make pdf did not copy into the site"
            assert published.read_bytes() == (repo_pdf if href.endswith("dk.pdf") else repo_student_pdf).read_bytes()


@pytest.mark.parametrize("config", [".github/workflows/pages.yml", ".readthedocs.yaml"])
def test_the_hosted_builds_publish_the_book_with_the_site(config):
    text = (Path(__file__).resolve().parents[1] / config).read_text(encoding="utf-8")
    publish = "upload-pages-artifact" if config.endswith("pages.yml") else "READTHEDOCS_OUTPUT"
    steps = [text.find("make html"), text.find("make pdf"), text.find(publish)]
    assert -1 not in steps and steps == sorted(steps), f"{config}: make html, then make pdf, then publish: {steps}"
    assert "CHROMIUM=" in text and "playwright install" in text, f"{config}: make pdf needs a Chromium"
