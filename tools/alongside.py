"""Run a check alongside a build: how ``make html`` runs the doctests while Sphinx builds.

The doctests and the page execution are independent work, and on a machine
with few cores running them one after the other leaves cores idle: Sphinx
reads and writes the pages in one process, so while it renders, a core has
nothing to do. Here the check runs in the background while the build runs in
the foreground, its output streamed as usual:

- with ``--start-after FILE`` the check starts only once the build has
  created FILE (or has finished): FILE is named to the build in the
  environment variable ``ALONGSIDE_SIGNAL``, and the site's build creates it
  when it has executed the pages (docs/_ext/parallel_execution.py). Page
  execution keeps both cores busy; Sphinx's reading and writing after it use
  one. Started at once, the doctests shared the cores with the pages and the
  second core sat idle while Sphinx wrote the pages; started after the
  pages, they use that core, and read the results the pages kept in the store;
- if the check fails while the build runs, the build (its whole process
  group, kernels included) is stopped at once: its result would not count;
- a build that fails before the check has started returns its status, and
  the check does not run;
- at the end, a failed check prints its output and the exit status is 1;
  otherwise the check's output is printed after the build's (the doctests'
  "N passed in S s" among it) and the build's status is returned.

Usage (the Makefile's ``html`` target)::

    python tools/alongside.py --check-log LOG --check "CHECK COMMAND" [--start-after FILE] -- BUILD COMMAND...

The check's output goes to LOG (it would interleave with the build's);
``--check`` is one shell command line, the build an argument list.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["main", "run_alongside"]

# How often the build and the check are polled: short against any build, long
# enough to cost nothing.
POLL_SECONDS = 0.2
#: The environment variable that names, to the build, the file whose creation starts the check.
SIGNAL = "ALONGSIDE_SIGNAL"


def _stop(process: subprocess.Popen) -> None:
    """Stop ``process`` and everything it started (its own session), waiting for it."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def run_alongside(check: str, build: list[str], check_log: Path, start_after: Path | None = None) -> int:
    """Run ``build`` in the foreground and ``check`` (a shell command) in the background.

    The check starts at once, or with ``start_after`` once the build has
    created that file (any file left there from before is removed first) or
    has finished; a build that failed before that is not checked.

    Returns
    -------
    int
        1 if the check failed (the build stopped if it was still running),
        else the build's exit status.
    """
    check_log.parent.mkdir(parents=True, exist_ok=True)
    environment = dict(os.environ)
    if start_after is not None:
        start_after.unlink(missing_ok=True)
        environment[SIGNAL] = str(start_after)
    checking = None
    with check_log.open("wb") as log:

        def start_check() -> subprocess.Popen:
            # A session of its own, so that stopping it stops what it started too.
            return subprocess.Popen(check, shell=True, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

        if start_after is None:
            checking = start_check()
        # A session of its own, so that stopping it stops the kernels it started too.
        building = subprocess.Popen(build, start_new_session=True, env=environment)
        try:
            while building.poll() is None:
                if checking is None and start_after.exists():
                    checking = start_check()
                if checking is not None and checking.poll() not in (None, 0):
                    print("==> The doctests failed: stopping the build", flush=True)
                    _stop(building)
                    break
                time.sleep(POLL_SECONDS)
            if checking is None:
                if building.returncode != 0:
                    return building.returncode  # nothing to check a failed build against
                checking = start_check()
            checking.wait()
        except BaseException:  # Ctrl-C: stop both, not only the one in the foreground
            _stop(building)
            if checking is not None:
                _stop(checking)
            raise
    output = check_log.read_text(encoding="utf-8", errors="replace")
    if checking.returncode != 0:
        sys.stdout.write(output)
        sys.stdout.flush()
        print(f"==> The doctests failed (exit status {checking.returncode}; their output is above and in {check_log})", flush=True)
        return 1
    print("==> The doctests, run alongside the build:", flush=True)
    sys.stdout.write(output)
    sys.stdout.flush()
    return building.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", required=True, help="the check, one shell command line")
    parser.add_argument("--check-log", required=True, type=Path, help="where the check's output goes")
    parser.add_argument("--start-after", type=Path, help="start the check once the build has created this file")
    parser.add_argument("build", nargs=argparse.REMAINDER, help="-- then the build command")
    args = parser.parse_args(argv)
    build = args.build[1:] if args.build[:1] == ["--"] else args.build
    if not build:
        parser.error("no build command after --")
    return run_alongside(args.check, build, args.check_log, args.start_after)


if __name__ == "__main__":
    sys.exit(main())
