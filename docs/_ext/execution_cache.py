"""Key myst-nb's execution cache to the package source, and prune old caches.

myst-nb's cache notices a change in a page but not in a module the page
imports, so it could serve numbers from older code. Here the cache directory
is named by a fingerprint: a hash of the files ``nb_execution_cache_key``
lists, relative to the configuration directory, and of the Python files of
each package ``nb_execution_cache_packages`` names, as this environment
imports it (so do the pages' kernels, which inherit it: a ``PYTHONPATH``
that puts another copy of the package first is another key). Editing the
package, or a pin, gives a new, empty cache, and every page runs again.

A cache is only ever used for the exact sources it was made from, so none can
be stale. Besides the current one, the ``nb_execution_cache_keep`` caches used
last are kept (undoing an edit, or switching back to a branch, then executes
nothing); older ones are deleted when the builder starts, never on import.

myst-nb reads ``nb_execution_cache_path`` when the builder starts
(``builder-inited``), so it is set earlier, at ``config-inited``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from sphinx.util import logging

__all__ = ["fingerprint", "prune", "setup"]

logger = logging.getLogger(__name__)


def fingerprint(root: Path, patterns: Sequence[str], packages: Sequence[str] = ()) -> str:
    """Hash of the files under ``root`` that ``patterns`` match and of the ``packages`` as imported (paths and contents).

    Each pattern's matches are taken in sorted order, the patterns in the
    order given, then each package's Python files, found where ``import``
    would find the package, in sorted order: the hash depends on nothing but
    the files, wherever the package lies.
    """
    digest = hashlib.sha256()
    for pattern in patterns:
        matches = sorted(path for path in Path(root).glob(pattern) if path.is_file())
        if not matches:
            raise FileNotFoundError(f"nb_execution_cache_key: pattern {pattern!r} matches no file under {root}")
        for path in matches:
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    for name in packages:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise ModuleNotFoundError(f"nb_execution_cache_packages: no package {name!r} can be imported here")
        for location in map(Path, spec.submodule_search_locations):
            for path in sorted(location.rglob("*.py")):
                digest.update(f"{name}/{path.relative_to(location).as_posix()}".encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def prune(cache_root: Path, current: Path, keep: int) -> list[Path]:
    """Mark ``current`` as used now; delete all but the ``keep`` other caches used last.

    Returns the deleted directories.
    """
    if current.is_dir():
        os.utime(current)  # last used now
    others = sorted(
        (path for path in Path(cache_root).glob("*") if path.is_dir() and path != current),
        key=lambda path: path.stat().st_mtime,
        reverse=True,
    )
    for stale in others[keep:]:
        shutil.rmtree(stale, ignore_errors=True)
    return others[keep:]


def _set_cache_path(app, config) -> None:
    root = Path(app.confdir)
    cache_root = root / config.nb_execution_cache_root
    key = fingerprint(root, config.nb_execution_cache_key, config.nb_execution_cache_packages)
    config.nb_execution_cache_path = str(cache_root / key)


def _prune(app) -> None:
    current = Path(app.config.nb_execution_cache_path)
    for stale in prune(current.parent, current, app.config.nb_execution_cache_keep):
        logger.info(f"removed the execution cache of an older source: {stale}")


def setup(app):
    app.setup_extension("myst_nb")  # defines nb_execution_cache_path
    app.add_config_value("nb_execution_cache_root", "_build/.jupyter_cache", "env", str)
    app.add_config_value("nb_execution_cache_key", ["constraints.txt"], "env", list)
    app.add_config_value("nb_execution_cache_packages", [], "env", list)
    app.add_config_value("nb_execution_cache_keep", 2, "env", int)
    app.connect("config-inited", _set_cache_path)
    app.connect("builder-inited", _prune)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
