"""Sphinx configuration for the "Why √d_k" site.

Build with ``make html`` (``sphinx-build -c . docs _build/html``). The build is
strict: every page is executed, a failing cell stops it, and every warning is
an error (the Makefile passes ``-W --keep-going -n``).
"""

import hashlib
import importlib.metadata
import shutil
from pathlib import Path

from sphinx.writers.html5 import HTML5Translator

import attention_scaling

ROOT = Path(__file__).resolve().parent

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
    "sphinx.ext.mathjax",
    "sphinxcontrib.bibtex",
    "sphinx_proof",
    "sphinx_exercise",
    # Collapses the exercise solutions marked ":class: dropdown".
    "sphinx_togglebutton",
]
exclude_patterns = [
    # The other MathJax bundles and output formats in the offline copy (see
    # html_static_path below): only tex-chtml and what it loads are served.
    "mathjax/tex-svg*.js",
    "mathjax/tex-mml-*.js",
    "mathjax/tex-chtml-full*.js",
    "mathjax/mml-*.js",
    "mathjax/node-main.js",
    "mathjax/output/svg/**",
    "mathjax/output/svg.js",
    "mathjax/adaptors/**",
    "mathjax/input/mml/**",
    "mathjax/input/asciimath.js",
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
    ("py:class", r"number|sequence|callable|sympy\.\w+|numpy\.\w+"),
    # Choices written as a set, {"normal", "rademacher", "uniform"}.
    ("py:class", r'[{"].*'),
]

# -- MyST and execution ------------------------------------------------------

myst_enable_extensions = ["amsmath", "dollarmath", "colon_fence"]
myst_heading_anchors = 3

nb_execution_mode = "cache"
nb_execution_raise_on_error = True
nb_execution_show_tb = True
# The slowest page takes a few seconds; a minute means something hangs.
nb_execution_timeout = 60
nb_merge_streams = True
# Markdown that a cell displays (the evidence table) may use roles such as
# {prf:ref}, so it is parsed as MyST, not plain CommonMark.
nb_render_markdown_format = "myst"


def _package_fingerprint() -> str:
    """Hash of the package source and the lock.

    Executed outputs are cached per fingerprint, so editing the package (or
    changing a pinned dependency) re-executes every page instead of serving
    stale numbers.
    """
    digest = hashlib.sha256()
    tracked = sorted((ROOT / "src").rglob("*.py")) + [ROOT / "constraints.txt"]
    for path in tracked:
        digest.update(path.relative_to(ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


package_fingerprint = _package_fingerprint()
_cache_root = ROOT / "_build" / ".jupyter_cache"
nb_execution_cache_path = str(_cache_root / package_fingerprint)
# Caches for earlier versions of the package can never be used again.
for _stale in _cache_root.glob("*"):
    if _stale.name != package_fingerprint:
        shutil.rmtree(_stale, ignore_errors=True)

bibtex_bibfiles = ["docs/references.bib"]
bibtex_default_style = "plain"
bibtex_reference_style = "author_year"

# -- API reference -----------------------------------------------------------

autodoc_member_order = "bysource"
autodoc_typehints = "none"
napoleon_google_docstring = False
napoleon_use_rtype = False

# -- HTML --------------------------------------------------------------------

html_theme = "sphinx_book_theme"
html_title = "Why √dₖ"
html_theme_options = {
    "show_toc_level": 2,
}
# Light or dark follows the reader's system setting until they pick one. The
# theme needs the default spelled out: without it, a first visit logs "Got
# invalid theme mode" as a console error.
html_context = {"default_mode": "auto"}
html_last_updated_fmt = None

# MathJax is served from the site itself (the copy that the
# sphinx-mathjax-offline wheel ships), so math renders with no network.
html_static_path = [
    str(importlib.metadata.distribution("sphinx-mathjax-offline").locate_file("sphinx-mathjax-offline/static")),
    "docs/_static",
]
mathjax_path = "mathjax/tex-chtml.js"
# theme-fixes.css: accessibility fixes for the theme's markup; print.css: a
# printed page is the article alone (both hold only what their names say).
html_css_files = ["theme-fixes.css", "print.css"]


class AccessibleHTMLTranslator(HTML5Translator):
    """HTML translator whose bibliography entries are ARIA list items.

    Docutils wraps a run of citations in ``role="list"`` and gives each entry
    ``role="doc-biblioentry"``, a role that DPUB-ARIA 1.1 deprecated. A list
    must contain list items, so assistive technology (and axe-core, as a
    critical "aria-required-children" violation) sees an empty, broken list
    on the bibliography page. ``role="listitem"`` is what the entry is.
    """

    def visit_citation(self, node):
        super().visit_citation(node)
        self.body[-1] = self.body[-1].replace('role="doc-biblioentry"', 'role="listitem"')


def setup(app):
    # The theme mixes its own translator into whichever one is registered here.
    for builder in ("html", "dirhtml", "singlehtml"):
        app.set_translator(builder, AccessibleHTMLTranslator)
