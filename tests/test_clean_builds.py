"""Clean builds of the site, the execution cache that rebuilds them, and the site as a host builds it.

Two copies of the repository are built once per session (tests/conftest.py),
both as a host builds them (``hosting_checks.HOSTED``: an address and a
repository). ``cold_built`` is seeded with this checkout's execution cache,
and a chapter is added with ``make page``: its support module is new package
source, so the cache it was given is the wrong one and every page is
executed afresh. ``built`` is the same sources built again from the cache
that build filled. Every test that reads either is in this file, so that
``make test`` (``--dist loadfile``) builds each in one worker only. The tests
check that a clean build is complete and offline, that the two are byte for
byte the same, that a chapter made by ``make page`` builds and passes its
tests as made, that another project can link to the theorems, that a hosted
build carries its address and launch links, and, from the build logs and
the HTML, that the execution cache is never stale and used whenever it can be.

Pages are executed in parallel into myst-nb's jupyter-cache before Sphinx
reads them (docs/_ext/parallel_execution.py), and the cache is keyed by the
package source (docs/_ext/execution_cache.py). These tests check that

- a seeded build reads every page from the cache and executes none (else
  every test session would execute the site once more, unseen);
- after an edit of the package (a new module), every page is executed again,
  although the seeded cache held all the others: the cache is keyed by the package source;
- a build that executed the pages then finds every page in the cache when it
  reads it (the parallel pre-execution hit myst-nb's own cache keys);
- a rebuild with nothing changed does not start Sphinx (make finds the site up to date),
  and one that Sphinx finds nothing to do in executes nothing;
- a rebuild after a prose edit reads that page again but takes its outputs
  from the cache;
- a last rebuild, with a cell that writes to stderr and a reference to no
  label planted in one page, fails and names both (each is a warning, and
  every warning is reported), and leaves no Sphinx environment, so that the
  next build reads every page again and warns again: a planted fault that
  needs only its own page read again, so it rides on this copy instead of
  building a site of its own.

The copy that executed every page and the copy that read them all from
the cache must build the same site. tests/test_build.py plants a page
that fails in the parallel run.
"""

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from jupyter_cache import get_cache
from myst_nb.core.read import is_myst_markdown_notebook
from sphinx.util.images import get_image_size

import attention_scaling

import conftest
import hosting_checks
import sitebuild

# docs/_ext/hosting.py (tests/conftest.py puts docs/_ext on sys.path).
import hosting

pytestmark = pytest.mark.build

# myst-nb logs this when it runs a page itself instead of taking it from the cache.
EXECUTING = "Executing notebook"
PAGE = "worked-examples"


def make(cold_built) -> str:
    """``make html`` again in the copy ``cold_built``, in the environment it was built in; returns the log of the build, which must pass."""
    build = sitebuild.make(cold_built.site, env=cold_built.env)
    assert build.returncode == 0, build.tail
    return build.log


@pytest.fixture(scope="module")
def builds(cold_built):
    """The build that executed every page, a rebuild with no change, one with a file touched, one after an extension edit and one after a prose edit: their logs."""
    site = cold_built.site
    logs = {"cold": cold_built.log, "noop": make(cold_built)}
    # A new modification time and the same settings: Sphinx is started, and finds every page current.
    (site / "conf.py").touch()
    logs["sphinx_noop"] = make(cold_built)
    # An extension's code changes and no page does: Sphinx alone would find every page current.
    extension = site / "docs" / "_ext" / "step_tables.py"
    extension.write_text(extension.read_text() + "\n# A comment added by the cache test.\n")
    logs["extension"] = make(cold_built)
    scaling = site / "docs" / "scaling.md"
    scaling.write_text(scaling.read_text() + "\nA sentence added by the cache test.\n")
    logs["prose"] = make(cold_built)
    return site, logs


@pytest.fixture(scope="module")
def faulty_rebuild(cold_built, builds):
    """The copy rebuilt once more, after the rebuilds above, with two faults planted in ``index.md``: the result."""
    # Two faults in one build (each is a warning, and --keep-going reports every warning):
    # a stray log (a missing font, a RuntimeWarning) would otherwise be shown to the reader
    # under the cell, and a reference to no label would be a dead link.
    index = cold_built.site / "docs" / "index.md"
    index.write_text(
        index.read_text()
        + '\n```{code-cell} ipython3\nimport sys\nprint("planted log", file=sys.stderr)\n```\n'
        + "\nSee {ref}`no-such-label`.\n"
    )
    return sitebuild.make(cold_built.site, env=cold_built.env)


def executed_pages(log: str) -> set[str]:
    """Pages that myst-nb (not the parallel pre-execution) executed while reading."""
    return set(re.findall(r"docs/([\w-]+)\.md: " + EXECUTING, log))


def pre_executed_pages(log: str) -> set[str]:
    """Pages that the parallel pre-execution executed before Sphinx read them."""
    return set(re.findall(r"docs/([\w-]+)\.md: executed in parallel, before the read", log))


def notebook_pages(site: Path) -> set[str]:
    """The pages that are notebooks, as myst-nb decides from their front matter: the pages a build executes."""
    return {page.stem for page in (site / "docs").glob("*.md") if is_myst_markdown_notebook(page.read_text())}


def test_a_package_edit_executes_every_page_again_though_the_cache_held_the_others(cold_built):
    pages = notebook_pages(cold_built.site)
    assert PAGE in pages and len(pages) > 10, pages
    # The seeded cache held every page but the new chapter, executed from the package before the edit ...
    held = {Path(record.uri).stem for record in get_cache(cold_built.missed_cache).list_cache_records()}
    lacked = pages - held
    assert lacked == {conftest.SCAFFOLD["slug"]}, f"the seeded cache lacked {sorted(lacked)}: nothing would show it was missed"
    # ... and none of it was used: the edit gave the cache a new key.
    assert pre_executed_pages(cold_built.log) == pages, cold_built.log[-5000:]


def pages_run(log: str) -> set[str]:
    """Pages that a build executed, by either route."""
    return executed_pages(log) | pre_executed_pages(log)


def test_the_seeded_build_reads_every_page_from_the_cache_and_executes_none(built, cold_built):
    # Were the seeding broken (copy_repository's, which site and cold_built use too), every test
    # session would execute the whole site once more, unseen.
    log = (built.parent / conftest.BUILT_LOG).read_text(encoding="utf-8")
    from_cache = set(re.findall(r"docs/([\w-]+)\.md: Using cached notebook", log))
    assert from_cache == notebook_pages(built), log[-5000:]
    assert pages_run(log) == set(), log[-5000:]
    # The same check on a build that executed every page (the package edit of cold_built) sees them all.
    assert pages_run(cold_built.log) == notebook_pages(cold_built.site)


def test_a_build_that_executed_the_pages_reads_every_page_from_the_cache(builds):
    site, logs = builds
    pre_executed = pre_executed_pages(logs["cold"])
    from_cache = set(re.findall(r"docs/([\w-]+)\.md: Using cached notebook", logs["cold"]))
    assert PAGE in pre_executed, logs["cold"][-5000:]
    assert not executed_pages(logs["cold"]), logs["cold"][-5000:]
    assert from_cache == pre_executed


def test_noop_rebuild_does_not_start_sphinx(builds):
    _, logs = builds
    assert "is up to date with what it is built from" in logs["noop"], logs["noop"][-5000:]
    assert "Running Sphinx" not in logs["noop"], logs["noop"][-5000:]


def test_a_rebuild_with_every_page_current_executes_nothing(builds):
    _, logs = builds
    assert "Running Sphinx" in logs["sphinx_noop"], logs["sphinx_noop"][-5000:]
    assert EXECUTING not in logs["sphinx_noop"], logs["sphinx_noop"][-5000:]
    assert "in parallel" not in logs["sphinx_noop"], logs["sphinx_noop"][-5000:]
    assert "targets for 0 source files that are out of date" in logs["sphinx_noop"], logs["sphinx_noop"][-5000:]


def test_an_extension_edit_rereads_every_page_from_the_cache(builds):
    site, logs = builds
    reread = set(re.findall(r"docs/([\w-]+)\.md: Using cached notebook", logs["extension"]))
    assert reread == notebook_pages(site), logs["extension"][-5000:]
    assert EXECUTING not in logs["extension"] and "in parallel" not in logs["extension"], logs["extension"][-5000:]


def test_prose_edit_rereads_the_page_from_the_cache(builds):
    _, logs = builds
    assert EXECUTING not in logs["prose"], logs["prose"][-5000:]
    assert "in parallel" not in logs["prose"], logs["prose"][-5000:]
    assert re.search(r"docs/scaling\.md: Using cached notebook", logs["prose"]), logs["prose"][-5000:]


def test_a_cell_writing_to_stderr_and_a_broken_reference_each_fail_the_build_named(faulty_rebuild, cold_built):
    result = faulty_rebuild
    assert result.returncode != 0
    # Each warning names the page and the line, the first the cell too.
    stderr = r"docs/index\.md:\d+: WARNING: stderr was found in the cell outputs of cell \d+"
    reference = r"index\.md:\d+: WARNING: undefined label: 'no-such-label'"
    assert re.search(stderr, result.log), result.tail
    assert re.search(reference, result.log), result.tail
    # No other warning from Sphinx: the two faults alone failed the build.
    assert len(re.findall(r"(?m)^(?:\S+: )?WARNING: ", result.log)) == 2, result.tail
    # Sphinx wrote index.html all the same; had it kept its environment, the next make html would
    # find that page current, warn of nothing and pass. Without it, the next build reads every page.
    assert not (cold_built.site / "_build" / "doctrees" / "environment.pickle").exists()


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
    # The graph page's index of results replaces sphinx-proof's index of bare labels.
    assert not (html / "prf-prf.html").exists(), "html_domain_indices in conf.py should leave prf-prf.html out"


def html_tree(html: Path) -> dict[str, bytes]:
    return {path.relative_to(html).as_posix(): path.read_bytes() for path in sorted(html.rglob("*")) if path.is_file()}


# Pages whose outputs list what every page registers: the new chapter adds to them.
REGISTRY_PAGES = {"graph", "evidence"}


def cell_outputs(cache_dir: Path) -> dict[str, list]:
    """Each page's code-cell outputs in one execution cache, by page name."""
    cache = get_cache(cache_dir)
    return {Path(record.uri).stem: [cell.get("outputs") for cell in cache.get_cache_bundle(record.pk).nb.cells
                                    if cell.cell_type == "code"]
            for record in cache.list_cache_records()}


def test_every_page_executed_afresh_gives_the_outputs_the_checkout_cached(cold_built):
    # Two independent executions of every page: the checkout's make html (the cache the copy was seeded
    # with, and missed) and cold_built's. Seeded figures and numbers must not differ; only the pages
    # that list the registries, and the new chapter, may.
    caches = cold_built.pristine / sitebuild.CACHE  # as right after the cold build
    fresh_dir = max((path for path in caches.glob("*") if path.is_dir() and path.name != cold_built.missed_cache.name),
                    key=lambda path: path.stat().st_mtime)
    checkout, fresh = cell_outputs(caches / cold_built.missed_cache.name), cell_outputs(fresh_dir)
    compared = (checkout.keys() & fresh.keys()) - REGISTRY_PAGES
    assert compared == checkout.keys() - REGISTRY_PAGES and len(compared) > 10, sorted(checkout.keys() ^ fresh.keys())
    differing = sorted(page for page in compared if checkout[page] != fresh[page])
    assert not differing, f"pages whose outputs differ between two executions: {differing}"


def test_two_clean_builds_are_byte_identical(built, cold_built):
    # One build executed every page itself (the cache tests above read its log), the other took
    # them all from the cache the first filled: what Sphinx makes of the same outputs must not differ
    # (the test above compares two executions).
    first, second = html_tree(built / "_build" / "html"), html_tree(cold_built.html)
    assert first.keys() == second.keys()
    differing = [name for name in first if first[name] != second[name]]
    assert not differing, f"files differ between two clean builds: {differing}"
    assert any(name.startswith("_images/") and name.endswith(".png") for name in first)


def test_a_hosted_notebook_installs_the_wheel_that_the_site_publishes(built):
    # A notebook opened on Colab or Binder installs the package from the site, with no release on the package index.
    html = built / "_build" / "html"
    wheels = sorted((html / "dist").glob("*.whl"))
    assert [wheel.name for wheel in wheels] == [f"attention_scaling-{attention_scaling.__version__}-py3-none-any.whl"]
    with zipfile.ZipFile(wheels[0]) as wheel:
        assert {"attention_scaling/__init__.py", "attention_scaling/site/notebook.py"} <= set(wheel.namelist())
    for notebook in ("saturation.ipynb", "saturation-student.ipynb"):
        first = json.loads((html / "_sources" / notebook).read_text(encoding="utf-8"))["cells"][0]["source"]
        assert f'"{hosting_checks.SITE_URL}dist/{wheels[0].name}"' in first, first


def test_a_hosted_site_cites_each_item_by_its_absolute_address(built):
    # The site's address is known (hosting_checks.HOSTED): every entry of the one .bib has a url, to a page
    # and anchor that the built site has.
    html = built / "_build" / "html"
    bib = (html / "whysqrtdk.bib").read_text(encoding="ascii")
    urls = re.findall(r"^@misc\{whysqrtdk-([\w-]+),\n(?:.*\n)*?  url +?= \{(.*)\},$", bib, re.M)
    assert len(urls) == bib.count("@misc{whysqrtdk-") > 60, bib[:2000]
    for label, url in urls:
        page, anchor = url.removeprefix(hosting_checks.SITE_URL).split("#")
        assert anchor == label and f'id="{label}"' in (html / page).read_text(encoding="utf-8"), url
    assert f"url     = {{{hosting_checks.SITE_URL}}}" in bib


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


# -- the site as a host builds it (hosting_checks.HOSTED) ---------------------------------------------

def test_a_build_with_a_base_url_has_absolute_metadata_a_preview_a_sitemap_and_a_rooted_404(built):
    html = built / "_build" / "html"
    base = hosting_checks.SITE_URL
    assert hosting_checks.base_url(html) == base
    pages = hosting_checks.source_pages(built)
    problems = [
        problem
        for name in pages
        for problem in hosting_checks.metadata_problems(hosting_checks.page_head(html / name), name, base, html)
    ]
    problems += hosting_checks.sitemap_problems(html, base, pages)
    assert not problems, "\n".join(problems)
    preview = get_image_size(str(html / hosting.PREVIEW_IMAGE))  # None if it is not an image
    assert preview and preview[0] >= 600, f"og:image is not an image as wide as a large card needs: {preview}"
    not_found = (html / "404.html").read_text(encoding="utf-8")
    assert 'href="/why-sqrt-dk/_static/' in not_found, "the 404 page's styles are not rooted at the site's path"
    assert 'href="_static/' not in not_found, "the 404 page has relative links"


def test_launch_links_open_the_built_notebook_on_binder_and_colab(built):
    html = built / "_build" / "html"
    links, off_site = hosting_checks.launch_links((html / "saturation.html").as_uri())
    assert off_site == []  # nothing is fetched until a reader clicks
    assert links == {
        "Run on Binder": "https://mybinder.org/v2/gh/Owner/why-sqrt-dk/notebooks?urlpath=lab/tree/saturation.ipynb",
        "Run on Colab": "https://colab.research.google.com/github/Owner/why-sqrt-dk/blob/notebooks/saturation.ipynb",
    }
    # The notebooks branch holds what the page offers for download.
    assert (html / "_sources" / "saturation.ipynb").is_file()


def test_a_chapter_made_by_make_page_builds_and_shows_what_it_promises(built, cold_built):
    # make page made it in cold_built before its build (conftest.SCAFFOLD); built holds the same sources.
    slug, module, title = conftest.SCAFFOLD["slug"], conftest.SCAFFOLD["module"], conftest.SCAFFOLD["title"]
    chapters = re.search(r":caption: Chapters\n(?::.*\n)*\n((?:[^\n`]+\n)+)```", (built / "docs" / "index.md").read_text())
    assert chapters and chapters[1].splitlines()[-1] == slug, "appended at the end of the chapters"
    number = len(chapters[1].splitlines())
    lines = {path: len((built / path).read_text().splitlines()) for path in (f"docs/{slug}.md", f"src/attention_scaling/site/{module}.py")}
    assert lines[f"src/attention_scaling/site/{module}.py"] <= lines[f"docs/{slug}.md"], f"support no longer than the page: {lines}"

    html = cold_built.html
    page = (html / f"{slug}.html").read_text(encoding="utf-8")
    assert f'<h1><span class="section-number">{number}. </span>{title}' in page, "a chapter numbered at the end"
    assert f'id="thm-{slug}"' in page and f"Theorem {number}.1" in page, "the theorem, numbered in its chapter"
    assert re.search(f'<figure [^>]*id="fig-{slug}">\\s*<img ', page) and f"Fig. {number}.1" in page, "the figure"
    glued = re.findall(r'<span class="pasted-text">([^<]*)</span>', page)
    assert glued[:2] == ["20,000", "64"] and all(re.fullmatch(r"0\.\d{3}", value) for value in glued[2:4]), glued
    assert f"Exercise {number}.1" in page and "dropdown" in page, "the exercise and its collapsed solution"
    # The registries saw it: the evidence page measures its theorem, the graph and the Cite page list it.
    for other in ("evidence", "graph", "cite", "exercises"):
        assert slug in (html / f"{other}.html").read_text(encoding="utf-8"), other

    # The tests make check runs on a page and on the registries pass in the copy, the page's own included
    # (the slow ones too: test_every_theorem_is_measured measures every row).
    tests = [f"tests/test_site_{module}.py", "tests/test_layout.py", "tests/test_statements.py",
             "tests/test_site_figures.py::test_the_registered_figures_are_the_ones_the_pages_show",
             "tests/test_evidence.py::test_every_theorem_is_measured", "tests/test_proofs.py::test_every_theorem_a_page_states_is_registered"]
    checked = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not build and not site", *tests],
        # No bytecode written into the copy whose output other tests compare.
        cwd=built, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(built / "src"), "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert checked.returncode == 0, checked.stdout[-4000:]
