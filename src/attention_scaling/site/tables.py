r"""The one Markdown-table helper that every table on the site goes through.

A cell's mathematics is typeset: it is written between dollar signs
(``$1/\sqrt{d_k}$``), and a cell with a subscript, a power, a root or a
norm written as plain text (``1/√d_k``) is refused, naming the cell.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

__all__ = ["markdown_table"]

# Mathematics written as text: a subscript, a power, a root or a norm. Math
# ($...$) and code (`...`) are left out before looking.
_LOOSE_MATH = re.compile(r"[_^√‖]")
_MATH_OR_CODE = re.compile(r"\$[^$]*\$|`[^`]*`")
_ALIGNMENTS = {"left": ":---", "right": "---:", "center": ":---:", None: "---"}


def markdown_table(
    header: Sequence[str],
    rows: Iterable[Sequence[object]],
    *,
    align: Sequence[str | None] | None = None,
    plain: Sequence[int] = (),
) -> str:
    r"""Render rows of already formatted cells as a (MyST) Markdown table.

    Parameters
    ----------
    header : sequence of str
        The column headings.
    rows : iterable of sequences
        One sequence per row, as many cells as headings; each cell is turned
        into text with ``str``, so format numbers before passing them.
    align : sequence of {"left", "right", "center", None}, optional
        One alignment per column; ``None`` (the default) leaves every column
        to the renderer.
    plain : sequence of int, optional
        Columns (counted from 0) whose cells are text as a source writes it,
        quoted, and so are not checked for mathematics written as text.

    Returns
    -------
    str
        The table, one line per row, with no trailing newline.

    Raises
    ------
    ValueError
        If a row or ``align`` has the wrong number of entries, an alignment
        is unknown, a cell contains ``|`` or a line break (either would
        end the cell or the row in the middle; write ``\vert`` in math), or
        a cell writes a subscript, power, root or norm outside ``$...$``.

    Examples
    --------
    >>> from attention_scaling.site.tables import markdown_table
    >>> print(markdown_table(["$d_k$", "std"], [[64, "8.0"], [512, "22.6"]], align=["left", "right"]))
    | $d_k$ | std |
    |:---|---:|
    | 64 | 8.0 |
    | 512 | 22.6 |
    >>> markdown_table(["scale"], [["1/√d_k"]])
    Traceback (most recent call last):
    ...
    ValueError: row 1: write a cell's mathematics between $ signs, as LaTeX ($1/\sqrt{d_k}$, $\lVert J\rVert_F$); got '1/√d_k'
    """
    header = [str(cell) for cell in header]
    columns = len(header)
    if align is None:
        align = [None] * columns
    if len(align) != columns:
        raise ValueError(f"align must have one entry per column ({columns}); got {len(align)}")
    unknown = [value for value in align if value not in _ALIGNMENTS]
    if unknown:
        raise ValueError(f"align entries must be 'left', 'right', 'center' or None; got {unknown[0]!r}")
    lines = [_line(header, "header", ()), "|" + "|".join(_ALIGNMENTS[value] for value in align) + "|"]
    for number, row in enumerate(rows, start=1):
        cells = [str(cell) for cell in row]
        if len(cells) != columns:
            raise ValueError(f"row {number} must have {columns} cells, one per heading; got {len(cells)}")
        lines.append(_line(cells, f"row {number}", plain))
    return "\n".join(lines)


def _line(cells: list[str], where: str, plain: Sequence[int]) -> str:
    for column, cell in enumerate(cells):
        if "|" in cell or "\n" in cell:
            raise ValueError(f"{where}: a cell must not contain '|' or a line break; got {cell!r}")
        if column not in plain and _LOOSE_MATH.search(_MATH_OR_CODE.sub("", cell)):
            raise ValueError(f"{where}: write a cell's mathematics between $ signs, as LaTeX "
                             f"($1/\\sqrt{{d_k}}$, $\\lVert J\\rVert_F$); got {cell!r}")
    return "| " + " | ".join(cells) + " |"
