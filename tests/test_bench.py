"""benchmarks/bench.py: the logic behind its verdicts, and its browser measure once.

The benchmark is a script, not part of the package, so it is imported here
by path. Its pure functions (verdicts, ratios, CLS, blocking time, the table
of targets) are tested without building anything, as are the examples in
their docstrings (pytest collects the doctests of ``src`` only). The one
test that drives Chromium reads the built site (``repo_html``), so it is
marked ``site`` and ``make check`` leaves it out.
"""

import doctest
import gzip
import importlib.util
import json
import os
import sys
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _load_bench():
    spec = importlib.util.spec_from_file_location("bench", REPO / "benchmarks" / "bench.py")
    module = importlib.util.module_from_spec(spec)
    # Registered first: dataclasses look their module up while the class is made.
    sys.modules["bench"] = module
    spec.loader.exec_module(module)
    return module


bench = _load_bench()


def test_the_examples_in_the_docstrings_hold():
    result = doctest.testmod(bench, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 20
    assert result.failed == 0


@pytest.mark.parametrize(
    ("value", "limit", "expected"),
    [(1.5, 1.5, "ok"), (1.5000001, 1.5, "MISS"), (0.0, 0.0, "ok"), (1e-9, 0.0, "MISS"), (None, 0.0, "-")],
)
def test_a_target_is_met_at_its_limit_and_missed_just_above(value, limit, expected):
    assert bench.verdict(value, limit) == expected


def test_blocking_time_counts_only_what_each_task_runs_beyond_50_ms():
    assert bench.blocking_time([10.0, 50.0]) == 0.0
    assert bench.blocking_time([51.0, 150.0, 49.0]) == pytest.approx(101.0)
    summary = bench.long_task_summary([{"startTime": 0.0, "duration": 60.0}, {"startTime": 100.0, "duration": 70.0}], 0.0)
    assert summary == {"long_tasks": 2, "long_task_ms": 130.0, "blocking_ms": pytest.approx(30.0), "tbt_ms": pytest.approx(30.0),
                       "fcp_ms": 0.0}


def test_total_blocking_time_counts_from_first_contentful_paint_as_lighthouse_does():
    # The first render (a 435 ms task that ends at first paint) blocks nothing that a reader could do;
    # a task that straddles first paint counts from it; one after counts whole.
    tasks = [{"startTime": 5.0, "duration": 435.0}, {"startTime": 600.0, "duration": 150.0}, {"startTime": 1000.0, "duration": 90.0}]
    assert bench.total_blocking_time(tasks, first_paint_ms=440.0) == pytest.approx(100.0 + 40.0)
    assert bench.total_blocking_time(tasks, first_paint_ms=650.0) == pytest.approx(50.0 + 40.0)
    # Before anything painted, every task counts: the whole load's blocking time.
    assert bench.total_blocking_time(tasks, first_paint_ms=0.0) == pytest.approx(bench.blocking_time([435.0, 150.0, 90.0]))
    assert bench.total_blocking_time(tasks, first_paint_ms=5000.0) == 0.0


def test_every_shift_counts_unless_input_is_trusted():
    shifts = [{"value": 0.1, "hadRecentInput": True}, {"value": 0.02, "hadRecentInput": False}, {"value": 0.0}]
    assert bench.cumulative_layout_shift(shifts) == pytest.approx(0.12)
    assert bench.cumulative_layout_shift(shifts, trust_recent_input=True) == pytest.approx(0.02)


def test_the_ratio_is_cold_over_floor_and_missing_when_either_is():
    found = bench.checks({"medians": {"cold": 130.0, "floor": 50.0}})
    assert found["cold_floor_ratio"]["value"] == pytest.approx(2.6)
    assert found["cold_floor_ratio"]["met"] is False
    assert bench.checks({"medians": {"cold": 130.0}})["cold_floor_ratio"]["met"] is None
    assert bench.fmt_value(2.6, "x") == "2.60x"


def test_per_page_targets_take_the_worst_derivation_page_and_ignore_the_others():
    layout = {
        # The whole load's blocking time is reported, but the target is TBT (from first paint).
        "scaling": {"desktop": {"cls": 0.0}, "mobile": {"cls": 0.0, "tbt_ms": 120.0, "blocking_ms": 900.0}},
        "saturation": {"desktop": {"cls": 0.03}, "mobile": {"cls": 0.0, "tbt_ms": 180.0, "blocking_ms": 400.0}},
        # Not a derivation page: its figures must not decide a verdict.
        "api": {"desktop": {"cls": 0.9}, "mobile": {"cls": 0.9, "tbt_ms": 9000.0, "blocking_ms": 9000.0}},
    }
    weights = {"scaling": {"bytes": 550_000}, "api": {"bytes": 5_000_000}}
    found = bench.checks({"layout": layout, "page_weight": weights})
    assert (found["cls_desktop"]["page"], found["cls_desktop"]["met"]) == ("saturation", False)
    assert (found["cls_mobile"]["value"], found["cls_mobile"]["met"]) == (0.0, True)
    assert (found["tbt_mobile"]["page"], found["tbt_mobile"]["value"], found["tbt_mobile"]["met"]) == ("saturation", 180.0, True)
    assert (found["derivation_weight"]["page"], found["derivation_weight"]["met"]) == ("scaling", True)


def test_the_lighthouse_targets_take_the_lowest_score_and_the_longest_blocking_time():
    pages = {
        "scaling": {"score": 95.0, "tbt_ms": 250.0},
        "saturation": {"score": 89.0, "tbt_ms": 20.0},
        # Not a derivation page: its figures must not decide a verdict.
        "api": {"score": 10.0, "tbt_ms": 9000.0},
    }
    found = bench.checks({"lighthouse": {"pages": pages}})
    score, blocking = found["lighthouse_score"], found["lighthouse_tbt"]
    assert (score["page"], score["value"], score["met"]) == ("saturation", 89.0, False)
    assert (blocking["page"], blocking["value"], blocking["met"]) == ("scaling", 250.0, False)
    pages["saturation"]["score"], pages["scaling"]["tbt_ms"] = 90.0, 200.0
    found = bench.checks({"lighthouse": {"pages": pages}})
    assert found["lighthouse_score"]["met"] is True and found["lighthouse_tbt"]["met"] is True
    row = next(row for row in bench.target_table(found) if row.startswith("Lighthouse performance"))
    assert row.split()[-4:] == ["90", ">=", "90", "ok"]
    unmeasured = bench.checks({"lighthouse": {"unavailable": "no npm"}})
    assert unmeasured["lighthouse_score"]["met"] is None and unmeasured["lighthouse_tbt"]["met"] is None


def test_the_table_has_one_row_per_target_with_value_target_and_verdict():
    found = bench.checks({"medians": {"cold": 100.0, "floor": 50.0, "noop": 2.0, "prove": 4.0, "make_check": 80.0}})
    rows = bench.target_table(found)[2:]
    assert len(rows) == len(bench.TARGETS)
    ratio_row, noop_row, prove_row, check_row = rows[:4]
    assert ratio_row.startswith("cold build / render floor")
    assert ratio_row.split()[-4:] == ["2.00x", "<=", "2.50x", "ok"]
    assert noop_row.split()[-6:] == ["2.00", "s", "<=", "1.50", "s", "MISS"]
    assert prove_row.split()[-1] == "ok" and check_row.split()[-1] == "ok"
    # The browser measures were not taken: no value, no verdict.
    assert all(row.split()[-1] == "-" for row in rows[4:])


def test_the_report_prints_the_browser_figures_of_each_page_and_profile():
    figures = {"cls": 0.05, "layout_shifts": 2, "long_tasks": 3, "long_task_ms": 400.0, "blocking_ms": 450.0, "tbt_ms": 250.0,
               "fcp_ms": 1200.0, "load_ms": 900.0, "largest_shifts": [{"value": 0.04, "ms": 700, "sources": ["section#scaling-theorem"]}]}
    mobile = {**figures, "network_idle": False, "loads": [{"tbt_ms": 250.0}, {"tbt_ms": 712.4}]}
    results = {"layout": {"scaling": {"desktop": figures, "mobile": mobile}}, "loads": 2}
    results["checks"] = bench.checks(results)
    text = bench.report(results)
    target_row = next(line for line in text.splitlines() if line.startswith("total blocking time, mobile"))
    assert "(scaling)" in target_row and "250 ms" in target_row and "450 ms" in text
    assert "section#scaling-theorem" in text
    assert "(network not always idle)" in text and "median of 2 load(s)" in text
    assert "250/712; 0.0400 at 700 ms" in text
    assert "not Lighthouse" in text


def test_the_floor_keeps_only_the_execution_cache_the_doctest_stamp_and_the_proof_store(tmp_path, monkeypatch):
    build = tmp_path / "site" / "_build"
    for path in ("html/index.html", "doctrees/index.doctree", "jupyter_execute/a.ipynb", ".jupyter_cache/abc/global.db", "doctest.passed", "bench/bench.json",
                 "store/0123/a.pickle"):
        (build / path).parent.mkdir(parents=True, exist_ok=True)
        (build / path).write_text("x")
    seen = {}

    def fake_make(site, venv, extra_env=None):
        seen["left"] = sorted(path.relative_to(build).as_posix() for path in build.rglob("*") if path.is_file())
        return 12.5, "Sphinx build succeeded"

    monkeypatch.setattr(bench, "make", fake_make)
    assert bench.floor_build(tmp_path / "site", Path("/venv")) == (12.5, "Sphinx build succeeded")
    assert seen["left"] == [".jupyter_cache/abc/global.db", "doctest.passed", "store/0123/a.pickle"]


def test_a_run_measures_the_floor_after_each_cold_build_and_writes_every_check(tmp_path, monkeypatch, capsys):
    """The orchestration of main(), with every build and measure replaced by a fake that logs its call."""
    calls = []

    def fake(name, result):
        def record(*args, **kwargs):
            calls.append(name)
            return result
        return record

    cold_log = "docs/scaling.md: Executed notebook in 3.50 seconds\n12 passed in 2.0s\nexecuting 4 page(s) that the cache lacks, 2 at a time\n"
    monkeypatch.setattr(bench.sitebuild, "copy_repository", lambda target, **kwargs: target)
    monkeypatch.setattr(bench, "cold_build", fake("cold", (100.0, cold_log)))
    monkeypatch.setattr(bench, "floor_build", fake("floor", (40.0, "")))
    monkeypatch.setattr(bench, "make", fake("noop", (1.0, "")))
    monkeypatch.setattr(bench, "edit_then_restore", fake("edit", 5.0))
    stores = []

    def fake_prove(site, venv, store=None):
        calls.append("prove")
        stores.append(store)
        return 3.0 if store is None else 1.5

    monkeypatch.setattr(bench, "prove_seconds", fake_prove)
    quiet = {"cls": 0.0, "layout_shifts": 0, "long_tasks": 0, "long_task_ms": 0.0, "blocking_ms": 0.0, "tbt_ms": 0.0, "load_ms": 800.0}
    monkeypatch.setattr(bench, "measure_pages", fake("pages", {"page_weight": {}, "layout": {"scaling": {"desktop": quiet, "mobile": quiet}}}))

    def fake_make(site, venv, target):
        calls.append(target)
        return {"check": 70.0, "test": 280.0}[target]

    monkeypatch.setattr(bench, "make_seconds", fake_make)
    output = tmp_path / "bench.json"
    assert bench.main(["--repeat", "2", "--no-serial", "--output", str(output)]) == 0
    assert calls == ["cold", "floor", "cold", "floor", "noop", "noop", "edit", "edit", "edit", "edit"] + ["prove"] * 4 + ["pages", "check"]
    # prove's target is timed without a store; then with the one the copy's builds kept.
    assert stores[:2] == [None, None] and [store.relative_to(store.parents[2]) for store in stores[2:]] == [Path("site/_build/store")] * 2
    results = json.loads(output.read_text())
    assert results["timings"]["prove"] == [3.0, 3.0] and results["timings"]["prove_kept"] == [1.5, 1.5]
    assert results["timings"]["floor"] == [40.0, 40.0]
    assert results["execution_workers"] == 2 and results["execution_seconds"] == {"scaling": 3.5}
    checks = results["checks"]
    assert checks["cold_floor_ratio"]["value"] == pytest.approx(2.5) and checks["cold_floor_ratio"]["met"] is True
    assert checks["make_check"]["value"] == 70.0 and checks["noop"]["met"] is True
    assert checks["derivation_weight"]["met"] is None  # no weight measured: unmeasured, not met
    printed = capsys.readouterr().out
    unmeasured = printed.split("not measured: ")[1].split("\n")[0].split(", ")
    assert "2.50x" in printed and {"derivation_weight", "make_test"} <= set(unmeasured)
    assert checks["make_test"]["met"] is None  # make test is timed only with --make-test
    # --make-test times make test once, after make check, against its 300 s target.
    calls.clear()
    assert bench.main(["--repeat", "1", "--no-serial", "--make-test", "--output", str(output)]) == 0
    assert calls[-2:] == ["check", "test"] and calls.count("test") == 1
    made = json.loads(output.read_text())["checks"]["make_test"]
    assert (made["value"], made["limit"], made["met"]) == (280.0, 300.0, True)


def test_no_loads_is_refused_before_anything_is_built(monkeypatch, capsys):
    monkeypatch.setattr(bench, "build_measures", lambda *args: pytest.fail("built before checking --loads"))
    with pytest.raises(SystemExit) as stopped:
        bench.main(["--loads", "0"])
    assert stopped.value.code == 2 and "--loads must be at least 1; got 0" in capsys.readouterr().err
    with pytest.raises(ValueError, match="no load to combine"):
        bench.median_of_loads([])


def test_the_browser_measure_reads_layout_shifts_and_long_tasks(repo_html):
    if not (bench.CHROMIUM.exists() and importlib.util.find_spec("playwright")):
        pytest.skip("needs Playwright (the test extra) and chromium on the PATH (Debian: apt-get install chromium)")
    page = "scaling"
    found = bench.layout_in_browser(repo_html, [page], settle_ms=500, loads=2)
    assert set(found[page]) == set(bench.PROFILES)
    for profile, figures in found[page].items():
        assert len(figures["loads"]) == 2
        for load in figures["loads"]:
            assert load["cls"] >= 0 and load["cls"] >= load["cls_without_flagged_input"]
            assert load["long_tasks"] == 0 or load["long_task_ms"] >= 50 * load["long_tasks"]
            assert load["blocking_ms"] == pytest.approx(load["long_task_ms"] - 50 * load["long_tasks"])
            assert 0 < load["fcp_ms"] and 0 <= load["tbt_ms"] <= load["blocking_ms"]
            assert load["load_ms"] > 0
        # The median of two loads is their mean.
        assert figures["blocking_ms"] == pytest.approx(sum(load["blocking_ms"] for load in figures["loads"]) / 2)
        assert figures["viewport"] == bench.PROFILES[profile][0]["viewport"]
    assert found[page]["mobile"]["cpu_slowdown"] == 4


def test_the_compressing_server_sends_text_gzipped_only_to_a_client_that_accepts_it(tmp_path):
    page = "<!doctype html><p>" + "attention " * 500 + "</p>"
    (tmp_path / "page.html").write_text(page)
    (tmp_path / "figure.png").write_bytes(b"\x89PNG\r\n" + bytes(2000))

    def get(root, name, accept=None):
        request = urllib.request.Request(root + name, headers={"Accept-Encoding": accept} if accept else {})
        with urllib.request.urlopen(request) as response:
            return response.headers.get("Content-Encoding"), response.read()

    httpd, root = bench.serve(tmp_path, compress=True)
    try:
        encoding, body = get(root, "page.html", "gzip, deflate")
        assert encoding == "gzip" and gzip.decompress(body).decode() == page and len(body) < len(page) / 10
        assert get(root, "page.html") == (None, page.encode())
        # An image goes as it is, as a host sends it.
        assert get(root, "figure.png", "gzip") == (None, (tmp_path / "figure.png").read_bytes())
    finally:
        httpd.shutdown()
        httpd.server_close()
    # The weights are measured uncompressed.
    httpd, root = bench.serve(tmp_path)
    try:
        assert get(root, "page.html", "gzip") == (None, page.encode())
    finally:
        httpd.shutdown()
        httpd.server_close()


def _fake_npm(tmp_path, monkeypatch, exit_status=0):
    """An npm on PATH that logs its arguments and installs an empty lighthouse command (and a node that does nothing)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "npm-calls"
    (bin_dir / "npm").write_text(
        f'#!/bin/sh\necho "$@" >> {calls}\nmkdir -p node_modules/.bin && touch node_modules/.bin/lighthouse\nexit {exit_status}\n')
    (bin_dir / "node").write_text("#!/bin/sh\n")
    for tool in ("npm", "node"):
        (bin_dir / tool).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    spec = tmp_path / "spec"
    spec.mkdir()
    (spec / "package.json").write_text("{}")
    (spec / "package-lock.json").write_text('{"lockfileVersion": 3, "v": 1}')
    return spec, calls


def test_lighthouse_is_installed_from_the_lock_once_and_again_when_the_lock_changes(tmp_path, monkeypatch):
    spec, calls = _fake_npm(tmp_path, monkeypatch)
    home = tmp_path / "home"
    assert bench.install_lighthouse(home, spec) == home / "node_modules" / ".bin" / "lighthouse"
    assert bench.install_lighthouse(home, spec).exists()
    assert calls.read_text().splitlines() == ["ci --ignore-scripts --no-audit --no-fund"]
    (spec / "package-lock.json").write_text('{"lockfileVersion": 3, "v": 2}')
    bench.install_lighthouse(home, spec)
    assert len(calls.read_text().splitlines()) == 2
    assert (home / "package-lock.json").read_text() == (spec / "package-lock.json").read_text()


def test_a_failed_install_is_reported_and_redone_next_time(tmp_path, monkeypatch):
    spec, calls = _fake_npm(tmp_path, monkeypatch, exit_status=1)
    home = tmp_path / "home"
    for _ in range(2):
        with pytest.raises(bench.LighthouseUnavailable, match="npm ci in .* failed"):
            bench.install_lighthouse(home, spec)
    assert len(calls.read_text().splitlines()) == 2


def test_without_node_lighthouse_is_reported_as_not_measured(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench.shutil, "which", lambda name: None)
    with pytest.raises(bench.LighthouseUnavailable, match="Node.js and npm are not on PATH"):
        bench.install_lighthouse(tmp_path / "home")
    found = bench.lighthouse_pages(tmp_path, ["scaling"], runs=1)
    assert found == {"unavailable": "Node.js and npm are not on PATH (Debian: apt-get install nodejs npm)"}
    assert "Lighthouse not measured: Node.js" in capsys.readouterr().err
    results = {"lighthouse": found}
    results["checks"] = bench.checks(results)
    assert "Lighthouse: not measured (Node.js and npm are not on PATH" in bench.report(results)
    assert results["checks"]["lighthouse_score"]["met"] is None


def test_a_lighthouse_run_that_hangs_or_fails_is_reported_not_raised(tmp_path):
    hangs, fails = tmp_path / "hangs", tmp_path / "fails"
    hangs.write_text("#!/bin/sh\nexec sleep 60\n")
    fails.write_text("#!/bin/sh\necho 'Chrome could not start' >&2\nexit 1\n")
    for cli in (hangs, fails):
        cli.chmod(0o755)
    with pytest.raises(bench.LighthouseUnavailable, match="did not finish within 1 s"):
        bench._lighthouse_once(hangs, "http://127.0.0.1:9/page.html", timeout=1)
    with pytest.raises(bench.LighthouseUnavailable, match="failed: Chrome could not start"):
        bench._lighthouse_once(fails, "http://127.0.0.1:9/page.html")


def test_a_negative_number_of_lighthouse_runs_is_refused_before_anything_is_built(monkeypatch, capsys):
    monkeypatch.setattr(bench, "build_measures", lambda *args: pytest.fail("built before checking --lighthouse-runs"))
    with pytest.raises(SystemExit) as stopped:
        bench.main(["--lighthouse-runs", "-1"])
    assert stopped.value.code == 2 and "--lighthouse-runs must be 0 (no Lighthouse) or more; got -1" in capsys.readouterr().err


def test_the_bench_names_the_proof_store_as_the_package_does():
    from attention_scaling.store import ENVIRONMENT

    assert bench.STORE_VARIABLE == ENVIRONMENT


def test_any_error_of_the_html_checker_misses_its_target():
    assert bench.checks({"html_errors": 0})["html_errors"]["met"] is True
    assert bench.checks({"html_errors": 1})["html_errors"]["met"] is False
    assert bench.checks({})["html_errors"]["met"] is None  # no Java: unmeasured, not met
