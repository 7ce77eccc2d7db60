"""Command line: ``python -m attention_scaling prove | figures``.

``prove`` runs every registered proof, prints one line per theorem (label,
whether it holds, how many of its steps are checked, cited, argued and
measured, seconds) and exits with status 1 if any fails. With ``--graph`` it
prints instead the dependency graph of the results, and of the claims matched
to them, in Graphviz's DOT language (``--graph PATH`` writes it to PATH and
prints the table); ``dot -Tsvg`` draws it. The proofs run in one process
per usable CPU (``--jobs N`` to choose).

``figures --out DIR --format svg|png|pdf [NAME ...]`` writes every figure of
the site (or the ones named) into DIR, one progress line per figure.

A bad argument (a missing subcommand, an unknown format or figure, an
``--out`` that cannot be created or written to) ends with a one-line error on
stderr and exit status 2, argparse's convention, never with a traceback.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line: ``PROG: error: WHAT (see PROG --help)``."""

    def error_line(self, message: str) -> str:
        """The one line that reports ``message``."""
        return f"{self.prog}: error: {message} (see {self.prog} --help)"

    def error(self, message: str):
        # argparse prints the usage before the error; one line is easier to
        # read in a log and to match in a test, and --help has the usage.
        self.exit(2, self.error_line(message) + "\n")


class _OutError(Exception):
    """--out (or --graph's PATH) cannot be used; the message says why. Reported as a usage error."""


def _reason(error: OSError) -> str:
    """The operating system's words for ``error`` ("Permission denied"), without the errno."""
    return error.strerror or str(error)


def _usable_cpus() -> int:
    """The CPUs this process may run on (fewer than the machine's under a CPU affinity mask)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _positive_int(text: str) -> int:
    """``--jobs``: a whole number, at least 1 (argparse reports anything else as a usage error)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of processes, at least 1; got {text!r}")
    return value


def _figure_name(text: str) -> str:
    """A figure's name, as the registry spells it (argparse reports any other as a usage error)."""
    from attention_scaling.site import import_pages
    from attention_scaling.site.figures import FIGURES

    import_pages()  # the figures that pages register themselves
    if text not in FIGURES:
        raise argparse.ArgumentTypeError(f"no figure is named {text!r}; the figures are {', '.join(FIGURES)}")
    return text


def _prove(args: argparse.Namespace) -> int:
    from attention_scaling.proofs import KINDS, ProofError, prove_all, step_counts
    from attention_scaling.site import import_pages

    start = time.perf_counter()
    import_pages()  # the theorems that pages register themselves
    outcomes = prove_all(jobs=args.jobs)
    if args.graph == "-":
        # The DOT source alone on stdout, so that it can be piped into dot; failures on stderr.
        sys.stdout.write(_graph(outcomes))
        failures = [outcome for _, outcome, _ in outcomes if isinstance(outcome, ProofError)]
        for failure in failures:
            print(f"FAILED: {failure}", file=sys.stderr)
        return 1 if failures else 0
    if args.graph is not None:
        try:
            Path(args.graph).write_text(_graph(outcomes), encoding="utf-8")
        except OSError as error:
            raise _OutError(f"--graph {args.graph}: cannot write the graph: {_reason(error)}") from None
    header = "theorem or derivation"
    width = max(len(header), *(len(label) for label, _, _ in outcomes))
    print(f"{header:<{width}}  holds  {'  '.join(KINDS)}  seconds")
    for label, outcome, seconds in outcomes:
        failed = isinstance(outcome, ProofError)
        counts = {kind: "-" for kind in KINDS} if failed else step_counts(outcome)
        columns = "  ".join(f"{counts[kind]:>{len(kind)}}" for kind in KINDS)
        print(f"{label:<{width}}  {'NO' if failed else 'yes':<5}  {columns}  {seconds:7.2f}")
    failures = [outcome for _, outcome, _ in outcomes if isinstance(outcome, ProofError)]
    for failure in failures:
        print(f"\nFAILED: {failure}", file=sys.stderr)
    print(f"\n{len(outcomes) - len(failures)} of {len(outcomes)} registered results hold ({time.perf_counter() - start:.2f} s)")
    print("Steps: checked by SymPy, cited (source and locator), argued (in words), measured (an evidence row).")
    return 1 if failures else 0


def _graph(outcomes) -> str:
    """The DOT source of the dependency graph of the registered results and the claims matched to them."""
    from attention_scaling.proofs import REGISTRY
    from attention_scaling.site.claims import CLAIMS
    from attention_scaling.site.graph import dependency_graph

    return dependency_graph(REGISTRY, outcomes, claims=CLAIMS).dot()


# Metadata that would otherwise embed the date, so exports are identical on every run.
_FIXED_METADATA = {"svg": {"Date": None}, "pdf": {"CreationDate": None, "ModDate": None}, "png": {}}


def _figures(args: argparse.Namespace) -> int:
    from attention_scaling.site import import_pages
    from attention_scaling.site.figures import FIGURES
    from attention_scaling.site.plots import style

    import_pages()  # the figures that pages register themselves
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise _OutError(f"--out {out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:  # a parent is a file, or may not be written to
        raise _OutError(f"--out {out}: cannot create the directory: {_reason(error)}") from None
    try:
        # Find out now, not after the first figure has been computed, that
        # the directory cannot be written to.
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as error:
        raise _OutError(f"--out {out}: cannot write into the directory: {_reason(error)}") from None
    names = list(dict.fromkeys(args.names)) or list(FIGURES)  # as named, each once
    for number, name in enumerate(names, start=1):
        spec = FIGURES[name]
        start = time.perf_counter()
        path = out / f"{name}.{args.format}"
        with style():
            figure = spec.make()
            try:
                figure.savefig(path, format=args.format, metadata=_FIXED_METADATA[args.format])
            except OSError as error:
                raise _OutError(f"--out {out}: cannot write {path.name}: {_reason(error)}") from None
        print(f"[{number}/{len(names)}] {path} ({time.perf_counter() - start:.2f} s)", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    r"""Run the command line; return the exit status.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after ``python -m attention_scaling``; by default
        ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success, 1 when a proof fails, 2 (after a one-line error on
        stderr) when ``--out`` cannot be created or written to.

    Raises
    ------
    SystemExit
        With status 2 after printing a one-line error, for a bad argument;
        with status 0 after ``--help``.

    Examples
    --------
    >>> import contextlib, io
    >>> stderr = io.StringIO()
    >>> with contextlib.redirect_stderr(stderr):
    ...     try:
    ...         main(["figures", "--out", "figs", "--format", "gif"])
    ...     except SystemExit as stop:
    ...         print(stop.code)
    2
    >>> print(stderr.getvalue().strip())  # doctest: +ELLIPSIS
    python -m attention_scaling figures: error: argument --format: invalid choice: 'gif' (choose from ...) (see ... --help)
    """
    parser = _Parser(prog="python -m attention_scaling", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    prove = commands.add_parser("prove", help="run every proof and print a table")
    prove.add_argument(
        "--graph", nargs="?", const="-", metavar="PATH",
        help="print the dependency graph of the results (and of the claims matched to them) in Graphviz's DOT "
        "language instead of the table, or write it to PATH and print the table; draw it with dot -Tsvg",
    )
    prove.add_argument(
        "--jobs", type=_positive_int, default=_usable_cpus(), metavar="N",
        help="processes to run the proofs in (default: one per usable CPU, here %(default)s)",
    )
    prove.set_defaults(run=_prove, parser=prove)
    export = commands.add_parser("figures", help="write every figure (or the ones named) to a directory")
    export.add_argument("--out", required=True, help="directory to write into (created if missing)")
    export.add_argument("--format", choices=tuple(_FIXED_METADATA), default="svg", help="file format (default: svg)")
    export.add_argument("names", nargs="*", type=_figure_name, metavar="NAME",
                        help="a figure to write, by its name in the registry (saturation-onset, ...); default: all")
    export.set_defaults(run=_figures, parser=export)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except _OutError as error:
        # Found only once the subcommand runs: the same one line and status
        # as an argparse error, returned rather than raised.
        print(args.parser.error_line(str(error)), file=sys.stderr)
        return 2


if __name__ == "__main__":
    status = main()
    # The interpreter's last garbage collection at exit would walk every SymPy
    # object the proofs left behind (about a quarter of a second after
    # `prove`); frozen objects are skipped, and nothing here needs finalising.
    gc.freeze()
    sys.exit(status)
