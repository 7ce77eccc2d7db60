"""Full builds of the site in a temporary copy, each with a planted fault.

Each test gets a copy of the repository with its execution cache seeded from
this checkout (``site`` in tests/conftest.py), plants a fault, and runs
``make html`` there with the virtual environment that runs the tests
(tests/sitebuild.py). ``PYTHONPATH`` points at the copy's ``src`` so that
the doctests and the executed pages import the copy's package. The clean
builds are tested in tests/test_clean_builds.py, and so are faults that end
in a warning (a cell's stderr, a broken reference): they need only their page
read again, which a rebuild of a copy already built does.

Seeding keeps each planted fault honest: a page with a planted cell hashes
differently, so that page is executed (and fails); a planted change under
``src/`` changes the cache's fingerprint, so nothing cached is used. A
wrong doctest or a claim without a check fails in the doctests, which
``make html`` runs before Sphinx starts, so no page executes. Elsewhere only
the pages a fault touches run, instead of all of them.
"""

import re

import pytest

from sitebuild import make, replace_once

pytestmark = pytest.mark.build

def test_a_wrong_doctest_and_a_claim_without_a_check_fail_the_build_naming_both(site):
    # Both fail in the doctests, which report every failure: one build shows both (a build each cost 30-50 s).
    replace_once(site / "src/attention_scaling/_softmax.py", "array([0.2689, 0.7311])", "array([0.2689, 0.7312])")
    replace_once(
        site / "src/attention_scaling/site/claims.py",
        "None, check.ratios_under_shift, \"thm-softmax-shift-invariance\"),",
        "None, None, \"thm-softmax-shift-invariance\"),",
    )
    result = make(site)
    assert result.returncode != 0
    assert "_softmax.py" in result.log and "0.7312" in result.log, result.tail
    assert "claim 'division-ratios' has no check" in result.log, result.tail
    # The doctests run before Sphinx, which never starts; nothing is recorded as
    # done, so the next make html runs them again.
    assert "Running Sphinx" not in result.log, result.tail
    stamp, edited = site / "_build" / "doctest.passed", site / "src/attention_scaling/_softmax.py"
    assert not stamp.exists() or stamp.stat().st_mtime < edited.stat().st_mtime
    assert not (site / "_build" / "html.built").exists()


def test_false_identity_fails_the_build_naming_page_cell_and_theorem(site):
    """A cell that raises fails the build: here a page's check of a false identity.

    The scaling page checks Var(X/c) = Var(X)/c**2; the fault plants
    Var(X)/c. The copy is seeded, so the page with the planted cell is the
    one left to execute, and it goes through the parallel run like any other.
    The parallel run caches no failed page; myst-nb runs it again and
    reports it, with the cell and the error.
    """
    planted = 'check("thm-scaled-variance", Var(X / c), Var(X) / c, rv)'
    replace_once(site / "docs" / "scaling.md", 'check("thm-scaled-variance", Var(X / c), Var(X) / c**2, rv)', planted)
    result = make(site)
    assert result.returncode != 0
    assert re.search(r"docs/scaling\.md: failed in parallel; it runs again in the read, which reports the error", result.log), result.tail
    assert re.search(r"docs/scaling\.md: Executing notebook", result.log), result.tail
    assert planted in result.log, result.tail
    assert "ProofError: thm-scaled-variance" in result.log, result.tail
    assert not (site / "_build" / "html" / "scaling.html").exists()
    # The copy was seeded from this checkout's cache: no other page ran. Were the seeding broken, every
    # build test would execute the whole site, unseen.
    ran = set(re.findall(r"docs/([\w-]+)\.md: (?:executed in parallel|failed in parallel|Executing notebook)", result.log))
    assert ran == {"scaling"}, (f"pages executed besides scaling: {sorted(ran - {'scaling'})}; the copy's cache is "
                                "this checkout's, so run make html first, after any change under src/")
