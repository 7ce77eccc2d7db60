"""The downloaded notebook's Markdown: MyST made plain, and the student's edition without solutions."""

import pytest

from attention_scaling.site.notebook import References, glued_text, plain_notebook

REFS = References(
    labels={"thm-a": "Theorem 2.1", "eq-a": "Equation (2.3)", "ex-a": "Exercise 2.1", "fig-a": "Figure 5.1",
            "sec-a": "The setting"},
    documents={"api": "API reference"},
    citations={"vaswani2017attention": ("Vaswani et al.", "2017"), "su2021entropy": ("Su", "2021")},
    values={"d_k": {"text/plain": "512"}, "frac": {"text/plain": "0.75512"},
            "thm-a": {"text/latex": "$$a = b$$", "text/plain": "Math(...)"}},
)


def markdown(source: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def code(source: str) -> dict:
    return {"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None}


def plain(*cells, solutions=True) -> list[str]:
    return [cell["source"] for cell in plain_notebook(list(cells), REFS, solutions=solutions)]


def test_a_theorem_becomes_a_numbered_quote_with_its_checked_statement():
    source = "````{prf:theorem} Title with {cite:t}`su2021entropy`\n:label: thm-a\n\nFor all $x$,\n\n```{glue:math} thm-a\n:label: eq-a\n```\n````"
    assert plain(markdown(source)) == [
        "> **Theorem 2.1** (Title with Su [2021]).\n>\n> For all $x$,\n>\n> $$\n> a = b\n> \\tag{2.3}\n> $$"]


def test_numbered_display_math_references_and_citations_read_as_the_site_shows_them():
    source = ("$$\nq \\cdot k\n$$ (eq-a)\n\nSee {ref}`sec-a`, {ref}`that part <sec-a>`, {numref}`fig-a`, {doc}`api`,"
              " {func}`~attention_scaling.softmax` and {cite:p}`vaswani2017attention,su2021entropy`: {glue:text}`frac:.2f`.")
    assert plain(markdown(source)) == [
        "$$\nq \\cdot k\n\\tag{2.3}\n$$\n\nSee The setting, that part, Figure 5.1, API reference, `attention_scaling.softmax`"
        " and [Vaswani et al., 2017; Su, 2021]: 0.76."]


def test_code_blocks_and_code_spans_keep_myst_as_text():
    source = "Write `{glue:text}` like this:\n\n```md\n{glue:text}`d_k`\n```"
    assert plain(markdown(source)) == [source]


def test_the_students_edition_leaves_out_each_solution_with_its_code_cells():
    cells = [markdown("```{exercise} Compute\n:label: ex-a\n:class: difficulty-basic\n\nHow big?\n```\n\n"
                      "```{solution-start} ex-a\n:class: dropdown\n```\nUse the theorem."),
             code("print(512)"),
             markdown("It is {glue:text}`d_k`.\n\n```{solution-end}\n```\n\nAfter.")]
    assert plain(*cells) == ["> **Exercise 2.1** (Compute), basic.\n>\n> How big?\n\n**Solution to Exercise 2.1.**\n\n"
                             "Use the theorem.", "print(512)", "It is 512.\n\nAfter."]
    assert plain(*cells, solutions=False) == ["> **Exercise 2.1** (Compute), basic.\n>\n> How big?", "After."]


@pytest.mark.parametrize(("source", "error", "message"), [
    ("```{mystery}\n```", ValueError, r"Markdown cell 0: the directive \{mystery\} has no plain Markdown form"),
    ("A {kbd}`C-c`.", ValueError, r"Markdown cell 0: the role \{kbd\} has no plain Markdown form"),
    ("See {prf:ref}`thm-missing`.", KeyError, "the label 'thm-missing' is not a target of the site"),
    ("{glue:text}`never_glued`", KeyError, "no glued value 'never_glued'"),
    ("{cite:t}`nobody2020`", KeyError, "the citation 'nobody2020' is not in the bibliography"),
    ("````{prf:theorem} T\n:label: thm-a\n", ValueError, "is never closed"),
    ("```{solution-start} ex-a\n```", ValueError, "a solution-start has no solution-end"),
])
def test_what_has_no_plain_form_fails_with_the_cell_and_the_construct(source, error, message):
    with pytest.raises(error, match=message):
        plain(markdown(source))


def test_glued_text_formats_as_myst_nb_does():
    assert [glued_text("0.5", ".1%"), glued_text("12345.678", ",.0f"), glued_text("'a b'", "s"), glued_text("x y", "")] == \
        ["50.0%", "12,346", "a b", "x y"]
