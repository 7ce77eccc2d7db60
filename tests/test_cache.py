"""The execution cache: never stale, and used whenever it can be.

Pages are executed in parallel into myst-nb's jupyter-cache before Sphinx
reads them (docs/_ext/parallel_execution.py), and the cache is keyed by the
package source (docs/_ext/execution_cache.py). These tests build a temporary copy of the
repository, as tests/test_build.py does, and check from the build logs and
the HTML that

- a cold build finds every page in the cache when it reads it (the parallel
  pre-execution hit myst-nb's own cache keys);
- a rebuild with nothing changed does not start Sphinx (tools/site_inputs.py),
  and one that Sphinx finds nothing to do in executes nothing;
- a rebuild after a prose edit reads that page again but takes its outputs
  from the cache;
- editing a package function that a page uses re-executes the page, so
  the HTML shows the new output instead of the cached one;
- a page that fails in a parallel worker still fails the build, reported by
  myst-nb with the page and the cell.

The builds run with ``NB_JOBS=2``, so the parallel route is tested on any
machine. They start from copies with an empty cache (``cold_built`` and
``cold_site`` in tests/conftest.py): a cold build is what these tests are
about.
"""

import re
from pathlib import Path

import pytest

import sitebuild
from sitebuild import replace_once

pytestmark = pytest.mark.build

# myst-nb logs this when it runs a page itself instead of taking it from the cache.
EXECUTING = "Executing notebook"
PAGE = "worked-examples"


def make(site: Path, *, check: bool = True) -> str:
    """``make html`` in the copy, with two execution workers on any machine; returns the log."""
    build = sitebuild.make(site, env={"NB_JOBS": "2"})
    if check:
        assert build.returncode == 0, build.tail
    elif build.returncode == 0:
        pytest.fail(f"the build passed:\n{build.tail}")
    return build.log


def table_numbers(site: Path) -> list[str]:
    """The fixed-point numbers in the table cells of the worked-examples page."""
    html = (site / "_build" / "html" / f"{PAGE}.html").read_text()
    cells = re.findall(r"<td><p>([^<]*)</p></td>", html)
    return [cell for cell in cells if re.fullmatch(r"-?\d+\.\d+", cell)]


@pytest.fixture(scope="module")
def builds(cold_built):
    """A cold build, a rebuild with no change, one with a file touched, and one after a prose edit: their logs."""
    site = cold_built.site
    logs = {"cold": cold_built.log, "noop": make(site)}
    # A new modification time and the same settings: Sphinx is started, and finds every page current.
    (site / "conf.py").touch()
    logs["sphinx_noop"] = make(site)
    scaling = site / "docs" / "scaling.md"
    scaling.write_text(scaling.read_text() + "\nA sentence added by the cache test.\n")
    logs["prose"] = make(site)
    return site, logs


def executed_pages(log: str) -> set[str]:
    """Pages that myst-nb (not the parallel pre-execution) executed while reading."""
    return set(re.findall(r"docs/([\w-]+)\.md: " + EXECUTING, log))


def test_cold_build_reads_every_page_from_the_cache(builds):
    site, logs = builds
    pre_executed = set(re.findall(r"docs/([\w-]+)\.md: Executed notebook in [\d.]+ seconds \(parallel worker\)", logs["cold"]))
    from_cache = set(re.findall(r"docs/([\w-]+)\.md: Using cached notebook", logs["cold"]))
    assert PAGE in pre_executed, logs["cold"][-5000:]
    assert not executed_pages(logs["cold"]), logs["cold"][-5000:]
    assert from_cache == pre_executed


def test_noop_rebuild_does_not_start_sphinx(builds):
    _, logs = builds
    assert "Nothing the site is built from has changed since the last build" in logs["noop"], logs["noop"][-5000:]
    assert "Running Sphinx" not in logs["noop"], logs["noop"][-5000:]


def test_a_rebuild_with_every_page_current_executes_nothing(builds):
    _, logs = builds
    assert "Running Sphinx" in logs["sphinx_noop"], logs["sphinx_noop"][-5000:]
    assert EXECUTING not in logs["sphinx_noop"], logs["sphinx_noop"][-5000:]
    assert "parallel worker" not in logs["sphinx_noop"], logs["sphinx_noop"][-5000:]
    assert "targets for 0 source files that are out of date" in logs["sphinx_noop"], logs["sphinx_noop"][-5000:]


def test_prose_edit_rereads_the_page_from_the_cache(builds):
    _, logs = builds
    assert EXECUTING not in logs["prose"], logs["prose"][-5000:]
    assert "parallel worker" not in logs["prose"], logs["prose"][-5000:]
    assert re.search(r"docs/scaling\.md: Using cached notebook", logs["prose"]), logs["prose"][-5000:]


def test_editing_a_package_function_re_executes_the_pages_that_use_it(builds):
    site, _ = builds
    before = table_numbers(site)
    assert before and all(len(number.split(".")[1]) == 4 for number in before), before
    # The page's worked_examples() calls steps_table with the default number
    # of digits; its doctest shows one row, which is updated with it (as a
    # contributor would), so that the doctests pass and the page is rebuilt.
    worked = site / "src" / "attention_scaling" / "site" / "worked.py"
    replace_once(
        worked,
        "def steps_table(steps: SoftmaxSteps, digits: int = 4) -> str:",
        "def steps_table(steps: SoftmaxSteps, digits: int = 3) -> str:",
    )
    replace_once(worked, "| weight $p_i$ | 0.4192 | 0.2543 | 0.3265 |", "| weight $p_i$ | 0.419 | 0.254 | 0.326 |")
    log = make(site)
    after = table_numbers(site)
    assert after and all(len(number.split(".")[1]) == 3 for number in after), after
    assert re.search(rf"docs/{PAGE}\.md: Executed notebook in", log), log[-5000:]
    # Same tables, the same numbers to one digit fewer (numbers below 1e-3
    # are now written in scientific notation, so there may be fewer).
    assert len(after) <= len(before)
    fixed_before = [float(number) for number in before]
    for number in after:
        assert any(abs(float(number) - value) <= 6e-4 for value in fixed_before), number


def test_a_page_failing_in_a_parallel_worker_still_fails_the_build(cold_site):
    """The parallel run stores no failed page; myst-nb runs it again and reports it."""
    site = cold_site
    page = site / "docs" / f"{PAGE}.md"
    page.write_text(page.read_text() + '\n```{code-cell} ipython3\nraise RuntimeError("planted in a worker")\n```\n')
    log = make(site, check=False)
    assert re.search(rf"docs/{PAGE}\.md: Failed in a parallel worker \(CellExecutionError\)", log), log[-5000:]
    assert re.search(rf"docs/{PAGE}\.md: {EXECUTING}", log), log[-5000:]
    assert 'raise RuntimeError("planted in a worker")' in log, log[-5000:]
    assert not (site / "_build" / "html" / f"{PAGE}.html").exists()
