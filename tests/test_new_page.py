"""make page: clear refusals, and nothing written when it refuses.

That a chapter made by make page builds, and passes its tests as made, is
checked on the copy that tests/test_clean_builds.py builds with such a
chapter (``cold_built`` in tests/conftest.py), where it costs no build of its own.
"""

import shutil

import pytest

from page_sources import REPO
from sitebuild import make_page

TITLE = "A scaffolded chapter"


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
