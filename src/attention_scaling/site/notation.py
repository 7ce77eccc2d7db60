r"""The site's notation: one meaning per symbol, and the writings that would give a symbol a second one.

The Notation page shows :data:`NOTATION` as a table. Each entry may name
writings that the site used to give the symbol another meaning (the spread of
the scores written :math:`s`, which is the raw score); :func:`notation_problems`
finds them in the pages' sources, so that a page that brings one back fails
the tests, with the page, the line and the symbol to write instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from attention_scaling.site.sources import page_source
from attention_scaling.site.tables import markdown_table

__all__ = ["NOTATION", "Notation", "notation_problems", "notation_table"]


@dataclass(frozen=True)
class Notation:
    r"""One symbol of the site, what it means, and where it is introduced.

    Attributes
    ----------
    symbol : str
        The symbol as the pages write it in LaTeX, e.g. ``r"\sigma"``.
    meaning : str
        What it denotes, in a sentence that may hold ``$...$``.
    introduced : str
        The label of the section that introduces it (a ``{ref}`` target).
    misuses : tuple of (str, str)
        Regular expressions for writings that give the symbol, or its
        meaning, another letter, each with what to write instead.
    """

    symbol: str
    meaning: str
    introduced: str
    misuses: tuple[tuple[str, str], ...] = ()


#: The site's symbols, in the order a reader meets them.
NOTATION: tuple[Notation, ...] = (
    Notation("d_k", "the dimension of queries and keys, the width of one head", "variance-setting"),
    Notation(r"q,\ k", r"a query and a key, vectors in $\mathbb{R}^{d_k}$; $q_i$, $k_i$ are their components",
             "variance-setting"),
    Notation("n", "the number of keys one query attends to: the length of a row of scores", "saturation-jacobian"),
    Notation("s", r"the raw score $s = q \cdot k$, before any scale. Long sequences also writes $s$ for "
             "Scalable-Softmax's learned scalar, as its paper does, and says so where it does",
             "saturation-distribution",
             misuses=((r"\\mathcal\{N\}\(0, s\^2\)", r"the spread of the scores is $\sigma$: write \mathcal{N}(0, \sigma^2)"),
                      (r"spread \$s\$", r"the spread of the scores is $\sigma$: write spread $\sigma$"),
                      (r"\\ln s \+ 1", r"YaRN's ratio of lengths is written n/L: write \ln(n/L) + 1"))),
    Notation("c", r"the scale on the raw score: $1$, $1/\sqrt{d_k}$ or $1/d_k$ in the three regimes", "scaling"),
    Notation("x", r"the logits, the input of softmax; $x = cs$ in attention", "saturation-jacobian",
             misuses=((r"logits \$z = cs\$", r"the logits are $x$: write logits $x = cs$"),)),
    Notation("p", r"the attention weights $p = \operatorname{softmax}(x)$", "saturation-jacobian"),
    Notation("J", r"the Jacobian $\partial p / \partial x$ of softmax; $\lVert J \rVert_F$, its Frobenius norm, "
             "is the gain at the logits", "saturation-jacobian"),
    Notation(r"\sigma", r"the spread of the logits of a row: their standard deviation. With a subscript, the "
             r"standard deviation of what the subscript names ($\sigma_q$, $\sigma_W$)", "saturation-spread"),
    Notation(r"\tau", r"a temperature: the divisor of the scores, $\tau = 1/c$", "regimes-temperature"),
    Notation("H", r"the entropy $-\sum_i p_i \ln p_i$ of a row of weights, in nats", "regimes-three"),
    Notation(r"\Delta", "a margin: how far one logit stands above the others, or above the next largest",
             "saturation-gap"),
    Notation(r"\kappa", r"the freezing ratio $\sigma^2 / (2 \ln n)$ of Gaussian logits", "long-freezing",
             misuses=((r"\\rho = \\lambda", r"the freezing ratio is $\kappa$: write \kappa = \lambda^2 ..."),)),
    Notation(r"\rho", "the correlation between the components of a query and of a key", "correlation"),
    Notation(r"W_Q,\ W_K", "the projections that make queries and keys from the tokens", "initialisation"),
)


def notation_table() -> str:
    r"""The Notation page's table: symbol, meaning, and the section that introduces it.

    Returns
    -------
    str
        A MyST Markdown table, one row per entry of :data:`NOTATION`.

    Examples
    --------
    >>> from attention_scaling.site.notation import notation_table
    >>> print(notation_table().splitlines()[3])
    | $q,\ k$ | a query and a key, vectors in $\mathbb{R}^{d_k}$; $q_i$, $k_i$ are their components | {ref}`variance-setting` |
    """
    rows = [[f"${entry.symbol}$", entry.meaning, f"{{ref}}`{entry.introduced}`"] for entry in NOTATION]
    return markdown_table(["symbol", "meaning", "introduced in"], rows)


def notation_problems(pages) -> list[str]:
    r"""Every place where a page writes a symbol of :data:`NOTATION` with another meaning.

    Parameters
    ----------
    pages : iterable of path-like
        The MyST sources to read.

    Returns
    -------
    list of str
        ``"<page>:<line>: <what was written>: <what to write>"`` per finding; empty when
        every page follows the notation.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from attention_scaling.site.notation import notation_problems
    >>> with tempfile.TemporaryDirectory() as docs:
    ...     page = Path(docs) / "page.md"
    ...     _ = page.write_text("Scores of spread $s$ are drawn.\n")
    ...     notation_problems([page])
    ['page.md:1: spread $s$: the spread of the scores is $\\sigma$: write spread $\\sigma$ (Notation page)']
    """
    problems = []
    for page in pages:
        lines = page_source(page).splitlines()
        for entry in NOTATION:
            for pattern, instead in entry.misuses:
                for number, line in enumerate(lines, start=1):
                    for found in re.finditer(pattern, line):
                        problems.append(f"{Path(page).name}:{number}: {found[0]}: {instead} (Notation page)")
    return problems
