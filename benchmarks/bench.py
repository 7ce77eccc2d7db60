"""Benchmark the build: cold, no-op and incremental rebuilds, proofs, page weight.

Run with ``make bench`` (``make bench REPEAT=1`` for one run of each). Every
build happens in a temporary copy of the repository, made once at the start
(with no execution cache) and built with ``make -C COPY html VENV=...``
through tests/sitebuild.py, the helper the build tests use, so the user's
``_build`` is never touched; the only file written in the repository is the
JSON report, ``_build/bench/bench.json``.

Measured on this machine, each ``--repeat`` times, the median reported:

cold        ``make html`` with no ``_build`` (no cache, no doctest stamp)
serial      the same with ``NB_JOBS=1``: pages executed one at a time
            inside the read, as myst-nb alone does (``--no-serial`` skips it)
noop        ``make html`` again, nothing changed
prose       after appending a sentence to one page (``--prose-page``)
package     after changing a comment in a package module (``--package-file``);
            the cache key changes, so the doctests and every page run again
prove       ``python -m attention_scaling prove``

plus, from the logs of the cold builds, the seconds each page took to
execute, and the weight of each page on a first visit: the HTML and every
response a browser receives while loading it, including the MathJax
components and fonts it loads on demand (Chromium through Playwright when
both are available; otherwise the files the HTML and its CSS reference,
which counts every font a stylesheet declares but misses what scripts load).

Standard library only, plus Playwright if it can be imported.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

REPO = Path(__file__).resolve().parents[1]
# The copy-and-build helper shared with the tests lives in tests/, which is no package.
sys.path.insert(0, str(REPO / "tests"))
import sitebuild  # noqa: E402
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
DERIVATIONS = ["dot-product-variance", "scaling", "saturation", "subtraction-vs-division"]
MB = 1_000_000

# Targets from the issue: result key -> (limit, unit); a result at or under its limit meets it.
TARGETS = {
    "cold": (60.0, "s"),
    "noop": (2.0, "s"),
    "prose": (6.0, "s"),
    "prove": (10.0, "s"),
    "max_page_execution": (10.0, "s"),
    "max_derivation_weight": (1 * MB, "B"),
}
EXECUTED = re.compile(r"docs/([\w./-]+)\.md: Executed notebook in ([\d.]+) seconds")
DOCTESTS = re.compile(r"(\d+) passed in ([\d.]+)s")


class BuildFailed(RuntimeError):
    pass


# -- Building ------------------------------------------------------------------


def make(site: Path, venv: Path, extra_env: dict | None = None) -> tuple[float, str]:
    """Run ``make html`` in the copy; return (wall seconds, log)."""
    # The default number of workers unless a measurement sets it.
    build = sitebuild.make(site, venv=venv, env={"NB_JOBS": None, **(extra_env or {})})
    if build.returncode != 0:
        raise BuildFailed(f"make html failed in {site}:\n{build.log[-4000:]}")
    return build.seconds, build.log


def cold_build(site: Path, venv: Path, extra_env: dict | None = None) -> tuple[float, str]:
    shutil.rmtree(site / "_build", ignore_errors=True)
    return make(site, venv, extra_env)


def execution_seconds(log: str) -> dict[str, float]:
    """Seconds per page from the log lines "docs/PAGE.md: Executed notebook in N seconds"."""
    return {page: float(seconds) for page, seconds in EXECUTED.findall(log)}


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


# -- Page weight ------------------------------------------------------------------


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


def serve(directory: Path):
    handler = functools.partial(_QuietHandler, directory=str(directory))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/"


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
                # MathJax typesets after load and fetches fonts and components
                # as it needs them; wait for it, then for the network to settle.
                page.evaluate("async () => { if (window.MathJax?.startup?.promise) await MathJax.startup.promise; }")
                page.wait_for_load_state("networkidle")
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
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        print("playwright is not installed: page weight from the HTML and CSS references only", file=sys.stderr)
        return weights_from_files(html, pages)
    if not CHROMIUM.exists():
        print(f"no Chromium at {CHROMIUM}: page weight from the HTML and CSS references only", file=sys.stderr)
        return weights_from_files(html, pages)
    return weights_in_browser(html, pages)


# -- Report ---------------------------------------------------------------------


def verdict(key: str, value: float | None) -> str:
    if key not in TARGETS or value is None:
        return ""
    limit, unit = TARGETS[key]
    shown = f"{limit / MB:g} MB" if unit == "B" else f"{limit:g} s"
    return f"{'ok  ' if value <= limit else 'MISS'} (target <= {shown})"


def median(values):
    return statistics.median(values) if values else None


def fmt_seconds(values) -> str:
    if not values:
        return "-"
    spread = f"  [{min(values):.2f} .. {max(values):.2f}]" if len(values) > 1 else ""
    return f"{median(values):7.2f} s{spread}"


def report(results: dict) -> str:
    lines = []
    timing = results["timings"]
    labels = {
        "cold": "cold build (make html, empty _build)",
        "serial": "cold build, pages run serially (NB_JOBS=1)",
        "noop": "no-op rebuild",
        "prose": f"rebuild after a prose edit ({Path(results['prose_page']).name})",
        "package": f"rebuild after a package edit ({Path(results['package_file']).name})",
        "prove": "python -m attention_scaling prove",
        "doctests": "  of which doctests (cold build)",
    }
    lines.append(f"{'measurement':<52} {'median':>9}  {'verdict'}")
    lines.append("-" * 100)
    for key, label in labels.items():
        values = timing.get(key)
        if values is None:
            continue
        lines.append(f"{label:<52} {fmt_seconds(values):<26} {verdict(key, median(values))}")
    lines.append("")
    pages = results["execution_seconds"]
    lines.append(f"execution seconds per page (median of the cold builds; {results['execution_workers']} worker(s)):")
    for page, seconds in sorted(pages.items(), key=lambda item: -item[1]):
        lines.append(f"  {page:<40} {seconds:7.2f} s  {verdict('max_page_execution', seconds)}")
    lines.append(f"  {'total':<40} {sum(pages.values()):7.2f} s")
    if results.get("serial_execution_seconds"):
        serial = results["serial_execution_seconds"]
        lines.append("execution seconds per page, one at a time (NB_JOBS=1):")
        for page, seconds in sorted(serial.items(), key=lambda item: -item[1]):
            lines.append(f"  {page:<40} {seconds:7.2f} s  {verdict('max_page_execution', seconds)}")
        lines.append(f"  {'total':<40} {sum(serial.values()):7.2f} s")
    lines.append("")
    weights = results["page_weight"]
    method = next(iter(weights.values()))["method"] if weights else "-"
    lines.append(f"first-visit page weight ({method}; gzip: what a compressing host would send):")
    for page, info in sorted(weights.items(), key=lambda item: -item[1]["bytes"]):
        mark = verdict("max_derivation_weight", info["bytes"]) if page in DERIVATIONS else ""
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
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measurement; the median is reported (default 3)")
    parser.add_argument("--venv", type=Path, default=Path(sys.prefix), help="virtual environment to build with (default: this Python's)")
    parser.add_argument("--output", type=Path, default=REPO / "_build" / "bench" / "bench.json")
    parser.add_argument("--prose-page", default="docs/scaling.md")
    parser.add_argument("--package-file", default="src/attention_scaling/_softmax.py")
    parser.add_argument("--no-serial", action="store_true", help="skip the cold builds with NB_JOBS=1")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy and print where it is")
    args = parser.parse_args(argv)
    venv = args.venv.resolve()
    repeat = max(1, args.repeat)

    workdir = Path(tempfile.mkdtemp(prefix="bench-"))
    site = sitebuild.copy_repository(workdir / "site")
    print(f"==> Benchmarking a copy of {REPO} in {site}, {repeat} run(s) of each", flush=True)
    timings: dict[str, list[float]] = {k: [] for k in ("cold", "noop", "prose", "package", "prove", "doctests")}
    page_runs: list[dict[str, float]] = []
    serial_runs: list[dict[str, float]] = []
    load_before = os.getloadavg()
    started = time.time()
    try:
        if not args.no_serial:
            timings["serial"] = []
            for run in range(repeat):
                seconds, log = cold_build(site, venv, {"NB_JOBS": "1"})
                timings["serial"].append(seconds)
                serial_runs.append(execution_seconds(log))
                print(f"    serial cold build {run + 1}/{repeat}: {seconds:.2f} s", flush=True)
        for run in range(repeat):
            # The cold build is last before the others, so they start from it.
            seconds, log = cold_build(site, venv)
            timings["cold"].append(seconds)
            page_runs.append(execution_seconds(log))
            if (doctests := doctest_seconds(log)) is not None:
                timings["doctests"].append(doctests)
            print(f"    cold build {run + 1}/{repeat}: {seconds:.2f} s", flush=True)
        workers = re.search(r"executing \d+ page\(s\) that the cache lacks, (\d+) at a time", log)
        for run in range(repeat):
            seconds, log = make(site, venv)
            if "Executing notebook" in log or "parallel worker" in log:
                print("    warning: the no-op rebuild executed a page", file=sys.stderr)
            timings["noop"].append(seconds)
            print(f"    no-op rebuild {run + 1}/{repeat}: {seconds:.2f} s", flush=True)
        prose = site / args.prose_page
        for run in range(repeat):
            sentence = f"\n\nThis sentence was added by the benchmark (run {run + 1}).\n"
            seconds = edit_then_restore(prose, lambda text: text + sentence, site, venv)
            timings["prose"].append(seconds)
            print(f"    prose edit rebuild {run + 1}/{repeat}: {seconds:.2f} s", flush=True)
        package = site / args.package_file
        for run in range(repeat):
            comment = f"\n# Edited by the benchmark (run {run + 1}).\n"
            seconds = edit_then_restore(package, lambda text: text + comment, site, venv)
            timings["package"].append(seconds)
            print(f"    package edit rebuild {run + 1}/{repeat}: {seconds:.2f} s", flush=True)
        for run in range(repeat):
            timings["prove"].append(prove_seconds(site, venv))
            print(f"    prove {run + 1}/{repeat}: {timings['prove'][-1]:.2f} s", flush=True)
        print("    page weight ...", flush=True)
        weights = page_weights(site / "_build" / "html")
    except BuildFailed as error:
        print(error, file=sys.stderr)
        return 1
    finally:
        if args.keep:
            print(f"    the copy is kept in {site}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)

    def median_pages(runs):
        pages = sorted({page for run in runs for page in run})
        return {page: median([run[page] for run in runs if page in run]) for page in pages}

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
        "repeat": repeat,
        "prose_page": args.prose_page,
        "package_file": args.package_file,
        "execution_workers": int(workers.group(1)) if workers else 1,
        "timings": {key: values for key, values in timings.items() if values},
        "medians": {key: median(values) for key, values in timings.items() if values},
        "execution_seconds": median_pages(page_runs),
        "serial_execution_seconds": median_pages(serial_runs),
        "page_weight": weights,
        "targets": {key: {"limit": limit, "unit": unit} for key, (limit, unit) in TARGETS.items()},
    }
    pages = results["execution_seconds"]
    derivation_weights = [weights[page]["bytes"] for page in DERIVATIONS if page in weights]
    checks = {
        "cold": results["medians"].get("cold"),
        "noop": results["medians"].get("noop"),
        "prose": results["medians"].get("prose"),
        "prove": results["medians"].get("prove"),
        "max_page_execution": max(pages.values()) if pages else None,
        "max_derivation_weight": max(derivation_weights) if derivation_weights else None,
    }
    results["checks"] = {
        key: {"value": value, "limit": TARGETS[key][0], "met": value is not None and value <= TARGETS[key][0]}
        for key, value in checks.items()
    }
    print()
    print(report(results))
    print()
    missed = [key for key, check in results["checks"].items() if not check["met"]]
    print("targets missed: " + (", ".join(missed) if missed else "none"))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"==> Wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
