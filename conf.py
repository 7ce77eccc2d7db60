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

from provenance import built_from, launch_buttons, repository_url  # noqa: E402 (found through the line above)

# -- Project -----------------------------------------------------------------

project = "Why √dₖ"
author = "The Why √dₖ authors"
copyright = "2026, the Why √dₖ authors"
version = release = attention_scaling.__version__

# -- General -----------------------------------------------------------------

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.graphviz",  # the dependency graph; needs Graphviz's dot (README)
    "sphinxcontrib.bibtex",
    "sphinx_proof",
    "sphinx_exercise",
    # Collapses the exercise solutions marked ":class: dropdown".
    "sphinx_togglebutton",
    # A copy button on every code block but cell outputs (settings below).
    "sphinx_copybutton",
    # docs/_ext/
    "execution_cache",  # the cache keyed to the package source; old caches pruned
    "parallel_execution",  # pages the cache lacks run concurrently before the read
    "ipc_kernels",  # kernels on private IPC sockets, not loopback TCP, forked from a warm template
    "notebooks",  # the executed notebook in each page's download menu
    "labels",  # every theorem, equation, figure and exercise in objects.inv, by number and title
    "citations",  # the Cite page, from what the pages hold
    "exercise_index",  # each exercise's difficulty, and the index of them all
    "accessible_html",  # bibliography entries as ARIA list items
    "hosting",  # the site's URL; Open Graph, sitemap.xml and the 404 page (loads those three)
    "static_math",  # math typeset as MathML during the build: no math script in the pages
    "image_sizes",  # width and height on every image, so that figures do not shift the page
    "first_screen",  # the first screen drawn whole: rendering waits until the second subsection starts
    "lean_assets",  # the icon font, icon rules and ANSI colours cut down to what the site uses
    "tab_stops",  # the theme's tab stops on scrollable blocks set in short slices, not in one long task
]
nitpicky = True
# Theorems, equations and figures are numbered per page ("Theorem 2.1",
# "(2.3)"), so adding a page never renumbers what a course has cited elsewhere.
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
# Pages run concurrently, one kernel each, on this many workers ("auto": one
# per CPU). NB_JOBS=1 leaves them to myst-nb, one after another in the read.
nb_parallel_jobs = os.environ.get("NB_JOBS") or "auto"
# The longest pages start first, the one computing the evidence rows well
# before the graph that reads them: a long page started last (they start in
# alphabetical order) ran alone at the end while the other worker idled.
nb_execute_first = ["training", "evidence", "long-sequences", "saturation"]
# Every kernel is forked from one process that has imported these
# (docs/_ext/ipc_kernels.py): each page would otherwise spend about 1.8 s of
# CPU starting ipykernel and importing them before its own code runs.
nb_kernel_preload = ["numpy", "sympy", "matplotlib.pyplot", "IPython.display", "myst_nb",
                     "attention_scaling.proofs", "attention_scaling.site", "attention_scaling.site.statements"]

bibtex_bibfiles = ["docs/references.bib"]
bibtex_default_style = "plain"
bibtex_reference_style = "author_year"

# An SVG keeps the graph's text sharp and each node a link to its statement.
graphviz_output_format = "svg"

# -- API reference -----------------------------------------------------------

autodoc_member_order = "bysource"
autodoc_typehints = "none"
napoleon_google_docstring = False
napoleon_use_rtype = False
# Parameter types are prose ("array_like, shape (..., n)"), not cross-references.
napoleon_use_param = False

# -- HTML --------------------------------------------------------------------

html_theme = "sphinx_book_theme"
html_title = "Why √dₖ"
html_theme_options = {
    "show_toc_level": 2,
    # Every page says what it was built from, so a citation can name it.
    "extra_footer": f"<p>Built from {built_from(ROOT, release)} of the attention-scaling package and site.</p>",
    **launch_buttons(repository_url()),  # Binder and Colab, when CI names the repository
}
# Light or dark follows the reader's system setting until they pick one. The
# theme needs the default spelled out: without it, a first visit logs "Got
# invalid theme mode" as a console error.
html_context = {"default_mode": "auto"}
html_last_updated_fmt = None

html_static_path = ["docs/_static"]
# Lighter pages: no icon script, no search index outside search.html (docs/_templates says why).
templates_path = ["docs/_templates"]
html_math_renderer = "static_mathml"
# theme-fixes.css: accessibility fixes for the theme's markup; print.css: a
# printed page is the article alone; offscreen.css: what is off screen is
# rendered when it comes near it (each holds only what its name says).
html_css_files = ["theme-fixes.css", "print.css", "offscreen.css"]

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
sitemap_excludes = ["search.html", "genindex.html", "py-modindex.html", "prf-prf.html", "404.html"]
notfound_context = {"title": "Page not found", "body": (
    "<h1>Page not found</h1><p>No page of <em>Why √dₖ</em> is at this address: it may have moved, or the "
    "link may be mistyped. The navigation lists every chapter, and the search box finds any term.</p>")}
# Copy buttons on code and BibTeX, not outputs; an example's prompts and printed output stay behind.
copybutton_selector = "div.highlight pre:not(.cell_output *)"
copybutton_prompt_text = r">>> |\.\.\. "
copybutton_prompt_is_regexp = True
copybutton_exclude = ".linenos, .gp, .go"
