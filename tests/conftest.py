"""Fixtures for the tests that build the site or read the built one.

Copies (tests/sitebuild.py does the work):

``site``
    A fresh copy of the repository with its execution cache seeded from this
    checkout's ``_build``: pages that a test leaves alone are not executed
    again. Planting a fault still executes what it must: a page with a new
    cell hashes differently, and an edit under ``src/`` changes the cache's
    fingerprint, so every page runs.
``built``
    The sources of ``cold_built`` with the cache that build filled, built
    again as a host builds it (``hosting_checks.HOSTED``: an address and a
    repository), for the tests that only read its output: every page comes
    from the cache. The log of its build is beside it (``BUILT_LOG``).
``cold_built``
    One seeded copy with a chapter added by ``make page`` (``SCAFFOLD``),
    built once per session as a host builds it: the chapter's support module
    is new package source, which gives the execution cache a new key, so
    every page is executed afresh although the seeded cache held all the
    others (and every doctest runs again, about 45 s: the package changed).
    Its log, a snapshot of its HTML taken right after the build, the cache
    it missed, and a copy of its sources and cache as built (``pristine``).
    tests/test_clean_builds.py goes on editing and rebuilding that copy. One
    build shows that a package edit is never served from the cache, that
    a chapter made by ``make page`` builds, and (against ``built``) that a
    build executing every page makes the same site: the slowest thing the
    tests do, done once.

The repository's own build:

``repo_html``
    This checkout's ``_build/html``; ``make html`` runs first if there is
    none. CI runs ``make html`` before ``make test``, which also fills the
    cache that ``site`` and ``cold_built`` are seeded from.
``repo_pdf``, ``repo_student_pdf``
    This checkout's book, ``_build/pdf/why-sqrt-dk.pdf``, and its student's
    edition without the solutions, ``why-sqrt-dk-student.pdf``; ``make pdf``
    runs first if there is none (CI runs it before ``make test``).

Tests that use the copies are marked ``build``, tests that use
``repo_html`` or ``repo_pdf`` are marked ``site``, and the few in ``_SLOW`` are marked
``slow``; ``make check`` deselects all three, ``make test`` runs everything
(see :func:`pytest_collection_modifyitems`).
"""

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings

import hosting_checks
import sitebuild

# Property tests draw the same examples on every run, so a red CI can be
# reproduced on any machine and a green one is not luck. HYPOTHESIS_PROFILE=explore
# draws new ones (and finds new counterexamples) while you work.
settings.register_profile("deterministic", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))

REPO = sitebuild.REPO
# The site's local Sphinx extensions, which several test modules import.
sys.path.insert(0, str(REPO / "docs" / "_ext"))

# The registries hold what newer pages register in their own support modules only once those are
# imported, as the graph and evidence pages do: every test sees them as the build does.
from attention_scaling.site import import_pages  # noqa: E402

import_pages()

# Fixture -> the marker a test using it gets, so that `make check` (which
# deselects both markers) never starts a Sphinx build, however a test is named.
_MARKERS = {"site": "build", "built": "build", "cold_built": "build", "repo_html": "site", "repo_pdf": "site",
            "repo_student_pdf": "site"}
# Unit tests too slow for the edit loop, by function name, so that one place
# lists everything make check skips; seconds on the 2-core build machine.
# make test still runs them.
_SLOW = {
    # ~40 s: every figure's data computed and exported. Drawing each figure
    # stays in make check (test_every_plot_has_labelled_axes).
    "test_export_writes_every_figure",
    # ~9 s: the variance theorem cross-checked against sympy.stats. The
    # theorem itself stays in make check (test_theorem_holds_and_is_clean).
    "test_dot_product_variance_agrees_with_sympy_stats",
    # 10-16 s: the page's full learning-rate tuning (the fixture site_tunings),
    # the largest single cost of make check; the page's build computes it too.
    "test_tuned_numbers_of_the_page",
    "test_a_wrong_folding_is_caught_by_the_page",
    # ~12 s: every evidence row again, under a planted wrong theorem.
    "test_a_wrong_theorem_is_caught_by_its_rows_and_by_the_page",
    # ~6 s: the long-sequence page's whole seeded sweep.
    "test_long_sequence_entropy_data_is_the_seeded_sweep",
}
# Module fixtures that compute a whole page's data (seconds on the 2-core machine), by
# file and name: every test that uses one is marked slow. The page's build computes the same.
_SLOW_FIXTURES = {
    ("tests/test_evidence.py", "rows"),  # ~12 s: every evidence row
    ("tests/test_evidence.py", "max_rows"),  # the rows of the largest-weight theorem
    ("tests/test_claims.py", "assessments"),  # ~10 s: every claim decided
    ("tests/test_site_training.py", "site_tunings"),  # ~10 s: the page's learning-rate tuning
}
# Docstring examples that compute what a page computes, by their doctest
# names. make html runs every doctest (this file is not loaded there), and
# make test runs them with the tests that compute the same thing (named beside each).
_SLOW_DOCTESTS = {
    # ~14 s: every evidence row (tests/test_evidence.py's fixture measures them all).
    "attention_scaling.site.evidence.evidence",
    # ~8 s: every claim decided (tests/test_claims.py's verdicts).
    "attention_scaling.site.claims.assess_all",
}


# tryfirst: the markers must be there before -m deselects by them.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    for item in items:
        for fixture in set(getattr(item, "fixturenames", ())) & _MARKERS.keys():
            item.add_marker(_MARKERS[fixture])
        # A doctest's name is the dotted name of what it documents, which no test function has.
        slow_fixture = any((item.nodeid.split("::")[0], name) in _SLOW_FIXTURES for name in getattr(item, "fixturenames", ()))
        if getattr(item, "originalname", None) in _SLOW or item.name in _SLOW_DOCTESTS or slow_fixture:
            item.add_marker("slow")
    shared_builds_in_one_file(items)


# Session fixtures that each cost a full build of the site.
_SHARED_BUILDS = {"built", "cold_built"}


def shared_builds_in_one_file(items) -> None:
    """Refuse to run if the tests that read ``built`` or ``cold_built`` are in more than one file.

    ``make test`` hands whole files to its workers (``pytest -n --dist
    loadfile``), and each worker computes a session fixture for itself: spread
    over two files, each shared build could be made twice.

    Raises
    ------
    pytest.UsageError
        Naming the files.
    """
    files = sorted({item.nodeid.split("::")[0] for item in items if _SHARED_BUILDS & set(getattr(item, "fixturenames", ()))})
    if len(files) > 1:
        raise pytest.UsageError(
            f"the tests that read the shared builds ({', '.join(sorted(_SHARED_BUILDS))}) must be in one file, "
            f"so that one worker builds them: found in {', '.join(files)}"
        )


@pytest.fixture
def site(tmp_path):
    """A copy of the repository with the execution cache seeded (see the module docstring)."""
    return sitebuild.copy_repository(tmp_path / "site", seed_cache=True)


# Beside the copy ``built``, outside what the tests compare: the log of its build.
BUILT_LOG = "make-html.log"


@pytest.fixture(scope="session")
def built(cold_built):
    """``cold_built``'s sources rebuilt from the cache that its build filled, as a host builds them, shared by the tests that only read it."""
    site = cold_built.pristine
    build = sitebuild.make(site, env=hosting_checks.HOSTED)
    assert build.returncode == 0, build.tail
    (site.parent / BUILT_LOG).write_text(build.log, encoding="utf-8")
    return site


@dataclass(frozen=True)
class ColdBuild:
    """A copy built with every page executed afresh: the copy, the build's log, the HTML as built, the cache it missed, the environment it was built in, and a copy of its sources and cache as built."""

    site: Path
    log: str
    html: Path
    missed_cache: Path
    env: dict
    pristine: Path


# The chapter that cold_built adds with make page: its support module is new package source.
SCAFFOLD = {"slug": "scaffold-check", "module": "scaffold_check", "title": "A scaffolded chapter"}


@pytest.fixture(scope="session")
def cold_built(tmp_path_factory, repo_html):
    """A seeded copy with a chapter made by make page, built once (see the module docstring)."""
    root = tmp_path_factory.mktemp("cold")
    site = sitebuild.copy_repository(root / "site", seed_cache=True)
    seeded = [path for path in (site / sitebuild.CACHE).glob("*") if path.is_dir()]
    assert seeded, f"this checkout has no execution cache to seed from ({REPO / sitebuild.CACHE})"
    missed_cache = max(seeded, key=lambda path: path.stat().st_mtime)  # the one this checkout used last
    made = sitebuild.make_page(site, SCAFFOLD["slug"], SCAFFOLD["title"])
    assert made.returncode == 0, made.stderr
    env = dict(hosting_checks.HOSTED)
    build = sitebuild.make(site, env=env)  # every doctest runs again (the package changed), the new module's too
    assert build.returncode == 0, build.tail
    # Snapshots: later rebuilds of the copy must not change what is compared, nor what built is built from.
    html = shutil.copytree(site / "_build" / "html", root / "html")
    pristine = sitebuild.copy_repository(root / "pristine" / "site", seed_cache=True, source=site)
    return ColdBuild(site, build.log, html, missed_cache, env, pristine)


@pytest.fixture(scope="session")
def repo_html():
    """This checkout's built site, ``_build/html``; runs ``make html`` once if there is none."""
    html = REPO / "_build" / "html"
    with sitebuild.one_process_at_a_time(sitebuild.CHECKOUT_LOCK):
        if not (html / "index.html").exists():
            build = sitebuild.make(REPO)
            assert build.returncode == 0, build.tail
    return html


def _repo_book(name: str) -> Path:
    """This checkout's book ``_build/pdf/<name>``; runs ``make pdf`` (which prints both editions) once if there is none."""
    pdf = REPO / "_build" / "pdf" / name
    with sitebuild.one_process_at_a_time(sitebuild.CHECKOUT_LOCK):
        if not pdf.exists():
            if not sitebuild.CHROMIUM.exists():
                pytest.skip("no book in _build/pdf, and no Chromium to print one (apt-get install chromium)")
            build = sitebuild.make(REPO, "pdf")
            assert build.returncode == 0, build.tail
    return pdf


@pytest.fixture(scope="session")
def repo_pdf():
    """This checkout's book, the instructor's edition: ``_build/pdf/why-sqrt-dk.pdf``."""
    return _repo_book("why-sqrt-dk.pdf")


@pytest.fixture(scope="session")
def repo_student_pdf():
    """This checkout's book, the student's edition, without the solutions: ``_build/pdf/why-sqrt-dk-student.pdf``."""
    return _repo_book("why-sqrt-dk-student.pdf")
