"""The built site loads nothing from other hosts.

A page that pulls a script, stylesheet, font or image from a CDN breaks
offline and tells that host who is reading. This scans every HTML, CSS and
JavaScript file of ``_build/html`` for absolute (``http://``, ``https://``)
or protocol-relative (``//host``) URLs in the places a browser fetches on
load: ``src``/``href`` of scripts, stylesheets, images and other embedded
resources, and ``@import``/``url()`` in CSS. Plain links (``<a href>``) are
fine: nothing is fetched until a reader follows them.

The browser tests (tests/test_browser.py) block and report any off-site
request a page really makes; this test also covers files that no tested page
happened to load, and needs no browser.
"""

import re
from html.parser import HTMLParser


ABSOLUTE = re.compile(r"^\s*(https?:)?//", re.IGNORECASE)
# Attributes that make the browser fetch, per element.
FETCHED = {
    "script": ("src",),
    "link": ("href",),
    "img": ("src", "srcset"),
    "source": ("src", "srcset"),
    "iframe": ("src",),
    "embed": ("src",),
    "object": ("data",),
    "video": ("src", "poster"),
    "audio": ("src",),
    "track": ("src",),
}
# <link> relations that only name another document (canonical, next page,
# search page, ...); the browser fetches none of them on load.
LINK_RELS_NOT_FETCHED = {"alternate", "author", "bookmark", "canonical", "help", "index", "license", "me", "next", "prev", "search"}
CSS_URL = re.compile(r"""@import\s+["']([^"']+)["']|url\(\s*["']?([^"')\s]+)""", re.IGNORECASE)
# Markup that a script writes into the page: <script src=...>, <link href=...>, <img src=...>.
JS_TAG = re.compile(r"""<(?:script|link|img|iframe)\b[^<>]*?\b(?:src|href)\s*=\s*\\?["']?((?:https?:)?//[^"'\\\s>]+)""", re.IGNORECASE)


def _absolute_urls_in_css(css):
    """Absolute URLs that ``@import`` or ``url()`` in a stylesheet would fetch.

    Examples
    --------
    >>> _absolute_urls_in_css('@import "https://x.org/a.css"; b { background: url(//cdn/i.png) } c { d: url(data:x) }')
    ['https://x.org/a.css', '//cdn/i.png']
    """
    urls = [first or second for first, second in CSS_URL.findall(css)]
    return [url for url in urls if ABSOLUTE.match(url)]


class _FetchedURLs(HTMLParser):
    """Collects the absolute URLs that loading an HTML page would fetch."""

    def __init__(self):
        super().__init__()
        self.urls = []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        attrs = {name: value or "" for name, value in attrs}
        names = FETCHED.get(tag, ())
        if tag == "link" and set(attrs.get("rel", "").lower().split()) <= LINK_RELS_NOT_FETCHED:
            names = ()
        for name in names:
            # srcset holds "URL WIDTH, URL WIDTH"; src and href one URL.
            candidates = attrs.get(name, "").split(",") if name == "srcset" else [attrs.get(name, "")]
            for candidate in candidates:
                url = candidate.strip().split(" ")[0]
                if ABSOLUTE.match(url):
                    self.urls.append(f"<{tag} {name}={url}>")
        self.urls += [f"style={url}" for url in _absolute_urls_in_css(attrs.get("style", ""))]
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.urls += [f"<style> {url}" for url in _absolute_urls_in_css(data)]


def fetched_urls(path):
    """Absolute URLs that a browser would fetch because of the file at ``path``.

    Parameters
    ----------
    path : pathlib.Path
        An ``.html``, ``.css`` or ``.js`` file.

    Returns
    -------
    list of str
        Each URL with where it was found, e.g. ``"<script src=https://...>"``.
    """
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".html":
        parser = _FetchedURLs()
        parser.feed(text)
        return parser.urls
    if path.suffix == ".css":
        return _absolute_urls_in_css(text)
    return [f"script writes markup fetching {url}" for url in JS_TAG.findall(text)]


def test_the_scanner_finds_what_a_browser_would_fetch(tmp_path):
    page = tmp_path / "page.html"
    page.write_text(
        '<link rel="stylesheet" href="https://cdn.example/a.css">'
        '<link rel="canonical" href="https://example.org/page.html">'
        '<script src="//cdn.example/b.js"></script><img src="_static/local.png" alt="">'
        '<img srcset="small.png 1x, https://cdn.example/big.png 2x" alt="">'
        '<a href="https://example.org/">a link is not fetched</a>'
        '<style>body { background: url("https://cdn.example/bg.png") }</style>'
    )
    script = tmp_path / "a.js"
    script.write_text("""el.innerHTML = '<script src="https://cdn.example/c.js"></script>'; const ns = "http://www.w3.org/2000/svg";""")
    assert fetched_urls(page) == [
        "<link href=https://cdn.example/a.css>",
        "<script src=//cdn.example/b.js>",
        "<img srcset=https://cdn.example/big.png>",
        "<style> https://cdn.example/bg.png",
    ]
    assert fetched_urls(script) == ["script writes markup fetching https://cdn.example/c.js"]


def test_built_site_fetches_nothing_from_other_hosts(repo_html):
    """Needs the built site (marked ``site``); tests/conftest.py builds it if missing."""
    site = repo_html
    files = [path for path in sorted(site.rglob("*")) if path.suffix in (".html", ".css", ".js")]
    # Not vacuous: the theme's stylesheets and scripts and the pages are there.
    assert {".html", ".css", ".js"} <= {path.suffix for path in files}
    found = [f"{path.relative_to(site)}: {url}" for path in files for url in fetched_urls(path)]
    assert not found, "\n".join(found)
