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


@pytest.mark.parametrize("cell", ["1/√d_k", "d_k", "‖J‖", "x^2", "$d_k$ and then d_model"])
def test_mathematics_written_as_text_is_refused_in_a_heading_and_a_cell(cell):
    with pytest.raises(ValueError, match=r"header: write a cell's mathematics between \$ signs"):
        markdown_table([cell], [])
    with pytest.raises(ValueError, match=r"row 1: write a cell's mathematics between \$ signs"):
        markdown_table(["a"], [[cell]])


@pytest.mark.parametrize("cell", [r"$1/\sqrt{d_k}$", "gradient of $W_Q$", "`attention_scaling.softmax`", "σ = 2 ± 0.1"])
def test_mathematics_typeset_code_and_plain_symbols_pass(cell):
    assert markdown_table(["a"], [[cell]]).splitlines()[-1] == f"| {cell} |"


def test_a_quoted_column_is_left_as_written_and_the_others_are_checked():
    assert markdown_table(["quote", "value"], [["q·k/√d_k", "1"]], plain=[0]).endswith("| q·k/√d_k | 1 |")
    with pytest.raises(ValueError, match="row 1"):
        markdown_table(["quote", "value"], [["q·k", "√d_k"]], plain=[0])
