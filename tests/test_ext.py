"""The local Sphinx extensions of docs/_ext/, without a build of the whole site.

Each module is tested on its own: the cache fingerprint and pruning, the
version guard of the parallel execution (and its fall back to myst-nb's
serial execution), kernels on IPC sockets, and the Cite page and the label
export on a small site built in a temporary directory.
"""

import logging
import os
import re
import stat
import struct
import sys
import threading
import time
import zlib
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "docs" / "_ext"))

import execution_cache  # noqa: E402
import ipc_kernels  # noqa: E402
import notebooks  # noqa: E402
import parallel_execution  # noqa: E402

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
    (tree / "conf.py").write_text("extensions = ['myst_nb', 'execution_cache']\n")
    with sphinx_app(tree) as app:  # the builder starts; nothing is built
        assert app.env.mystnb_config.execution_cache_path == str(caches / execution_cache.fingerprint(tree, KEY))
    assert sorted(path.name for path in caches.iterdir()) == ["a", "b"]


# -- parallel_execution ---------------------------------------------------------------------------


def test_the_guard_names_the_versions_it_was_written_for_which_are_the_pins():
    pins = dict(re.findall(r"^([\w.-]+)==(\S+)$", (REPO / "constraints.txt").read_text(), re.M))
    assert parallel_execution.WRITTEN_FOR == {name: pins[name] for name in parallel_execution.WRITTEN_FOR}
    assert parallel_execution.serial_reason() is None  # the pinned environment runs in parallel


def test_another_version_of_myst_nb_turns_parallel_execution_off(monkeypatch):
    real = parallel_execution.installed_version
    monkeypatch.setattr(parallel_execution, "installed_version", lambda name: "1.5.0" if name == "myst-nb" else real(name))
    assert parallel_execution.serial_reason() == "myst-nb 1.5.0 is installed; it was written for 1.4.0"


def test_a_missing_internal_turns_parallel_execution_off(monkeypatch):
    real = parallel_execution.importlib.import_module

    def without_reader(name):
        if name == "myst_nb.core.read":
            raise ImportError("No module named 'myst_nb.core.read'")
        return real(name)

    monkeypatch.setattr(parallel_execution.importlib, "import_module", without_reader)
    assert parallel_execution.serial_reason().startswith("myst_nb.core.read.create_nb_reader is missing")


def fake_build(jobs):
    return SimpleNamespace(config=SimpleNamespace(nb_parallel_jobs=jobs)), SimpleNamespace()


def test_on_a_mismatch_myst_nb_executes_serially_with_one_info_line(monkeypatch, caplog):
    monkeypatch.setattr(parallel_execution, "installed_version", lambda name: "0.1")
    monkeypatch.setattr(parallel_execution, "_pending", lambda *args: pytest.fail("the parallel route was taken"))
    caplog.set_level(logging.DEBUG, logger="sphinx")
    app, env = fake_build(2)
    assert parallel_execution.pre_execute(app, env, ["index", "scaling"]) is None
    assert [record.levelname for record in caplog.records] == ["INFO"]
    assert caplog.records[0].getMessage() == (
        "parallel execution is off: myst-nb 0.1 is installed; it was written for 1.4.0; "
        "myst-nb executes the pages one at a time as it reads them"
    )


def test_one_job_leaves_execution_to_myst_nb_quietly(monkeypatch, caplog):
    monkeypatch.setattr(parallel_execution, "_pending", lambda *args: pytest.fail("the parallel route was taken"))
    caplog.set_level(logging.DEBUG, logger="sphinx")
    parallel_execution.pre_execute(*fake_build("1"), ["index"])
    assert not caplog.records


def test_the_number_of_jobs():
    assert parallel_execution.jobs("3") == parallel_execution.jobs(3) == 3
    assert parallel_execution.jobs("auto") >= 1
    with pytest.raises(ValueError, match="nb_parallel_jobs must be a whole number or 'auto'; got 'many'"):
        parallel_execution.jobs("many")


# -- ipc_kernels ----------------------------------------------------------------------------------


@pytest.fixture
def ipc():
    assert ipc_kernels.install() is None
    yield Path(ipc_kernels._state["directory"])
    ipc_kernels.uninstall()


def test_notebook_clients_start_kernels_on_ipc_sockets_in_a_private_directory(ipc):
    import nbformat
    from nbclient import NotebookClient

    assert ipc.stat().st_mode & 0o777 == 0o700  # (jupyter_client may add the sticky bit)
    client = NotebookClient(nbformat.v4.new_notebook())
    assert client.kernel_manager_class is ipc_kernels.IPCKernelManager
    manager = client.kernel_manager_class()
    assert manager.transport == "ipc"
    assert Path(manager.connection_file).parent == ipc
    assert Path(manager.ip).parent == ipc  # the sockets: kernel-N-ipc-1, ...
    assert manager.connection_file != client.kernel_manager_class().connection_file


def test_uninstall_restores_tcp_and_removes_the_directory(ipc):
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient
    import nbformat

    ipc_kernels.uninstall()
    assert not ipc.exists()
    assert NotebookClient(nbformat.v4.new_notebook()).kernel_manager_class is AsyncKernelManager


def test_two_kernels_run_at_once_over_ipc_without_the_tcp_warning(ipc, capfd):
    import nbformat
    from nbclient import execute

    notebooks_run = [nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"print({n} * 7)")]) for n in (1, 2)]
    for notebook in notebooks_run:
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    threads = [threading.Thread(target=execute, args=(notebook,), kwargs={"cwd": str(REPO)}) for notebook in notebooks_run]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert [notebook.cells[0].outputs[0]["text"] for notebook in notebooks_run] == ["7\n", "14\n"]
    assert "running over TCP" not in capfd.readouterr().err
    assert list(ipc.iterdir()) == []  # each kernel removed its sockets and connection file


# -- notebooks ------------------------------------------------------------------------------------


def test_downloaded_notebooks_have_numbered_cell_ids():
    notebook = {"cells": [{"id": "f00"}, {"id": "ba4"}]}
    assert [cell["id"] for cell in notebooks.numbered_cells(notebook)["cells"]] == ["cell-0", "cell-1"]


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
        ".. figure:: dot.png\n   :name: fig-dot\n\n   A dot of :math:`1` pixel. It is small.\n"
    ),
    "second.rst": (
        "Second\n======\n\n"
        ".. prf:theorem:: Later\n   :label: thm-later\n\n   Later.\n\n"
        ".. exercise:: Try it\n   :label: ex-try\n\n   Try.\n"
    ),
    "cite.rst": "Cite\n====\n\n.. site-bibtex::\n\n.. citable-items::\n",
}


def build_small_site(tmp_path, pages=PAGES, extensions=("sphinx_proof", "sphinx_exercise", "labels", "citations")):
    source = tmp_path / "source"
    source.mkdir()
    for name, text in pages.items():
        (source / name).write_text(text)
    (source / "dot.png").write_bytes(png_pixel())
    (source / "conf.py").write_text(
        f"extensions = {list(extensions)}\n"
        "release = '9.9.9'\nnumfig = True\nnumfig_secnum_depth = 1\n"
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
        ("second.html#ex-try", "Exercise 2.1"),
    ]
    entries = re.sub(r"<[^>]+>", "", page)
    assert "@misc{whysqrtdk," in entries and "version = {9.9.9}" in entries
    assert "title    = {Theorem 1.1: Sum of $a$ and $b$}" in entries
    assert "title    = {Figure 1.1: A dot of $1$ pixel}" in entries
    assert "title    = {Exercise 2.1: Try it}" in entries
    assert "note     = {Why √d_k, version 9.9.9, second.html#ex-try}" in entries


def test_theorems_are_listed_in_objects_inv_for_intersphinx(small_site):
    html, _ = small_site
    inventory = (html / "objects.inv").read_bytes()
    body = zlib.decompress(inventory.split(b"\n", 4)[4]).decode()
    assert re.search(r"^thm-sum std:label -1 first\.html#\$ Theorem thm-sum$", body, re.M), body  # $: the anchor is the name


def test_an_unlabelled_theorem_fails_the_cite_page_naming_it(tmp_path):
    pages = dict(PAGES, **{"second.rst": "Second\n======\n\n.. prf:theorem:: Nameless\n\n   Later.\n"})
    _, warnings = build_small_site(tmp_path, pages)
    assert re.search(r"cite\.rst:\d+: WARNING: cannot list the citable items: the theorem 'Nameless' on page 'second' has label 'theorem-\d+'", warnings), warnings


def test_a_page_that_cites_is_read_again_when_another_page_changes(tmp_path):
    from citations import _reread_citing_pages

    env = SimpleNamespace(citing_pages={"cite"})
    assert _reread_citing_pages(None, env, set(), {"first"}, set()) == ["cite"]
    assert _reread_citing_pages(None, env, set(), {"cite"}, set()) == []
    assert _reread_citing_pages(None, env, set(), set(), set()) == []



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
