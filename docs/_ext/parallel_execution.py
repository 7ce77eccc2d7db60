"""Execute the pages that the cache lacks in parallel, before Sphinx reads them.

myst-nb executes each page while Sphinx reads it, one after another, and
``sphinx-build -j`` cannot be used (sphinx-proof cannot merge the results of
parallel reads). So just before the read (``env-before-read-docs``), the
outdated pages that myst-nb's cache lacks are executed concurrently, one
kernel per page, ``nb_parallel_jobs`` at a time, and stored the way myst-nb
stores them; myst-nb then finds every page in the cache.

Each page is read exactly as myst-nb's parser reads it (the same reader,
Markdown settings, kernel aliases and per-page settings), so its cells hash
to the key myst-nb looks up. A page that fails here is not stored: myst-nb
executes it again while reading and fails the build with its usual report,
naming the page and the cell. Nothing here can make the build pass that would
fail without it.

This leans on internals of myst-nb and jupyter-cache, so it runs only with
the versions it was written for (:data:`WRITTEN_FOR`, the pins in
constraints.txt). With others, or if an internal is missing, it logs why and
lets myst-nb execute the pages itself, serially: slower, never wrong.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import re
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import nullcontext
from pathlib import Path, PurePosixPath
from tempfile import TemporaryDirectory
from types import SimpleNamespace

from sphinx.util import logging

__all__ = ["WRITTEN_FOR", "execution_order", "installed_version", "internals", "jobs", "serial_reason", "setup"]

logger = logging.getLogger(__name__)

#: The versions whose internals this module was written against.
WRITTEN_FOR = {"myst-nb": "1.4.0", "jupyter-cache": "1.0.1"}

#: (module, name) of every internal it uses.
_INTERNALS = (
    ("jupyter_cache", "get_cache"),
    ("jupyter_cache.base", "CacheBundleIn"),
    ("jupyter_cache.cache.db", "NbProjectRecord"),
    ("jupyter_cache.executors.utils", "single_nb_execution"),
    ("myst_nb.core.nb_to_tokens", "nb_node_to_dict"),
    ("myst_nb.core.read", "create_nb_reader"),
)


def installed_version(distribution: str) -> str | None:
    """The installed version of ``distribution``, or None if it is not installed."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def internals() -> SimpleNamespace:
    """The internals of myst-nb and jupyter-cache used here; ImportError names a missing one."""
    found = {}
    for module, name in _INTERNALS:
        try:
            found[name] = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError) as error:
            raise ImportError(f"{module}.{name} is missing ({error})") from error
    return SimpleNamespace(**found)


def serial_reason() -> str | None:
    """Why the pages cannot be executed in parallel here, or None if they can."""
    for distribution, expected in WRITTEN_FOR.items():
        installed = installed_version(distribution)
        if installed != expected:
            return f"{distribution} {installed or '(not installed)'} is installed; it was written for {expected}"
    try:
        internals()
    except ImportError as error:
        return str(error)
    return None


def jobs(value) -> int:
    """Workers for ``nb_parallel_jobs``: a count, or ``"auto"`` for one per usable CPU."""
    if value in ("auto", "", None):
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError(f"nb_parallel_jobs must be a whole number or 'auto'; got {value!r}") from None


def execution_order(docnames, first) -> list[str]:
    """``docnames`` with those named in ``first`` moved to the front, in ``first``'s order; the rest keep theirs.

    Pages start in this order as workers free up. A long page started last
    runs alone at the end while the other workers idle, so ``conf.py`` names
    the longest ones in ``nb_execute_first``; a name that is not a page to
    execute is ignored.

    Examples
    --------
    >>> execution_order(["claims", "index", "training"], ["training", "gone"])
    ['training', 'claims', 'index']
    """
    rank = {name: position for position, name in enumerate(first)}
    return sorted(docnames, key=lambda name: rank.get(name, len(rank)))


def _pending(env, docnames, internal):
    """(docname, path, notebook, config, cache, stage record) of each page to execute."""
    pending = []
    for docname in docnames:
        path = Path(env.doc2path(docname))
        if not path.is_file():
            continue
        # As in myst_nb.sphinx_.Parser.parse and myst_nb.core.execute.
        text = path.read_text(encoding=env.settings.get("input_encoding", "utf-8-sig"))
        reader = internal.create_nb_reader(str(path), env.myst_config, env.mystnb_config, text)
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
            overrides = internal.nb_node_to_dict(notebook.metadata[config.metadata_key])
            overrides.pop("output_folder", None)
            try:
                config = config.copy(**overrides)
            except Exception:
                continue  # myst-nb warns about it while reading the page
        posix = PurePosixPath(path.as_posix())
        if config.execution_mode != "cache" or any(posix.match(p) for p in config.execution_excludepatterns):
            continue
        cache = internal.get_cache(config.execution_cache_path)
        try:
            cache.match_cache_notebook(notebook)
            continue  # already executed
        except KeyError:
            pass
        stage = cache.add_nb_to_project(str(path), **({"read_data": reader.read_fmt} if reader.read_fmt else {}))
        internal.NbProjectRecord.remove_tracebacks([stage.pk], cache.db)
        pending.append((docname, path, notebook, config, cache, stage))
    return pending


def _execute(item, internal):
    docname, path, notebook, config, *_ = item
    logger.info("Running notebook in a parallel worker", location=docname)
    with TemporaryDirectory() if config.execution_in_temp else nullcontext(str(path.parent)) as cwd:
        return internal.single_nb_execution(
            notebook,
            cwd=os.path.abspath(cwd),
            allow_errors=config.execution_allow_errors,
            timeout=config.execution_timeout,
            meta_override=True,
        )


def _store(future, item, internal) -> None:
    docname, path, notebook, config, cache, stage = item
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
        internal.CacheBundleIn(notebook, stage.uri, data={"execution_seconds": result.time}),
        check_validity=False,
        overwrite=True,
    )
    logger.info(f"Executed notebook in {result.time:.2f} seconds (parallel worker)", location=docname)


def pre_execute(app, env, docnames) -> None:
    """``env-before-read-docs``: execute the outdated pages that the cache lacks, in parallel, into it.

    Then, however that went, create the file that ``ALONGSIDE_SIGNAL`` names,
    if it names one: ``make html`` starts the doctests when it appears
    (tools/alongside.py says why).
    """
    try:
        _pre_execute(app, env, docnames)
    finally:
        signal = os.environ.get("ALONGSIDE_SIGNAL")
        if signal:
            Path(signal).touch()


def _pre_execute(app, env, docnames) -> None:
    workers = jobs(app.config.nb_parallel_jobs)
    if workers < 2 or not docnames:
        return  # myst-nb executes the pages one after another, inside the read
    reason = serial_reason()
    if reason is not None:
        logger.info(f"parallel execution is off: {reason}; myst-nb executes the pages one at a time as it reads them")
        return
    internal = internals()
    pending = _pending(env, execution_order(docnames, app.config.nb_execute_first), internal)
    if not pending:
        return
    workers = min(workers, len(pending))
    logger.info(f"executing {len(pending)} page(s) that the cache lacks, {workers} at a time")
    # Threads suffice: each notebook runs in its own kernel process. The
    # cache (SQLite) is written from this thread only, as each page finishes.
    with ThreadPoolExecutor(workers, thread_name_prefix="nb-exec") as pool:
        futures = {pool.submit(_execute, item, internal): item for item in pending}
        try:
            for future in as_completed(futures):
                _store(future, futures[future], internal)
        except BaseException:  # Ctrl-C, say: start no more pages
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def setup(app):
    app.setup_extension("myst_nb")
    # "auto": one worker per usable CPU; 1 leaves execution to myst-nb alone.
    app.add_config_value("nb_parallel_jobs", "auto", "", (str, int))
    # Pages that start before the others (execution_order).
    app.add_config_value("nb_execute_first", [], "", (list, tuple))
    app.connect("env-before-read-docs", pre_execute)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
