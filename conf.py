"""Sphinx configuration for the "Why √d_k" site.

Build with ``make html`` (``sphinx-build -c . docs _build/html``). The build is
strict: every page is executed, a failing cell stops it, and every warning is
an error (the Makefile passes ``-W --keep-going -n``).
"""

import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
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
# A cache is only ever used for the exact sources it was made from, so none
# can be stale. Besides the current one, the two used last are kept: undoing
# an edit, or switching back to a branch, then executes nothing. Older ones go.
_cache_current = _cache_root / package_fingerprint
if _cache_current.is_dir():
    os.utime(_cache_current)  # last used now
_cache_others = sorted(
    (path for path in _cache_root.glob("*") if path.is_dir() and path != _cache_current),
    key=lambda path: path.stat().st_mtime,
    reverse=True,
)
for _stale in _cache_others[2:]:
    shutil.rmtree(_stale, ignore_errors=True)

# Pages are executed concurrently, one kernel per page, on this many workers
# (NB_JOBS=1 executes them one after another, inside the read, as myst-nb
# alone does). `sphinx-build -j` cannot be used: sphinx-proof cannot merge
# the results of parallel reads.
execution_jobs = int(os.environ.get("NB_JOBS") or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


def _pre_execute(app, env, docnames):
    """Execute the outdated pages that the cache lacks, in parallel, into it.

    Runs just before Sphinx reads ``docnames`` (the pages it is about to
    parse). Each page is read exactly as myst-nb's parser reads it (the same
    reader, Markdown settings, kernel aliases and per-page settings), so its
    cells hash to the key myst-nb looks up; the executed notebook is stored
    the way myst-nb stores it. myst-nb then finds every page in the cache.

    A page that fails here is not stored: myst-nb executes it again while
    reading and fails the build with its usual report, naming the page and
    the cell. Nothing here can make the build pass that would fail without it.
    """
    from concurrent.futures import ThreadPoolExecutor, as_completed
    from contextlib import nullcontext
    from pathlib import PurePosixPath
    from tempfile import TemporaryDirectory

    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn
    from jupyter_cache.cache.db import NbProjectRecord
    from jupyter_cache.executors.utils import single_nb_execution
    from myst_nb.core.nb_to_tokens import nb_node_to_dict
    from myst_nb.core.read import create_nb_reader
    from sphinx.util import logging

    logger = logging.getLogger("conf.pre_execute")
    jobs = execution_jobs
    if jobs < 2 or not docnames:
        return
    pending = []  # (docname, path, notebook, config, cache, stage record)
    for docname in docnames:
        path = Path(env.doc2path(docname))
        if not path.is_file():
            continue
        # As in myst_nb.sphinx_.Parser.parse and myst_nb.core.execute.
        text = path.read_text(encoding=env.settings.get("input_encoding", "utf-8-sig"))
        reader = create_nb_reader(str(path), env.myst_config, env.mystnb_config, text)
        if reader is None:
            continue  # plain Markdown, nothing to execute
        try:
            notebook = reader.read(text)
        except Exception:
            continue  # myst-nb reports it while reading the page
        config = env.mystnb_config
        kernel = notebook.metadata.get("kernelspec", {}).get("name")
        for pattern, alias in config.kernel_rgx_aliases.items():
            if kernel is not None and re.fullmatch(pattern, kernel):
                notebook.metadata["kernelspec"]["name"] = alias
                break
        if config.metadata_key in notebook.metadata:
            overrides = nb_node_to_dict(notebook.metadata[config.metadata_key])
            overrides.pop("output_folder", None)
            try:
                config = config.copy(**overrides)
            except Exception:
                continue  # myst-nb warns about it while reading the page
        posix = PurePosixPath(path.as_posix())
        if config.execution_mode != "cache" or any(posix.match(p) for p in config.execution_excludepatterns):
            continue
        cache = get_cache(config.execution_cache_path)
        try:
            cache.match_cache_notebook(notebook)
            continue  # already executed
        except KeyError:
            pass
        stage = cache.add_nb_to_project(str(path), **({"read_data": reader.read_fmt} if reader.read_fmt else {}))
        NbProjectRecord.remove_tracebacks([stage.pk], cache.db)
        pending.append((docname, path, notebook, config, cache, stage))
    if not pending:
        return
    workers = min(jobs, len(pending))
    logger.info(f"executing {len(pending)} page(s) that the cache lacks, {workers} at a time")

    def execute(item):
        docname, path, notebook, config, *_ = item
        logger.info("Running notebook in a parallel worker", location=docname)
        with TemporaryDirectory() if config.execution_in_temp else nullcontext(str(path.parent)) as cwd:
            return single_nb_execution(
                notebook,
                cwd=os.path.abspath(cwd),
                allow_errors=config.execution_allow_errors,
                timeout=config.execution_timeout,
                meta_override=True,
            )

    def store(future, docname, path, notebook, config, cache, stage):
        try:
            result = future.result()
        except Exception as error:  # a kernel that did not start, say
            result, reason = None, f"{error.__class__.__name__}: {error}"
        else:
            reason = result.err and result.err.__class__.__name__
        if result is None or result.err is not None:
            logger.info(f"Failed in a parallel worker ({reason}); it runs again in the read, which reports the error", location=docname)
            return
        cache.cache_notebook_bundle(
            CacheBundleIn(notebook, stage.uri, data={"execution_seconds": result.time}),
            check_validity=False,
            overwrite=True,
        )
        logger.info(f"Executed notebook in {result.time:.2f} seconds (parallel worker)", location=docname)

    # Threads suffice: each notebook runs in its own kernel process. The
    # cache (SQLite) is written from this thread only, as each page finishes.
    with ThreadPoolExecutor(workers, thread_name_prefix="nb-exec") as pool:
        futures = {pool.submit(execute, item): item for item in pending}
        try:
            for future in as_completed(futures):
                store(future, *futures[future])
        except BaseException:  # Ctrl-C, say: start no more pages
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _complete_executed_notebook(app, doctree):
    """Give _build/jupyter_execute/PAGE.ipynb its outputs when the page was cached.

    myst-nb writes the notebook it parsed there: with outputs when it executed
    the page itself, but without them when the outputs came from the cache
    (it merges them into a copy). Merging them in here makes the file the
    same whichever way the page was executed.
    """
    import nbformat
    from jupyter_cache import get_cache
    from myst_nb.ext.glue import extract_glue_data_cell

    config = app.env.mystnb_config
    target = Path(config.output_folder, *f"{app.env.docname}.ipynb".split("/"))
    if config.execution_mode != "cache" or not target.is_file():
        return
    notebook = nbformat.read(target, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    if not code or any(cell.execution_count is not None for cell in code):
        return
    try:
        _, merged = get_cache(config.execution_cache_path).merge_match_into_notebook(notebook)
    except KeyError:
        return  # not executed (excluded, or execution off for this page)
    for cell in merged.cells:  # as on the executed path: glued values are taken out
        if cell.cell_type == "code":
            extract_glue_data_cell(cell)
    target.write_text(nbformat.writes(merged), encoding="utf-8")

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

html_theme = "sphinx_book_theme"
html_title = "Why √dₖ"
def _commit() -> str:
    """The short hash of the checked-out commit, or "" outside a git checkout."""
    if not (ROOT / ".git").exists():
        return ""
    result = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 else ""


_built_from = f"version {release}" + (f", commit {_commit()}" if _commit() else "")
html_theme_options = {
    "show_toc_level": 2,
    # Every page says what it was built from, so a citation can name it.
    "extra_footer": f"<p>Built from {_built_from} of the attention-scaling package and site.</p>",
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


def _offer_notebook(app, pagename, templatename, context, doctree):
    """Put the executed notebook of an executable page in the download menu.

    myst-nb writes it to _build/jupyter_execute; copied into _sources, the
    theme lists it as ".ipynb" next to the ".md" source.
    """
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if executed.is_file():
        notebook = json.loads(executed.read_text(encoding="utf-8"))
        # nbformat gives cells random ids; numbered ones keep two builds identical.
        for number, cell in enumerate(notebook["cells"]):
            cell["id"] = f"cell-{number}"
        target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        context["ipynb_source"] = f"{pagename}.ipynb"


def _export_labels(app, env):
    """Register theorems and numbered equations as ``std:label`` targets.

    sphinx-proof and the math domain keep their labels to themselves, so
    objects.inv would not list them and another project could not link to a
    theorem or an equation through intersphinx. Figures and exercises are
    ``std:label`` targets already.
    """
    std = env.get_domain("std")
    for label, info in getattr(env, "proof_list", {}).items():
        if label.startswith(("thm-", "lem-")):
            std.labels[label] = (info["docname"], label, f"{info['realtype'].capitalize()} {label}")
            std.anonlabels[label] = (info["docname"], label)
    for label, (docname, number) in env.get_domain("math").equations.items():
        std.labels[label] = (docname, f"equation-{label}", f"Equation {label}")
        std.anonlabels[label] = (docname, f"equation-{label}")


def setup(app):
    # Pages missing from the execution cache run in parallel before the read.
    app.connect("env-before-read-docs", _pre_execute)
    app.connect("doctree-read", _complete_executed_notebook)
    app.connect("env-updated", _export_labels)
    # The theme mixes its own translator into whichever one is registered here.
    for builder in ("html", "dirhtml", "singlehtml"):
        app.set_translator(builder, AccessibleHTMLTranslator)
    # Before the theme builds its header buttons (default priority 500).
    app.connect("html-page-context", _offer_notebook, priority=400)
