"""make page: a new chapter that builds and passes its tests as created, and clear refusals."""

import os
import re
import shutil
import subprocess
import sys

import pytest

from page_sources import REPO
from sitebuild import make

SLUG, MODULE, TITLE = "scaffold-check", "scaffold_check", "A scaffolded chapter"


def make_page(repo, name, title):
    # A NAME in the environment (some systems set one) must not count: only the command line's.
    env = {**os.environ, "NAME": "from-the-environment"}
    return subprocess.run(["make", "-s", "-C", str(repo), "page", f"NAME={name}", f"TITLE={title}"],
                          capture_output=True, text=True, env=env)


def tree(repo):
    return sorted(str(path.relative_to(repo)) for folder in ("docs", "src", "tests") for path in (repo / folder).rglob("*")
                  if "__pycache__" not in path.parts)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """What make page reads and writes, copied: a refusal that wrongly writes does so here, not in the checkout."""
    root = tmp_path_factory.mktemp("scratch")
    for folder in ("docs", "src", "tests", "tools"):
        shutil.copytree(REPO / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(REPO / "Makefile", root / "Makefile")
    return root


@pytest.mark.parametrize(("name", "title", "message"), [
    ("My_Chapter", TITLE, "give a slug of lower-case letters"),
    ("", TITLE, "give a slug of lower-case letters"),
    ("import", TITLE, "is a Python keyword"),
    ("scaling", TITLE, "docs/scaling.md exists already"),
    ("gradients", TITLE, "src/attention_scaling/gradients.py exists already"),
    ("scaled-variance", TITLE, "thm-scaled-variance of the new page is used in docs/scaling.md"),
    ("fine-name", 'A "quoted" title', "without quotes"),
    ("fine-name", "", "give a one-line title"),
    ("fine-name", "A <b>bold</b> title", "without"),
    ("search", TITLE, "a name Sphinx gives a page of its own"),
])
def test_a_page_that_cannot_be_made_is_refused_and_nothing_is_written(scratch, name, title, message):
    before, index = tree(scratch), (scratch / "docs" / "index.md").read_bytes()
    result = make_page(scratch, name, title)
    assert result.returncode != 0 and message in result.stderr, result.stderr
    assert tree(scratch) == before and (scratch / "docs" / "index.md").read_bytes() == index


def test_a_new_page_builds_and_shows_what_it_promises(site):
    # A full build: the new module changes the execution cache's key, so every page executes (about 160 s).
    result = make_page(site, SLUG, TITLE)
    assert result.returncode == 0, result.stderr
    chapters = re.search(r":caption: Chapters\n(?::.*\n)*\n((?:[^\n`]+\n)+)```", (site / "docs" / "index.md").read_text())
    assert chapters and chapters[1].splitlines()[-1] == SLUG, "appended at the end of the chapters"
    number = len(chapters[1].splitlines())
    lines = {path: len((site / path).read_text().splitlines()) for path in (f"docs/{SLUG}.md", f"src/attention_scaling/site/{MODULE}.py")}
    assert lines[f"src/attention_scaling/site/{MODULE}.py"] <= lines[f"docs/{SLUG}.md"], f"support no longer than the page: {lines}"

    build = make(site)
    assert build.returncode == 0, build.log[-4000:]
    html = site / "_build" / "html"
    page = (html / f"{SLUG}.html").read_text(encoding="utf-8")
    assert f'<h1><span class="section-number">{number}. </span>{TITLE}' in page, "a chapter numbered at the end"
    assert f'id="thm-{SLUG}"' in page and f"Theorem {number}.1" in page, "the theorem, numbered in its chapter"
    assert re.search(f'<figure [^>]*id="fig-{SLUG}">\\s*<img ', page) and f"Fig. {number}.1" in page, "the figure"
    glued = re.findall(r'<span class="pasted-text">([^<]*)</span>', page)
    assert glued[:2] == ["20,000", "64"] and all(re.fullmatch(r"0\.\d{3}", value) for value in glued[2:4]), glued
    assert f"Exercise {number}.1" in page and "dropdown" in page, "the exercise and its collapsed solution"
    # The registries saw it: the evidence page measures its theorem, the graph and the Cite page list it.
    for other in ("evidence", "graph", "cite", "exercises"):
        assert SLUG in (html / f"{other}.html").read_text(encoding="utf-8"), other

    # The tests make check runs on a page and on the registries pass in the copy, the page's own included
    # (the slow ones too: test_every_theorem_is_measured measures every row).
    tests = [f"tests/test_site_{MODULE}.py", "tests/test_layout.py", "tests/test_statements.py",
             "tests/test_site_figures.py::test_the_registered_figures_are_the_ones_the_pages_show",
             "tests/test_evidence.py::test_every_theorem_is_measured", "tests/test_proofs.py::test_every_theorem_a_page_states_is_registered"]
    checked = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not build and not site", *tests],
        cwd=site, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(site / "src")},
    )
    assert checked.returncode == 0, checked.stdout[-4000:]
