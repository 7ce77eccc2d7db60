"""The site's page sources, as the tests that read them see them."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGES = sorted((REPO / "docs").glob("*.md"))
# MyST shown as an example (the Contributing page's), in a code block `````md: not the page's own.
EXAMPLE = re.compile(r"^(`{5,})md[ \t]*\n.*?^\1[ \t]*$", re.M | re.S)


def page_text(page: Path) -> str:
    """The page's source without the examples it shows."""
    return EXAMPLE.sub("", page.read_text(encoding="utf-8"))
