"""How make test shares its work between pytest-xdist's workers.

``make test`` runs ``pytest -n auto --dist loadfile``: each worker takes
whole files and computes the session fixtures its tests need for itself. So
the tests that read the two shared builds must be in one file
(``shared_builds_in_one_file`` in tests/conftest.py), and the workers build
this checkout's site or book one at a time (``sitebuild.one_process_at_a_time``).
"""

import multiprocessing
import os
import time
from types import SimpleNamespace

import pytest

from conftest import shared_builds_in_one_file
from sitebuild import one_process_at_a_time


def _test(nodeid, *fixtures):
    """A stand-in for a collected test: what ``shared_builds_in_one_file`` reads of one."""
    return SimpleNamespace(nodeid=nodeid, fixturenames=list(fixtures))


def test_shared_builds_read_from_one_file_are_accepted():
    shared_builds_in_one_file([
        _test("tests/test_clean_builds.py::test_clean_build_succeeds_offline_and_complete", "built"),
        _test("tests/test_clean_builds.py::test_noop_rebuild_does_not_start_sphinx", "builds", "cold_built"),
        _test("tests/test_build.py::test_a_cell_writing_to_stderr_and_a_broken_reference_each_fail_the_build_named", "site"),
    ])


def test_shared_builds_read_from_two_files_are_refused_naming_them():
    with pytest.raises(pytest.UsageError, match="must be in one file.*found in tests/test_a.py, tests/test_b.py"):
        shared_builds_in_one_file([_test("tests/test_b.py::test_one", "cold_built"), _test("tests/test_a.py::test_two", "built")])


def test_processes_holding_the_lock_never_overlap(tmp_path):
    log = tmp_path / "log"

    def hold():
        with one_process_at_a_time(tmp_path / "build.lock"):
            with open(log, "a") as out:
                out.write(f"in {os.getpid()}\n")
            time.sleep(0.2)
            with open(log, "a") as out:
                out.write(f"out {os.getpid()}\n")
        os._exit(0)

    processes = [multiprocessing.get_context("fork").Process(target=hold) for _ in range(3)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=30)
    assert [process.exitcode for process in processes] == [0, 0, 0]
    lines = log.read_text().split("\n")[:-1]
    assert len(lines) == 6
    # Each process leaves before the next enters.
    for entered, left in zip(lines[::2], lines[1::2]):
        assert entered.startswith("in ") and left == "out " + entered.removeprefix("in ")
