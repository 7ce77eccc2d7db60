"""The site's page sources, as the tests that read them see them (without the MyST they show as examples)."""

from __future__ import annotations

from pathlib import Path

from attention_scaling.site.sources import page_source

REPO = Path(__file__).resolve().parents[1]
PAGES = sorted((REPO / "docs").glob("*.md"))

__all__ = ["PAGES", "REPO", "page_source"]
