"""Execute the pages that the cache lacks in parallel, with jupyter-cache, before Sphinx reads them.

myst-nb executes each page while Sphinx reads it, one after another, and
``sphinx-build -j`` cannot be used (sphinx-proof cannot merge the results of
parallel reads). jupyter-cache, the cache myst-nb keeps its outputs in, can
execute a project's notebooks in parallel itself. So just before the read
(``env-before-read-docs``) the outdated pages are added to the cache's project
with the reader myst-nb registers with jupyter-cache (``myst_nb_md``), and
jupyter-cache's ``local-parallel`` executor runs those whose code the cache
lacks, one process per CPU. This is jupyter-cache's documented Python API, the
one behind its ``jcache project execute`` command. myst-nb then finds every
page in the cache, since the cache matches a notebook by its code cells.

A page that fails here is not cached: myst-nb executes it again while reading
and fails the build with its usual report, naming the page and the cell.
Nothing here can make a build pass that would fail without it.

jupyter-cache starts the kernels with Jupyter's defaults: loopback TCP, each
message signed with the kernel's key.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from jupyter_cache import get_cache
from jupyter_cache.executors import load_executor
from myst_nb.core.read import is_myst_markdown_notebook
from sphinx.util import logging as sphinx_logging

__all__ = ["execution_order", "pre_execute", "setup"]

logger = sphinx_logging.getLogger(__name__)

#: jupyter-cache's reader of MyST Markdown notebooks, registered by myst-nb.
READER = {"name": "myst_nb_md", "type": "plugin"}

def execution_order(docnames, first) -> list[str]:
    """``docnames`` with those named in ``first`` moved to the front, in ``first``'s order; the rest keep theirs.

    Pages are added to a new cache's project in this order, which is the
    order the executor takes them in (it hands them to its processes a few at
    a time). A long page taken last would run alone at the end while the other
    process idles, so ``conf.py`` names the longest ones in
    ``nb_execute_first``; a name that is not a page to execute is ignored.

    Examples
    --------
    >>> execution_order(["claims", "index", "training"], ["training", "gone"])
    ['training', 'claims', 'index']
    """
    rank = {name: position for position, name in enumerate(first)}
    return sorted(docnames, key=lambda name: rank.get(name, len(rank)))


def pre_execute(app, env, docnames) -> None:
    """``env-before-read-docs``: execute the outdated notebooks that the cache lacks, in parallel, into it.

    If this step itself fails (a page jupyter-cache cannot read, a machine
    without the semaphores multiprocessing needs), it says why and leaves
    every page to myst-nb, which executes them one at a time as it reads them.
    """
    try:
        _pre_execute(app, env, docnames)
    except Exception as error:  # noqa: BLE001 (any failure here only costs speed)
        logger.info(f"parallel execution is off for this build ({error.__class__.__name__}: {error}); "
                    "myst-nb executes the pages one at a time as it reads them")


def _pre_execute(app, env, docnames) -> None:
    config = app.config
    if config.nb_execution_mode != "cache" or (os.cpu_count() or 1) < 2:
        return  # myst-nb executes the pages one after another, inside the read
    paths = []
    for docname in execution_order(docnames, config.nb_execute_first):
        path = Path(env.doc2path(docname))
        # A page is a notebook exactly when myst-nb reads it as one (its front matter says so).
        if path.suffix == ".md" and is_myst_markdown_notebook(path.read_text(encoding="utf-8")):
            paths.append(path)
    if not paths:
        return
    cache = get_cache(config.nb_execution_cache_path)
    records = [cache.add_nb_to_project(str(path), read_data=READER) for path in paths]
    pending = cache.list_unexecuted(filter_pks=[record.pk for record in records])
    if not pending:
        return
    logger.info(f"executing {len(pending)} page(s) that the cache lacks, in parallel (jupyter-cache's local-parallel)")
    # jupyter-cache reports each page at a level of its own; only failures are wanted here.
    quiet = logging.getLogger(__name__ + ".executor")
    quiet.setLevel(logging.WARNING)
    executor = load_executor("local-parallel", cache, logger=quiet)
    result = executor.run_and_cache(filter_pks=[record.pk for record in pending], timeout=config.nb_execution_timeout)
    for uri in result.succeeded:
        logger.info("executed in parallel, before the read", location=env.path2doc(uri))
    for uri in result.excepted + result.errored:
        logger.info("failed in parallel; it runs again in the read, which reports the error", location=env.path2doc(uri))


def setup(app):
    app.setup_extension("myst_nb")  # defines the nb_execution_* settings read here
    # Pages handed out before the others (execution_order).
    app.add_config_value("nb_execute_first", [], "", (list, tuple))
    app.connect("env-before-read-docs", pre_execute)
    return {"version": "2", "parallel_read_safe": True, "parallel_write_safe": True}
