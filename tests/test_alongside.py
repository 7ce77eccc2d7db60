"""tools/alongside.py: the doctests run beside the build, and a failing one stops it at once."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))

import alongside  # noqa: E402 (found through the line above)


def test_a_failing_check_stops_the_build_and_is_reported(tmp_path, capsys):
    marker = tmp_path / "finished"
    start = time.perf_counter()
    # The build would run for a minute and then leave a file; the check fails after a moment.
    status = alongside.run_alongside(
        "sleep 0.5; echo 'src/m.py::m.f FAILED'; exit 3",
        ["sh", "-c", f"sleep 60; touch {marker}"],
        tmp_path / "check.log",
    )
    elapsed = time.perf_counter() - start
    out = capsys.readouterr().out
    assert status == 1 and elapsed < 20, (status, elapsed)
    assert "stopping the build" in out and "src/m.py::m.f FAILED" in out and "exit status 3" in out
    time.sleep(0.5)
    assert not marker.exists()


def test_the_builds_own_children_are_stopped_too(tmp_path):
    # A kernel is a child of sphinx-build: stopping the build must stop it as well.
    # The child would leave a file 2 s after the start; the check fails at 0.3 s.
    marker = tmp_path / "child-finished"
    start = time.perf_counter()
    alongside.run_alongside("sleep 0.3; exit 1", ["sh", "-c", f"(sleep 2; touch {marker}) & wait"], tmp_path / "check.log")
    time.sleep(max(0.0, start + 2.6 - time.perf_counter()))
    assert not marker.exists()


def test_a_passing_check_waits_for_the_build_and_shows_its_output(tmp_path, capsys):
    status = alongside.run_alongside("echo '338 passed in 1.00s'", ["sh", "-c", "sleep 0.5; echo built"], tmp_path / "check.log")
    out = capsys.readouterr().out
    assert status == 0 and "338 passed in 1.00s" in out


def test_the_build_waits_for_a_slower_check(tmp_path, capsys):
    # The build is done first; its status counts only once the check has passed.
    status = alongside.run_alongside("sleep 1; echo done checking", ["true"], tmp_path / "check.log")
    assert status == 0 and "done checking" in capsys.readouterr().out


def test_a_failing_build_keeps_its_status(tmp_path):
    assert alongside.run_alongside("true", ["sh", "-c", "exit 4"], tmp_path / "check.log") == 4


def test_a_check_failing_after_the_build_still_fails(tmp_path, capsys):
    status = alongside.run_alongside("sleep 1; echo late failure; exit 1", ["true"], tmp_path / "check.log")
    assert status == 1 and "late failure" in capsys.readouterr().out


def test_the_command_line_needs_a_build(tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        alongside.main(["--check", "true", "--check-log", str(tmp_path / "check.log")])
    assert stopped.value.code == 2 and "no build command" in capsys.readouterr().err


def test_with_start_after_the_check_waits_for_the_builds_signal(tmp_path):
    # The check fails if it starts before the build has created the file; a stale one is removed first.
    signal, built = tmp_path / "pages.executed", tmp_path / "built"
    signal.touch()
    build = ["sh", "-c", f'sleep 1; touch {built}; touch "${alongside.SIGNAL}"; sleep 1']
    status = alongside.run_alongside(f"test -f {built}", build, tmp_path / "check.log", start_after=signal)
    assert status == 0


def test_a_build_that_never_signals_is_checked_when_it_ends(tmp_path, capsys):
    status = alongside.run_alongside("echo checked", ["sh", "-c", "sleep 0.3"], tmp_path / "check.log",
                                     start_after=tmp_path / "never")
    assert status == 0 and "checked" in capsys.readouterr().out


def test_a_build_that_fails_before_its_signal_is_not_checked(tmp_path):
    marker = tmp_path / "checked"
    status = alongside.run_alongside(f"touch {marker}", ["sh", "-c", "exit 4"], tmp_path / "check.log",
                                     start_after=tmp_path / "never")
    assert status == 4 and not marker.exists()


def test_a_check_that_fails_after_the_signal_stops_the_build(tmp_path, capsys):
    marker = tmp_path / "finished"
    build = ["sh", "-c", f'touch "${alongside.SIGNAL}"; sleep 60; touch {marker}']
    start = time.perf_counter()
    status = alongside.run_alongside("exit 3", build, tmp_path / "check.log", start_after=tmp_path / "signal")
    assert status == 1 and time.perf_counter() - start < 20 and "stopping the build" in capsys.readouterr().out
