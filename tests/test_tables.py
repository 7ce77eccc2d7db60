"""The one Markdown-table helper."""

import pytest

from attention_scaling.site.tables import markdown_table


def test_rows_and_alignment_are_rendered_in_order():
    table = markdown_table(["a", "b", "c"], [[1, "x", 2.5]], align=["left", None, "center"])
    assert table.splitlines() == ["| a | b | c |", "|:---|---|:---:|", "| 1 | x | 2.5 |"]


def test_no_rows_gives_header_only():
    assert markdown_table(["a"], []).splitlines() == ["| a |", "|---|"]


@pytest.mark.parametrize("cell", ["|x|", "two\nlines"])
def test_a_cell_that_would_break_the_table_is_refused(cell):
    with pytest.raises(ValueError, match="row 1: a cell must not contain"):
        markdown_table(["a"], [[cell]])


def test_a_short_row_is_refused():
    with pytest.raises(ValueError, match="row 2 must have 2 cells"):
        markdown_table(["a", "b"], [[1, 2], [3]])


def test_bad_alignment_is_refused():
    with pytest.raises(ValueError, match="align entries"):
        markdown_table(["a"], [], align=["middle"])
    with pytest.raises(ValueError, match="one entry per column"):
        markdown_table(["a", "b"], [], align=["left"])
