"""Sphinx configuration for the "Why √d_k" site: settings only.

Build with ``make html`` (``sphinx-build -c . docs _build/html``). The build is
strict: every page is executed, a failing cell stops it, and every warning is
an error (the Makefile passes ``-W --keep-going -n``). The plumbing is in the
local extensions of docs/_ext/, one module per job.
"""

import os
import sys
from pathlib import Path

import attention_scaling

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

from provenance import built_from  # noqa: E402 (found through the line above)

# -- Project -----------------------------------------------------------------

project = "Why √dₖ"
author = "The Why √dₖ authors"
version = release = attention_scaling.__version__
# The footer of every page (printed too) says what it was built from, so a citation can name it.
copyright = f"2026, the Why √dₖ authors. Built from {built_from(ROOT, release)}"

# -- General -----------------------------------------------------------------

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinxcontrib.bibtex",
    "sphinx_proof",
    "sphinx_exercise",
    # Collapses the exercise solutions marked ":class: dropdown".
    "sphinx_togglebutton",
    # A copy button on every code block but cell outputs (settings below).
    "sphinx_copybutton",
    # docs/_ext/
    "execution_cache",  # the cache keyed to the package source; old caches pruned
    "parallel_execution",  # pages the cache lacks run in parallel (jupyter-cache) before the read
    "notebooks",  # each page's source, executed notebook and launch links, in the sidebar
    "labels",  # every theorem, equation, figure and exercise in objects.inv, by number and title
    "citations",  # the Cite page, from what the pages hold
    "exercise_index",  # each exercise's difficulty, and the index of them all
    "step_tables",  # a proof's table of steps stacks each reason under its step on a phone
    "accessible_html",  # ARIA roles and levels, and keyboard access to what scrolls
    "valid_html",  # unique ids and no list in a paragraph, where upstream extensions write them
    "hosting",  # the site's URL; Open Graph, sitemap.xml and the 404 page (loads those three)
    "static_math",  # math typeset as MathML during the build: no math script in the pages
    "image_sizes",  # width and height on every image, so that figures do not shift the page
]
nitpicky = True
# Theorems, equations and figures are numbered per page ("Theorem 2.1",
# "(2.3)"), the page by its place among the chapters: so a new page goes at the
# end of them, a new item at the end of its page, and nothing a course cites is
# renumbered (tests/test_numbering.py; the Contributing page, "Numbering").
numfig = True
math_numfig = True
numfig_secnum_depth = 1
math_eqref_format = "({number})"
# numpydoc type fields such as "array_like, shape (..., n_q, d_k), optional"
# are prose; only real names in them should become cross-references. SymPy's
# own classes have no inventory here (the build is offline), so they stay text.
nitpick_ignore_regex = [
    ("py:class", r"array_like|of bool|optional|default .*|shape|n|n_q|n_k|d_k|d_v|\.\.\.|\(\.\.\.\)"),
    ("py:class", r"number|sequence|callable|batch|d_model|sympy\.\w+|numpy\.\w+"),
    # Choices written as a set, {"normal", "rademacher", "uniform"}.
    ("py:class", r'[{"].*'),
]

# -- MyST and execution ------------------------------------------------------

myst_enable_extensions = ["amsmath", "dollarmath", "colon_fence"]
myst_heading_anchors = 3

nb_execution_mode = "cache"
nb_execution_raise_on_error = True
nb_execution_show_tb = True
# The slowest page (the graph, which runs every proof) takes about 30 s on two idle
# cores: 3 minutes means a hang. NB_TIMEOUT=600 waits longer on a shared machine.
nb_execution_timeout = int(os.environ.get("NB_TIMEOUT") or 180)
nb_merge_streams = True
# A cell that writes to stderr (a warning, a missing font) fails the strict build,
# naming the page, instead of showing the reader a stray log.
nb_output_stderr = "warn"
# Markdown that a cell displays (the evidence table) may use roles such as
# {prf:ref}, so it is parsed as MyST, not plain CommonMark.
nb_render_markdown_format = "myst"
# Outputs are cached in _build/.jupyter_cache/FINGERPRINT, a hash of these
# files and of the package as this environment imports it (the kernels do
# too): editing the package or a pin executes every page again, instead of
# serving stale numbers. The caches of the two sources used last are kept.
nb_execution_cache_root = "_build/.jupyter_cache"
nb_execution_cache_key = ["constraints.txt"]
nb_execution_cache_packages = ["attention_scaling"]
nb_execution_cache_keep = 2
# Pages that the cache lacks run in parallel before the read, one process per CPU
# (docs/_ext/parallel_execution.py), longest first: a long page taken last
# ran alone at the end while the other process idled.
nb_execute_first = ["graph", "training", "evidence", "saturation", "long-sequences"]

bibtex_bibfiles = ["docs/references.bib"]
bibtex_default_style = "plain"
bibtex_reference_style = "author_year"

# -- API reference -----------------------------------------------------------

autodoc_member_order = "bysource"
autodoc_typehints = "none"
napoleon_google_docstring = False
napoleon_use_rtype = False
# Parameter types are prose ("array_like, shape (..., n)"), not cross-references.
napoleon_use_param = False

# -- HTML --------------------------------------------------------------------

# Furo, used as its documentation describes: options, CSS variables, a sidebar
# template of our own and a small stylesheet; no theme file is overridden.
html_theme = "furo"
html_title = "Why √dₖ"
# The theme's eye and pencil buttons link to a repository; the page's own files
# and launch links are in the sidebar instead (docs/_templates/page-files.html).
html_theme_options = {"top_of_page_buttons": []}
# Furo's sidebar (its theme.conf lists these), with this page's files after
# the navigation: its source, its notebook, Binder and Colab (docs/_ext/notebooks.py).
html_sidebars = {"**": ["sidebar/brand.html", "sidebar/search.html", "sidebar/scroll-start.html",
                        "sidebar/navigation.html", "page-files.html", "sidebar/scroll-end.html"]}
html_last_updated_fmt = None
# The page's source is offered as PAGE.md, not PAGE.md.txt.
html_sourcelink_suffix = ""

html_static_path = ["docs/_static"]
# sphinx-proof's index of bare labels gives way to the graph page's index of results.
html_domain_indices = ["py-modindex"]
# Chapters rank above the reference pages, the API reference last.
html_search_scorer = "docs/_ext/search_scorer.js"
templates_path = ["docs/_templates"]
html_math_renderer = "static_mathml"
# site.css: what the extensions add and the theme does not style (the page's
# files, proofs, exercises, the graph); print.css: a printed page is the article alone.
html_css_files = ["site.css", "print.css"]

# -- Hosting -----------------------------------------------------------------
# docs/_ext/hosting.py sets html_baseurl, ogp_site_url, ogp_image and notfound_urls_prefix
# from where the build runs (README); each page's description is its front matter's.
html_favicon = "docs/_static/favicon.svg"
# og:image: this figure, drawn at build time. Not opengraph's social cards: they print the
# first paragraph, LaTeX and all, and without a base URL would be linked relatively.
hosting_preview_figure = "three-regimes"
ogp_social_cards = {"enable": False}
ogp_image_alt = ("Attention weights at growing head widths: unscaled they collapse onto one key, "
                 "divided by d_k they flatten, divided by its square root they keep one sharpness.")
sitemap_url_scheme = "{link}"  # the base URL already names the version (/en/latest/)
sitemap_excludes = ["search.html", "genindex.html", "py-modindex.html", "404.html"]
notfound_context = {"title": "Page not found", "body": (
    "<h1>Page not found</h1><p>No page of <em>Why √dₖ</em> is at this address: it may have moved, or the "
    "link may be mistyped. The navigation lists every chapter, and the search box finds any term.</p>")}
# Copy buttons on code and BibTeX, not outputs; an example's prompts and printed output stay behind.
copybutton_selector = "div.highlight pre:not(.cell_output *)"
copybutton_prompt_text = r">>> |\.\.\. "
copybutton_prompt_is_regexp = True
copybutton_exclude = ".linenos, .gp, .go"
