r"""The one Markdown-table helper that every table on the site goes through."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["markdown_table"]

_ALIGNMENTS = {"left": ":---", "right": "---:", "center": ":---:", None: "---"}


def markdown_table(
    header: Sequence[str],
    rows: Iterable[Sequence[object]],
    *,
    align: Sequence[str | None] | None = None,
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

    Returns
    -------
    str
        The table, one line per row, with no trailing newline.

    Raises
    ------
    ValueError
        If a row or ``align`` has the wrong number of entries, an alignment
        is unknown, or a cell contains ``|`` or a line break (either would
        end the cell or the row in the middle; write ``\vert`` in math).

    Examples
    --------
    >>> from attention_scaling.site.tables import markdown_table
    >>> print(markdown_table(["d_k", "std"], [[64, "8.0"], [512, "22.6"]], align=["left", "right"]))
    | d_k | std |
    |:---|---:|
    | 64 | 8.0 |
    | 512 | 22.6 |
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
    lines = [_line(header, "header"), "|" + "|".join(_ALIGNMENTS[value] for value in align) + "|"]
    for number, row in enumerate(rows, start=1):
        cells = [str(cell) for cell in row]
        if len(cells) != columns:
            raise ValueError(f"row {number} must have {columns} cells, one per heading; got {len(cells)}")
        lines.append(_line(cells, f"row {number}"))
    return "\n".join(lines)


def _line(cells: list[str], where: str) -> str:
    for cell in cells:
        if "|" in cell or "\n" in cell:
            raise ValueError(f"{where}: a cell must not contain '|' or a line break; got {cell!r}")
    return "| " + " | ".join(cells) + " |"
