"""The local Sphinx extensions of docs/_ext/, without a build of the whole site.

Each module is tested on its own: the cache fingerprint and pruning, the
parallel execution of the pages the cache lacks, and the Cite page and the
label export on a small site built in a temporary directory.
"""

import dataclasses
import ast
import json
import logging
import os
import re
import stat
import struct
import subprocess
import sys
import threading
import time
import zlib
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import pytest

REPO = Path(__file__).resolve().parents[1]

import execution_cache  # noqa: E402
import labels  # noqa: E402
import notebooks  # noqa: E402
import parallel_execution  # noqa: E402
import provenance  # noqa: E402
from attention_scaling.site.notebook import References  # noqa: E402

# -- execution_cache ------------------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "a.py").write_text("A = 1\n")
    (tmp_path / "src" / "pkg" / "b.py").write_text("B = 2\n")
    (tmp_path / "constraints.txt").write_text("numpy==2.0\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Page\n")
    return tmp_path


KEY = ["src/**/*.py", "constraints.txt"]


@contextmanager
def sphinx_app(source: Path):
    """A Sphinx application on ``source`` (which holds conf.py), cleaned up after."""
    from sphinx.testing.util import SphinxTestApp

    app = SphinxTestApp("html", srcdir=source)
    try:
        yield app
    finally:
        app.cleanup()


def test_the_fingerprint_changes_with_the_package_source_and_the_pins_only(tree):
    first = execution_cache.fingerprint(tree, KEY)
    assert re.fullmatch(r"[0-9a-f]{16}", first)
    (tree / "docs" / "index.md").write_text("# Page, edited\n")  # myst-nb's own cache sees pages
    assert execution_cache.fingerprint(tree, KEY) == first
    (tree / "src" / "pkg" / "b.py").write_text("B = 3\n")
    second = execution_cache.fingerprint(tree, KEY)
    assert second != first
    (tree / "constraints.txt").write_text("numpy==2.1\n")
    assert execution_cache.fingerprint(tree, KEY) != second
    (tree / "src" / "pkg" / "c.py").write_text("")  # a new, empty module counts too
    assert execution_cache.fingerprint(tree, KEY) != second


def test_the_fingerprint_covers_the_package_where_it_is_imported_from(tree, tmp_path, monkeypatch):
    # The planted fault: another copy of the package put first on the path, as PYTHONPATH does when a fault
    # is planted in a clone. The kernels import that copy, so what they compute must not be kept under
    # the checkout's key; a copy with the same bytes (a seeded copy of the checkout) keeps the key.
    def package(where, text):
        (where / "cache_key_probe").mkdir(parents=True)
        (where / "cache_key_probe" / "__init__.py").write_text(text)
        monkeypatch.syspath_prepend(where)
        return execution_cache.fingerprint(tree, ["constraints.txt"], ["cache_key_probe"])

    monkeypatch.delitem(sys.modules, "cache_key_probe", raising=False)
    checkout = package(tree / "src", "SEED = 1\n")
    assert package(tmp_path / "clone" / "src", "SEED = None  # the planted fault\n") != checkout
    assert package(tmp_path / "copy" / "src", "SEED = 1\n") == checkout
    with pytest.raises(ModuleNotFoundError, match="no package 'no_such_package' can be imported here"):
        execution_cache.fingerprint(tree, ["constraints.txt"], ["no_such_package"])


def test_a_key_pattern_that_matches_nothing_is_an_error(tree):
    with pytest.raises(FileNotFoundError, match="'requirements.txt' matches no file"):
        execution_cache.fingerprint(tree, ["src/**/*.py", "requirements.txt"])


def test_pruning_keeps_the_current_cache_and_the_two_used_last(tmp_path):
    ages = {"old": 500, "older": 600, "recent": 100, "recenter": 50, "current": 1000}
    for name, age in ages.items():
        (tmp_path / name).mkdir()
        os.utime(tmp_path / name, (time.time() - age, time.time() - age))
    removed = execution_cache.prune(tmp_path, tmp_path / "current", keep=2)
    assert sorted(path.name for path in removed) == ["old", "older"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["current", "recent", "recenter"]
    # The current cache counts as used now, so the next source keeps it.
    assert (tmp_path / "current").stat().st_mtime > time.time() - 10
    execution_cache.prune(tmp_path, tmp_path / "new", keep=2)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["current", "recenter"]


def test_myst_nb_uses_the_keyed_cache_and_old_caches_go_when_the_builder_starts(tree):
    caches = tree / "_build" / ".jupyter_cache"
    for age, name in enumerate(["a", "b", "c"], start=1):
        (caches / name).mkdir(parents=True)
        os.utime(caches / name, (time.time() - 100 * age, time.time() - 100 * age))
    (tree / "conf.py").write_text(f"extensions = ['myst_nb', 'execution_cache']\nnb_execution_cache_key = {KEY!r}\n")
    with sphinx_app(tree) as app:  # the builder starts; nothing is built
        assert app.env.mystnb_config.execution_cache_path == str(caches / execution_cache.fingerprint(tree, KEY))
    assert sorted(path.name for path in caches.iterdir()) == ["a", "b"]


# -- parallel_execution ---------------------------------------------------------------------------

PAGE = """---
file_format: mystnb
kernelspec:
  name: python3
  display_name: Python 3
---

# {title}

```{{code-cell}} ipython3
import os
with open("runs.log", "a") as runs:
    print("{title}", os.getppid(), file=runs)
```
"""


def notebook_site(root: Path, titles) -> Path:
    """A site of MyST notebooks, one per title, with the execution cache in ``root / "cache"``."""
    root.mkdir(parents=True, exist_ok=True)
    for title in titles:
        (root / f"{title}.md").write_text(PAGE.format(title=title))
    (root / "index.md").write_text("# Pages\n\n```{toctree}\n" + "\n".join(titles) + "\n```\n")
    (root / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(REPO / 'docs' / '_ext')!r})\n"
        "extensions = ['myst_nb', 'parallel_execution']\nnb_execution_mode = 'cache'\n"
        f"nb_execution_cache_path = {str(root / 'cache')!r}\nnb_execution_raise_on_error = True\n"
    )
    return root


def runs(site: Path) -> dict[str, list[int]]:
    """Each page of :func:`notebook_site` that ran, with the parent process of each kernel that ran it."""
    ran = {}
    for line in (site / "runs.log").read_text().splitlines():
        title, parent = line.split()
        ran.setdefault(title, []).append(int(parent))
    return ran


def test_pages_the_cache_lacks_run_before_the_read_and_the_read_finds_them_all(tmp_path):
    site = notebook_site(tmp_path / "site", ["one", "two", "three"])
    with sphinx_app(site) as app:
        app.build()
        log = app.status.getvalue()
    assert "executing 3 page(s) that the cache lacks, in parallel" in log
    ran = runs(site)
    # Each page ran once, in a kernel started by one of the executor's processes, not by the
    # Sphinx process: the read found each page's cells in the cache (a mismatch runs it again).
    # The log says why a page ran again (a failure in the executor's process is logged there).
    assert sorted(ran) == ["one", "three", "two"] and all(len(parents) == 1 for parents in ran.values()), (ran, log)
    assert os.getpid() not in {parent for parents in ran.values() for parent in parents}
    # The index, plain Markdown, was never added to the cache's project.
    from jupyter_cache import get_cache

    assert sorted(Path(record.uri).stem for record in get_cache(site / "cache").list_project_records()) == ["one", "three", "two"]


def test_a_page_that_fails_in_parallel_fails_the_read_naming_it(tmp_path):
    site = notebook_site(tmp_path / "site", ["fine", "broken"])
    broken = site / "broken.md"
    broken.write_text(broken.read_text().replace('print("broken', 'raise RuntimeError("planted") or print("broken'))
    with sphinx_app(site) as app, pytest.raises(Exception, match="broken"):
        app.build()


def test_when_the_parallel_step_fails_myst_nb_executes_every_page_itself(tmp_path, monkeypatch):
    def no_executor(*args, **kwargs):
        raise OSError("no semaphores here")

    monkeypatch.setattr(parallel_execution, "load_executor", no_executor)
    site = notebook_site(tmp_path / "site", ["one", "two"])
    with sphinx_app(site) as app:
        app.build()
        log = app.status.getvalue()
    assert "parallel execution is off for this build (OSError: no semaphores here)" in log
    # Each page ran once, in a kernel that the Sphinx process started while reading.
    assert runs(site) == {"one": [os.getpid()], "two": [os.getpid()]}


def test_a_page_already_cached_is_not_executed_again(tmp_path):
    site = notebook_site(tmp_path / "site", ["one"])
    with sphinx_app(site) as app:
        app.build()
    (site / "one.md").write_text((site / "one.md").read_text() + "\nMore prose, same code.\n")
    with sphinx_app(site) as app:
        app.build()
        log = app.status.getvalue()
    assert "in parallel" not in log and runs(site) == {"one": runs(site)["one"]} and len(runs(site)["one"]) == 1


# -- notebooks ------------------------------------------------------------------------------------


def test_downloaded_notebooks_have_numbered_cell_ids():
    notebook = {"cells": [{"id": "f00"}, {"id": "ba4"}]}
    assert [cell["id"] for cell in notebooks.numbered_cells(notebook)["cells"]] == ["cell-0", "cell-1"]


def glued(name, bundle, display=False):
    """A code-cell output as myst-nb's glue stores it."""
    prefix = "" if display else "application/papermill.record/"
    return {"output_type": "display_data", "metadata": {"scrapbook": {"name": name, "mime_prefix": prefix}},
            "data": {prefix + key: value for key, value in bundle.items()}}


def page_notebook(*sources, outputs=()):
    cells = [{"cell_type": "markdown", "id": "m", "metadata": {}, "source": "# Page"}]
    cells += [{"cell_type": "code", "id": f"c{n}", "metadata": {}, "execution_count": 1, "source": source,
               "outputs": list(outputs) if n == 0 else []} for n, source in enumerate(sources)]
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def test_a_downloaded_notebook_shows_what_the_page_glued_and_imports_no_build_tool():
    figure = {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure size 640x480 with 1 Axes>"}
    notebook = page_notebook(
        "import numpy as np\nfrom myst_nb import glue\n",
        "glue('d_k', 512, display=False)",
        outputs=[{"output_type": "stream", "name": "stdout", "text": "hi\n"},
                 glued("d_k", {"text/plain": "512"}), glued("fig-x", figure), glued("shown", {"text/plain": "1"}, True)],
    )
    first = notebooks.install_cell("0.1.0", "")
    download = notebooks.self_contained(notebook, first, "docs/page.md")
    assert download["cells"][0] is first
    assert [cell["id"] for cell in download["cells"]] == ["cell-0", "cell-1", "cell-2", "cell-3"]
    code = download["cells"][2]
    assert code["source"] == "import numpy as np\nfrom attention_scaling.site.notebook import glue\n"
    assert [output.get("data") for output in code["outputs"]] == [
        None, {"text/plain": "d_k = 512"}, figure, {"text/plain": "shown = 1"}]
    assert all("scrapbook" not in output.get("metadata", {}) for output in code["outputs"])
    assert "myst_nb" not in json.dumps(download)


@pytest.mark.parametrize("source", ["import myst_nb", "from myst_nb import glue as g", "myst_nb.glue('x', 1)"])
def test_any_other_use_of_myst_nb_fails_the_build_naming_the_page_and_cell(source):
    with pytest.raises(ValueError, match=r"docs/page\.md: code cell 2 uses myst_nb"):
        notebooks.self_contained(page_notebook("x = 1", source), {}, "docs/page.md")


def test_the_install_cell_installs_the_sites_wheel_only_when_the_package_is_missing(tmp_path):
    source = notebooks.install_cell("0.1.0", "https://o.github.io/r/")["source"]
    wheel = "https://o.github.io/r/dist/attention_scaling-0.1.0-py3-none-any.whl"
    assert source.splitlines()[0].startswith("# Installs attention-scaling from the wheel this site was built with")
    assert sum(line.lstrip().startswith("#") for line in source.splitlines()) == 1  # one comment says it all
    # pip is replaced by a print of its command line.
    no_pip = "import subprocess\nsubprocess.run = lambda command, **options: print(command)\n"
    # With the package importable (it is, here), nothing is installed.
    ran = subprocess.run([sys.executable, "-c", no_pip + source], capture_output=True, text=True, cwd=tmp_path)
    assert ran.returncode == 0 and ran.stdout == "", ran
    # With it missing, pip installs exactly the site's wheel.
    missing = "import importlib.util\nimportlib.util.find_spec = lambda name: None\n"
    ran = subprocess.run([sys.executable, "-c", no_pip + missing + source], capture_output=True, text=True, cwd=tmp_path)
    assert ran.returncode == 0, ran
    assert ran.stdout.endswith(f"'-m', 'pip', 'install', '--quiet', '{wheel}']\n"), ran


def test_a_notebook_from_a_local_build_says_what_to_run_when_the_package_is_missing(tmp_path):
    source = notebooks.install_cell("0.1.0", "")["source"]
    ran = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, cwd=tmp_path)
    assert ran.returncode == 0 and ran.stdout == "", ran  # importable here: nothing to say
    missing = "import importlib.util\nimportlib.util.find_spec = lambda name: None\n"
    ran = subprocess.run([sys.executable, "-c", missing + source], capture_output=True, text=True, cwd=tmp_path)
    assert ran.returncode != 0 and "ModuleNotFoundError" in ran.stderr
    assert "python -m pip install _build/html/dist/attention_scaling-0.1.0-py3-none-any.whl" in ran.stderr, ran.stderr


@pytest.mark.parametrize(("environ", "expected"), [
    ({}, ""),
    ({"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r"}, "https://github.com/o/r"),
    ({"READTHEDOCS_GIT_CLONE_URL": "https://github.com/o/r.git"}, "https://github.com/o/r"),
    ({"READTHEDOCS_GIT_CLONE_URL": "git@github.com:o/r.git"}, "https://github.com/o/r"),
    ({"READTHEDOCS_GIT_CLONE_URL": "file:///tmp/r"}, ""),
])
def test_the_repository_is_the_one_ci_names_and_never_a_guess(environ, expected):
    assert provenance.repository_url(environ) == expected


# -- citations and labels, on a small site --------------------------------------------------------

def png_pixel() -> bytes:
    """A valid one-pixel PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\xff\xff\xff")) + chunk(b"IEND", b"")


PAGES = {
    "index.rst": "Site\n====\n\n.. toctree::\n   :numbered:\n\n   first\n   second\n   cite\n",
    "first.rst": (
        "First\n=====\n\n"
        ".. prf:lemma:: A lemma\n   :label: lem-small\n\n   Small.\n\n"
        ".. prf:theorem:: Sum of :math:`a` and :math:`b`\n   :label: thm-sum\n\n   :math:`a + b`.\n\n"
        ".. figure:: dot.png\n   :name: fig-dot\n\n   A dot of :math:`1` pixel. It is small.\n\n"
        ".. math:: a + b = c\n   :label: eq-sum\n\n"
        ".. _first-scaled:\n\nScaled by :math:`\\sqrt{d_k}`\n----------------------------\n\n"
        "See :ref:`ex-try`, :ref:`fig-dot` and :ref:`first-scaled`.\n"
    ),
    "second.rst": (
        "Second\n======\n\n"
        ".. prf:theorem:: Later\n   :label: thm-later\n\n   Later.\n\n"
        ".. exercise:: Try it\n   :label: ex-try\n\n   Try.\n\n"
        ".. figure:: dot.png\n   :name: fig-beside\n\n   Beside :prf:ref:`thm-later`, :math:`x^2`.\n"
    ),
    "cite.rst": "Cite\n====\n\n.. site-bibtex::\n\n.. citable-items::\n",
}


def build_small_site(tmp_path, pages=PAGES,
                     extensions=("sphinx_proof", "sphinx_exercise", "labels", "citations", "image_sizes"), conf=""):
    source = tmp_path / "source"
    source.mkdir()
    for name, text in pages.items():
        (source / name).write_text(text)
    (source / "dot.png").write_bytes(png_pixel())
    (source / "conf.py").write_text(
        f"extensions = {list(extensions)}\n"
        "release = '9.9.9'\nnumfig = True\nnumfig_secnum_depth = 1\n" + conf
    )
    with sphinx_app(source) as app:
        app.build()
        return app.outdir, app.warning.getvalue()


@pytest.fixture(scope="module")
def small_site(tmp_path_factory):
    return build_small_site(tmp_path_factory.mktemp("small"))


def test_the_cite_page_lists_what_the_pages_hold(small_site):
    html, warnings = small_site
    assert "WARNING" not in warnings, warnings
    page = (html / "cite.html").read_text()
    links = re.findall(r'<strong><a class="reference internal" href="([^"]+)">(?:<span[^>]*>)?([^<]+)<', page)
    assert links == [
        ("first.html#lem-small", "Lemma 1.1"),
        ("first.html#thm-sum", "Theorem 1.1"),
        ("second.html#thm-later", "Theorem 2.1"),
        ("first.html#fig-dot", "Fig. 1.1"),
        ("second.html#fig-beside", "Fig. 2.1"),
        ("second.html#ex-try", "Exercise 2.1"),
    ]
    entries = re.sub(r"<[^>]+>", "", page)
    assert "@misc{whysqrtdk," in entries and "version = {9.9.9}" in entries
    assert "title    = {Theorem 1.1: Sum of {$a$} and {$b$}}" in entries
    assert "title    = {Figure 1.1: A dot of {$1$} pixel}" in entries
    assert "title    = {Exercise 2.1: Try it}" in entries
    assert "note     = {Why {$\\sqrt{d_{k}}$}, version 9.9.9, second.html\\#ex-try}" in entries


def inventory_body(html: Path) -> str:
    """The entries of ``html/objects.inv``, one a line."""
    return zlib.decompress((html / "objects.inv").read_bytes().split(b"\n", 4)[4]).decode()


def test_theorems_are_listed_in_objects_inv_for_intersphinx(small_site):
    html, _ = small_site
    body = inventory_body(html)
    assert re.search(r"^thm-sum std:label -1 first\.html#\$ Theorem 1\.1 \(Sum of a and b\)$", body, re.M), body  # $: the anchor is the name


def test_objects_inv_names_each_label_as_its_page_numbers_it(small_site):
    html, warnings = small_site
    assert "WARNING" not in warnings, warnings
    names = dict(line.split(" std:label -1 ", 1) for line in inventory_body(html).splitlines() if " std:label " in line)
    names = {label: entry.split(" ", 1)[1] for label, entry in names.items()}
    labels = ("lem-small", "thm-sum", "thm-later", "eq-sum", "fig-dot", "fig-beside", "ex-try", "first-scaled")
    assert {label: names[label] for label in labels} == {
        "lem-small": "Lemma 1.1 (A lemma)",
        "thm-sum": "Theorem 1.1 (Sum of a and b)",
        "thm-later": "Theorem 2.1 (Later)",
        "eq-sum": "Equation (1.1)",
        # The first sentence of the caption, its mathematics as text.
        "fig-dot": "Figure 1.1: A dot of 1 pixel",
        # A reference in a caption reads as the page shows it, not as a label.
        "fig-beside": "Figure 2.1: Beside Theorem 2.1, x²",
        "ex-try": "Exercise 2.1 (Try it)",
        "first-scaled": "Scaled by √dₖ",
    }
    # Those are the numbers the pages show.
    first, second = ((html / page).read_text() for page in ("first.html", "second.html"))
    for shown in ("Lemma 1.1", "Theorem 1.1", "Fig. 1.1", '<span class="eqno">(1.1)'):
        assert shown in first, shown
    for shown in ("Theorem 2.1", "Exercise 2.1", "Fig. 2.1"):
        assert shown in second, shown


def test_the_sites_own_references_keep_the_titles_sphinx_gives_them(small_site):
    """Only objects.inv changes: within the site a figure's {ref} is still its caption, and so on."""
    html, _ = small_site
    links = re.findall(r'<span class="std std-(?:ref|numref)">([^<]*)</span>', (html / "first.html").read_text())
    assert links == ["Exercise 2.1", "A dot of 1 pixel. It is small.", "Scaled by \\sqrt{d_k}"]


@pytest.mark.parametrize(
    "marked, plain",
    [
        # The caption of the issue that asked for this: LaTeX spacing and operators.
        (r"Scaled logits $c\, q \cdot k$ against $d_k$", "Scaled logits c q · k against dₖ"),
        (r"$\operatorname{Var}[q \cdot k] = d_k$", "Var[q · k] = dₖ"),
        (r"$\frac{q^\top k}{\sqrt{d_k}}$ stays near 1", "qᵀk/√dₖ stays near 1"),
        (r"$\frac{q \cdot k}{\sqrt{d_k}}$", "(q · k)/√dₖ"),
        (r"a row with $\lVert J \rVert_F \ge t$", "a row with ‖J‖_F ≥ t"),
        (r"softmax at the scale $\beta = s \ln n$", "softmax at the scale β = s ln n"),
        (r"$\mathbb{E}[q \cdot k] = \rho d_k$", "𝔼[q · k] = ρdₖ"),
        (r"Projections with variance $\sigma^2$", "Projections with variance σ²"),
        (r"$\sum_{i=1}^{n} q_i k_i$", "∑ᵢ₌₁ⁿ qᵢkᵢ"),
        (r"$p_1 = 1/(1 + S)$ at $n - 1$ ties", "p₁ = 1/(1 + S) at n - 1 ties"),
        (r"$e^{-x^2/2}$ and $d_{\text{model}}$", "e^(-x²/2) and d_model"),
        (r"Folding the constant into $W_Q$ (T5)", "Folding the constant into W_Q (T5)"),
        ("No mathematics at all", "No mathematics at all"),
    ],
)
def test_titles_with_mathematics_read_as_plain_text(marked, plain):
    assert labels.plain_text(marked) == plain


@pytest.mark.parametrize(
    "marked, why",
    [(r"$\foo x$", r"no plain-text form for \\foo"), (r"$\frac{1$", "no closing"), ("costs $5", "unpaired"), (r"$a & b$", "unexpected '&'")],
)
def test_a_title_that_cannot_be_read_as_text_is_an_error(marked, why):
    with pytest.raises(ValueError, match=why):
        labels.plain_text(marked)


@pytest.mark.parametrize("raw", [r"c\, q \cdot k", r"d_{k}", r"x^{2}", "$x$"])
def test_a_name_that_still_reads_as_latex_is_refused(raw):
    with pytest.raises(ValueError, match="still reads as LaTeX"):
        labels.readable(raw)


def test_a_converter_that_leaves_latex_in_a_name_fails_the_build_naming_the_label(tmp_path, monkeypatch):
    # Planted fault: every formula passed through as its LaTeX source.
    monkeypatch.setattr(labels, "latex_text", lambda latex: latex)
    _, warnings = build_small_site(tmp_path)
    assert re.search(r"first\.rst: WARNING: no readable name in objects\.inv for 'first-scaled': .* still reads as LaTeX", warnings), warnings


def test_an_unlabelled_theorem_fails_the_cite_page_naming_it(tmp_path):
    pages = dict(PAGES, **{"second.rst": "Second\n======\n\n.. prf:theorem:: Nameless\n\n   Later.\n"})
    _, warnings = build_small_site(tmp_path, pages)
    assert re.search(r"cite\.rst:\d+: WARNING: cannot list the citable items: the theorem 'Nameless' on page 'second' has label 'theorem-\d+'", warnings), warnings


def _rebuild(source: Path, page: str, old: str, new: str) -> tuple[list[str], str, str]:
    """Replace ``old`` with ``new`` in ``page`` and build again: the pages written, the Cite page's and the exercise index's text."""
    text = (source / page).read_text()
    assert old in text, old
    (source / page).write_text(text.replace(old, new))
    with sphinx_app(source) as app:
        app.build()
        status = re.sub(r"\x1b\[[0-9;]*m", "", app.status.getvalue())  # without its colours
        written = re.findall(r"writing output\.\.\. \[\s*\d+%\] (\S+)", status)
        return written, (app.outdir / "cite.html").read_text(), (app.outdir / "exercises.html").read_text()


# The small site with an exercise index, which is written again under the same rule as the Cite page.
INDEXED = dict(PAGES, **{
    "index.rst": PAGES["index.rst"].replace("   cite\n", "   cite\n   exercises\n"),
    "exercises.rst": "Exercises\n=========\n\n.. exercise-index::\n",
    "second.rst": PAGES["second.rst"].replace("   :label: ex-try\n", "   :label: ex-try\n   :class: difficulty-basic\n"),
})


def test_the_cite_page_and_exercise_index_are_written_again_when_what_they_list_changes_and_only_then(tmp_path):
    _, warnings = build_small_site(tmp_path, INDEXED, extensions=(
        "sphinx_proof", "sphinx_exercise", "labels", "citations", "exercise_index", "image_sizes"))
    assert "WARNING" not in warnings, warnings
    source = tmp_path / "source"
    # A prose edit on another page leaves what they show as it was: neither is written.
    written, _, _ = _rebuild(source, "second.rst", "   Try.", "   Try harder.")
    assert "second" in written and not {"cite", "exercises"} & set(written), written
    # A new title, a new item, an exercise's new title and new numbers are.
    written, cite, _ = _rebuild(source, "second.rst", "prf:theorem:: Later", "prf:theorem:: Much later")
    assert "cite" in written and "Theorem 2.1: Much later" in cite, written
    written, cite, _ = _rebuild(source, "first.rst", ".. _first-scaled:", ".. prf:lemma:: Tiny\n   :label: lem-tiny\n\n   T.\n\n.. _first-scaled:")
    assert "cite" in written and "Lemma 1.2: Tiny" in cite, written
    written, _, exercises = _rebuild(source, "second.rst", "exercise:: Try it", "exercise:: Try it twice")
    assert "exercises" in written and "Try it twice" in exercises, written
    written, cite, exercises = _rebuild(source, "second.rst", "difficulty-basic", "difficulty-advanced")
    assert "exercises" in written and "advanced" in re.sub(r"<[^>]+>", "", exercises), written
    written, cite, exercises = _rebuild(source, "index.rst", "   first\n   second\n", "   second\n   first\n")
    assert {"cite", "exercises"} <= set(written) and "Theorem 1.1: Much later" in cite and "Exercise 1.1" in exercises, written


def test_a_page_offers_its_source_its_notebook_and_launch_links_for_it(tmp_path):
    # A page with a downloadable notebook, as myst-nb leaves it in jupyter_execute beside the output directory.
    outdir = tmp_path / "html"
    (tmp_path / "jupyter_execute").mkdir(parents=True)
    cells = [{"cell_type": "markdown", "metadata": {}, "source": "By {prf:ref}`thm-a`, $d_k =$ {glue:text}`d_k`."},
             {"cell_type": "markdown", "metadata": {}, "source": "```{solution-start} ex-a\n```\nIt is 8.\n```{solution-end}\n```"}]
    notebook = {"cells": cells, "metadata": {notebooks.GLUED: {"d_k": {"text/plain": "512"}}}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "jupyter_execute" / "saturation.ipynb").write_text(json.dumps(notebook))
    context = {"has_source": True, "sourcename": "saturation.md", "pathto": lambda name, resource: name}
    app = SimpleNamespace(outdir=str(outdir))
    # What the environment knows once every page is numbered (references() reads it from a real build).
    known = References({"thm-a": "Theorem 2.1", "ex-a": "Exercise 2.1"}, {}, {}, {})
    with mock.patch.object(notebooks, "references", lambda app, glued: dataclasses.replace(known, values=glued)), \
            mock.patch.dict(os.environ, {"GITHUB_REPOSITORY": "o/r"}, clear=True):
        notebooks.offer_files(app, "saturation", "page.html", context, None)
    written = json.loads((outdir / "_sources" / "saturation.ipynb").read_text())
    assert [cell["source"] for cell in written["cells"]] == ["By Theorem 2.1, $d_k =$ 512.", "**Solution to Exercise 2.1.**\n\nIt is 8."]
    assert notebooks.GLUED not in written["metadata"]
    student = json.loads((outdir / "_sources" / "saturation-student.ipynb").read_text())
    assert [cell["source"] for cell in student["cells"]] == ["By Theorem 2.1, $d_k =$ 512."]
    assert [(f["label"], f["href"]) for f in context["page_files"]] == [
        ("Source (.md)", "_sources/saturation.md"),
        ("Notebook (.ipynb)", "_sources/saturation.ipynb"),
        ("Student's notebook (.ipynb)", "_sources/saturation-student.ipynb"),
        ("Run on Binder", "https://mybinder.org/v2/gh/o/r/notebooks?urlpath=lab/tree/saturation.ipynb"),
        ("Run on Colab", "https://colab.research.google.com/github/o/r/blob/notebooks/saturation.ipynb"),
    ]
    # A page with no notebook (the API reference) offers its source alone, and nothing opens it elsewhere.
    api = context | {"sourcename": "api.md"}
    with mock.patch.dict(os.environ, {"GITHUB_REPOSITORY": "o/r"}, clear=True):
        notebooks.offer_files(app, "api", "page.html", api, None)
    assert [f["label"] for f in api["page_files"]] == ["Source (.md)"]
    # Where no repository on GitHub is named (a local build), nothing is offered to open the notebook elsewhere.
    (tmp_path / "jupyter_execute" / "saturation.ipynb").write_text(json.dumps(notebook))
    with mock.patch.object(notebooks, "references", lambda app, glued: dataclasses.replace(known, values=glued)), \
            mock.patch.dict(os.environ, {}, clear=True):
        notebooks.offer_files(app, "saturation", "page.html", context, None)
    assert [f["label"] for f in context["page_files"]] == ["Source (.md)", "Notebook (.ipynb)", "Student's notebook (.ipynb)"]


# -- exercise_index -------------------------------------------------------------------------------

EXERCISE_PAGES = {
    "index.rst": "Site\n====\n\n.. toctree::\n   :numbered:\n\n   late\n   early\n   exercises\n",
    "early.rst": (
        "Early\n=====\n\n"
        ".. exercise:: Sum of :math:`a` and :math:`b`\n   :label: ex-sum\n   :class: difficulty-basic\n\n   Add.\n\n"
        ".. exercise:: A limit\n   :label: ex-limit\n   :class: difficulty-advanced\n\n   Let n grow.\n"
    ),
    "late.rst": "Late\n====\n\n.. exercise:: Try it\n   :label: ex-try\n   :class: difficulty-intermediate\n\n   Try.\n",
    "exercises.rst": "Exercises\n=========\n\n.. exercise-index::\n",
}


def build_exercise_site(tmp_path, pages=EXERCISE_PAGES):
    return build_small_site(tmp_path, pages, extensions=("sphinx_exercise", "citations", "exercise_index"))


def test_the_exercise_index_lists_every_exercise_by_chapter_in_toc_order(tmp_path):
    html, warnings = build_exercise_site(tmp_path)
    assert "WARNING" not in warnings, warnings
    page = (html / "exercises.html").read_text()
    chapters = re.findall(r'<a class="reference internal" href="(\w+)\.html">', page)
    assert chapters == ["late", "early"]
    items = [re.sub(r"<[^>]+>|\s+", " ", item).split() for item in re.findall(r'<li id="(?:ex-[\w-]+)">(.*?)</li>', page, re.S)]
    assert [" ".join(words) for words in items] == [
        "Exercise 1.1 : Try it ( intermediate )",
        "Exercise 2.1 : Sum of \\(a\\) and \\(b\\) ( basic )",
        "Exercise 2.2 : A limit ( advanced )",
    ]
    # An old link to exercises.html#LABEL lands on the entry, which links to the exercise.
    assert re.search(r'<li id="ex-sum"><p><a class="reference internal" href="early.html#ex-sum">', page), page
    # The difficulty is the first line of the exercise itself.
    early = re.sub(r"\s+", " ", (html / "early.html").read_text())
    assert re.search(r'<p class="exercise-difficulty"><strong>Difficulty:</strong> basic</p> <p>Add.</p>', early), early


@pytest.mark.parametrize("options, found", [("", "none"), ("   :class: difficulty-basic difficulty-advanced\n", "['basic', 'advanced']")])
def test_an_exercise_without_one_difficulty_fails_the_build_naming_it(tmp_path, options, found):
    pages = dict(EXERCISE_PAGES, **{"late.rst": f"Late\n====\n\n.. exercise:: Try it\n   :label: ex-try\n{options}\n   Try.\n"})
    _, warnings = build_exercise_site(tmp_path, pages)
    assert re.search(rf"late\.rst:\d+: WARNING: the exercise 'ex-try' needs exactly one class of difficulty-basic, "
                     rf"difficulty-intermediate, difficulty-advanced; got {re.escape(found)}", warnings), warnings


def test_the_chapter_order_is_the_table_of_contents_depth_first():
    from exercise_index import chapter_order

    assert chapter_order({"index": ["b", "a", "c"], "a": ["a2", "a1"], "a1": ["b"]}, "index") == ["b", "a", "a2", "a1", "c"]


# -- static_math ------------------------------------------------------------------------------------

import static_math  # noqa: E402


def test_the_static_math_examples_hold():
    import doctest

    assert doctest.testmod(static_math).failed == 0


MATH_PAGES = {
    "index.rst": "Site\n====\n\n.. toctree::\n\n   math\n   plain\n",
    "math.rst": (
        "Math\n====\n\nInline :math:`\\sqrt{d_k}`, then *n*, :math:`n`, *m* and :math:`d_k =` 512 and\n\n"
        ".. math:: \\operatorname{Var}(q \\cdot k) = d_k\n   :label: eq-var\n\n"
        "and :eq:`eq-var` again.\n"
    ),
    "plain.rst": "Plain\n=====\n\nNo formula here.\n",
}


def build_math_site(tmp_path, pages):
    return build_small_site(tmp_path, pages, extensions=("static_math",))


@pytest.fixture(scope="module")
def math_site(tmp_path_factory):
    return build_math_site(tmp_path_factory.mktemp("math"), MATH_PAGES)


def test_pages_carry_mathml_and_load_no_math_script(math_site):
    outdir, warnings = math_site
    assert not warnings, warnings
    page = (outdir / "math.html").read_text()
    # MathML, and nothing of MathJax's CommonHTML.
    assert page.count("<math") == 4 and "<mjx-" not in page
    # A display formula is in a box that can be focused, so that a keyboard can scroll one too wide for
    # the column; not the <math> itself, where HTML allows no tabindex.
    assert page.count('<div class="math-scroll" tabindex="0"><math display="block">') == 1
    assert "<math tabindex" not in page
    # The source is kept only as the MathML annotation, not shown as text.
    assert '<annotation encoding="application/x-tex">\\sqrt{d_k}</annotation>' in page
    assert "\\sqrt" not in re.sub(r"<annotation.*?</annotation>", "", page, flags=re.S)
    assert "mathjax" not in " ".join(re.findall(r"<script[^>]*>", page)).lower()
    # Sphinx's equation number and its permalink stay beside the formula, and the reference links to it.
    assert re.search(r'<span class="eqno">\(1\)<a class="headerlink" href="#equation-eq-var"', page)
    assert 'href="#equation-eq-var"' in page


def test_punctuation_stays_on_the_line_of_the_formula_before_it(math_site):
    outdir, _ = math_site
    page = (outdir / "math.html").read_text()
    kept = re.search(r'<span class="math-punctuation"><span class="math[^"]*"><math>.*?</math></span>(.*?)</span>(.*?)<', page)
    assert kept and kept.groups() == (",", " then "), kept and kept.groups()
    assert "span.math-punctuation { white-space: nowrap; }" in (outdir / "_static" / "static-math.css").read_text()
    # The text between is kept as it was, though it is the same as the text after the next formula.
    assert re.search(r'</em>, <span class="math-punctuation"><span class="math[^"]*"><math>.*?</math></span>,</span> <em>m</em>', page)
    # A formula that no punctuation follows is left as it was.
    assert re.search(r"</math></span> 512 and", page)


def test_punctuation_after_math_that_ends_an_emphasis_or_a_link_stays_with_it(tmp_path):
    # MyST nests math in emphasis and links (reStructuredText cannot): the comma follows the emphasis.
    pages = dict(MATH_PAGES, **{"index.rst": MATH_PAGES["index.rst"] + "   nested\n",
                                "nested.md": "# Nested\n\nSee *the {math}`y`*, and [{math}`z`](https://example.org); done.\n"})
    # The suffixes said outright: a myst-nb site built earlier in this process leaves ".md" mapped to its parser.
    outdir, warnings = build_small_site(tmp_path, pages, extensions=("static_math", "myst_parser"),
                                        conf="source_suffix = {'.rst': 'restructuredtext', '.md': 'markdown'}\n")
    assert not warnings, warnings
    page = (outdir / "nested.html").read_text()
    assert re.search(r'<span class="math-punctuation"><em>the <span class="math[^"]*"><math>.*?</math></span></em>,</span> and', page)
    assert re.search(r'<span class="math-punctuation"><a [^>]*>.*?</math></span></a>;</span> done', page)


def test_an_inline_formula_leaves_the_space_around_it_to_the_prose(math_site):
    # "$d_k =$ 512": the relation's own space after it would double the prose's.
    page = (math_site[0] / "math.html").read_text()
    assert '<mo rspace="0">=</mo>' in page
    assert '<mo>=</mo>' in page  # the displayed equation keeps TeX's spacing


def test_the_math_font_has_what_the_formulas_draw_and_pages_with_math_preload_it(math_site):
    from fontTools.ttLib import TTFont

    outdir, _ = math_site
    font = TTFont(outdir / "_static" / "static-math.woff2")
    drawn = {ord(c) for c in static_math.math_characters((outdir / "math.html").read_text())}
    # The radical of \sqrt, the d of d_k and its italic (a browser draws a one-letter <mi> in italic).
    assert {0x221A, ord("d"), 0x1D451} <= drawn <= set(font.getBestCmap()), drawn - set(font.getBestCmap())
    # The MATH table, which stretches the radical, is kept; the font is cut down to a few kilobytes.
    assert "MATH" in font and (outdir / "_static" / "static-math.woff2").stat().st_size < 20_000
    styles = (outdir / "_static" / "static-math.css").read_text()
    assert 'src: url(static-math.woff2) format("woff2")' in styles and "font-display: optional" in styles
    preload = '["_static/static-math.woff2"]'
    assert preload in (outdir / "math.html").read_text()
    assert preload not in (outdir / "plain.html").read_text()


def test_the_font_follows_the_formulas_of_the_site(math_site, tmp_path):
    from fontTools.ttLib import TTFont

    assert 0x211D not in TTFont(math_site[0] / "_static" / "static-math.woff2").getBestCmap()
    pages = dict(MATH_PAGES, **{"plain.rst": "Plain\n=====\n\n:math:`\\mathbb{R}`\n"})
    outdir, warnings = build_math_site(tmp_path, pages)
    assert not warnings, warnings
    assert 0x211D in TTFont(outdir / "_static" / "static-math.woff2").getBestCmap()  # the double-struck R


@pytest.mark.parametrize("tex", ["\\notamacro x", "\\frac{a}{b"])
def test_tex_that_mathjax_rejects_fails_the_build_naming_the_page(tmp_path, tex):
    pages = dict(MATH_PAGES, **{"plain.rst": f"Plain\n=====\n\n.. math:: {tex}\n"})
    _, warnings = build_math_site(tmp_path, pages)
    assert "plain.rst:4: WARNING: MathJax cannot typeset" in warnings, warnings


# -- image_sizes ------------------------------------------------------------------------------------

import image_sizes  # noqa: E402


def test_the_image_sizes_examples_hold():
    import doctest

    assert doctest.testmod(image_sizes).failed == 0


def test_every_figure_states_the_size_of_its_file(small_site):
    outdir, _ = small_site
    tags = re.findall(r"<img\b[^>]*>", (outdir / "first.html").read_text())
    assert tags and all('width="1" height="1" loading="lazy"' in tag for tag in tags), tags


def test_an_image_whose_size_cannot_be_read_fails_the_build_naming_the_page(tmp_path):
    pages = dict(PAGES, **{"second.rst": "Second\n======\n\n.. image:: broken.png\n"})
    source = tmp_path / "source"
    source.mkdir()
    (source / "broken.png").write_bytes(b"not an image")
    for name, text in pages.items():
        (source / name).write_text(text)
    (source / "dot.png").write_bytes(png_pixel())
    (source / "conf.py").write_text("extensions = ['sphinx_proof', 'sphinx_exercise', 'labels', 'citations', 'image_sizes']\n")
    with sphinx_app(source) as app:
        app.build()
        assert "second.rst: WARNING: cannot read the size of the image broken.png" in app.warning.getvalue()


def test_a_formula_met_again_is_typeset_once_and_a_rejected_one_each_time():
    typesetter = static_math.Typesetter()
    asked = []
    run = typesetter._run
    typesetter._run = lambda function, *args: asked.append(args) or run(function, *args)
    try:
        first = typesetter.typeset(r"\sqrt{d_k}", display=False)
        assert typesetter.typeset(r"\sqrt{d_k}", display=False) == first
        assert len(asked) == 1
        # The same TeX displayed is another formula.
        assert typesetter.typeset(r"\sqrt{d_k}", display=True) != first and len(asked) == 2
        for _ in range(2):
            with pytest.raises(static_math.TeXError, match="notamacro"):
                typesetter.typeset(r"\notamacro", display=False)
        assert len(asked) == 4
    finally:
        typesetter.close()


def test_a_typesetter_starts_inside_a_running_event_loop():
    # As in a Jupyter kernel, or in pytest once Playwright's sync API has run. The loop runs in
    # a thread of its own: this thread may already have one (Playwright's), and asyncio.run refuses that.
    import asyncio

    async def start():
        typesetter = static_math.Typesetter()
        try:
            return typesetter.typeset("x", display=False)
        finally:
            typesetter.close()

    outcome = {}

    def in_a_loop():
        try:
            outcome["html"] = asyncio.run(start())
        except Exception as error:  # reported below, in the test's thread
            outcome["error"] = error

    thread = threading.Thread(target=in_a_loop)
    thread.start()
    thread.join(timeout=120)
    assert "error" not in outcome, outcome
    assert outcome["html"].startswith("<math><semantics>")


EXT = Path(__file__).resolve().parents[1] / "docs" / "_ext"


@pytest.mark.parametrize("name", sorted(path.stem for path in EXT.glob("*.py") if ">>> " in path.read_text(encoding="utf-8")))
def test_the_examples_in_each_extension_hold(name):
    # pytest's --doctest-modules reaches src/ only; the extensions' examples are run here.
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0, f"docs/_ext/{name}.py has examples that doctest did not find"
    assert result.failed == 0, f"docs/_ext/{name}.py: {result.failed} of {result.attempted} examples failed"


# -- valid_html ------------------------------------------------------------------------------------

import valid_html  # noqa: E402


def _mended(*children):
    """A document holding ``children``, after valid_html's post-transform."""
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document

    document = new_document("page", get_default_settings(Parser))
    document.extend(children)
    valid_html.ValidHTML(document).run()
    return document


def test_the_ids_every_proof_and_exercise_share_are_dropped_and_a_proof_keeps_its_style():
    from docutils import nodes

    proof, body = nodes.admonition(ids=["proof"], classes=["proof"]), nodes.section(ids=["proof-content"])
    exercise, named = nodes.section(ids=["exercise-content"]), nodes.section(ids=["thm-kept"])
    _mended(proof, body, exercise, named)
    assert proof["ids"] == [] and "proof-body" in proof["classes"]
    assert body["ids"] == [] and exercise["ids"] == [] and named["ids"] == ["thm-kept"]


def test_a_wrapper_loses_the_ids_it_copied_and_keeps_its_own():
    from docutils import nodes

    equation = nodes.math_block("", "x", ids=["equation-a"])
    table = nodes.table(ids=["table-b"])
    math_wrapper = nodes.container("", equation, classes=["math-wrapper"], ids=["equation-a"])
    table_wrapper = nodes.container("", table, classes=["table-wrapper"], ids=["table-b", "own"])
    _mended(math_wrapper, table_wrapper)
    assert math_wrapper["ids"] == [] and equation["ids"] == ["equation-a"]
    assert table_wrapper["ids"] == ["own"] and table["ids"] == ["table-b"]


def test_a_paragraph_of_lists_only_is_replaced_by_its_lists_and_one_with_text_is_kept():
    from docutils import nodes

    listed = nodes.bullet_list("", nodes.list_item("", nodes.paragraph(text="a")))
    only_lists = nodes.paragraph("", "", listed)
    with_text = nodes.paragraph("", "Some text ", nodes.emphasis(text="and more"))
    document = _mended(nodes.field_body("", only_lists), with_text)
    assert document.children[0].children == [listed]
    assert document.children[1] is with_text
