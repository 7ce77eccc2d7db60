"""Command line: ``python -m attention_scaling prove``.

``prove`` runs every registered proof, prints one line per theorem (label,
whether it holds, seconds) and exits with status 1 if any fails.
"""

from __future__ import annotations

import argparse
import sys
import time


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attention_scaling", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("prove", help="run every proof and print a table").set_defaults(run=_prove)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
