"""``python -m attention_scaling``: a bad argument gives one line on stderr and status 2.

Status 2 and ``PROG: error: ...`` are argparse's convention; the errors that
only show once ``figures`` runs (an ``--out`` that cannot be created or
written to) follow it too. None of them may end in a traceback.
"""

import errno
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib.figure
import pytest

from attention_scaling import __main__ as cli

PROG = "python -m attention_scaling"


def run(argv, capsys):
    """Exit status and stderr of ``main(argv)``, whether it returns or raises SystemExit."""
    status, _, err = run_with_output(argv, capsys)
    return status, err


def run_with_output(argv, capsys):
    try:
        status = cli.main(argv)
    except SystemExit as stop:
        status = stop.code
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def assert_one_line_error(status, err, *expected):
    assert status == 2, (status, err)
    assert "Traceback" not in err, err
    assert err.endswith("\n") and err.count("\n") == 1, f"not one line:\n{err}"
    assert err.startswith(f"{PROG}") and ": error: " in err, err
    for text in expected:
        assert text in err, (text, err)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], ["required: command"]),
        (["bogus"], ["invalid choice: 'bogus'"]),
        (["prove", "--fast"], ["unrecognized arguments: --fast"]),
        (["figures"], ["required: --out"]),
        (["figures", "--out"], ["--out", "expected one argument"]),
        (["figures", "--out", "figs", "--format", "jpg"], ["--format", "invalid choice: 'jpg'"]),
        (["figures", "--out", "figs", "saturation"], ["argument NAME", "no figure is named 'saturation'", "saturation-onset"]),
    ],
    ids=["no-subcommand", "unknown-subcommand", "unknown-option", "no-out", "out-without-value", "unknown-format",
         "unknown-figure"],
)
def test_a_bad_argument_is_one_line_and_status_2(capsys, tmp_path, monkeypatch, argv, expected):
    monkeypatch.chdir(tmp_path)  # nothing may be written, but if it were, not into the checkout
    status, err = run(argv, capsys)
    assert_one_line_error(status, err, *expected)
    assert not (tmp_path / "figs").exists()


def test_out_naming_a_file_is_refused(capsys, tmp_path):
    target = tmp_path / "file.txt"
    target.write_text("")
    status, err = run(["figures", "--out", str(target)], capsys)
    assert_one_line_error(status, err, f"--out {target}", "is not a directory")


def test_out_under_a_file_is_refused(capsys, tmp_path):
    # mkdir raised NotADirectoryError through a traceback here once.
    target = tmp_path / "file.txt" / "sub"
    target.parent.write_text("")
    status, err = run(["figures", "--out", str(target)], capsys)
    assert_one_line_error(status, err, f"--out {target}", "cannot create the directory", os.strerror(errno.ENOTDIR))


def test_out_whose_parent_may_not_be_written_is_refused(capsys, tmp_path, monkeypatch):
    # Simulated: as root (CI), permissions do not stop mkdir.
    def refuse(self, *args, **kwargs):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))

    monkeypatch.setattr(Path, "mkdir", refuse)
    target = tmp_path / "locked" / "figs"
    status, err = run(["figures", "--out", str(target)], capsys)
    assert_one_line_error(status, err, f"--out {target}", "cannot create the directory", "Permission denied")


def test_out_that_may_not_be_written_is_refused_before_any_figure(capsys, tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    def no_figure(*args, **kwargs):
        raise AssertionError("a figure was drawn before --out was checked")

    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", no_figure)
    status, err = run(["figures", "--out", str(tmp_path)], capsys)
    assert_one_line_error(status, err, f"--out {tmp_path}", "cannot write into the directory", "Permission denied")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root may write into any directory")
def test_a_read_only_directory_is_refused(capsys, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        status, err = run(["figures", "--out", str(locked / "figs")], capsys)
    finally:
        locked.chmod(0o700)
    assert_one_line_error(status, err, "--out", "Permission denied")


def test_a_failing_write_names_out_and_the_file(capsys, tmp_path, monkeypatch):
    def disk_full(self, path, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", disk_full)
    status, out, err = run_with_output(["figures", "--out", str(tmp_path)], capsys)
    assert_one_line_error(status, err, f"--out {tmp_path}", "cannot write", ".svg", os.strerror(errno.ENOSPC))
    assert out == ""  # no figure reported as written


@pytest.mark.parametrize(
    "args",
    [[], ["figures", "--out", "FILE/sub"]],
    ids=["no-subcommand", "out-under-a-file"],
)
def test_the_real_command_prints_no_traceback(tmp_path, args):
    (tmp_path / "FILE").write_text("")
    result = subprocess.run(
        [sys.executable, "-m", "attention_scaling", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert_one_line_error(result.returncode, result.stderr)
    assert result.stdout == ""


def _plant_registry(monkeypatch, broken):
    """A registry of two results, the second using the first and failing if ``broken``."""
    import sympy as sp

    from attention_scaling import proofs
    from attention_scaling.proofs import engine

    x = sp.Symbol("x")
    base = engine.Registered("thm-scaled-variance", "Base", "theorem",
                             lambda: engine.Proof("Base", "thm-scaled-variance", (), (engine.check("thm-scaled-variance", x, x),)))
    user = engine.Registered("thm-user", "User", "theorem",
                             lambda: engine.Proof("User", "thm-user", (), (engine.check("thm-user", x, x + int(broken)),)),
                             ("thm-scaled-variance",))
    registry = {"thm-scaled-variance": base, "thm-user": user}
    monkeypatch.setattr(engine, "REGISTRY", registry)
    monkeypatch.setattr(proofs, "REGISTRY", registry)


def test_prove_graph_prints_the_dot_source_or_writes_it_to_a_path(capsys, tmp_path, monkeypatch):
    _plant_registry(monkeypatch, broken=True)
    status, out, err = run_with_output(["prove", "--graph"], capsys)
    assert status == 1 and "FAILED: thm-user" in err  # the planted failure, reported on stderr only
    assert out.startswith("digraph dependencies {\n") and out.endswith("}\n"), out[:200]
    assert '"thm-scaled-variance" -> "thm-user";' in out
    assert '"thm-scaled-variance" -> "claim:' in out  # the claims register's rows matched to it
    assert "[FAILED]" in out.split("subgraph cluster_legend")[0] and "[checked] 1 step" in out
    target = tmp_path / "graph.dot"
    status, written, _ = run_with_output(["prove", "--graph", str(target)], capsys)
    assert status == 1 and target.read_text() == out
    assert "theorem or derivation" in written  # with a path, the table is printed as usual


def test_prove_graph_holds_when_every_proof_holds(capsys, monkeypatch):
    _plant_registry(monkeypatch, broken=False)
    status, out, err = run_with_output(["prove", "--graph"], capsys)
    assert status == 0 and err == ""
    assert "[checked] 1 step" in out and "[FAILED] a check raised" in out.split("subgraph cluster_legend")[1]
    assert "[FAILED]" not in out.split("subgraph cluster_legend")[0]  # only the legend names it


def test_prove_graph_to_an_unwritable_path_is_one_line(capsys, tmp_path, monkeypatch):
    _plant_registry(monkeypatch, broken=False)
    target = tmp_path / "missing" / "graph.dot"
    status, err = run(["prove", "--graph", str(target)], capsys)
    assert_one_line_error(status, err, f"--graph {target}", "cannot write the graph", os.strerror(errno.ENOENT))


def test_prove_help_documents_graph(capsys):
    status, out, _ = run_with_output(["prove", "--help"], capsys)
    assert status == 0 and "--graph [PATH]" in out and "DOT" in out


def test_the_examples_of_the_command_line_hold():
    # pytest's --doctest-modules never collects a __main__.py, so its examples run here (and in make html's
    # doctests, which name this test).
    import doctest

    result = doctest.testmod(cli, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0, result
