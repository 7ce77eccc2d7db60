"""Full builds of the site in a temporary copy, clean and with planted faults.

Each test gets a copy of the repository from tests/conftest.py (``site``:
the execution cache seeded from this checkout; ``built``: a seeded copy
built once; ``cold_built``: one built once from an empty cache), changes it
if it plants a fault, and runs ``make html`` there with the virtual
environment that runs the tests (tests/sitebuild.py). ``PYTHONPATH`` points
at the copy's ``src`` so that the doctests and the executed pages import
the copy's package.

Seeding keeps each planted fault honest: a page with a planted cell hashes
differently, so that page is executed (and fails); a planted change under
``src/`` changes the cache's fingerprint, so nothing cached is used; a
wrong doctest or a claim without a check fails in the doctests, which run
alongside Sphinx once the pages have executed and stop it. Only the pages a fault touches run, instead of
all of them.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from sitebuild import make, replace_once

pytestmark = pytest.mark.build


def test_clean_build_succeeds_offline_and_complete(built):
    html = built / "_build" / "html"
    index = (html / "index.html").read_text()
    # Glued numbers were filled in (a missing key would have failed the build,
    # but check that a formatted number is really on the page).
    assert re.search(r"standard deviation of\s*(<[^>]+>\s*)*\d+\.\d", index)
    # Every script is served from the site itself, never from a CDN.
    scripts = re.findall(r'<script[^>]*src="([^"]+)"', index)
    assert scripts and not [s for s in scripts if s.startswith(("http:", "https:", "//"))], scripts
    # Light pages: math typeset in the build (its fonts served from the site), no math
    # or icon script, and the search index only where the search runs.
    derivation = (html / "dot-product-variance.html").read_text()
    assert "<math" in derivation and "<mjx-" not in derivation and (html / "_static" / "static-math.woff2").is_file()
    loaded = " ".join(re.findall(r'<script[^>]*src="([^"]+)"', derivation))
    assert not re.search(r"mathjax|fontawesome|searchindex|searchtools", loaded, flags=re.I), loaded
    assert "scripts/bootstrap.js" in loaded and "scripts/pydata-sphinx-theme.js" in loaded
    assert "searchindex.js" in " ".join(re.findall(r'<script[^>]*src="([^"]+)"', (html / "search.html").read_text()))
    # No page shows a cell's stderr (nb_output_stderr turns one into a warning).
    assert not [p.name for p in html.glob("*.html") if "output stderr" in p.read_text()]
    # The API reference rendered the docstrings, Examples included.
    api = (html / "api.html").read_text()
    assert "attention_scaling.softmax_jacobian" in api and "Examples" in api
    # The exercises page links to each exercise in its chapter, where the solutions start collapsed.
    exercises = (html / "exercises.html").read_text()
    assert 'href="dot-product-variance.html#ex-std-512"' in exercises and 'href="saturation.html#ex-saturation-point"' in exercises
    solutions = {page.name: page.read_text().count('class="solution dropdown') for page in html.glob("*.html")}
    assert sum(solutions.values()) >= 20 and len([n for n in solutions.values() if n]) >= 8, solutions


def test_wrong_doctest_fails_the_build_and_names_it(site):
    replace_once(site / "src/attention_scaling/_softmax.py", "array([0.2689, 0.7311])", "array([0.2689, 0.7312])")
    result = make(site)
    assert result.returncode != 0
    assert "_softmax.py" in result.log and "0.7312" in result.log, result.tail
    # The doctests start once the pages have executed and stop Sphinx as soon
    # as one fails (it still reads and writes the pages for longer than the
    # doctests take to fail), and the build is not recorded as done: the next
    # make html builds again.
    assert "The doctests failed: stopping the build" in result.log, result.tail
    assert "build succeeded" not in result.log, result.tail
    assert not (site / "_build" / "html.inputs").exists()


def test_failing_cell_fails_the_build_and_names_page_and_cell(site):
    index = site / "docs" / "index.md"
    index.write_text(index.read_text() + '\n```{code-cell} ipython3\nraise RuntimeError("planted fault")\n```\n')
    result = make(site)
    assert result.returncode != 0
    # The page was executed, not served from the seeded cache: its cells changed.
    assert re.search(r"docs/index\.md: Executing notebook", result.log), result.tail
    assert 'raise RuntimeError("planted fault")' in result.log, result.tail


def test_a_cell_writing_to_stderr_fails_the_build_and_names_the_page(site):
    # A stray log (a missing font, a RuntimeWarning) would otherwise be shown
    # to the reader under the cell.
    index = site / "docs" / "index.md"
    index.write_text(index.read_text() + '\n```{code-cell} ipython3\nimport sys\nprint("planted log", file=sys.stderr)\n```\n')
    result = make(site)
    assert result.returncode != 0
    # The warning names the page, the line and the cell.
    assert re.search(r"docs/index\.md:\d+: WARNING: stderr was found in the cell outputs of cell \d+", result.log), result.tail


def test_broken_reference_fails_the_build(site):
    index = site / "docs" / "index.md"
    index.write_text(index.read_text() + "\nSee {ref}`no-such-label`.\n")
    result = make(site)
    assert result.returncode != 0
    assert re.search(r"index\.md:\d+: WARNING: undefined label: 'no-such-label'", result.log), result.tail
    # No other warning from Sphinx: the broken reference alone failed the build.
    assert len(re.findall(r"(?m)^(?:\S+: )?WARNING: ", result.log)) == 1, result.tail


def test_false_identity_on_a_page_fails_the_build_naming_the_theorem(site):
    # The scaling page checks Var(X/c) = Var(X)/c**2; plant Var(X)/c instead.
    replace_once(
        site / "docs" / "scaling.md",
        'check("thm-scaled-variance", Var(X / c), Var(X) / c**2, rv)',
        'check("thm-scaled-variance", Var(X / c), Var(X) / c, rv)',
    )
    result = make(site)
    assert result.returncode != 0
    assert re.search(r"docs/scaling\.md: Executing notebook", result.log), result.tail
    assert "ProofError: thm-scaled-variance" in result.log, result.tail


def html_tree(html: Path) -> dict[str, bytes]:
    return {path.relative_to(html).as_posix(): path.read_bytes() for path in sorted(html.rglob("*")) if path.is_file()}


def test_two_clean_builds_are_byte_identical(built, cold_built):
    # One build took the executed pages from the seeded cache, the other
    # executed every page itself (tests/test_cache.py reads its log): seeded
    # figures and numbers must not differ.
    first, second = html_tree(built / "_build" / "html"), html_tree(cold_built.html)
    assert first.keys() == second.keys()
    differing = [name for name in first if first[name] != second[name]]
    assert not differing, f"files differ between two clean builds: {differing}"
    assert any(name.startswith("_images/") and name.endswith(".png") for name in first)


def test_a_claim_whose_check_is_removed_fails_the_build(site):
    replace_once(
        site / "src/attention_scaling/site/claims.py",
        "None, check.ratios_under_shift, \"thm-softmax-shift-invariance\"),",
        "None, None, \"thm-softmax-shift-invariance\"),",
    )
    result = make(site)
    assert result.returncode != 0
    assert "claim 'division-ratios' has no check" in result.log, result.tail


def test_a_theorem_can_be_linked_from_another_project_through_intersphinx(built, tmp_path):
    html = built / "_build" / "html"
    course = tmp_path / "course"
    course.mkdir()
    (course / "conf.py").write_text(
        "extensions = ['sphinx.ext.intersphinx']\n"
        f"intersphinx_mapping = {{'whysqrtdk': ('{html.as_uri()}', '{html / 'objects.inv'}')}}\n"
    )
    (course / "index.rst").write_text(
        "Course notes\n============\n\n"
        "See :ref:`the variance theorem <whysqrtdk:thm-dot-product-variance>`, "
        ":ref:`equation <whysqrtdk:eq-scaled-variance>`, :ref:`whysqrtdk:fig-three-regimes` "
        "and :ref:`whysqrtdk:ex-std-512`.\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-n", "-q", "-b", "html", str(course), str(tmp_path / "out")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "out" / "index.html").read_text()
    for anchor in (
        "dot-product-variance.html#thm-dot-product-variance",
        "scaling.html#equation-eq-scaled-variance",
        "regimes.html#fig-three-regimes",
        "dot-product-variance.html#ex-std-512",
    ):
        assert anchor in page, anchor
