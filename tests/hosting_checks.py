r"""What a hosted page must carry, checked on the built HTML: shared by three test modules.

tests/test_browser.py runs these checks on this checkout's ``_build/html``
(built with whatever address its environment gave, usually none), and
tests/test_clean_builds.py on the clean builds, made as a host makes them
(``HOSTED``: ``SITE_URL`` set, on GitHub), so that both branches of
docs/_ext/hosting.py are checked: with an address, every page has absolute
``og:url`` and ``og:image`` and ``sitemap.xml`` lists every page; without
one, none of them is written. Each function returns a list of readable
problems, empty when all is well, so that a test can plant a fault and see
it reported. :func:`launch_links` opens a page in Chromium and reads its
links to Binder and Colab (tests/test_clean_builds.py and tests/test_hosting.py).

This is a plain module, not a test file; the tests import it as
``hosting_checks`` (``tests/`` is on ``sys.path`` under pytest).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

import sitebuild

__all__ = ["HOSTED", "SITE_URL", "Head", "base_url", "launch_links", "metadata_problems", "page_head", "sitemap_problems", "source_pages"]

REPO = Path(__file__).resolve().parents[1]
SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
# LaTeX left in a description: a backslash command or a dollar sign.
RAW_TEX = re.compile(r"\\[A-Za-z]+|\$")
# A project site on a host that serves it below the domain's root, as GitHub
# Pages and Read the Docs do: the 404 page must link under /why-sqrt-dk/.
SITE_URL = "https://course.example.org/why-sqrt-dk/"
# The environment of a build as GitHub Actions makes it for a custom domain:
# the address from SITE_URL, the repository (for the launch links) from
# GitHub's variables, and no Read the Docs address that could compete.
HOSTED = {"SITE_URL": SITE_URL, "READTHEDOCS_CANONICAL_URL": None,
          "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "Owner/why-sqrt-dk"}


@dataclass
class Head:
    """The ``<meta>`` and ``<link>`` tags of a page.

    Attributes
    ----------
    meta : dict
        ``name`` or ``property`` -> list of ``content`` values (a list, so
        that a tag written twice is seen).
    links : dict
        ``rel`` -> list of ``href`` values.
    """

    meta: dict = field(default_factory=dict)
    links: dict = field(default_factory=dict)

    def one(self, key: str) -> str | None:
        """The content of the meta tag ``key``, or None if there is none (a tag written twice is a problem elsewhere)."""
        values = self.meta.get(key, [])
        return values[0] if values else None


class _HeadParser(HTMLParser):
    def __init__(self):
        super().__init__()
        self.head = Head()

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "meta" and "content" in attributes:
            key = attributes.get("name") or attributes.get("property")
            if key:
                self.head.meta.setdefault(key, []).append(attributes["content"])
        elif tag == "link" and "rel" in attributes:
            for rel in attributes["rel"].split():
                self.head.links.setdefault(rel, []).append(attributes.get("href", ""))


def parse_head(text: str) -> Head:
    """The meta and link tags of an HTML text.

    Examples
    --------
    >>> head = parse_head('<meta name="description" content="A &amp; B"><link rel="icon" href="_static/i.svg">')
    >>> head.one("description"), head.links["icon"]
    ('A & B', ['_static/i.svg'])
    """
    parser = _HeadParser()
    parser.feed(text)
    return parser.head


def page_head(path: Path) -> Head:
    """The meta and link tags of the built page at ``path``."""
    return parse_head(Path(path).read_text(encoding="utf-8"))


def source_pages(repo: Path = REPO) -> list[str]:
    """The built names of the site's own pages (``index.html``, ...), from ``docs/*.md``."""
    return sorted(f"{path.stem}.html" for path in (Path(repo) / "docs").glob("*.md"))


def base_url(html: Path) -> str:
    """The address the site in ``html`` was built for (its index's canonical link), or "" if none."""
    canonical = page_head(Path(html) / "index.html").links.get("canonical", [])
    return canonical[0].removesuffix("index.html") if canonical else ""


def metadata_problems(head: Head, name: str, base: str, html: Path | None = None) -> list[str]:
    r"""What the page ``name`` lacks for search results, link previews and its tab.

    Parameters
    ----------
    head : Head
        The page's tags.
    name : str
        Its file name, e.g. ``"index.html"``.
    base : str
        The site's address as built, "" when unknown.
    html : pathlib.Path, optional
        The built site: when given, the favicon and preview image must exist in it.

    Returns
    -------
    list of str

    Examples
    --------
    >>> head = parse_head('<meta name="description" content="Why \\sqrt{d_k}">'
    ...                   '<meta property="og:url" content="index.html">')
    >>> for problem in metadata_problems(head, "index.html", ""):
    ...     print(problem)
    index.html: raw LaTeX in the description 'Why \\sqrt{d_k}'
    index.html: no og:title
    index.html: og:description None differs from the description
    index.html: twitter:card None, expected 'summary'
    index.html: no favicon link
    index.html: og:url written without a known base URL: 'index.html'
    """
    problems = []
    for key, values in head.meta.items():
        # The theme writes its viewport tag more than once; these tags are the site's.
        if len(values) > 1 and (key == "description" or key.startswith(("og:", "twitter:"))):
            problems.append(f"{name}: {key} written {len(values)} times")
    description = head.one("description")
    if not description:
        problems.append(f"{name}: no meta description")
    elif RAW_TEX.search(description):
        problems.append(f"{name}: raw LaTeX in the description {description!r}")
    if not head.one("og:title"):
        problems.append(f"{name}: no og:title")
    if head.one("og:description") != description:
        problems.append(f"{name}: og:description {head.one('og:description')!r} differs from the description")
    card = "summary_large_image" if base else "summary"
    if head.one("twitter:card") != card:
        problems.append(f"{name}: twitter:card {head.one('twitter:card')!r}, expected {card!r}")
    icons = head.links.get("icon", [])
    if not icons:
        problems.append(f"{name}: no favicon link")
    elif html is not None and not (Path(html) / icons[0]).is_file():
        problems.append(f"{name}: the favicon {icons[0]} is not in the site")
    url, image = head.one("og:url"), head.one("og:image")
    canonical = head.links.get("canonical", [None])[0]
    if base:
        if url != base + name or canonical != base + name:
            problems.append(f"{name}: og:url {url!r} and canonical {canonical!r}, expected {base + name!r}")
        if not image or not image.startswith(base) or not image.endswith(".png"):
            problems.append(f"{name}: og:image {image!r} is not a PNG under {base}")
        elif html is not None and not (Path(html) / image.removeprefix(base)).is_file():
            problems.append(f"{name}: og:image {image} is not in the site")
    else:
        for key, value in (("og:url", url), ("og:image", image), ("canonical link", canonical)):
            if value is not None:
                problems.append(f"{name}: {key} written without a known base URL: {value!r}")
    return problems


def sitemap_problems(html: Path, base: str, pages: list[str]) -> list[str]:
    """Whether ``sitemap.xml`` lists exactly ``pages`` under ``base``, or is absent when ``base`` is "".

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as scratch:
    ...     _ = (Path(scratch) / "sitemap.xml").write_text(
    ...         '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    ...         '<url><loc>https://x.org/a.html</loc></url></urlset>')
    ...     sitemap_problems(Path(scratch), "https://x.org/", ["a.html", "b.html"])
    ["sitemap.xml lacks ['https://x.org/b.html']"]
    """
    path = Path(html) / "sitemap.xml"
    if not base:
        return ["sitemap.xml written without a known base URL"] if path.exists() else []
    if not path.exists():
        return [f"no sitemap.xml although the base URL {base} is known"]
    locations = [loc.text for loc in ElementTree.parse(path).getroot().iter(SITEMAP_NS + "loc")]
    expected = {base + page for page in pages}
    problems = []
    if sorted(set(expected) - set(locations)):
        problems.append(f"sitemap.xml lacks {sorted(set(expected) - set(locations))}")
    if sorted(set(locations) - expected):
        problems.append(f"sitemap.xml lists what is no page of the site: {sorted(set(locations) - expected)}")
    if len(locations) != len(set(locations)):
        problems.append("sitemap.xml lists a page twice")
    return problems


# Run in a process of its own: the browser tests' session already drives Playwright's
# synchronous API, which refuses a second instance in the same process.
LAUNCH_LINKS = textwrap.dedent("""
    import json, re, sys
    from playwright.sync_api import sync_playwright

    off_site = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=sys.argv[2], args=["--no-sandbox"])
        page = browser.new_page()
        page.route(re.compile(r"^https?://"), lambda route: (off_site.append(route.request.url), route.abort()))
        page.goto(sys.argv[1], wait_until="load")
        links = page.eval_on_selector_all(
            ".page-files a.launch-link", "links => links.map(a => [a.textContent.trim(), a.href])")
        browser.close()
    print(json.dumps({"links": dict(links), "off_site": off_site}))
""")


def launch_links(page_url: str) -> tuple[dict[str, str], list[str]]:
    """The links that open a page's notebook elsewhere (Binder, Colab), read in Chromium, and every off-site request it made.

    Skips the calling test where Playwright or Chromium is missing.
    """
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the test extra)")
    if not sitebuild.CHROMIUM.exists():
        pytest.skip("no chromium on the PATH (Debian: apt-get install chromium)")
    ran = subprocess.run([sys.executable, "-c", LAUNCH_LINKS, page_url, str(sitebuild.CHROMIUM)],
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr[-3000:]
    found = json.loads(ran.stdout)
    return found["links"], found["off_site"]
