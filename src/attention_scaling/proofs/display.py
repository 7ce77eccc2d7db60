r"""How the steps of a result are shown: a table on a page, aligned LaTeX, a statement as display math.

A page shows a proof as a table with one row per step: the mark of how the
step is known, the step as math, and its reason in words. The reasons are
text beside the formula, not inside it, so that they wrap on a narrow screen
and in print instead of running out of the formula's box. Mathematics in a
reason is written between dollar signs, ``"$1 - \\tanh^2 = \\operatorname{sech}^2$"``,
and typeset as inline math between its words.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

__all__ = ["KINDS", "MARKERS", "MARKER_WORDS", "STEP_TABLE_HEADER", "Derivation", "Math", "reason_parts"]

#: The kinds of step, in the order ``prove`` counts them. Only a *checked* step is
#: verified by SymPy; the others are shown with their basis, and marked as such.
KINDS = ("checked", "cited", "argued", "measured")

# The marker of each kind: in LaTeX (Derivation.latex) and in words (the table a page shows). It stands
# first in a row; the basis (a source and locator, an evidence row) goes last, with the reason.
MARKERS = {"checked": r"\checkmark", "cited": r"\text{[cited]}", "argued": r"\text{[argued]}",
           "measured": r"\text{[measured]}"}
MARKER_WORDS = {"checked": "✓", "cited": "[cited]", "argued": "[argued]", "measured": "[measured]"}
#: The header of a page's table of steps (docs/_ext/step_tables.py finds the tables by it).
STEP_TABLE_HEADER = ("kind", "step", "reason")


def _bars(latex: str) -> str:
    """``latex`` for a Markdown table cell, where a ``|`` would end the cell: each bar written as a command."""
    return latex.replace("\\|", r"\Vert ").replace("|", r"\vert ")


def _cell_math(latex: str) -> str:
    """Display-style math for a Markdown table cell."""
    return r"\displaystyle " + _bars(latex)


def _markdown_words(words: str) -> str:
    """Words that Markdown shows as written, on one line (a table row): every ASCII punctuation mark escaped."""
    return "".join("\\" + c if c.isascii() and not c.isalnum() and not c.isspace() else c for c in words)


def _text(words: str) -> str:
    """Words safe inside ``\\text{}``, where braces and backslashes would end or start a command (the rest shows as is)."""
    return words.replace("\\", "").replace("{", "(").replace("}", ")")


def reason_parts(reason: str) -> list[tuple[bool, str]]:
    r"""A reason cut into its words and its mathematics: ``(is_math, text)`` pairs, in order.

    Mathematics is written between dollar signs. A reason whose dollar
    signs do not pair up is refused, since its words and its mathematics
    could not be told apart.

    Examples
    --------
    >>> reason_parts(r"so $a \ge 0$ for every score")
    [(False, 'so '), (True, 'a \\ge 0'), (False, ' for every score')]
    >>> reason_parts("costs $5")
    Traceback (most recent call last):
    ...
    ValueError: a reason writes its mathematics between pairs of $ signs; 'costs $5' has an odd number of them
    """
    pieces = " ".join(reason.split()).split("$")
    if len(pieces) % 2 == 0:
        raise ValueError(f"a reason writes its mathematics between pairs of $ signs; {reason!r} has an odd number of them")
    return [(place % 2 == 1, piece) for place, piece in enumerate(pieces) if piece]


def _reason_markdown(reason: str) -> str:
    """A reason for a Markdown table cell: its words escaped, its mathematics inline math with no ``|`` to end the cell."""
    return "".join("$" + _bars(piece) + "$" if math else _markdown_words(piece) for math, piece in reason_parts(reason))


@dataclass(frozen=True)
class Math:
    """LaTeX shown as display math in a notebook (its ``text/latex`` output)."""

    latex: str

    def _repr_latex_(self) -> str:
        return f"$${self.latex}$$"


@dataclass(frozen=True)
class Derivation:
    r"""Steps shown together: on a page as a table (one row a step), in LaTeX as one aligned block.

    Examples
    --------
    >>> from attention_scaling.proofs import Derivation, check
    >>> derivation = Derivation((check("demo", 1, 1, reason="trivially; |x| = x for $x \\ge 0$"),))
    >>> derivation.latex()
    '\\begin{aligned}\\checkmark && 1 &= 1 && \\text{(trivially; |x| = x for }x \\ge 0\\text{)}\\end{aligned}'
    >>> print(derivation._repr_markdown_())
    | kind | step | reason |
    | :-: | :-- | :-- |
    | ✓ | $\displaystyle 1 = 1$ | trivially\; \|x\| \= x for $x \ge 0$ |
    """

    steps: tuple[Step, ...]

    def counts(self) -> dict[str, int]:
        """How many steps are of each kind, in the order of ``KINDS``."""
        return {kind: sum(step.kind == kind for step in self.steps) for kind in KINDS}

    def latex(self) -> str:
        rows = []
        for step in self.steps:
            row = f"{step.marker()} && {sp.latex(step.lhs)} &{step.relation} {sp.latex(step.rhs)}"
            if step.note():
                # In brackets, the words set as text and the mathematics as it is.
                words = "".join(piece if math else f"\\text{{{_text(piece)}}}" for math, piece in reason_parts(f"({step.note()})"))
                row += f" && {words}"
            rows.append(row)
        return "\\begin{aligned}" + r" \\ ".join(rows) + "\\end{aligned}"

    def _repr_markdown_(self) -> str:
        """The table a page shows: each step's kind, its relation as math, and its reason in words.

        The reasons are text, not math, so that they wrap rather than run out of a formula's box;
        the mathematics in a reason is inline math between its words.
        """
        rows = [f"| {MARKER_WORDS[s.kind]} | ${_cell_math(s.latex())}$ | {_reason_markdown(s.note())} |" for s in self.steps]
        return "\n".join(["| " + " | ".join(STEP_TABLE_HEADER) + " |", "| :-: | :-- | :-- |", *rows])
