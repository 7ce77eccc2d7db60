"""Numbers that a course may cite do not change.

A course cites "Theorem 2.1" or "Figure 5.3" as well as its label. Sphinx
numbers chapters by their place in the contents and items by their place on
their page, so a page inserted among the chapters, or an item inserted above
others on a page, renumbers what follows. The rule (the Contributing page,
"Numbering"): a new page goes at the end of the chapters, a new item at the
end of its page.

``tests/published_numbers.txt`` lists every chapter and numbered item as the
site has published them, one ``label number`` a line. This test compares the
built site with it: a listed label must still exist, with the same number.
A second test asks for new labels to be appended, giving the lines.
"""

from __future__ import annotations

import re
import zlib
from pathlib import Path

PUBLISHED = Path(__file__).with_name("published_numbers.txt")
# How objects.inv names a numbered item: its kind and number, then its title.
NUMBERED_NAME = re.compile(r"(?:Theorem|Lemma|Figure|Exercise) \d+(?:\.\d+)*|Equation \(\d+(?:\.\d+)*\)")
CHAPTER_NUMBER = re.compile(r'<h1><span class="section-number">(\d+)\. </span>')


def site_numbers(html: Path) -> dict[str, str]:
    """Every chapter (``page:SLUG``, its number) and numbered item (its label, e.g. "Theorem 2.1") of a built site."""
    numbers = {}
    for page in sorted(html.glob("*.html")):
        chapter = CHAPTER_NUMBER.search(page.read_text(encoding="utf-8"))
        if chapter:
            numbers[f"page:{page.stem}"] = chapter.group(1)
    inventory = zlib.decompress((html / "objects.inv").read_bytes().split(b"\n", 4)[4]).decode()
    for line in inventory.splitlines():
        label, role, _, _, name = line.split(" ", 4)
        number = NUMBERED_NAME.match(name)
        if role == "std:label" and number:
            numbers[label] = number.group()
    return numbers


def published_numbers(text: str) -> dict[str, str]:
    """The list's ``label number`` lines as a mapping."""
    return dict(line.split(" ", 1) for line in text.splitlines() if line.strip() and not line.startswith("#"))


def renumbered(published: dict[str, str], built: dict[str, str]) -> list[str]:
    """What the built site numbers differently from the list, or lacks, as sentences a contributor can act on."""
    problems = []
    for label, number in published.items():
        if label not in built:
            problems.append(f"{label} ({number}) is gone: a course may cite it; keep the label (Contributing, 'Numbering').")
        elif built[label] != number:
            problems.append(f"{label} was {number} and is now {built[label]}: put new pages at the end of the chapters"
                            " in docs/index.md and new items at the end of their page (Contributing, 'Numbering').")
    return problems


def test_no_published_number_changes(repo_html):
    problems = renumbered(published_numbers(PUBLISHED.read_text(encoding="utf-8")), site_numbers(repo_html))
    assert not problems, "\n".join(problems)


def test_every_numbered_item_of_the_site_is_published(repo_html):
    # The list covers what the site shows: a new item is appended to it when it is published.
    built = site_numbers(repo_html)
    missing = sorted(set(built) - set(published_numbers(PUBLISHED.read_text(encoding="utf-8"))))
    lines = "".join(f"\n{label} {built[label]}" for label in missing)
    assert not missing, f"new numbered items: append these lines to tests/{PUBLISHED.name}:{lines}"
