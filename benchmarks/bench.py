"""Benchmark the build and the pages: each measure next to the target issue 17 sets.

Run with ``make bench`` (``make bench REPEAT=1`` for one run of each). Every
build happens in a temporary copy of the repository, made once at the start
(with no execution cache) and built with ``make -C COPY html VENV=...``
through tests/sitebuild.py, the helper the build tests use, so the user's built site and caches in
``_build`` are never touched; the only files written in the repository are the
JSON report, ``_build/bench/bench.json``, and Lighthouse's install in
``_build/lighthouse``.

Measured on this machine, each ``--repeat`` times, the median reported:

cold        ``make html`` with no ``_build`` (no cache, no doctest stamp):
            the doctests, then every page executed and rendered
floor       the render floor: ``make html`` with a warm execution cache and a
            fresh Sphinx environment. The copy's ``_build`` is emptied but for
            the execution cache and the doctest stamp, both of which the cold
            build just filled for the same sources; so the floor executes no
            page and runs no doctest (both are cached work, keyed by the
            package source) and is what Sphinx alone costs. The cold/floor
            ratio is what executing and doctesting add on top of rendering.
noop        ``make html`` again, nothing changed
prose       after appending a sentence to one page (``--prose-page``)
package     after changing a comment in a package module (``--package-file``);
            the cache key changes, so the doctests and every page run again
prove       ``python -m attention_scaling prove``
check       ``make check`` in the copy, once (``--no-check`` skips it)
test        ``make test`` in the copy, once, only with ``--make-test``: it takes
            several minutes on 2 cores; without it that target is reported
            as not measured

plus, from the logs of the cold builds, the seconds each page took to
execute, and in Chromium (through Playwright, the ``chromium`` on the PATH):

- the weight of each page on a first visit: the HTML and every response a
  browser receives while loading it, including the fonts it loads on
  demand (without Playwright or Chromium: the files the
  HTML and its CSS reference, which counts every font a stylesheet declares
  but misses what scripts load);
- for each derivation page, at a desktop viewport and at a mobile one, the
  layout shifts and long tasks that ``PerformanceObserver`` objects (registered
  before the page's own scripts, ``buffered: true``) see from navigation
  until the page has settled (load, fonts loaded, network idle, then
  ``SETTLE_MS``), in ``--loads`` fresh loads of each page (default 5, taking
  turns), of which the report gives the median: the same page's blocking time
  varies several-fold from one load to the next on a busy 2-core machine.
  The CLS of a load is the sum of its shifts: every
  shift, since the benchmark sends no input and Chromium flags some shifts
  after an emulated viewport as input-driven all the same (see
  :func:`cumulative_layout_shift`); Lighthouse's session windows give the
  same 0 when there is no shift. Total blocking time is Lighthouse's
  definition (see :func:`total_blocking_time`): each long task clipped to
  start no earlier than first contentful paint, then its time beyond 50 ms,
  summed; the span ends when the page has settled rather than at
  Lighthouse's time to interactive, so it can only be larger. The report
  also gives the blocking time of the whole load, tasks before first paint
  included (not a target: no definition of TBT counts them). The mobile profile copies Lighthouse's mobile preset
  (412 x 823 CSS pixels at 1.75 device pixels per pixel, touch, CPU slowed
  4 x through the DevTools protocol) but not its network throttling: an
  approximation of Lighthouse, not Lighthouse. Both depend on how busy the
  machine is (``load_average_before`` in the report);
- Lighthouse itself on each derivation page (``--lighthouse-runs``, default 3,
  taking turns; the median reported): its default mobile preset with
  simulated throttling, the site served gzip-compressed as a host serves it.
  Lighthouse is pinned by ``benchmarks/lighthouse/package-lock.json`` and
  installed from it with ``npm ci`` into ``_build/lighthouse`` (Node.js and
  npm needed; without them its targets are reported as not measured).

``--html DIR`` measures only the pages of a site already built there (no
copy, no build): the quick way to check the browser measures.

Standard library only, plus Playwright if it can be imported (and Lighthouse through npm).
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

REPO = Path(__file__).resolve().parents[1]
# The copy-and-build helper shared with the tests lives in tests/, which is no package.
sys.path.insert(0, str(REPO / "tests"))
import sitebuild  # noqa: E402

CHROMIUM = Path(shutil.which("chromium") or "chromium-is-not-on-the-PATH")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
DERIVATIONS = ["dot-product-variance", "scaling", "saturation", "subtraction-vs-division"]
MB = 1_000_000


@dataclass(frozen=True)
class Target:
    """A target of issue 17: a measure meets it when its value is at most ``limit`` (at least, if ``at_least``).

    Attributes
    ----------
    label : str
        What is measured, as the table prints it.
    limit : float
        The largest value that meets the target.
    unit : str
        ``"s"``, ``"ms"``, ``"B"`` (bytes, printed in MB), ``"x"`` (a ratio),
        ``"score"`` (Lighthouse's, 0 to 100), ``"count"`` or ``""`` (a score such as CLS).
    at_least : bool
        The target is a floor (a Lighthouse score), not a ceiling.
    """

    label: str
    limit: float
    unit: str
    at_least: bool = False


# Result key -> target, in the order the table prints them.
TARGETS = {
    "cold": Target("cold make html (empty _build)", 60.0, "s"),
    "cold_floor_ratio": Target("cold build / render floor", 2.5, "x"),
    "noop": Target("no-op rebuild", 1.5, "s"),
    "prose": Target("rebuild after a prose edit", 3.0, "s"),
    "prove": Target("python -m attention_scaling prove", 5.0, "s"),
    "make_check": Target("make check, after a build", 45.0, "s"),
    "make_test": Target("make test, after a build (--make-test)", 300.0, "s"),
    "derivation_weight": Target("derivation page, first visit, uncompressed", 0.6 * MB, "B"),
    "cls_desktop": Target("cumulative layout shift, desktop", 0.0, ""),
    "cls_mobile": Target("cumulative layout shift, mobile", 0.0, ""),
    "tbt_mobile": Target("total blocking time, mobile, observer in Chromium", 200.0, "ms"),
    "lighthouse_score": Target("Lighthouse performance, mobile", 90.0, "score", at_least=True),
    "lighthouse_tbt": Target("Lighthouse total blocking time, mobile", 200.0, "ms"),
    "html_errors": Target("Nu HTML Checker errors, all pages", 0, "count"),
}
# A long task blocks input for the time it runs beyond this (the Long Tasks API's threshold).
LONG_TASK_MS = 50.0
# Browser profiles for the layout and long-task measures: Playwright context
# options and a CPU slowdown. Desktop is Lighthouse's desktop screen, mobile
# its mobile preset (a Moto G Power's screen, CPU 4 x slower).
PROFILES = {
    "desktop": ({"viewport": {"width": 1350, "height": 940}, "device_scale_factor": 1}, 1),
    "mobile": (
        {"viewport": {"width": 412, "height": 823}, "device_scale_factor": 1.75, "is_mobile": True, "has_touch": True},
        4,
    ),
}
# After load, fonts and network idle: late shifts and tasks (fonts swapped in, idle callbacks) land within this.
SETTLE_MS = 1500
# Fresh loads of each page in each profile; the report gives their median. The
# blocking time of one load of the same page, mobile, ranged from 129 to 727 ms
# on the 2-core machine: one load tells nothing about a change.
LOADS = 5
DOCTESTS = re.compile(r"(\d+) passed in ([\d.]+)s")


# -- Pure logic: verdicts, ratios, browser figures ----------------------------------


def verdict(value: float | None, limit: float, at_least: bool = False) -> str:
    """``"ok"`` when ``value`` meets the target (at most ``limit``, or at least it), ``"MISS"`` when not, ``"-"`` if unmeasured.

    Examples
    --------
    >>> verdict(1.2, 1.5), verdict(1.5, 1.5), verdict(1.51, 1.5), verdict(None, 1.5)
    ('ok', 'ok', 'MISS', '-')
    >>> verdict(0.0, 0.0), verdict(0.0003, 0.0)
    ('ok', 'MISS')
    >>> verdict(90, 90, at_least=True), verdict(89, 90, at_least=True)
    ('ok', 'MISS')
    """
    if value is None:
        return "-"
    return "ok" if (value >= limit if at_least else value <= limit) else "MISS"


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """``numerator / denominator``, or ``None`` when either is missing or the denominator is not positive.

    Examples
    --------
    >>> ratio(150.0, 60.0)
    2.5
    >>> ratio(None, 60.0) is None, ratio(150.0, 0.0) is None
    (True, True)
    """
    if numerator is None or denominator is None or denominator <= 0:
        return None
    return numerator / denominator


def fmt_value(value: float | None, unit: str) -> str:
    """A value as the table prints it: seconds, milliseconds, MB, a ratio or a bare score.

    Examples
    --------
    >>> fmt_value(2.3456, "s"), fmt_value(12.4, "ms"), fmt_value(1_234_567, "B")
    ('2.35 s', '12 ms', '1.23 MB')
    >>> fmt_value(2.0, "x"), fmt_value(0.0, ""), fmt_value(0.01234, ""), fmt_value(None, "s"), fmt_value(3, "count")
    ('2.00x', '0', '0.0123', '-', '3')
    """
    if value is None:
        return "-"
    if unit == "s":
        return f"{value:.2f} s"
    if unit == "ms":
        return f"{value:.0f} ms"
    if unit == "B":
        return f"{value / MB:.2f} MB"
    if unit == "x":
        return f"{value:.2f}x"
    if unit in ("score", "count"):
        return f"{value:.0f}"
    return "0" if value == 0 else f"{value:.4f}"


def fmt_target(target: Target) -> str:
    """The target as printed: ``<= limit`` in the target's unit.

    Examples
    --------
    >>> fmt_target(Target("cold / floor", 2.5, "x")), fmt_target(Target("CLS", 0.0, ""))
    ('<= 2.50x', '<= 0')
    >>> fmt_target(Target("Lighthouse performance", 90, "score", at_least=True))
    '>= 90'
    """
    return f"{'>=' if target.at_least else '<='} {fmt_value(target.limit, target.unit)}"


def cumulative_layout_shift(shifts: list[dict], trust_recent_input: bool = False) -> float:
    """The sum of the layout shifts of one load: its CLS.

    For a single load with no input, Lighthouse's session windows (the
    largest burst of shifts) give at most this sum, and both are 0 together.
    The benchmark sends no input, yet Chromium flags some shifts after an
    emulated viewport as having recent input (Chromium issue 1094974, which
    Lighthouse also works around by counting such shifts), and does so
    erratically from one load to the next; so by default every shift counts.

    Parameters
    ----------
    shifts : list of dict
        ``LayoutShift`` entries as ``{"value": float, "hadRecentInput": bool}``.
    trust_recent_input : bool, default False
        Leave out the shifts flagged ``hadRecentInput``, as the Web Vitals
        definition does for real users, who do click.

    Examples
    --------
    >>> cumulative_layout_shift([])
    0.0
    >>> shifts = [{"value": 0.25, "hadRecentInput": False},
    ...           {"value": 0.5, "hadRecentInput": True},
    ...           {"value": 0.125, "hadRecentInput": False}]
    >>> cumulative_layout_shift(shifts), cumulative_layout_shift(shifts, trust_recent_input=True)
    (0.875, 0.375)
    """
    return math.fsum(shift["value"] for shift in shifts if not (trust_recent_input and shift.get("hadRecentInput", False)))


def blocking_time(durations: list[float], threshold: float = LONG_TASK_MS) -> float:
    """Total blocking time: the sum over tasks of the milliseconds each ran beyond ``threshold``.

    Examples
    --------
    >>> blocking_time([])
    0.0
    >>> blocking_time([40.0, 50.0, 80.0, 250.0])
    230.0
    """
    return math.fsum(max(0.0, duration - threshold) for duration in durations)


def total_blocking_time(tasks: list[dict], first_paint_ms: float, threshold: float = LONG_TASK_MS) -> float:
    """Total blocking time as Lighthouse defines it, from first contentful paint on.

    Each task (``startTime`` and ``duration`` in milliseconds, as the Long
    Tasks API gives them) is first clipped to start no earlier than
    ``first_paint_ms``; what the clipped task runs beyond ``threshold``
    blocks. A task that ended before first paint does not count. (Lighthouse
    clips the same way, in ``core/computed/metrics/tbt-utils.js``.)

    Examples
    --------
    A 435 ms task that ends at first paint blocks nothing, and a 120 ms task
    after it blocks 70 ms; a 150 ms task that first paint cuts to 100 ms
    blocks 50 ms:

    >>> tasks = [{"startTime": 0.0, "duration": 435.0}, {"startTime": 900.0, "duration": 120.0}]
    >>> total_blocking_time(tasks, first_paint_ms=440.0)
    70.0
    >>> total_blocking_time([{"startTime": 300.0, "duration": 150.0}], first_paint_ms=350.0)
    50.0
    """
    # A task that ended before first paint clips to a negative duration, which blocks nothing.
    return blocking_time([task["startTime"] + task["duration"] - max(task["startTime"], first_paint_ms) for task in tasks], threshold)


def long_task_summary(tasks: list[dict], first_paint_ms: float) -> dict[str, float]:
    """Count, total milliseconds and blocking time of the long tasks of one load, whole and from first paint.

    Examples
    --------
    >>> long_task_summary([{"startTime": 0.0, "duration": 80.0}, {"startTime": 500.0, "duration": 250.0}], 100.0)
    {'long_tasks': 2, 'long_task_ms': 330.0, 'blocking_ms': 230.0, 'tbt_ms': 200.0, 'fcp_ms': 100.0}
    """
    durations = [task["duration"] for task in tasks]
    return {
        "long_tasks": len(durations),
        "long_task_ms": math.fsum(durations),
        "blocking_ms": blocking_time(durations),
        "tbt_ms": total_blocking_time(tasks, first_paint_ms),
        "fcp_ms": first_paint_ms,
    }


def worst(per_page: dict[str, float | None], lowest: bool = False) -> tuple[str | None, float | None]:
    """The page with the largest value (the smallest, if ``lowest``: for a score), and that value; ``(None, None)`` when nothing was measured.

    Examples
    --------
    >>> worst({"scaling": 0.0, "saturation": 0.02, "other": None})
    ('saturation', 0.02)
    >>> worst({"scaling": 95.0, "saturation": 91.0}, lowest=True)
    ('saturation', 91.0)
    >>> worst({})
    (None, None)
    """
    measured = {page: value for page, value in per_page.items() if value is not None}
    if not measured:
        return None, None
    page = (min if lowest else max)(measured, key=lambda name: measured[name])
    return page, measured[page]


def median(values):
    """The median of ``values``, or ``None`` for none.

    Examples
    --------
    >>> median([3.0, 1.0, 2.0]), median([])
    (2.0, None)
    """
    return statistics.median(values) if values else None


def checks(results: dict) -> dict[str, dict]:
    """Each target of :data:`TARGETS` with its measured value, the page it came from and whether it is met.

    Parameters
    ----------
    results : dict
        The report being assembled: ``medians`` (seconds per build measure),
        ``page_weight`` and ``layout`` (per page, from the browser),
        ``lighthouse`` (its ``pages``) and ``html_errors`` (a count). Missing parts give unmeasured values
        (verdict ``"-"``), never an error.

    Returns
    -------
    dict
        key -> ``{"label", "value", "limit", "unit", "page", "met"}``;
        ``met`` is ``None`` when the value was not measured.

    Examples
    --------
    >>> found = checks({"medians": {"cold": 150.0, "floor": 50.0, "noop": 1.2},
    ...                 "layout": {"scaling": {"mobile": {"cls": 0.0, "tbt_ms": 250.0}}}})
    >>> found["cold_floor_ratio"]["value"], found["cold_floor_ratio"]["met"]
    (3.0, False)
    >>> found["noop"]["met"], found["prove"]["met"], found["tbt_mobile"]["page"], found["tbt_mobile"]["met"]
    (True, None, 'scaling', False)
    """
    medians = results.get("medians", {})
    weights = results.get("page_weight", {})
    layout = results.get("layout", {})
    lighthouse = results.get("lighthouse", {}).get("pages", {})

    def over_derivations(get, lowest=False):
        return worst({page: get(page) for page in DERIVATIONS}, lowest)

    def browser(profile, key):
        return lambda page: layout.get(page, {}).get(profile, {}).get(key)

    measured = {
        "cold": (None, medians.get("cold")),
        "cold_floor_ratio": (None, ratio(medians.get("cold"), medians.get("floor"))),
        "noop": (None, medians.get("noop")),
        "prose": (None, medians.get("prose")),
        "prove": (None, medians.get("prove")),
        "make_check": (None, medians.get("make_check")),
        "make_test": (None, medians.get("make_test")),
        "derivation_weight": over_derivations(lambda page: weights.get(page, {}).get("bytes")),
        "cls_desktop": over_derivations(browser("desktop", "cls")),
        "cls_mobile": over_derivations(browser("mobile", "cls")),
        "tbt_mobile": over_derivations(browser("mobile", "tbt_ms")),
        "lighthouse_score": over_derivations(lambda page: lighthouse.get(page, {}).get("score"), lowest=True),
        "lighthouse_tbt": over_derivations(lambda page: lighthouse.get(page, {}).get("tbt_ms")),
        "html_errors": (None, results.get("html_errors")),
    }
    found = {}
    for key, target in TARGETS.items():
        page, value = measured[key]
        found[key] = {
            "label": target.label,
            "value": value,
            "limit": target.limit,
            "unit": target.unit,
            "page": page,
            "met": None if value is None else verdict(value, target.limit, target.at_least) == "ok",
        }
    return found


def target_table(found: dict[str, dict]) -> list[str]:
    """The table of targets: one row per measure with its value, target and verdict.

    Examples
    --------
    >>> rows = target_table(checks({"medians": {"cold": 100.0, "floor": 50.0}}))
    >>> print(rows[3])
    cold build / render floor                                      2.00x        <= 2.50x     ok
    >>> print(rows[4])
    no-op rebuild                                                  -            <= 1.50 s    -
    """
    lines = [f"{'measure (the worst page, where measured per page)':<66} {'value':<12} {'target':<12} verdict", "-" * 100]
    for key, check in found.items():
        target = TARGETS[key]
        label = check["label"] + (f" ({check['page']})" if check["page"] else "")
        lines.append(f"{label:<66} {fmt_value(check['value'], check['unit']):<12} {fmt_target(target):<12} {verdict(check['value'], target.limit, target.at_least)}")
    return lines


# -- Building ------------------------------------------------------------------


class BuildFailed(RuntimeError):
    pass



def make(site: Path, venv: Path, extra_env: dict | None = None) -> tuple[float, str]:
    """Run ``make html`` in the copy; return (wall seconds, log)."""
    build = sitebuild.make(site, venv=venv, env=extra_env)
    if build.returncode != 0:
        raise BuildFailed(f"make html failed in {site}:\n{build.log[-4000:]}")
    return build.seconds, build.log


def cold_build(site: Path, venv: Path, extra_env: dict | None = None) -> tuple[float, str]:
    shutil.rmtree(site / "_build", ignore_errors=True)
    return make(site, venv, extra_env)


def floor_build(site: Path, venv: Path) -> tuple[float, str]:
    """The render floor: ``make html`` with a fresh Sphinx environment and warm caches.

    Everything in the copy's ``_build`` goes but the execution cache, the
    doctest stamp and the list of package files it depends on, which a build
    just made for the same sources: no page is executed and no doctest runs,
    so what is timed is Sphinx reading and writing every page from scratch.
    """
    # package.files is rewritten when missing, and a newer list would run the doctests again.
    keep = {sitebuild.CACHE.name, "doctest.passed", "package.files"}
    for entry in (site / "_build").iterdir():
        if entry.name in keep:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    seconds, log = make(site, venv)
    if "in parallel, before the read" in log or "Executing notebook" in log or "Running the package's doctests" in log:
        print("    warning: the render floor executed a page or ran the doctests: the cache was not warm", file=sys.stderr)
    return seconds, log


def make_seconds(site: Path, venv: Path, target: str) -> float | None:
    """Wall seconds of ``make TARGET`` (check or test) in the copy; ``None`` (and its log's tail on stderr) if it failed.

    A failure leaves the target unmeasured rather than losing every other
    measure: the venv may lack the test extra, or a test may fail.
    """
    build = sitebuild.make(site, target, venv=venv)
    if build.returncode != 0:
        print(f"    make {target} failed in {site}, so it is not timed:\n{build.tail[-2000:]}", file=sys.stderr)
        return None
    return build.seconds


def execution_seconds(site: Path) -> dict[str, float]:
    """Seconds each page took to execute, as the execution cache the copy used last records them."""
    from jupyter_cache import get_cache

    caches = [path for path in (site / sitebuild.CACHE).glob("*") if path.is_dir()]
    if not caches:
        return {}
    records = get_cache(max(caches, key=lambda path: path.stat().st_mtime)).list_cache_records()
    return {Path(record.uri).stem: float((record.data or {}).get("execution_seconds", 0.0)) for record in records}


def doctest_seconds(log: str) -> float | None:
    match = DOCTESTS.search(log)
    return float(match.group(2)) if match else None


def edit_then_restore(path: Path, edit, site: Path, venv: Path) -> float:
    """Time the rebuild after ``edit`` changed ``path``; restore it and rebuild untimed."""
    original = path.read_bytes()
    try:
        path.write_text(edit(original.decode()))
        seconds, _ = make(site, venv)
    finally:
        path.write_bytes(original)
    make(site, venv)  # back to the state the next measurement starts from
    return seconds


def prove_seconds(site: Path, venv: Path) -> float:
    """Wall seconds of ``python -m attention_scaling prove`` in the copy: every registered proof run."""
    env = {**os.environ, "PYTHONPATH": str(site / "src")}
    start = time.perf_counter()
    result = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "attention_scaling", "prove"],
        cwd=site,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise BuildFailed(f"python -m attention_scaling prove failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    return seconds


# -- In the browser: page weight, layout shifts, long tasks ----------------------


# What a web host (GitHub Pages, say) sends gzip-compressed: text, not images or fonts.
_COMPRESSIBLE = re.compile(r"text/|application/(javascript|json)|image/svg\+xml")


class _CompressingHandler(sitebuild.QuietHandler):
    """Sends a text file (HTML, CSS, JavaScript, SVG, JSON) gzip-compressed to a client that accepts gzip, as a web host does."""

    def send_head(self):
        path = Path(self.translate_path(self.path))
        kind = self.guess_type(str(path))
        if not (path.is_file() and "gzip" in self.headers.get("Accept-Encoding", "") and _COMPRESSIBLE.match(kind)):
            return super().send_head()
        body = gzip.compress(path.read_bytes(), mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Vary", "Accept-Encoding")
        self.end_headers()
        return io.BytesIO(body)


def serve(directory: Path, compress: bool = False):
    """Serve ``directory`` on 127.0.0.1 at a free port; return the server and its base URL.

    With ``compress``, text is sent gzip-compressed to clients that accept it
    (:class:`_CompressingHandler`); the weights are measured without, as
    bytes uncompressed.
    """
    return sitebuild.serve(directory, _CompressingHandler if compress else sitebuild.QuietHandler)


# -- Lighthouse -------------------------------------------------------------------

# Pinned by benchmarks/lighthouse/package-lock.json and installed from it with
# npm ci into _build/lighthouse. 12.2.3, as Lighthouse 13 needs Node.js 22 and
# Debian's is 20.
LIGHTHOUSE_SPEC = REPO / "benchmarks" / "lighthouse"
LIGHTHOUSE_HOME = REPO / "_build" / "lighthouse"
# Runs of each derivation page (taking turns); the report gives the median.
LIGHTHOUSE_RUNS = 3
# One report of one page: what is kept of it, each as a median over the runs.
_LIGHTHOUSE_AUDITS = {
    "tbt_ms": "total-blocking-time",
    "cls": "cumulative-layout-shift",
    "fcp_ms": "first-contentful-paint",
    "lcp_ms": "largest-contentful-paint",
    "speed_index_ms": "speed-index",
}


class LighthouseUnavailable(RuntimeError):
    """Lighthouse cannot run here (no Node.js, a failed install, a failed run); the message says why."""


def install_lighthouse(home: Path = LIGHTHOUSE_HOME, spec: Path = LIGHTHOUSE_SPEC) -> Path:
    """The pinned Lighthouse command line, installed into ``home`` with ``npm ci`` unless it is there from the same lock.

    Raises
    ------
    LighthouseUnavailable
        Without Node.js and npm on PATH, or when ``npm ci`` fails (it needs
        the npm registry the first time).
    """
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise LighthouseUnavailable("Node.js and npm are not on PATH (Debian: apt-get install nodejs npm)")
    lock = (spec / "package-lock.json").read_bytes()
    cli = home / "node_modules" / ".bin" / "lighthouse"
    # Written once npm ci has succeeded: a half-done install is redone.
    stamp = home / ".installed-lock"
    if cli.exists() and stamp.is_file() and stamp.read_bytes() == lock:
        return cli
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy2(spec / name, home / name)
    # No install scripts: Lighthouse needs none, and drives the system Chromium.
    installed = subprocess.run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=home,
                               capture_output=True, text=True)
    if installed.returncode != 0 or not cli.exists():
        raise LighthouseUnavailable(f"npm ci in {home} failed: {installed.stderr.strip()[-500:]}")
    stamp.write_bytes(lock)
    return cli


def lighthouse_summary(report: dict) -> dict:
    """What the bench keeps of one Lighthouse report (its JSON output): the performance score (0 to 100) and the metrics.

    Examples
    --------
    >>> report = {"lighthouseVersion": "12.2.3", "categories": {"performance": {"score": 0.93}},
    ...           "configSettings": {"formFactor": "mobile", "throttlingMethod": "simulate"},
    ...           "audits": {audit: {"numericValue": 10.0} for audit in _LIGHTHOUSE_AUDITS.values()}}
    >>> summary = lighthouse_summary(report)
    >>> summary["score"], summary["tbt_ms"], summary["form_factor"], summary["throttling"]
    (93.0, 10.0, 'mobile', 'simulate')
    >>> report["categories"]["performance"]["score"] = None
    >>> lighthouse_summary(report)
    Traceback (most recent call last):
    ...
    bench.LighthouseUnavailable: Lighthouse gave no performance score (a metric failed)
    """
    score = report["categories"]["performance"]["score"]
    if score is None:
        reason = report.get("runtimeError", {}).get("message", "a metric failed")
        raise LighthouseUnavailable(f"Lighthouse gave no performance score ({reason})")
    return {
        "score": round(score * 100, 1),
        **{key: report["audits"][audit]["numericValue"] for key, audit in _LIGHTHOUSE_AUDITS.items()},
        "version": report["lighthouseVersion"],
        "form_factor": report["configSettings"]["formFactor"],
        "throttling": report["configSettings"]["throttlingMethod"],
    }


def _lighthouse_once(cli: Path, url: str, timeout: float = 600) -> dict:
    """One Lighthouse run of ``url``: its default, the mobile preset (simulated throttling), performance only."""
    with tempfile.TemporaryDirectory() as scratch:
        output = Path(scratch) / "report.json"
        try:
            run = subprocess.run(
                [str(cli), url, "--quiet", "--only-categories=performance", "--output=json", f"--output-path={output}",
                 "--chrome-flags=--headless=new " + " ".join(CHROMIUM_ARGS)],
                env=os.environ | {"CHROME_PATH": str(CHROMIUM)}, capture_output=True, text=True, timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            raise LighthouseUnavailable(f"lighthouse {url} did not finish within {timeout:g} s") from None
        if run.returncode != 0 or not output.is_file():
            raise LighthouseUnavailable(f"lighthouse {url} failed: {run.stderr.strip()[-500:]}")
        return lighthouse_summary(json.loads(output.read_text(encoding="utf-8")))


def lighthouse_pages(html: Path, pages: list[str], runs: int = LIGHTHOUSE_RUNS) -> dict:
    """Lighthouse's mobile performance of each page, served gzip-compressed as a host serves it: the median of ``runs``.

    Returns
    -------
    dict
        ``{"version", "runs", "pages": {page: {"score", "tbt_ms", "cls",
        "fcp_ms", "lcp_ms", "speed_index_ms", "scores"}}}``, or
        ``{"unavailable": reason}`` when Lighthouse cannot run here.
    """
    try:
        cli = install_lighthouse()
        if not CHROMIUM.exists():
            raise LighthouseUnavailable(f"no Chromium at {CHROMIUM}")
        httpd, root = serve(html, compress=True)
        found: dict[str, list[dict]] = {name: [] for name in pages}
        try:
            for _ in range(runs):  # taking turns, so that a busy moment does not fall on one page only
                for name in pages:
                    found[name].append(_lighthouse_once(cli, root + f"{name}.html"))
        finally:
            httpd.shutdown()
            httpd.server_close()
    except LighthouseUnavailable as error:
        print(f"    Lighthouse not measured: {error}", file=sys.stderr)
        return {"unavailable": str(error)}
    first = found[pages[0]][0] if pages else {}
    return {
        "version": first.get("version"),
        "runs": runs,
        "pages": {
            name: {**{key: median([run[key] for run in measured]) for key in ("score", *_LIGHTHOUSE_AUDITS)},
                   "scores": [run["score"] for run in measured]}
            for name, measured in found.items()
        },
    }


def weights_in_browser(html: Path, pages: list[str]) -> dict[str, dict]:
    """Bytes of every response Chromium receives on a first visit to each page."""
    from playwright.sync_api import sync_playwright

    httpd, root = serve(html)
    results = {}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            for name in pages:
                # A new context has an empty cache: a first visit.
                context = browser.new_context()
                page = context.new_page()
                responses = []
                page.on("response", lambda response: responses.append(response))
                page.goto(root + f"{name}.html", wait_until="load")
                # Fonts are fetched as the page needs them; wait for them, then
                # for the network to settle.
                settle(page, 0)
                sizes = []
                kinds: dict[str, int] = {}
                compressed = 0
                for response in responses:
                    try:
                        body = response.body()
                    except Exception:  # a redirect or an aborted request has no body
                        body = b""
                    size = len(body) or int(response.headers.get("content-length", 0) or 0)
                    compressed += len(gzip.compress(body, 6)) if body else size
                    sizes.append((size, response.url.removeprefix(root)))
                    kind = response.request.resource_type
                    kinds[kind] = kinds.get(kind, 0) + size
                results[name] = {
                    "bytes": sum(size for size, _ in sizes),
                    "gzip_bytes": compressed,
                    "responses": len(sizes),
                    "by_type": kinds,
                    "largest": sorted(sizes, reverse=True)[:5],
                    "method": "chromium",
                }
                context.close()
            browser.close()
    finally:
        httpd.shutdown()
        httpd.server_close()
    return results


# Registered before any script of the page runs (an init script), so that
# nothing is missed; buffered: true also hands over entries queued before it.
# The observers are kept so that takeRecords() flushes what is still queued.
_OBSERVE = """
(() => {
  const record = {shifts: [], longtasks: [], supported: PerformanceObserver.supportedEntryTypes || [], observers: []};
  window.__benchPerf = record;
  const watch = (type, keep) => {
    if (!record.supported.includes(type)) return;
    const observer = new PerformanceObserver(list => list.getEntries().forEach(keep));
    observer.observe({type, buffered: true});
    record.observers.push([observer, keep]);
  };
  const describe = node => !node ? '' : node.nodeType !== 1 ? (node.parentElement ? describe(node.parentElement) + ' > text' : 'text')
    : node.tagName.toLowerCase() + (node.id ? '#' + node.id : '') + [...node.classList].slice(0, 2).map(c => '.' + c).join('');
  watch('layout-shift', e => record.shifts.push({
    value: e.value, hadRecentInput: e.hadRecentInput, startTime: e.startTime,
    sources: (e.sources || []).map(source => describe(source.node)),
  }));
  watch('longtask', e => record.longtasks.push({duration: e.duration, startTime: e.startTime}));
  watch('paint', e => { if (e.name === 'first-contentful-paint') record.fcp = e.startTime; });
})();
"""
_COLLECT = """() => {
  const record = window.__benchPerf;
  for (const [observer, keep] of record.observers) observer.takeRecords().forEach(keep);
  const navigation = performance.getEntriesByType('navigation')[0];
  return {shifts: record.shifts, longtasks: record.longtasks, supported: record.supported,
          fcp_ms: record.fcp === undefined ? null : record.fcp, load_ms: navigation ? navigation.loadEventEnd : null};
}"""


def settle(page, settle_ms: int = SETTLE_MS, idle_timeout_ms: int = 30_000) -> bool:
    """Wait until a loaded page is quiet: fonts loaded, network idle, then ``settle_ms`` more.

    Returns whether the network fell idle within ``idle_timeout_ms`` (on a
    throttled, busy machine it sometimes does not; the page is measured anyway).
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.evaluate("async () => { await document.fonts.ready; }")
    try:
        page.wait_for_load_state("networkidle", timeout=idle_timeout_ms)
        idle = True
    except PlaywrightTimeout:
        idle = False
    page.wait_for_timeout(settle_ms)
    return idle


def layout_in_browser(html: Path, pages: list[str], profiles: dict = PROFILES, settle_ms: int = SETTLE_MS,
                      loads: int = LOADS) -> dict[str, dict]:
    """Layout shifts and long tasks of ``loads`` first visits to each page, in each browser profile.

    The loads take turns (every page and profile once, then again), so that a
    busy moment of the machine does not fall on one page only.

    Returns
    -------
    dict
        page -> profile -> :func:`median_of_loads` of the loads, each
        ``{"cls", "layout_shifts", "long_tasks", "long_task_ms",
        "blocking_ms", "tbt_ms", "fcp_ms", "load_ms", "cpu_slowdown", "viewport", ...}``
        (``blocking_ms`` the whole load's, ``tbt_ms`` from first contentful paint on)
        (milliseconds of the throttled page when ``cpu_slowdown`` > 1).
    """
    from playwright.sync_api import sync_playwright

    if loads < 1:
        raise ValueError(f"loads must be at least 1; got {loads}")
    httpd, root = serve(html)
    measured: dict[tuple[str, str], list[dict]] = {(name, profile): [] for name in pages for profile in profiles}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            for _ in range(loads):
                for profile, (options, slowdown) in profiles.items():
                    for name in pages:
                        measured[name, profile].append(_one_load(browser, root + f"{name}.html", options, slowdown, settle_ms))
            browser.close()
    finally:
        httpd.shutdown()
        httpd.server_close()
    return {name: {profile: median_of_loads(measured[name, profile]) for profile in profiles} for name in pages}


def _one_load(browser, url: str, options: dict, slowdown: float, settle_ms: int) -> dict:
    context = browser.new_context(**options)  # empty cache: a first visit
    context.add_init_script(_OBSERVE)
    page = context.new_page()
    if slowdown != 1:
        # What Lighthouse's mobile preset does to the CPU.
        context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": slowdown})
    page.goto(url, wait_until="load", timeout=120_000)
    idle = settle(page, settle_ms)
    record = page.evaluate(_COLLECT)
    context.close()
    missing = {"layout-shift", "longtask", "paint"} - set(record["supported"])
    if missing:
        raise RuntimeError(f"this Chromium does not report {', '.join(sorted(missing))}")
    if record["fcp_ms"] is None:
        raise RuntimeError(f"{url}: no first contentful paint within the load")
    shifts = sorted(record["shifts"], key=lambda shift: -shift["value"])
    return {
        "cls": cumulative_layout_shift(shifts),
        "cls_without_flagged_input": cumulative_layout_shift(shifts, trust_recent_input=True),
        "layout_shifts": len(shifts),
        "largest_shifts": [
            {"value": shift["value"], "ms": round(shift["startTime"]), "sources": shift["sources"]} for shift in shifts[:3]
        ],
        **long_task_summary(record["longtasks"], record["fcp_ms"]),
        "load_ms": record["load_ms"],
        "network_idle": idle,
        "cpu_slowdown": slowdown,
        "viewport": options["viewport"],
    }


# What median_of_loads takes the median of; the rest of a load is the same every time, or kept per load.
_PER_LOAD_MEDIANS = ("cls", "cls_without_flagged_input", "layout_shifts", "long_tasks", "long_task_ms", "blocking_ms", "tbt_ms",
                     "fcp_ms", "load_ms")


def median_of_loads(loads: list[dict]) -> dict:
    """One page in one profile over several loads: the median of each measure, and every load as measured.

    The largest shifts shown are those of the load that shifted most, so that
    a shift in any load is named; the network counts as idle only if it was
    idle in every load.

    Examples
    --------
    >>> def load(cls, blocking_ms, shifts=()):
    ...     return {"cls": cls, "cls_without_flagged_input": cls, "layout_shifts": len(shifts), "long_tasks": 1,
    ...             "long_task_ms": blocking_ms + 50, "blocking_ms": blocking_ms, "load_ms": 900.0,
    ...             "largest_shifts": list(shifts), "network_idle": True, "cpu_slowdown": 4, "viewport": {}}
    >>> combined = median_of_loads([load(0.0, 300.0), load(0.004, 120.0, ["a shift"]), load(0.0, 700.0)])
    >>> combined["cls"], combined["blocking_ms"], combined["largest_shifts"], len(combined["loads"])
    (0.0, 300.0, ['a shift'], 3)
    """
    if not loads:
        raise ValueError("no load to combine")
    shifted_most = max(loads, key=lambda load: load["cls"])
    return {
        **{key: median([load[key] for load in loads if load.get(key) is not None]) for key in _PER_LOAD_MEDIANS},
        "largest_shifts": shifted_most["largest_shifts"],
        "network_idle": all(load["network_idle"] for load in loads),
        "cpu_slowdown": loads[0]["cpu_slowdown"],
        "viewport": loads[0]["viewport"],
        "loads": loads,
    }


def browser_available() -> bool:
    """Whether Playwright imports and the system Chromium exists (saying why not on stderr)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        print("playwright is not installed", file=sys.stderr)
        return False
    if not CHROMIUM.exists():
        print(f"no Chromium at {CHROMIUM}", file=sys.stderr)
        return False
    return True


class _AssetParser(HTMLParser):
    def __init__(self):
        super().__init__()
        self.urls = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script" and attrs.get("src"):
            self.urls.append(attrs["src"])
        elif tag == "link" and attrs.get("href"):
            rel = set((attrs.get("rel") or "").lower().split())
            if rel & {"stylesheet", "preload", "icon", "shortcut", "modulepreload"}:
                self.urls.append(attrs["href"])
        elif tag == "img" and attrs.get("src"):
            self.urls.append(attrs["src"])


CSS_URL = re.compile(r"""url\(\s*['"]?([^'")]+)['"]?\s*\)|@import\s+['"]([^'"]+)['"]""")


def _local(base: Path, root: Path, url: str) -> Path | None:
    parts = urlsplit(url)
    if parts.scheme or parts.netloc or url.startswith("data:"):
        return None
    target = (base.parent / unquote(parts.path)).resolve()
    return target if target.is_file() and root.resolve() in target.parents else None


def weights_from_files(html: Path, pages: list[str]) -> dict[str, dict]:
    """Bytes of the HTML plus the files its tags and its CSS url()s reference (no browser)."""
    results = {}
    for name in pages:
        page = html / f"{name}.html"
        parser = _AssetParser()
        parser.feed(page.read_text(encoding="utf-8"))
        seen = {page.resolve()}
        queue = [p for p in (_local(page, html, url) for url in parser.urls) if p]
        while queue:
            path = queue.pop()
            if path in seen:
                continue
            seen.add(path)
            if path.suffix == ".css":
                text = path.read_text(encoding="utf-8", errors="replace")
                for url, imported in CSS_URL.findall(text):
                    found = _local(path, html, url or imported)
                    if found:
                        queue.append(found)
        sizes = sorted(((path.stat().st_size, path.relative_to(html.resolve()).as_posix()) for path in seen), reverse=True)
        results[name] = {
            "bytes": sum(size for size, _ in sizes),
            "gzip_bytes": sum(len(gzip.compress((html / rel).read_bytes(), 6)) for _, rel in sizes),
            "responses": len(sizes),
            "largest": sizes[:5],
            "method": "static: the files the HTML and its CSS reference (every @font-face counted, script loads missed)",
        }
    return results


def page_weights(html: Path) -> dict[str, dict]:
    pages = sorted(path.stem for path in html.glob("*.html"))
    if not browser_available():
        print("    page weight from the HTML and CSS references only", file=sys.stderr)
        return weights_from_files(html, pages)
    return weights_in_browser(html, pages)


# -- Report ---------------------------------------------------------------------


def fmt_seconds(values) -> str:
    """The median of some timings, with their range when there are several.

    Examples
    --------
    >>> fmt_seconds([2.0, 1.0, 4.0]), fmt_seconds([1.5]), fmt_seconds([])
    ('   2.00 s  [1.00 .. 4.00]', '   1.50 s', '-')
    """
    if not values:
        return "-"
    spread = f"  [{min(values):.2f} .. {max(values):.2f}]" if len(values) > 1 else ""
    return f"{median(values):7.2f} s{spread}"


def page_verdict(key: str, value: float | None) -> str:
    """A page's own verdict against a target measured as a worst page, e.g. ``"ok (<= 1.00 MB)"``."""
    target = TARGETS[key]
    return f"{verdict(value, target.limit, target.at_least):<4} ({fmt_target(target)})"


def report(results: dict) -> str:
    """The printed report: the targets first, then every measure in detail."""
    lines = target_table(results["checks"])
    timing = results.get("timings", {})
    labels = {
        "cold": "cold build (make html, empty _build)",
        "floor": "render floor (warm caches, fresh Sphinx environment)",
        "noop": "no-op rebuild",
        "prose": f"rebuild after a prose edit ({Path(results.get('prose_page', '')).name})",
        "package": f"rebuild after a package edit ({Path(results.get('package_file', '')).name})",
        "prove": "python -m attention_scaling prove",
        "doctests": "  doctests (in the cold build)",
        "make_check": "make check (once, after the builds)",
        "make_test": "make test (once, after the builds)",
    }
    if timing:
        lines += ["", f"{'timings (median of the runs, range)':<54} {'median':>9}", "-" * 90]
        for key, label in labels.items():
            if timing.get(key):
                lines.append(f"{label:<54} {fmt_seconds(timing[key])}")
    for key, title in (("execution_seconds", "execution seconds per page (median of the cold builds; "
                        f"{results.get('execution_workers', 1)} at a time)"),):
        pages = results.get(key)
        if not pages:
            continue
        lines += ["", f"{title}:"]
        for page, seconds in sorted(pages.items(), key=lambda item: -item[1]):
            lines.append(f"  {page:<40} {seconds:7.2f} s")
        lines.append(f"  {'total':<40} {sum(pages.values()):7.2f} s")
    weights = results.get("page_weight", {})
    if weights:
        method = next(iter(weights.values()))["method"]
        lines += ["", f"first-visit page weight ({method}; gzip: what a compressing host would send):"]
        for page, info in sorted(weights.items(), key=lambda item: -item[1]["bytes"]):
            mark = page_verdict("derivation_weight", info["bytes"]) if page in DERIVATIONS else ""
            lines.append(
                f"  {page:<40} {info['bytes'] / MB:7.2f} MB in {info['responses']:3d} responses"
                f" (gzip {info['gzip_bytes'] / MB:.2f} MB)  {mark}"
            )
        heaviest = [page for page in DERIVATIONS if page in weights]
        if heaviest:
            page = max(heaviest, key=lambda name: weights[name]["bytes"])
            lines.append(f"  largest responses on {page}:")
            for size, url in weights[page]["largest"]:
                lines.append(f"    {size / MB:6.2f} MB  {url}")
    layout = results.get("layout", {})
    if layout:
        lines += [
            "",
            f"derivation pages in Chromium, first visit until settled, median of {results.get('loads', 1)} load(s)"
            f" (mobile: CPU x{PROFILES['mobile'][1]}, an approximation of Lighthouse's mobile preset, not Lighthouse):",
            "  TBT: blocking time from first contentful paint on (the target); whole load: blocking time of every long task",
            f"  {'page':<26} {'profile':<8} {'CLS':>7} {'shifts':>6} {'long tasks':>10} {'in tasks':>9} {'FCP':>8} {'TBT':>8}"
            f" {'whole load':>10} {'load':>8}  TBT per load; largest shift of any load (its nodes)",
        ]
        for page, profiles in layout.items():
            for profile, figures in profiles.items():
                largest = figures.get("largest_shifts") or []
                per_load = "/".join(fmt_value(load.get('tbt_ms'), 'ms').removesuffix(' ms') for load in figures.get("loads", []))
                where = f"{largest[0]['value']:.4f} at {largest[0]['ms']} ms ({', '.join(largest[0]['sources'][:2])})" if largest else ""
                lines.append(
                    f"  {page:<26} {profile:<8} {fmt_value(figures['cls'], ''):>7} {figures['layout_shifts']:>6g}"
                    f" {figures['long_tasks']:>10g} {fmt_value(figures['long_task_ms'], 'ms'):>9}"
                    f" {fmt_value(figures.get('fcp_ms'), 'ms'):>8} {fmt_value(figures.get('tbt_ms'), 'ms'):>8}"
                    f" {fmt_value(figures['blocking_ms'], 'ms'):>10} {fmt_value(figures.get('load_ms'), 'ms'):>8}"
                    f"{'' if figures.get('network_idle', True) else ' (network not always idle)'}"
                    f"  {'; '.join(part for part in (per_load, where) if part)}"
                )
    lines += lighthouse_lines(results.get("lighthouse"))
    plumbing = results.get("plumbing_lines")
    if plumbing:
        parts = ", ".join(f"{folder} {count}" for folder, count in plumbing.items())
        lines += ["", f"site plumbing: {sum(plumbing.values())} lines ({parts}; Python, templates, JS/CSS/HTML)"]
    return "\n".join(lines)


def lighthouse_lines(lighthouse: dict | None) -> list[str]:
    """The report's Lighthouse section: each page's median figures and its score in each run, or why there are none.

    Examples
    --------
    >>> print("\\n".join(lighthouse_lines({"unavailable": "Node.js and npm are not on PATH"})))
    <BLANKLINE>
    Lighthouse: not measured (Node.js and npm are not on PATH)
    >>> figures = {"score": 94.0, "tbt_ms": 8.0, "cls": 0.0, "fcp_ms": 2104.0, "lcp_ms": 2140.0,
    ...            "speed_index_ms": 4080.0, "scores": [95.0, 94.0, 93.0]}
    >>> print("\\n".join(lighthouse_lines({"version": "12.2.3", "runs": 3, "pages": {"scaling": figures}})[2:]))
      page                       score      TBT     CLS      FCP      LCP  speed index  score per run
      scaling                       94     8 ms       0  2104 ms  2140 ms      4080 ms  95/94/93
    """
    if not lighthouse:
        return []
    if "unavailable" in lighthouse:
        return ["", f"Lighthouse: not measured ({lighthouse['unavailable']})"]
    lines = [
        "",
        f"Lighthouse {lighthouse['version']}, mobile preset (simulated throttling), the site served gzip-compressed"
        f" as a host serves it, median of {lighthouse['runs']} run(s):",
        f"  {'page':<26} {'score':>5} {'TBT':>8} {'CLS':>7} {'FCP':>8} {'LCP':>8} {'speed index':>12}  score per run",
    ]
    for page, figures in lighthouse["pages"].items():
        lines.append(
            f"  {page:<26} {fmt_value(figures['score'], 'score'):>5} {fmt_value(figures['tbt_ms'], 'ms'):>8}"
            f" {fmt_value(figures['cls'], ''):>7} {fmt_value(figures['fcp_ms'], 'ms'):>8} {fmt_value(figures['lcp_ms'], 'ms'):>8}"
            f" {fmt_value(figures['speed_index_ms'], 'ms'):>12}  {'/'.join(f'{score:.0f}' for score in figures['scores'])}"
        )
    return lines


def measure_pages(html: Path, loads: int = LOADS, lighthouse_runs: int = LIGHTHOUSE_RUNS) -> dict:
    """Page weight of every page; layout shifts and long tasks of the derivation pages (median of ``loads`` loads),
    and their Lighthouse figures (median of ``lighthouse_runs``; none if 0)."""
    print("    page weight ...", flush=True)
    found = {"page_weight": page_weights(html)}
    derivations = [page for page in DERIVATIONS if (html / f"{page}.html").exists()]
    if browser_available():
        print(f"    layout shifts and long tasks, {loads} load(s) of each page ...", flush=True)
        found["layout"] = layout_in_browser(html, derivations, loads=loads)
    else:
        print("    no layout shifts or long tasks: they need Chromium", file=sys.stderr)
    if lighthouse_runs:
        print(f"    Lighthouse, {lighthouse_runs} run(s) of each page ...", flush=True)
        found["lighthouse"] = lighthouse_pages(html, derivations, lighthouse_runs)
    print("    the Nu HTML Checker, every page ...", flush=True)
    try:
        found["html_errors"] = len(sitebuild.html_errors(sorted(html.glob("*.html"))))
    except FileNotFoundError as missing:
        print(f"    no HTML check: {missing}", file=sys.stderr)
    found["plumbing_lines"] = plumbing_lines(REPO)
    return found


def plumbing_lines(root: Path) -> dict[str, int]:
    """Lines of the site's build plumbing under ``root``: docs/_ext (Python), docs/_templates and docs/_static (JS, CSS, HTML).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     ext = Path(tmp, "docs", "_ext"); ext.mkdir(parents=True)
    ...     _ = (ext / "a.py").write_text("x = 1")
    ...     plumbing_lines(Path(tmp))
    {'docs/_ext': 1, 'docs/_templates': 0, 'docs/_static': 0}
    """
    kinds = {"docs/_ext": ("*.py",), "docs/_templates": ("*.html",), "docs/_static": ("*.js", "*.css", "*.html")}
    return {folder: sum(len(path.read_text(encoding="utf-8").splitlines())
                        for pattern in patterns for path in (root / folder).rglob(pattern))
            for folder, patterns in kinds.items()}


def build_measures(args, venv: Path, repeat: int) -> dict | None:
    """Every build measure in one temporary copy; ``None`` if a build failed."""
    workdir = Path(tempfile.mkdtemp(prefix="bench-"))
    site = sitebuild.copy_repository(workdir / "site")
    print(f"==> Benchmarking a copy of {REPO} in {site}, {repeat} run(s) of each", flush=True)
    timings: dict[str, list[float]] = {
        k: [] for k in ("cold", "floor", "noop", "prose", "package", "prove", "doctests", "make_check", "make_test")
    }
    page_runs: list[dict[str, float]] = []

    def step(key, label, run, seconds, runs=repeat):
        timings[key] = timings.get(key, []) + [seconds]
        print(f"    {label} {run + 1}/{runs}: {seconds:.2f} s", flush=True)

    try:
        for run in range(repeat):
            seconds, log = cold_build(site, venv)
            page_runs.append(execution_seconds(site))
            if (doctests := doctest_seconds(log)) is not None:
                timings["doctests"].append(doctests)
            step("cold", "cold build", run, seconds)
            # Right after a cold build, so that the floor's caches hold the same sources.
            seconds, _ = floor_build(site, venv)
            step("floor", "render floor", run, seconds)
        for run in range(repeat):
            seconds, log = make(site, venv)
            if "Executed notebook" in log or "in parallel, before the read" in log:
                print("    warning: the no-op rebuild executed a page", file=sys.stderr)
            step("noop", "no-op rebuild", run, seconds)
        prose = site / args.prose_page
        for run in range(repeat):
            sentence = f"\n\nThis sentence was added by the benchmark (run {run + 1}).\n"
            step("prose", "prose edit rebuild", run, edit_then_restore(prose, lambda text: text + sentence, site, venv))
        package = site / args.package_file
        for run in range(repeat):
            comment = f"\n# Edited by the benchmark (run {run + 1}).\n"
            step("package", "package edit rebuild", run, edit_then_restore(package, lambda text: text + comment, site, venv))
        for run in range(repeat):
            step("prove", "prove", run, prove_seconds(site, venv))
        pages = measure_pages(site / "_build" / "html", args.loads, args.lighthouse_runs)
        if not args.no_check:
            # Once: it is long, and its target is far from a median's noise.
            if (seconds := make_seconds(site, venv, "check")) is not None:
                step("make_check", "make check", 0, seconds, runs=1)
        if args.make_test and (seconds := make_seconds(site, venv, "test")) is not None:
            step("make_test", "make test", 0, seconds, runs=1)
    except BuildFailed as error:
        print(error, file=sys.stderr)
        return None
    finally:
        if args.keep:
            print(f"    the copy is kept in {site}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)

    def median_pages(runs):
        names = sorted({page for run in runs for page in run})
        return {page: median([run[page] for run in runs if page in run]) for page in names}

    return {
        "prose_page": args.prose_page,
        "package_file": args.package_file,
        "execution_workers": os.cpu_count() or 1,
        "timings": {key: values for key, values in timings.items() if values},
        "medians": {key: median(values) for key, values in timings.items() if values},
        "execution_seconds": median_pages(page_runs),
        **pages,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measurement; the median is reported (default 3)")
    parser.add_argument("--venv", type=Path, default=Path(sys.prefix), help="virtual environment to build with (default: this Python's)")
    parser.add_argument("--output", type=Path, default=REPO / "_build" / "bench" / "bench.json")
    parser.add_argument("--prose-page", default="docs/scaling.md")
    parser.add_argument("--package-file", default="src/attention_scaling/_softmax.py")
    parser.add_argument("--no-check", action="store_true", help="skip timing make check (its target is then unmeasured)")
    parser.add_argument("--make-test", action="store_true",
                        help="also time make test, once (several minutes on 2 cores; without it its target is unmeasured)")
    parser.add_argument("--html", type=Path, help="measure only the pages of the site built in HTML (no copy, no build)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy and print where it is")
    parser.add_argument("--loads", type=int, default=LOADS,
                        help=f"fresh loads of each derivation page per browser profile; the median is reported (default {LOADS})")
    parser.add_argument("--lighthouse-runs", type=int, default=LIGHTHOUSE_RUNS,
                        help="Lighthouse runs of each derivation page, mobile preset; the median is reported "
                        f"(default {LIGHTHOUSE_RUNS}; 0 for none, leaving its targets unmeasured)")
    args = parser.parse_args(argv)
    if args.loads < 1:
        parser.error(f"--loads must be at least 1; got {args.loads}")
    if args.lighthouse_runs < 0:
        parser.error(f"--lighthouse-runs must be 0 (no Lighthouse) or more; got {args.lighthouse_runs}")
    venv = args.venv.resolve()
    repeat = max(1, args.repeat)
    load_before = os.getloadavg()
    started = time.time()
    if args.html:
        if not (args.html / "index.html").exists():
            print(f"no built site in {args.html}", file=sys.stderr)
            return 1
        print(f"==> Measuring the pages of {args.html} (no build)", flush=True)
        measured = {"html": str(args.html.resolve()), **measure_pages(args.html, args.loads, args.lighthouse_runs)}
    else:
        measured = build_measures(args, venv, repeat)
        if measured is None:
            return 1
    results = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        "machine": {
            "cpus": os.cpu_count(),
            "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
            "load_average_before": load_before,
            "load_average_after": os.getloadavg(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "repeat": 1 if args.html else repeat,
        **measured,
        "targets": {key: {"label": t.label, "limit": t.limit, "unit": t.unit} for key, t in TARGETS.items()},
        "browser_profiles": {name: {"context": options, "cpu_slowdown": slowdown} for name, (options, slowdown) in PROFILES.items()},
        "settle_ms": SETTLE_MS,
        "loads": args.loads,
    }
    results["checks"] = checks(results)
    print()
    print(report(results))
    print()
    missed = [key for key, check in results["checks"].items() if check["met"] is False]
    unmeasured = [key for key, check in results["checks"].items() if check["met"] is None]
    print("targets missed: " + (", ".join(missed) if missed else "none")
          + ("; not measured: " + ", ".join(unmeasured) if unmeasured else ""))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"==> Wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
