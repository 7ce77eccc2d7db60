"""Whether the built site is current: what lets ``make html`` skip Sphinx when nothing changed.

Sphinx decides page by page what to rebuild, but before it can say "no
targets are out of date" it starts up, imports every extension and reads
every doctree again (numbered figures are assigned over all of them): about
ten seconds on two cores. This module answers the same question before
Sphinx starts, and answers it conservatively: the site is current only if
every input of the build is as it was when the last successful build
started. The inputs are

- every file of the repository, by path, size and modification time (hidden
  directories, caches, the build directory and the virtual environment
  left out, but for the environment's install stamp, which make touches on
  every install);
- the commit checked out, which every page's footer names;
- the environment variables that conf.py and docs/_ext read
  (:data:`BUILD_ENVIRONMENT`);
- the Sphinx command line, options included.

The site is also not current if a page the last build wrote is missing, or
if the command asks for a full rebuild (``-E``, ``-a``). Anything in doubt
means "build": the cost of a wrong "current" is a stale page, the cost of a
wrong "build" is Sphinx's own no-op.

Usage (the Makefile's ``html`` target)::

    python tools/site_inputs.py check RECORD --html DIR [--venv VENV] -- SPHINX COMMAND...
    python tools/site_inputs.py save RECORD --html DIR

``check`` exits with 0 if the site in DIR is current; otherwise it writes the
inputs it found to ``RECORD.pending`` and exits with 1 (2 is a usage error). ``save``, run after
a successful build, makes the pending inputs the record, with the pages the
build wrote. A failed build saves nothing, so the next ``check`` builds.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "_ext"))

from provenance import commit  # noqa: E402 (found through the line above)

__all__ = ["BUILD_ENVIRONMENT", "FULL_REBUILD_OPTIONS", "inputs", "is_current", "main", "pages", "repository_files"]

#: The environment variables the build reads (conf.py and docs/_ext): the site's URL, the
#: repository and release that hosting and launch links name, and the execution settings.
BUILD_ENVIRONMENT = (
    "SITE_URL",
    "READTHEDOCS_CANONICAL_URL",
    "READTHEDOCS_GIT_CLONE_URL",
    "READTHEDOCS_VERSION_TYPE",
    "GITHUB_REPOSITORY",
    "GITHUB_SERVER_URL",
    "GITHUB_REF_TYPE",
    "NB_JOBS",
    "NB_TIMEOUT",
    # Not read by the build's code, but it decides which attention_scaling the pages import.
    "PYTHONPATH",
    # Read, though it changes nothing built: the file that tells tools/alongside.py
    # the pages have executed; alongside.py sets it for sphinx-build alone, so it is unset here.
    "ALONGSIDE_SIGNAL",
)
#: sphinx-build options that ask for every page to be written again.
FULL_REBUILD_OPTIONS = ("-E", "--fresh-env", "-a", "--write-all")
# Directories whose content is not an input: caches and packaging by-products.
_SKIPPED_NAMES = ("__pycache__",)
_SKIPPED_SUFFIXES = (".egg-info",)
# The file make touches when it installs the environment (Makefile, "Environment").
_INSTALL_STAMP = ".docs-installed"


def repository_files(root: Path, exclude: Sequence[Path] = ()) -> Iterator[Path]:
    """Every file under ``root`` but those in hidden directories, caches and ``exclude``, in a stable order.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     root = Path(tmp)
    ...     for name in ("conf.py", "docs/a.md", ".git/HEAD", "src/__pycache__/m.pyc", "_build/html/a.html"):
    ...         (root / name).parent.mkdir(parents=True, exist_ok=True)
    ...         _ = (root / name).write_text("")
    ...     [path.relative_to(root).as_posix() for path in repository_files(root, exclude=[root / "_build"])]
    ['conf.py', 'docs/a.md']
    """
    excluded = {Path(path).resolve() for path in exclude}
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(
            name for name in subdirectories
            if not name.startswith(".") and name not in _SKIPPED_NAMES and not name.endswith(_SKIPPED_SUFFIXES)
            and (Path(directory) / name).resolve() not in excluded
        )
        for name in sorted(files):
            yield Path(directory) / name


def inputs(root: Path, command: Sequence[str], environ: Mapping[str, str], exclude: Sequence[Path] = (),
           venv: Path | None = None) -> dict:
    """Everything the build of the site reads, as JSON-ready data: equal inputs build the same site.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     root = Path(tmp)
    ...     _ = (root / "conf.py").write_text("project = 'x'")
    ...     found = inputs(root, ["sphinx-build", "docs", "out"], {"SITE_URL": "https://example.org/", "HOME": "/root"})
    >>> sorted(found), list(found["files"]), found["environment"]["SITE_URL"], "HOME" in found["environment"]
    (['command', 'commit', 'environment', 'files'], ['conf.py'], 'https://example.org/', False)
    """
    files = {}
    for path in repository_files(root, exclude):
        status = path.stat()
        files[path.relative_to(root).as_posix()] = [status.st_mtime_ns, status.st_size]
    if venv is not None and (Path(venv) / _INSTALL_STAMP).exists():
        files[f"{_INSTALL_STAMP} of the environment"] = [(Path(venv) / _INSTALL_STAMP).stat().st_mtime_ns, 0]
    return {
        "files": files,
        "commit": commit(root, short=False),
        "environment": {name: environ.get(name) for name in BUILD_ENVIRONMENT},
        "command": list(command),
    }


def pages(html: Path) -> list[str]:
    """The HTML files in the built site ``html``, relative to it, sorted."""
    return sorted(path.relative_to(html).as_posix() for path in Path(html).rglob("*.html"))


def is_current(record: Path, html: Path, found: dict) -> bool:
    """Whether the site in ``html`` was built from exactly ``found`` and still holds every page it wrote.

    Examples
    --------
    >>> import tempfile
    >>> found = {"files": {"docs/a.md": [1, 10]}, "commit": "", "environment": {}, "command": ["sphinx-build"]}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     html, record = Path(tmp) / "html", Path(tmp) / "html.inputs"
    ...     html.mkdir()
    ...     _ = (html / "a.html").write_text("<p>a</p>")
    ...     _ = record.write_text(json.dumps({**found, "pages": ["a.html"]}))
    ...     edited = {**found, "files": {"docs/a.md": [2, 10]}}
    ...     full = {**found, "command": ["sphinx-build", "-E"]}
    ...     before = is_current(record, html, found), is_current(record, html, edited), is_current(record, html, full)
    ...     (html / "a.html").unlink()
    ...     before, is_current(record, html, found)
    ((True, False, False), False)
    """
    if any(option in found["command"] for option in FULL_REBUILD_OPTIONS):
        return False
    try:
        recorded = json.loads(Path(record).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    built = recorded.pop("pages", None)
    if recorded != found or not built:
        return False
    return all((Path(html) / page).is_file() for page in built)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("check", "save"))
    parser.add_argument("record", type=Path, help="where the inputs of the last successful build are kept")
    parser.add_argument("--html", type=Path, required=True, help="the built site")
    parser.add_argument("--venv", type=Path, help="the virtual environment the build runs in")
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[:len(argv) - len(command) - ("--" in argv)])
    pending = args.record.with_name(args.record.name + ".pending")
    if args.action == "save":
        try:
            found = json.loads(pending.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            parser.error(f"no pending inputs to save in {pending} ({error}): run check before the build")
        args.record.write_text(json.dumps({**found, "pages": pages(args.html)}, indent=1), encoding="utf-8")
        pending.unlink()
        return 0
    root = Path.cwd()
    exclude = [args.html, args.record.parent] + ([args.venv] if args.venv else [])
    found = inputs(root, command, os.environ, exclude, args.venv)
    if is_current(args.record, args.html, found):
        return 0
    args.record.parent.mkdir(parents=True, exist_ok=True)
    args.record.unlink(missing_ok=True)  # an interrupted build leaves no record that claims it finished
    pending.write_text(json.dumps(found), encoding="utf-8")
    return 1


if __name__ == "__main__":
    sys.exit(main())
