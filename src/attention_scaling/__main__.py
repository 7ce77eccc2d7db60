"""Command line: ``python -m attention_scaling prove | figures``.

``prove`` runs every registered proof, prints one line per theorem (label,
whether it holds, seconds) and exits with status 1 if any fails.

``figures --out DIR --format svg|png|pdf`` writes every figure of the site
into DIR, one progress line per figure.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

__all__ = ["main"]


def _prove(args: argparse.Namespace) -> int:
    from attention_scaling.proofs import ProofError, prove_all

    start = time.perf_counter()
    outcomes = prove_all()
    width = max(len(label) for label, _, _ in outcomes)
    print(f"{'theorem':<{width}}  holds  seconds")
    for label, outcome, seconds in outcomes:
        holds = "yes" if not isinstance(outcome, ProofError) else "NO"
        print(f"{label:<{width}}  {holds:<5}  {seconds:7.2f}")
    failures = [outcome for _, outcome, _ in outcomes if isinstance(outcome, ProofError)]
    for failure in failures:
        print(f"\nFAILED: {failure}", file=sys.stderr)
    print(f"\n{len(outcomes) - len(failures)} of {len(outcomes)} theorems hold ({time.perf_counter() - start:.2f} s)")
    return 1 if failures else 0


# Metadata that would otherwise embed the date, so exports are identical on every run.
_FIXED_METADATA = {"svg": {"Date": None}, "pdf": {"CreationDate": None, "ModDate": None}, "png": {}}


def _figures(args: argparse.Namespace) -> int:
    from attention_scaling.site.figures import FIGURES
    from attention_scaling.site.plots import style

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        print(f"error: --out {out} exists and is not a directory", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    for number, (name, spec) in enumerate(FIGURES.items(), start=1):
        start = time.perf_counter()
        path = out / f"{name}.{args.format}"
        with style():
            spec.make().savefig(path, format=args.format, metadata=_FIXED_METADATA[args.format])
        print(f"[{number}/{len(FIGURES)}] {path} ({time.perf_counter() - start:.2f} s)", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attention_scaling", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("prove", help="run every proof and print a table").set_defaults(run=_prove)
    export = commands.add_parser("figures", help="write every figure to a directory")
    export.add_argument("--out", required=True, help="directory to write into (created if missing)")
    export.add_argument("--format", choices=tuple(_FIXED_METADATA), default="svg", help="file format (default: svg)")
    export.set_defaults(run=_figures)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
