"""tools/site_inputs.py: make html skips Sphinx only when nothing the site is built from has changed.

A wrong "current" would serve a stale page, so each input is changed in turn
in a small fake repository, and each change must make ``check`` answer
"build" (exit status 1).
"""

import doctest
import json
import os
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))

import site_inputs  # noqa: E402 (found through the line above)

COMMAND = ["sphinx-build", "-c", ".", "-W", "-b", "html", "docs", "_build/html"]


@pytest.fixture
def repository(tmp_path, monkeypatch):
    """A fake repository with one page, built once (a record saved), as the current directory."""
    for name, text in {"conf.py": "project = 'x'\n", "docs/index.md": "# Index\n", "src/pkg/m.py": "x = 1\n"}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    for name in site_inputs.BUILD_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    assert check() == 1  # no record yet
    html = tmp_path / "_build" / "html"
    html.mkdir(parents=True)
    (html / "index.html").write_text("<h1>Index</h1>")
    assert site_inputs.main(["save", "_build/html.inputs", "--html", "_build/html"]) == 0
    return tmp_path


def check(command=COMMAND) -> int:
    return site_inputs.main(["check", "_build/html.inputs", "--html", "_build/html", "--", *command])


def later(path: Path) -> None:
    """Give ``path`` a modification time one second later, whatever the clock's resolution."""
    status = path.stat()
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 1_000_000_000))


def test_nothing_changed_is_current(repository):
    assert check() == 0
    assert check() == 0  # a check that finds the site current changes nothing


@pytest.mark.parametrize("name", ["docs/index.md", "src/pkg/m.py", "conf.py"])
def test_a_file_touched_is_built(repository, name):
    later(repository / name)
    assert check() == 1


def test_a_new_or_removed_file_is_built(repository):
    (repository / "docs" / "new.md").write_text("# New\n")
    assert check() == 1
    assert site_inputs.main(["save", "_build/html.inputs", "--html", "_build/html"]) == 0
    (repository / "docs" / "new.md").unlink()
    assert check() == 1


def test_build_output_caches_and_hidden_directories_are_not_inputs(repository):
    for name in ("_build/html/extra.html", "_build/.jupyter_cache/x", ".git/HEAD", "src/pkg/__pycache__/m.pyc"):
        (repository / name).parent.mkdir(parents=True, exist_ok=True)
        (repository / name).write_text("")
    assert check() == 0


@pytest.mark.parametrize("name", site_inputs.BUILD_ENVIRONMENT)
def test_each_variable_the_build_reads_is_an_input(repository, monkeypatch, name):
    monkeypatch.setenv(name, "https://example.org/")
    assert check() == 1


def test_another_command_or_a_full_rebuild_option_is_built(repository):
    assert check([*COMMAND[:-2], "-n", *COMMAND[-2:]]) == 1
    for option in site_inputs.FULL_REBUILD_OPTIONS:
        assert check([*COMMAND, option]) == 1


def test_another_commit_is_built(repository, monkeypatch):
    monkeypatch.setattr(site_inputs, "commit", lambda root, short=True: "0123456789abcdef")
    assert check() == 1


def test_a_page_of_the_last_build_gone_is_built(repository):
    (repository / "_build" / "html" / "index.html").unlink()
    assert check() == 1


def test_a_failed_or_interrupted_build_leaves_no_record(repository):
    later(repository / "docs" / "index.md")
    assert check() == 1  # the build starts...
    assert not (repository / "_build" / "html.inputs").exists()
    # ...and fails: save is not run. Undoing the edit must not make the old site look current.
    assert check() == 1


def test_save_without_a_check_is_a_usage_error(repository, capsys):
    with pytest.raises(SystemExit) as stop:
        site_inputs.main(["save", "_build/other.inputs", "--html", "_build/html"])
    assert stop.value.code == 2
    assert "run check before the build" in capsys.readouterr().err


def test_the_record_lists_the_pages_built(repository):
    record = json.loads((repository / "_build" / "html.inputs").read_text())
    assert record["pages"] == ["index.html"]
    assert list(record["files"]) == ["conf.py", "docs/index.md", "src/pkg/m.py"]


# What the build's own code reads from the environment: os.environ.get("X"),
# os.environ["X"], environ.get("X") on a passed mapping, os.getenv("X").
ENVIRONMENT_READ = re.compile(r"""(?:environ\.get\(|environ\[|getenv\()\s*["']([A-Z][A-Z0-9_]*)["']""")


def variables_read(sources) -> set[str]:
    return {name for path in sources for name in ENVIRONMENT_READ.findall(Path(path).read_text(encoding="utf-8"))}


def test_every_variable_that_conf_py_and_the_extensions_read_is_an_input():
    sources = [REPO / "conf.py", *sorted((REPO / "docs" / "_ext").glob("*.py"))]
    read = variables_read(sources)
    assert {"SITE_URL", "NB_JOBS"} <= read  # the scan finds what it is meant to
    assert read <= set(site_inputs.BUILD_ENVIRONMENT), sorted(read - set(site_inputs.BUILD_ENVIRONMENT))


def test_the_scan_catches_a_variable_that_is_not_an_input(tmp_path):
    # Planted: an extension that starts reading a new variable. The scan above must name it.
    extension = tmp_path / "new_extension.py"
    extension.write_text('import os\nTHEME = os.environ.get("SITE_THEME", "light")\nBASE = os.getenv( "BASE_PATH")\n')
    assert variables_read([extension]) - set(site_inputs.BUILD_ENVIRONMENT) == {"SITE_THEME", "BASE_PATH"}


def test_the_examples_in_the_module_run():
    result = doctest.testmod(site_inputs, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
