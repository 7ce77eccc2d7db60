r"""The published site's address, and the metadata that hosted pages need from it.

Why this is an extension: sphinxext-opengraph (``og:url``, ``og:image``),
sphinx-sitemap (``sitemap.xml``) and sphinx-notfound-page (the 404 page's
links) each need the absolute URL the site is published at, and a build
learns that URL only from where it runs:

1. ``html_baseurl``, when given on the command line (``-D html_baseurl=...``);
2. ``SITE_URL``, set by hand, e.g. for a custom domain;
3. ``READTHEDOCS_CANONICAL_URL``, which Read the Docs sets
   (``https://PROJECT.readthedocs.io/en/latest/``);
4. ``GITHUB_REPOSITORY``, which GitHub Actions sets: GitHub Pages serves
   ``OWNER/NAME`` at ``https://OWNER.github.io/NAME/`` (and ``OWNER/OWNER.github.io``
   at ``https://OWNER.github.io/``).

When none of them is set (a build on a laptop) no address is made up:
pages get no ``og:url``, ``og:image`` or canonical link, no ``sitemap.xml`` is
written, and the 404 page's links are rooted at ``/``. A relative ``og:url``
or a sitemap of relative paths would be wrong rather than incomplete.

The rest follows from the address, or is per page:

- ``notfound_urls_prefix`` is the address's path (``/en/latest/`` on Read the
  Docs, ``/NAME/`` on GitHub Pages), so that the 404 page, served in place of
  any missing page at any depth, loads its styles and links from the site's
  root.
- The preview image (``og:image``) is one of the site's own figures,
  ``hosting_preview_figure``, drawn at build time from its seeded data
  (no binary file in the repository) into ``_images/``; only with an address,
  since an image a crawler cannot locate serves no one.
- ``twitter:card`` is ``summary_large_image`` with that image, ``summary``
  without it.
- Each page's ``description`` front matter field becomes its
  ``<meta name="description">`` and ``og:description``: sphinxext-opengraph
  would otherwise take the first paragraph, LaTeX source included. A page
  without one is a warning (so an error in the strict build).
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from urllib.parse import urlsplit

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.util import logging

__all__ = ["PREVIEW_IMAGE", "site_url", "setup"]

logger = logging.getLogger(__name__)

# Where the preview image is written, relative to the output directory.
PREVIEW_IMAGE = "_images/social-preview.png"
# 7 x 3 inches at this resolution is 1120 x 480 pixels: wide enough for a
# large card (Open Graph asks for at least 600 pixels across).
PREVIEW_DPI = 160
# What matplotlib would otherwise stamp into the PNG (its version); fixed so
# that two builds write the same bytes.
PREVIEW_METADATA = {"Software": None}


def site_url(environ, baseurl: str = "") -> str:
    """The absolute URL the site is published at, ending in "/", or "" when unknown.

    Parameters
    ----------
    environ : mapping
        The environment variables (``os.environ``).
    baseurl : str, default ""
        ``html_baseurl`` as configured; it wins when set.

    Returns
    -------
    str

    Examples
    --------
    >>> site_url({"READTHEDOCS_CANONICAL_URL": "https://whysqrtdk.readthedocs.io/en/latest/"})
    'https://whysqrtdk.readthedocs.io/en/latest/'
    >>> site_url({"GITHUB_REPOSITORY": "Course-Org/why-sqrt-dk"})
    'https://course-org.github.io/why-sqrt-dk/'
    >>> site_url({"GITHUB_REPOSITORY": "ada/ada.github.io"})
    'https://ada.github.io/'
    >>> site_url({"SITE_URL": "https://attention.example.org", "GITHUB_REPOSITORY": "a/b"})
    'https://attention.example.org/'
    >>> site_url({})
    ''
    """
    url = baseurl or environ.get("SITE_URL") or environ.get("READTHEDOCS_CANONICAL_URL") or ""
    if not url and environ.get("GITHUB_REPOSITORY"):
        owner, _, name = environ["GITHUB_REPOSITORY"].partition("/")
        # Host names are case-insensitive and GitHub serves them in lower case.
        host = f"{owner.lower()}.github.io"
        url = f"https://{host}/" if name.lower() == host else f"https://{host}/{name}/"
    if not url:
        return ""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"the site's URL must be absolute (http or https); got {url!r}")
    return url if url.endswith("/") else url + "/"


def _configure(app: Sphinx, config: Config) -> None:
    url = site_url(os.environ, config.html_baseurl)
    config.html_baseurl = url
    config.ogp_site_url = url
    config.notfound_urls_prefix = urlsplit(url).path if url else "/"
    if url:
        config.ogp_image = PREVIEW_IMAGE
        card = "summary_large_image"
        logger.info(f"[hosting] the site's URL is {url}")
    else:
        config.ogp_image = None
        card = "summary"
        # sphinx-sitemap warns that it cannot write a sitemap without an
        # address; here that is the intended outcome, so it is said once, here.
        config.suppress_warnings = [*config.suppress_warnings, "sitemap.configuration"]
        logger.info("[hosting] no site URL known (SITE_URL, READTHEDOCS_CANONICAL_URL, GITHUB_REPOSITORY):"
                    " no og:url, og:image, canonical links or sitemap.xml")
    config.ogp_custom_meta_tags = [*config.ogp_custom_meta_tags, f'<meta name="twitter:card" content="{card}" />']


def _draw_preview(app: Sphinx) -> None:
    """Draw the preview image from the site's own figure, as the pages do."""
    if app.builder.format != "html" or not app.config.html_baseurl:
        return
    from attention_scaling.site.figures import make_figure
    from attention_scaling.site.plots import style

    path = Path(app.outdir) / PREVIEW_IMAGE
    path.parent.mkdir(parents=True, exist_ok=True)
    with style():
        figure = make_figure(app.config.hosting_preview_figure)
        figure.savefig(path, format="png", dpi=PREVIEW_DPI, metadata=PREVIEW_METADATA)


def _describe(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Give the page its description before sphinxext-opengraph writes its tags."""
    if doctree is None:  # generated pages: the index, search, the 404 page
        return
    description = str(app.env.metadata.get(pagename, {}).get("description", "")).strip()
    if not description:
        logger.warning(f"{pagename} has no description: add `description: ONE SENTENCE` to its front matter"
                       " (the text of search results and link previews)", location=pagename)
        return
    context["metatags"] += f'<meta name="description" content="{html.escape(description)}" />\n'
    # A copy: opengraph reads per-page overrides from context["meta"], which is
    # the environment's own record of the page.
    context["meta"] = {**(context.get("meta") or {}), "og:description": description}


def _drop_relative_url(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Remove the relative ``og:url`` that sphinxext-opengraph writes when no address is known."""
    if not app.config.html_baseurl and "metatags" in context:
        lines = context["metatags"].split("\n")
        context["metatags"] = "\n".join(line for line in lines if 'property="og:url"' not in line)


def setup(app: Sphinx) -> dict:
    app.setup_extension("sphinxext.opengraph")
    app.setup_extension("sphinx_sitemap")
    app.setup_extension("notfound.extension")
    app.add_config_value("hosting_preview_figure", "three-regimes", "html", types=frozenset({str}))
    # Before sphinx-notfound-page checks its prefix (priority 500).
    app.connect("config-inited", _configure, priority=400)
    app.connect("builder-inited", _draw_preview)
    # Around sphinxext-opengraph's handler (priority 500): before it, so that it
    # takes the description; after it, to remove what it writes without an address.
    app.connect("html-page-context", _describe, priority=450)
    app.connect("html-page-context", _drop_relative_url, priority=550)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
